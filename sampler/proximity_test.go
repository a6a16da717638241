package sampler

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// exactTopK checks that nb is a valid set of the k most similar nodes to i
// among cands (float64 cosine), allowing ties within tol at the boundary.
func checkNeighbours(t *testing.T, name string, e Embeddings, i int, nb []int32, cands []int, tol float64) {
	t.Helper()
	u := unitRows(cands, e)
	ui := unitRows([]int{i}, e)[0]
	sim := map[int]float64{}
	var all []float64
	for c, v := range cands {
		if v == i {
			continue
		}
		var s float64
		for j, x := range u[c] {
			s += x * ui[j]
		}
		sim[v] = s
		all = append(all, s)
	}
	slices.Sort(all)
	slices.Reverse(all)
	k := len(nb)
	kth := all[k-1]
	seen := map[int32]bool{}
	for _, v := range nb {
		if int(v) == i {
			t.Fatalf("%s: node %d is its own neighbour", name, i)
		}
		if seen[v] {
			t.Fatalf("%s: node %d has neighbour %d twice", name, i, v)
		}
		seen[v] = true
		s, ok := sim[int(v)]
		if !ok {
			t.Fatalf("%s: node %d has neighbour %d that is not a candidate", name, i, v)
		}
		if s < kth-tol {
			t.Fatalf("%s: node %d neighbour %d has cosine %v below the %d-th best %v", name, i, v, s, k, kth)
		}
	}
	for v, s := range sim {
		if s > kth+tol && !seen[int32(v)] {
			t.Fatalf("%s: node %d misses node %d (cosine %v > %d-th best %v)", name, i, v, s, k, kth)
		}
	}
}

func TestGraphsWithAllCandidatesAreExactKNN(t *testing.T) {
	const n, d, k = 300, 12, 9
	e := randomEmbeddings(n, d, 3)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	knn, err := BuildKNNGraph(e, k, 2)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opt  GraphOptions
	}{
		{"block M=N", GraphOptions{M: n, K: k, Seed: 1}},
		{"block M=N-1 bs=7", GraphOptions{M: n - 1, K: k, BlockSize: 7, Seed: 2}},
		{"node M=N", GraphOptions{M: n, K: k, CandidateSharing: ShareNode, Seed: 3}},
	}
	graphs := map[string]*Graph{"knn": knn}
	for _, tc := range cases {
		g, err := BuildProximityGraph(e, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		graphs[tc.name] = g
	}
	for name, g := range graphs {
		if g.N != n || g.K != k || len(g.Adj) != n*k {
			t.Fatalf("%s: graph is %d×%d with %d entries", name, g.N, g.K, len(g.Adj))
		}
		for i := 0; i < n; i++ {
			checkNeighbours(t, name, e, i, g.Neighbours(i), all, 1e-5)
		}
	}
}

// Every node has K distinct out-neighbours other than itself, for both
// sharing modes and awkward sizes (block size 3, M = K = 1, one block).
func TestProximityGraphShape(t *testing.T) {
	e := randomEmbeddings(500, 10, 4)
	for _, opt := range []GraphOptions{
		{M: 20, K: 5, Seed: 1},
		{M: 20, K: 5, CandidateSharing: ShareNode, Seed: 1},
		{M: 5, K: 5, BlockSize: 3, Seed: 2},
		{M: 1, K: 1, Seed: 3},
		{M: 499, K: 1, BlockSize: 1000, Seed: 3},
	} {
		g, err := BuildProximityGraph(e, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < g.N; i++ {
			nb := g.Neighbours(i)
			seen := map[int32]bool{}
			for _, v := range nb {
				if int(v) == i || seen[v] || v < 0 || int(v) >= g.N {
					t.Fatalf("%+v: node %d has bad neighbour list %v", opt, i, nb)
				}
				seen[v] = true
			}
		}
	}
}

func TestProximityGraphDeterministic(t *testing.T) {
	e := randomEmbeddings(700, 16, 5)
	for _, sharing := range []string{ShareBlock, ShareNode} {
		a, _ := BuildProximityGraph(e, GraphOptions{M: 50, K: 8, CandidateSharing: sharing, Seed: 11, Workers: 1})
		b, _ := BuildProximityGraph(e, GraphOptions{M: 50, K: 8, CandidateSharing: sharing, Seed: 11, Workers: 3})
		c, _ := BuildProximityGraph(e, GraphOptions{M: 50, K: 8, CandidateSharing: sharing, Seed: 12, Workers: 2})
		if !slices.Equal(a.Adj, b.Adj) {
			t.Errorf("%s: graph depends on the number of workers", sharing)
		}
		if slices.Equal(a.Adj, c.Adj) {
			t.Errorf("%s: graph does not depend on the seed", sharing)
		}
	}
}

// With M = K every candidate is kept, so the out-neighbours are the
// candidate set itself: over many builds each ordered pair (i, j), i ≠ j,
// must be an edge equally often (M/(N−1) of the builds). A chi-square test
// checks this for both sharing modes.
func TestCandidateDrawIsUniform(t *testing.T) {
	const n, m, builds = 40, 5, 300
	e := randomEmbeddings(n, 4, 6)
	for _, sharing := range []string{ShareBlock, ShareNode} {
		counts := make([]float64, n*n)
		for b := 0; b < builds; b++ {
			g, err := BuildProximityGraph(e, GraphOptions{M: m, K: m, CandidateSharing: sharing, BlockSize: 8, Seed: uint64(b)})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				for _, v := range g.Neighbours(i) {
					counts[i*n+int(v)]++
				}
			}
		}
		exp := float64(builds*m) / float64(n-1)
		var chi float64
		for i := 0; i < n; i++ {
			if counts[i*n+i] != 0 {
				t.Fatalf("%s: node %d drew itself", sharing, i)
			}
			for j := 0; j < n; j++ {
				if j != i {
					chi += (counts[i*n+j] - exp) * (counts[i*n+j] - exp) / exp
				}
			}
		}
		df := float64(n * (n - 2)) // each row's total is fixed
		p := 1 - distuv.ChiSquared{K: df}.CDF(chi)
		if p < 1e-3 {
			t.Errorf("%s: candidate draws are not uniform: chi²=%.1f df=%v p=%.2g", sharing, chi, df, p)
		}
	}
}

func TestGraphOptionErrors(t *testing.T) {
	e := randomEmbeddings(10, 3, 1)
	bad := []GraphOptions{{M: 3, K: 4}, {M: 3, K: 0}, {M: 5, K: 2, CandidateSharing: "row"}, {M: 5, K: 2, BlockSize: -1}}
	for _, opt := range bad {
		if _, err := BuildProximityGraph(e, opt); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
	nan := randomEmbeddings(4, 2, 1)
	nan.Data[3] = float32(math.NaN())
	if _, err := BuildProximityGraph(nan, GraphOptions{M: 2, K: 1}); err == nil {
		t.Error("NaN embedding accepted")
	}
	if _, err := BuildProximityGraph(Embeddings{N: 3, D: 2, Data: make([]float32, 5)}, GraphOptions{M: 2, K: 1}); err == nil {
		t.Error("short embedding matrix accepted")
	}
	// the caller's data must not be modified
	orig := slices.Clone(e.Data)
	if _, err := BuildProximityGraph(e, GraphOptions{M: 5, K: 2}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(orig, e.Data) {
		t.Error("BuildProximityGraph modified its input")
	}
	one, err := BuildProximityGraph(randomEmbeddings(1, 3, 1), GraphOptions{M: 5, K: 2})
	if err != nil || one.K != 0 {
		t.Errorf("single node: %v %+v", err, one)
	}
}

// graphRunStats are the per-build statistics compared between sharing modes.
type graphRunStats struct{ cos, agree, zeroIn, fn, batchCos, coverage []float64 }

func collectGraphRunStats(t *testing.T, e Embeddings, labels []int, cfg Config, runs int) graphRunStats {
	t.Helper()
	var r graphRunStats
	for seed := 0; seed < runs; seed++ {
		s, err := NewBatchSampler(cfg, e.N, uint64(seed))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Refresh(e); err != nil {
			t.Fatal(err)
		}
		st, err := NeighbourStats(s.Graph(), e, labels)
		if err != nil {
			t.Fatal(err)
		}
		bs := MeasureBatches(s, 3*s.BatchesPerEpoch(), labels, e)
		h := s.CoverageHistory()
		r.cos = append(r.cos, st.MeanCosine)
		r.agree = append(r.agree, st.LabelAgreement)
		r.zeroIn = append(r.zeroIn, st.ZeroInDegree)
		r.fn = append(r.fn, bs.FNRatio)
		r.batchCos = append(r.batchCos, bs.MeanCosine)
		r.coverage = append(r.coverage, (h[0]+h[1])/2)
	}
	return r
}

// welchT is Welch's t statistic of the difference of two sample means.
func welchT(a, b []float64) float64 {
	mv := func(x []float64) (float64, float64) {
		var m, v float64
		for _, y := range x {
			m += y
		}
		m /= float64(len(x))
		for _, y := range x {
			v += (y - m) * (y - m)
		}
		return m, v / float64(len(x)-1)
	}
	ma, va := mv(a)
	mb, vb := mv(b)
	se := math.Sqrt(va/float64(len(a)) + vb/float64(len(b)))
	if se == 0 {
		if ma == mb {
			return 0
		}
		return math.Inf(1)
	}
	return (ma - mb) / se
}

// Shared candidate blocks must not change what the graph is: the mean
// neighbour cosine, neighbour label agreement, share of nodes without
// in-edges, and the false-negative ratio, in-batch cosine and epoch coverage
// of RWR batches agree with per-node candidates within noise (|Welch t| < 4.5
// over independent builds). The same statistics must separate M=100 from
// M=150, showing that the comparison has power.
func TestBlockSharingMatchesPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical comparison of sharing modes")
	}
	e, labels, err := GaussianMixture(MixtureConfig{N: 2000, C: 10, D: 16, Between: 1, Within: 1.5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	const runs = 6
	base := Config{BatchSize: 32, M: 100, K: 10, Alpha: Schedule{Start: 0.5, Kind: ScheduleConstant}}
	node, block, more := base, base, base
	node.CandidateSharing, block.CandidateSharing = ShareNode, ShareBlock
	more.CandidateSharing, more.M = ShareNode, 150
	a := collectGraphRunStats(t, e, labels, node, runs)
	b := collectGraphRunStats(t, e, labels, block, runs)
	c := collectGraphRunStats(t, e, labels, more, runs)
	for _, st := range []struct {
		name    string
		x, y, z []float64
		power   bool
	}{
		{"neighbour cosine", a.cos, b.cos, c.cos, true},
		{"neighbour label agreement", a.agree, b.agree, c.agree, true},
		{"nodes without in-edges", a.zeroIn, b.zeroIn, c.zeroIn, false},
		{"batch false-negative ratio", a.fn, b.fn, c.fn, true},
		{"batch mean cosine", a.batchCos, b.batchCos, c.batchCos, true},
		{"epoch coverage", a.coverage, b.coverage, c.coverage, false},
	} {
		tv := welchT(st.x, st.y)
		t.Logf("%-27s node %.4f block %.4f (t=%.2f); node M=150 %.4f (t=%.1f)", st.name, mean(st.x), mean(st.y), tv, mean(st.z), welchT(st.x, st.z))
		if math.Abs(tv) > 4.5 {
			t.Errorf("%s differs between per-node and block candidates: %.4f vs %.4f (Welch t = %.2f)", st.name, mean(st.x), mean(st.y), tv)
		}
		if st.power && math.Abs(welchT(st.x, st.z)) < 4.5 {
			t.Errorf("%s does not separate M=100 from M=150 (t=%.2f): the comparison has no power", st.name, welchT(st.x, st.z))
		}
	}
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// Candidate lists longer than one GEMM chunk (chunkCols) are scored in
// several chunks; with M = N the result must still be the exact kNN graph.
func TestChunkedScoringIsExact(t *testing.T) {
	const n, d, k = 2*chunkCols + 100, 6, 7
	e := randomEmbeddings(n, d, 31)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	knn, err := BuildKNNGraph(e, k, 0)
	if err != nil {
		t.Fatal(err)
	}
	prox, err := BuildProximityGraph(e, GraphOptions{M: n, K: k, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 97 {
		checkNeighbours(t, "knn chunked", e, i, knn.Neighbours(i), all, 1e-5)
		checkNeighbours(t, "proximity chunked", e, i, prox.Neighbours(i), all, 1e-5)
	}
	// M = K > chunkCols: each node keeps its whole candidate set, which must
	// hold K distinct other nodes although self/drop masking spans chunks.
	big, err := BuildProximityGraph(e, GraphOptions{M: chunkCols + 500, K: chunkCols + 500, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		seen := make(map[int32]bool, big.K)
		for _, v := range big.Neighbours(i) {
			if int(v) == i || seen[v] {
				t.Fatalf("node %d: self or repeated neighbour %d", i, v)
			}
			seen[v] = true
		}
	}
}

// TestCheckEmbeddingsNonFinite: checkEmbeddings rejects exactly the values
// math.IsNaN or math.IsInf reject (the bit test it uses), naming the first
// one's row and column, and accepts every finite value, extreme ones
// included.
func TestCheckEmbeddingsNonFinite(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float32
		bad  bool
	}{
		{"nan", float32(math.NaN()), true},
		{"nan-negative-payload", math.Float32frombits(0xffc00001), true},
		{"+inf", float32(math.Inf(1)), true},
		{"-inf", float32(math.Inf(-1)), true},
		{"max", math.MaxFloat32, false},
		{"-max", -math.MaxFloat32, false},
		{"smallest-subnormal", math.SmallestNonzeroFloat32, false},
		{"negative-zero", float32(math.Copysign(0, -1)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := math.IsNaN(float64(c.v)) || math.IsInf(float64(c.v), 0); got != c.bad {
				t.Fatalf("case %v: IsNaN||IsInf = %v, want %v", c.v, got, c.bad)
			}
			e := Embeddings{N: 3, D: 4, Data: make([]float32, 12)}
			e.Data[2] = 1
			e.Data[9] = c.v      // row 2, column 1
			e.Data[11] = c.v + 0 // a later one is not reported
			err := checkEmbeddings(e)
			if !c.bad {
				if err != nil {
					t.Fatalf("%v rejected: %v", c.v, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "row 2 column 1") {
				t.Fatalf("%v: err = %v, want one naming row 2 column 1", c.v, err)
			}
		})
	}
}

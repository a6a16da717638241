package sampler

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/combin"
)

// The global samplers (GCBS, Spectral, OSGD, ClusterBatches) and their
// kernels against independent references.

// TestReverseCuthillMcKeeSciPy compares ReverseCuthillMcKee with SciPy's
// reverse_cuthill_mckee on 40 random graphs (testdata/rcm_scipy.json, made
// by testdata/rcm_scipy.py): the same order, node for node, and the same
// bandwidth.
func TestReverseCuthillMcKeeSciPy(t *testing.T) {
	b, err := os.ReadFile("testdata/rcm_scipy.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Graphs []struct {
			N         int        `json:"n"`
			Edges     [][2]int32 `json:"edges"`
			Order     []int32    `json:"order"`
			Bandwidth int        `json:"bandwidth"`
		} `json:"graphs"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Graphs) < 20 {
		t.Fatalf("%d graphs in the fixture", len(fx.Graphs))
	}
	for i, g := range fx.Graphs {
		sg, err := NewSymGraph(g.N, g.Edges)
		if err != nil {
			t.Fatal(err)
		}
		got := ReverseCuthillMcKee(sg)
		if !slices.Equal(got, g.Order) {
			t.Errorf("graph %d (n=%d): order %v, SciPy %v", i, g.N, got, g.Order)
		}
		if bw := Bandwidth(sg, got); bw != g.Bandwidth {
			t.Errorf("graph %d: bandwidth %d, SciPy's order has %d", i, bw, g.Bandwidth)
		}
	}
}

// Known bandwidths: a path whose labels are shuffled gets bandwidth 1 back;
// a star has bandwidth ⌈(n−1)/2⌉ under any order and RCM's is n−1 at most
// (the hub last); a 4×6 grid, whose optimum is 4, gets at most 5 (a BFS
// from a corner numbers the grid by anti-diagonals).
func TestReverseCuthillMcKeeKnownGraphs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 50
	perm := rng.Perm(n)
	var edges [][2]int32
	for i := 0; i+1 < n; i++ {
		edges = append(edges, [2]int32{int32(perm[i]), int32(perm[i+1])})
	}
	path, _ := NewSymGraph(n, edges)
	if ident := identity(n); Bandwidth(path, ident) < 10 {
		t.Fatalf("shuffled path has bandwidth %d before reordering: not a test", Bandwidth(path, ident))
	}
	if bw := Bandwidth(path, ReverseCuthillMcKee(path)); bw != 1 {
		t.Errorf("path: bandwidth %d after RCM, want 1", bw)
	}
	var grid [][2]int32
	const r, c = 4, 6
	for i := range r {
		for j := range c {
			v := int32(i*c + j)
			if j+1 < c {
				grid = append(grid, [2]int32{v, v + 1})
			}
			if i+1 < r {
				grid = append(grid, [2]int32{v, v + c})
			}
		}
	}
	g, _ := NewSymGraph(r*c, grid)
	if bw := Bandwidth(g, ReverseCuthillMcKee(g)); bw < 4 || bw > 5 {
		t.Errorf("4×6 grid: bandwidth %d after RCM, want 4 or 5", bw)
	}
	// Two components: each is contiguous in the order.
	two, _ := NewSymGraph(6, [][2]int32{{0, 2}, {2, 4}, {1, 3}, {3, 5}})
	o := ReverseCuthillMcKee(two)
	for p := 0; p < 3; p++ {
		if o[p]%2 != o[0]%2 || o[p+3]%2 != o[3]%2 {
			t.Errorf("two components interleave in %v", o)
		}
	}
}

func identity(n int) []int32 {
	o := make([]int32, n)
	for i := range o {
		o[i] = int32(i)
	}
	return o
}

// LinearSumAssignment against every permutation of random n×n costs (n ≤
// 7), with ties (integer costs) and without.
func TestLinearSumAssignmentBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 60; trial++ {
		n := 1 + trial%7
		cost := make([]float64, n*n)
		for i := range cost {
			if trial%2 == 0 {
				cost[i] = float64(rng.IntN(5))
			} else {
				cost[i] = rng.NormFloat64() * 10
			}
		}
		col, err := LinearSumAssignment(n, cost)
		if err != nil {
			t.Fatal(err)
		}
		seen := make([]bool, n)
		var got float64
		for i, j := range col {
			if seen[j] {
				t.Fatalf("column %d assigned twice: %v", j, col)
			}
			seen[j] = true
			got += cost[i*n+j]
		}
		best := math.Inf(1)
		for _, p := range combin.Permutations(n, n) {
			var s float64
			for i, j := range p {
				s += cost[i*n+j]
			}
			best = min(best, s)
		}
		if math.Abs(got-best) > 1e-9 {
			t.Errorf("n=%d: total %v, the best permutation %v", n, got, best)
		}
	}
	if _, err := LinearSumAssignment(2, []float64{0, math.NaN(), 1, 2}); err == nil || !strings.Contains(err.Error(), "cost[0][1]") {
		t.Errorf("NaN cost: %v", err)
	}
}

// greedyBalanced is the reference of TestBalancedAssign: the (row, centre)
// pairs in increasing distance, each taken when the row is free and the
// centre has room.
func greedyBalanced(x []float32, n, d int, centres []float32, c int) ([]int32, float64) {
	m := n / c
	type pair struct {
		i, j int
		d    float64
	}
	var ps []pair
	for i := range n {
		for j := range c {
			ps = append(ps, pair{i, j, math.Sqrt(sqDist(x[i*d:(i+1)*d], centres[j*d:(j+1)*d]))})
		}
	}
	slices.SortStableFunc(ps, func(a, b pair) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return 0
	})
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = -1
	}
	room := make([]int, c)
	for j := range room {
		room[j] = m
	}
	var tot float64
	for _, p := range ps {
		if labels[p.i] < 0 && room[p.j] > 0 {
			labels[p.i] = int32(p.j)
			room[p.j]--
			tot += p.d
		}
	}
	return labels, tot
}

// Balanced k-means gives exactly B rows per cluster and a total distance
// no larger than the greedy assignment's.
func TestBalancedAssign(t *testing.T) {
	for trial := range 20 {
		rng := rand.New(rand.NewPCG(uint64(trial), 5))
		c, m, d := 2+trial%4, 3+trial%5, 1+trial%4
		n := c * m
		x := make([]float32, n*d)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		centres, _, err := KMeans(x, n, d, c, DefaultKMeansIterations, rng)
		if err != nil {
			t.Fatal(err)
		}
		labels, tot, err := BalancedAssign(x, n, d, centres, c)
		if err != nil {
			t.Fatal(err)
		}
		count := make([]int, c)
		var check float64
		for i, l := range labels {
			count[l]++
			check += math.Sqrt(sqDist(x[i*d:(i+1)*d], centres[int(l)*d:int(l+1)*d]))
		}
		for j, k := range count {
			if k != m {
				t.Fatalf("trial %d: cluster %d has %d rows, want %d", trial, j, k, m)
			}
		}
		if math.Abs(check-tot) > 1e-9*max(1, tot) {
			t.Errorf("trial %d: reported total %v, recomputed %v", trial, tot, check)
		}
		_, greedy := greedyBalanced(x, n, d, centres, c)
		if tot > greedy+1e-9 {
			t.Errorf("trial %d: balanced total %v worse than greedy %v", trial, tot, greedy)
		}
	}
	if _, _, err := BalancedAssign(make([]float32, 10), 5, 2, make([]float32, 4), 2); err == nil {
		t.Error("5 rows into 2 equal clusters accepted")
	}
}

// KMeans ends at a fixed point of Lloyd's iterations, checked in float64:
// every row's label is its nearest centre and every centre with rows is
// their mean; on well-separated blobs the clusters are the blobs.
func TestKMeansFixedPoint(t *testing.T) {
	const c, per, d = 5, 40, 8
	x, truth := blobs(c, per, d, 0.05, 9)
	n := c * per
	centres, labels, err := KMeans(x, n, d, c, 100, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sums := make([]float64, c*d)
	counts := make([]int, c)
	for i, l := range labels {
		best, bd := -1, math.Inf(1)
		for j := range c {
			if v := sqDist(x[i*d:(i+1)*d], centres[j*d:(j+1)*d]); v < bd-1e-6 {
				best, bd = j, v
			}
		}
		if int32(best) != l {
			t.Errorf("row %d: label %d, nearest centre %d", i, l, best)
		}
		counts[l]++
		for k := range d {
			sums[int(l)*d+k] += float64(x[i*d+k])
		}
	}
	for j := range c {
		for k := range d {
			if counts[j] > 0 && math.Abs(sums[j*d+k]/float64(counts[j])-float64(centres[j*d+k])) > 1e-5 {
				t.Errorf("centre %d is not the mean of its rows", j)
			}
		}
	}
	if !samePartition(labels, truth) {
		t.Error("k-means did not recover well-separated blobs")
	}
}

// blobs returns c tight Gaussian blobs of per points around random unit
// centres in d dimensions, and each point's blob.
func blobs(c, per, d int, spread float64, seed uint64) ([]float32, []int32) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float32, c*per*d)
	truth := make([]int32, c*per)
	for j := range c {
		mu := make([]float64, d)
		for k := range mu {
			mu[k] = rng.NormFloat64()
		}
		for p := range per {
			i := j*per + p
			truth[i] = int32(j)
			for k := range d {
				x[i*d+k] = float32(mu[k] + spread*rng.NormFloat64())
			}
		}
	}
	return x, truth
}

func samePartition(a, b []int32) bool {
	ab, ba := map[int32]int32{}, map[int32]int32{}
	for i := range a {
		if v, ok := ab[a[i]]; ok && v != b[i] {
			return false
		}
		if v, ok := ba[b[i]]; ok && v != a[i] {
			return false
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return true
}

// refLoss is BatchLoss's definition as a plain float64 loop: the mean over
// anchors i of −log(exp(s_ii/τ) / Σ_j exp(s_ij/τ)), cosines from the raw
// embeddings.
func refLoss(e Embeddings, bt []int32, tau float64) float64 {
	cos := func(a, b int32) float64 {
		var s, na, nb float64
		for k := range e.D {
			x, y := float64(e.Data[int(a)*e.D+k]), float64(e.Data[int(b)*e.D+k])
			s += x * y
			na += x * x
			nb += y * y
		}
		return s / math.Sqrt(na*nb)
	}
	var tot float64
	for _, i := range bt {
		var den float64
		for _, j := range bt {
			den += math.Exp(cos(i, j) / tau)
		}
		tot += -math.Log(math.Exp(cos(i, i)/tau) / den)
	}
	return tot / float64(len(bt))
}

// OSGD keeps exactly the q highest-loss batches of its k, scored by a
// float64 loop (within 1e-6: BatchLoss reads the rows normalised to
// float32, the loop the raw rows): a twin with q = k (the same draws) hands out all k
// candidates of each round; they partition k·B distinct instances, come in
// decreasing reference loss, and the sampler's round is their first q.
func TestOSGDKeepsHighestLoss(t *testing.T) {
	const n, b, k, q, tau = 576, 8, 6, 2, 0.3 // 12 rounds: one permutation, one epoch of the twin
	e := randomEmbeddings(n, 6, 11)
	s, err := NewOSGD(n, b, k, q, tau, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	twin, _ := NewOSGD(n, b, k, k, tau, 0, 5)
	for _, x := range []*OSGD{s, twin} {
		if err := x.Refresh(e); err != nil {
			t.Fatal(err)
		}
	}
	for round := 0; round < 12; round++ {
		var all [][]int
		for range k {
			all = append(all, twin.Next())
		}
		seen := map[int]bool{}
		prev := math.Inf(1)
		for _, bt := range all {
			for _, v := range bt {
				if seen[v] {
					t.Fatalf("round %d: instance %d in two candidates", round, v)
				}
				seen[v] = true
			}
			l := refLoss(e, toInt32(bt), tau)
			if l > prev+1e-6 {
				t.Fatalf("round %d: candidates not in decreasing loss (%v after %v)", round, l, prev)
			}
			prev = l
			if got := BatchLoss(mustNormalize(t, e), e.D, toInt32(bt), tau); math.Abs(got-l) > 1e-6 {
				t.Fatalf("BatchLoss %v, reference %v", got, l)
			}
		}
		for i := range q {
			if got := s.Next(); !slices.Equal(got, all[i]) {
				t.Fatalf("round %d batch %d: %v, want the candidate of rank %d %v", round, i, got, i, all[i])
			}
		}
	}
}

func toInt32(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func mustNormalize(t *testing.T, e Embeddings) []float32 {
	u, err := normalizeRows(e)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// blobEmbeddings are c blobs of per instances each, as Embeddings, with
// their blob as label.
func blobEmbeddings(c, per, d int, seed uint64) (Embeddings, []int) {
	x, truth := blobs(c, per, d, 0.02, seed)
	labels := make([]int, len(truth))
	for i, v := range truth {
		labels[i] = int(v)
	}
	return Embeddings{N: c * per, D: d, Data: x}, labels
}

// On blobs of exactly B, GCBS (k = B−1: each blob is a component of the
// kNN graph), Spectral (k·B = N: one round is the dataset) and kmeans
// (C = N/B) hand out the blobs as batches, and antikmeans (C = B) never
// puts two of a blob together; Uniform's batches mix them.
func TestGlobalSamplersOnBlobs(t *testing.T) {
	const c, b, d = 4, 8, 6
	e, labels := blobEmbeddings(c, b, d, 3)
	n := c * b
	specs := []struct {
		spec Spec
		fn   float64 // every batch's false-negative ratio (blob = label)
	}{
		{Spec{Kind: KindGCBS, K: b - 1}, 1},
		{Spec{Kind: KindSpectral, Draw: c, Temperature: 0.5}, 1},
		{Spec{Kind: KindKMeans}, 1},
	}
	for _, sc := range specs {
		s, err := sc.spec.New(n, b, 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.(Refresher).Refresh(e); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3*s.BatchesPerEpoch(); i++ {
			if fn := FalseNegativeRatio(s.Next(), labels); fn != sc.fn {
				t.Errorf("%s batch %d: false-negative ratio %v, want %v", sc.spec.Kind, i, fn, sc.fn)
			}
		}
	}
	// antikmeans: B clusters of N/B = 4 = n_b members each would make every
	// batch hold one of each; here the blobs are the labels, so B = 8
	// clusters split the 4 blobs and a batch of 8 must hold two of a blob
	// (pigeonhole): at most 2 of any blob, the fewest possible.
	s, _ := Spec{Kind: KindAntiKMeans}.New(n, b, 1)
	s.(Refresher).Refresh(e)
	for i := 0; i < 3*s.BatchesPerEpoch(); i++ {
		cnt := map[int]int{}
		for _, v := range s.Next() {
			cnt[labels[v]]++
		}
		for blob, k := range cnt {
			if k != 2 {
				t.Errorf("antikmeans batch %d: %d of blob %d, want 2", i, k, blob)
			}
		}
	}
}

// ClusterBatches apart with C ≤ n_b-sized clusters: no two instances of one
// cluster share a batch.
func TestAntiKMeansNoClusterTwice(t *testing.T) {
	const b, nb = 10, 12
	e, _ := blobEmbeddings(b, nb, 5, 4) // B blobs of n_b: the clusters
	s, err := NewClusterBatches(b*nb, b, b, true, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(e); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*nb; i++ {
		seen := map[int32]bool{}
		for _, v := range s.Next() {
			if l := s.Labels()[v]; seen[l] {
				t.Fatalf("batch %d holds two instances of cluster %d", i, l)
			} else {
				seen[l] = true
			}
		}
	}
}

// SpectralEmbedding against the eigen-equation in float64: each column v
// (times √D) is an eigenvector of D^{−½}WD^{−½} with one of its largest
// eigenvalues, and on two weakly joined cliques the embedding separates
// them.
func TestSpectralEmbeddingEigen(t *testing.T) {
	const n, k = 12, 3
	rng := rand.New(rand.NewPCG(8, 8))
	w := make([]float64, n*n)
	for i := range n {
		for j := i + 1; j < n; j++ {
			v := rng.Float64()
			w[i*n+j], w[j*n+i] = v, v
		}
	}
	emb := SpectralEmbedding(w, n, k)
	dd := make([]float64, n)
	for i := range n {
		for j := range n {
			if j != i {
				dd[i] += w[i*n+j]
			}
		}
		dd[i] = math.Sqrt(dd[i])
	}
	for c := range k {
		v := make([]float64, n)
		for i := range n {
			v[i] = emb[i*k+c] * dd[i]
		}
		mv := make([]float64, n)
		for i := range n {
			for j := range n {
				if j != i {
					mv[i] += w[i*n+j] / (dd[i] * dd[j]) * v[j]
				}
			}
		}
		var num, den float64
		for i := range n {
			num += mv[i] * v[i]
			den += v[i] * v[i]
		}
		lambda := num / den
		for i := range n {
			if math.Abs(mv[i]-lambda*v[i]) > 1e-9 {
				t.Fatalf("column %d: residual %v at row %d", c, mv[i]-lambda*v[i], i)
			}
		}
		if c == 0 && math.Abs(lambda-1) > 1e-9 {
			t.Errorf("first column's eigenvalue %v, want 1 (the top of a normalised affinity)", lambda)
		}
	}
	// Two cliques joined by weak edges (10⁻³): the two top eigenvectors
	// are about the cliques' indicators' sum and difference, so the rows of
	// a clique are about equal and the two cliques' rows about orthogonal.
	for i := range n {
		for j := range n {
			switch {
			case i == j:
				w[i*n+j] = 0
			case (i < n/2) == (j < n/2):
				w[i*n+j] = 1
			default:
				w[i*n+j] = 1e-3
			}
		}
	}
	emb = SpectralEmbedding(w, n, 2)
	lab := make([]int32, n)
	for i := range n {
		if emb[i*2]*emb[0]+emb[i*2+1]*emb[1] < 0.5*(emb[0]*emb[0]+emb[1]*emb[1]) {
			lab[i] = 1
		}
	}
	truth := make([]int32, n)
	for i := n / 2; i < n; i++ {
		truth[i] = 1
	}
	if !samePartition(lab, truth) {
		t.Errorf("two cliques not separated by the embedding: %v", emb)
	}
}

// Same seed, same batches; another seed, other batches; a state saved in
// the middle of a round restores the batches that follow, for every global
// sampler with a refresh mid-run.
func TestGlobalDeterminismAndState(t *testing.T) {
	const n, b = 203, 10
	e := randomEmbeddings(n, 7, 21)
	e2 := randomEmbeddings(n, 7, 22)
	for _, kind := range GlobalKinds {
		t.Run(kind, func(t *testing.T) {
			mk := globalMaker(kind)
			run := func(seed uint64, steps int, s Sampler) [][]int {
				var out [][]int
				for i := 0; i < steps; i++ {
					if i == 0 || i == 37 {
						x := e
						if i == 37 {
							x = e2
						}
						if err := s.(Refresher).Refresh(x); err != nil {
							t.Fatal(err)
						}
					}
					out = append(out, s.Next())
				}
				return out
			}
			a, _ := mk(n, b, 1)
			a2, _ := mk(n, b, 1)
			c, _ := mk(n, b, 2)
			ra, ra2, rc := run(1, 80, a), run(1, 80, a2), run(2, 80, c)
			if !slices.EqualFunc(ra, ra2, slices.Equal) {
				t.Fatal("same seed, different batches")
			}
			if slices.EqualFunc(ra, rc, slices.Equal) {
				t.Fatal("seeds 1 and 2 give the same batches")
			}
			// Save after 53 batches (after the second refresh, mid-round),
			// restore into a fresh sampler of another seed.
			x, _ := mk(n, b, 1)
			run(1, 53, x)
			st, err := x.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			y, _ := mk(n, b, 9)
			if err := y.UnmarshalBinary(st); err != nil {
				t.Fatal(err)
			}
			for i := 53; i < 80; i++ {
				if got := y.Next(); !slices.Equal(got, ra[i]) {
					t.Fatalf("batch %d after restore: %v, uninterrupted %v", i, got, ra[i])
				}
			}
			// A state of another configuration is refused.
			other, err := Spec{Kind: kind}.New(n+1, b, 1)
			if kind == KindSpectral || kind == KindOSGD {
				other, err = Spec{Kind: kind, Temperature: 0.25}.New(n, b, 1)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := other.UnmarshalBinary(st); err == nil {
				t.Error("state of another configuration accepted")
			}
			if err := y.UnmarshalBinary(st[:len(st)/2]); err == nil {
				t.Error("truncated state accepted")
			}
		})
	}
}

// Parameters that do not fit are refused with the key and the allowed
// range.
func TestGlobalParameterErrors(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		n, b int
		want string
	}{
		{Spec{Kind: KindSpectral, Draw: 5, Temperature: 0.5}, 100, 25, "sampler.draw: must be in [2, ⌊N/B⌋ = 4]"},
		{Spec{Kind: KindSpectral, Draw: 1, Temperature: 0.5}, 100, 25, "sampler.draw: must be >= 2"},
		{Spec{Kind: KindSpectral, Temperature: 0.5}, 100, 60, "sampler.draw: must be in [2, ⌊N/B⌋ = 1]"},
		{Spec{Kind: KindOSGD, Draw: 3, Keep: 4, Temperature: 0.5}, 100, 10, "sampler.keep: must be in [1, draw = 3]"},
		{Spec{Kind: KindOSGD, Draw: 11, Temperature: 0.5}, 100, 10, "sampler.draw: must be in [1, ⌊N/B⌋ = 10]"},
		{Spec{Kind: KindOSGD, Keep: 3, Temperature: 0.5}, 100, 50, "sampler.keep: must be in [1, draw = 2]"},
		{Spec{Kind: KindOSGD}, 100, 10, "sampler.temperature"},
		{Spec{Kind: KindOSGD, Temperature: -1}, 100, 10, "sampler.temperature: must be > 0"},
		{Spec{Kind: KindKMeans, Clusters: 11}, 100, 9, "sampler.clusters: must be in [1, 11]"},
		{Spec{Kind: KindKMeans, Clusters: 12}, 100, 9, "sampler.clusters: must be in [1, 11]"},
		{Spec{Kind: KindAntiKMeans, Clusters: 8}, 100, 9, "sampler.clusters: must be in [9, 100]"},
		{Spec{Kind: KindGCBS, K: 100}, 100, 9, "sampler.k: must be in [1, N−1 = 99]"},
		{Spec{Kind: KindGCBS, K: -1}, 100, 9, "sampler.k: must be >= 1"},
		{Spec{Kind: KindKMeans, Draw: 2}, 100, 9, "sampler.draw: only kinds spectral and osgd have"},
		{Spec{Kind: KindBatchSampler, M: 10, K: 5, Clusters: 2}, 100, 9, "sampler.clusters: only kinds kmeans and antikmeans have"},
	} {
		_, err := tc.spec.New(tc.n, tc.b, 1)
		if tc.spec.Kind == KindKMeans && tc.spec.Clusters == 11 {
			if err != nil {
				t.Errorf("%+v: %v (11 = ⌊100/9⌋ is allowed)", tc.spec, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v N=%d B=%d: error %v, want %q", tc.spec, tc.n, tc.b, err, tc.want)
		}
	}
}

// topEigen against gonum's full EigenSym: the same k largest eigenvalues
// and the same eigenvectors up to sign, on random symmetric matrices, on a
// matrix of rank 2 (a breakdown after two steps) and on normalised
// affinities of clustered embeddings (the case of SpectralEmbedding).
func TestTopEigenMatchesEigenSym(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	type tc struct {
		name string
		n, k int
		a    []float64
	}
	var cases []tc
	for _, n := range []int{5, 40, 120} {
		a := make([]float64, n*n)
		for i := range n {
			for j := i; j < n; j++ {
				v := rng.NormFloat64()
				a[i*n+j], a[j*n+i] = v, v
			}
		}
		cases = append(cases, tc{"random", n, min(4, n), a})
	}
	{
		n := 30
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				a[i*n+j] = 3*float64((i%3)-1)*float64((j%3)-1) + float64(i%2)*float64(j%2)
			}
		}
		cases = append(cases, tc{"rank2", n, 2, a})
	}
	{
		e, _ := blobEmbeddings(4, 32, 8, 5)
		u := mustNormalize(t, e)
		n := e.N
		w := SpectralAffinity(u, e.D, identity(n), 32, 0.2)
		dd := make([]float64, n)
		for i := range n {
			for j := range n {
				if j != i {
					dd[i] += w[i*n+j]
				}
			}
			dd[i] = math.Sqrt(dd[i])
		}
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				if j != i {
					a[i*n+j] = w[i*n+j] / (dd[i] * dd[j])
				}
			}
		}
		cases = append(cases, tc{"affinity", n, 4, a})
	}
	for _, c := range cases {
		v0 := make([]float64, c.n)
		for i := range v0 {
			v0[i] = 1 + 0.5*math.Sin(float64(i)+1)
		}
		vals, vecs := topEigen(c.a, c.n, c.k, v0, 1e-10)
		sym := mat.NewSymDense(c.n, slices.Clone(c.a))
		var es mat.EigenSym
		if !es.Factorize(sym, true) {
			t.Fatal("EigenSym failed")
		}
		ref := es.Values(nil)
		var rv mat.Dense
		es.VectorsTo(&rv)
		for j := range c.k {
			want := ref[c.n-1-j]
			if math.Abs(vals[j]-want) > 1e-8*max(1, math.Abs(want)) {
				t.Errorf("%s n=%d: eigenvalue %d is %v, EigenSym %v", c.name, c.n, j, vals[j], want)
			}
			// Compare eigenvectors where the eigenvalue is simple.
			if (j > 0 && math.Abs(ref[c.n-j]-want) < 1e-6) || (j+1 < c.n && math.Abs(ref[c.n-2-j]-want) < 1e-6) {
				continue
			}
			var d float64
			for i := range c.n {
				d += vecs[i*c.k+j] * rv.At(i, c.n-1-j)
			}
			if math.Abs(math.Abs(d)-1) > 1e-6 {
				t.Errorf("%s n=%d: eigenvector %d has |cos| %v with EigenSym's", c.name, c.n, j, math.Abs(d))
			}
		}
	}
}

// balancedTransport against the Hungarian algorithm on the expanded n×n
// matrix (every group's column repeated m times): the same minimal total
// on random costs, with ties (integer costs), without, and tiny and
// nearly tied (where a rounding cycle once made the path back loop).
func TestBalancedTransportMatchesHungarian(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for trial := range 80 {
		c, m := 1+trial%5, 1+(trial/5)%6
		n := c * m
		cost := make([]float64, n*c)
		for i := range cost {
			switch trial % 3 {
			case 0:
				cost[i] = float64(rng.IntN(4))
			case 1:
				cost[i] = rng.Float64() * 10
			default:
				// Distances to almost equal centres (a flat spectral
				// embedding): tiny, nearly tied costs.
				cost[i] = 1e-7 * (1 + 1e-6*rng.Float64())
			}
		}
		labels := balancedTransport(cost, n, c, m)
		size := make([]int, c)
		var got float64
		for i, l := range labels {
			size[l]++
			got += cost[i*c+int(l)]
		}
		for j, s := range size {
			if s != m {
				t.Fatalf("trial %d: group %d has %d rows, want %d", trial, j, s, m)
			}
		}
		big := make([]float64, n*n)
		for i := range n {
			for j := range n {
				big[i*n+j] = cost[i*c+j/m]
			}
		}
		col, err := LinearSumAssignment(n, big)
		if err != nil {
			t.Fatal(err)
		}
		var want float64
		for i, j := range col {
			want += big[i*n+j]
		}
		if math.Abs(got-want) > 1e-9*max(1, want) {
			t.Errorf("trial %d (c=%d m=%d): total %v, Hungarian %v", trial, c, m, got, want)
		}
	}
}

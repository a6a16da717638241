package sampler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// literalRWR is Algorithm 3 of the paper, line by line.
func literalRWR(g *Graph, u int32, alpha float64, b int, r *rand.Rand) []int {
	var s []int
	in := map[int32]bool{}
	v := u
	for len(s) < b {
		if !in[v] {
			in[v] = true
			s = append(s, int(v))
		}
		if r.Float64() < alpha {
			v = u
		} else {
			nb := g.Neighbours(int(v))
			v = nb[r.IntN(len(nb))]
		}
	}
	return s
}

// The walker's RWR removes Algorithm 3's idle steps at the restart node; the
// ordered batches it produces must follow the same distribution. A
// two-sample chi-square homogeneity test compares the two on a small graph.
func TestRWRMatchesAlgorithm2(t *testing.T) {
	// i → i+1, i+3, i+4 (mod 8): strongly connected, K = 3.
	const n, k, b = 8, 3, 5
	adj := make([]int32, 0, k*n)
	for i := 0; i < n; i++ {
		adj = append(adj, int32((i+1)%n), int32((i+3)%n), int32((i+4)%n))
	}
	g, err := NewGraph(n, k, adj)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 30000
	sample := func(f func() []int) map[string]float64 {
		c := map[string]float64{}
		for i := 0; i < draws; i++ {
			c[fmt.Sprint(f())]++
		}
		return c
	}
	literal := func(alpha float64, seed uint64) map[string]float64 {
		r := rand.New(rand.NewPCG(seed, 2))
		return sample(func() []int { return literalRWR(g, 0, alpha, b, r) })
	}
	ours := func(alpha float64, seed uint64) map[string]float64 {
		var w walker
		src := rand.NewPCG(seed, 4)
		return sample(func() []int {
			w.begin(g)
			return w.walk(0, walkParams{kind: WalkRWR, b: b, alpha: alpha, maxSteps: 1 << 20}, src, func() int32 { t.Fatal("fallback used"); return 0 }, nil)
		})
	}
	for _, tc := range []struct {
		alpha, ourAlpha float64
		same            bool
	}{{0.3, 0.3, true}, {0.7, 0.7, true}, {0.3, 0.4, false}} {
		lit, our := literal(tc.alpha, 1), ours(tc.ourAlpha, 3)
		keys := map[string]bool{}
		for k := range lit {
			keys[k] = true
		}
		for k := range our {
			keys[k] = true
		}
		var chi float64
		for k := range keys {
			a, b := lit[k], our[k]
			chi += (a - b) * (a - b) / (a + b)
		}
		df := float64(len(keys) - 1)
		p := 1 - distuv.ChiSquared{K: df}.CDF(chi)
		t.Logf("Algorithm 3 α=%v vs walker α=%v: %d distinct ordered batches, chi²=%.1f df=%v p=%.3g", tc.alpha, tc.ourAlpha, len(keys), chi, df, p)
		if tc.same && p < 1e-3 {
			t.Errorf("α=%v: walker RWR differs from Algorithm 3 (chi²=%.1f, df=%v, p=%.2g)", tc.alpha, chi, df, p)
		}
		if !tc.same && p >= 1e-3 {
			t.Errorf("the test cannot tell α=%v from α=%v (p=%.2g)", tc.alpha, tc.ourAlpha, p)
		}
	}
}

// With M = N (every other node is a candidate, so G is the exact kNN graph)
// and α = 1, every step leaves from the start node: a batch of B = K+1 is the
// start node and its K nearest neighbours, like the kNN Sampler.
func TestAlphaOneIsKNeighbourhood(t *testing.T) {
	const n, d, k = 200, 8, 15
	e := randomEmbeddings(n, d, 21)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for _, graph := range []string{GraphProximity, GraphKNN} {
		s, err := NewBatchSampler(Config{BatchSize: k + 1, M: n, K: k, Graph: graph, Alpha: Schedule{Start: 1, Kind: ScheduleConstant}}, n, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Refresh(e); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2*s.BatchesPerEpoch(); i++ {
			b := s.Next()
			start := b[0]
			nb := s.Graph().Neighbours(start)
			got, want := slices.Clone(b[1:]), make([]int, 0, k)
			for _, v := range nb {
				want = append(want, int(v))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: batch %v is not start %d plus its neighbours %v", graph, b, start, nb)
			}
			nb32 := make([]int32, 0, k)
			for _, v := range b[1:] {
				nb32 = append(nb32, int32(v))
			}
			checkNeighbours(t, graph, e, start, nb32, all, 1e-5)
		}
	}
}

// A graph made of tiny components (3 nodes, K = 2, plus one node whose only
// neighbour is itself) cannot supply a batch of 64 from one walk: every walk
// kind must fall back to new start nodes, never hang and never repeat a node.
func TestTinyComponentsNoHang(t *testing.T) {
	const n, k, b = 1000, 2, 64
	adj := make([]int32, n*k)
	for c := 0; c+3 <= n; c += 3 {
		for i := 0; i < 3; i++ {
			v := c + i
			adj[v*k] = int32(c + (i+1)%3)
			adj[v*k+1] = int32(c + (i+2)%3)
		}
	}
	adj[999*k], adj[999*k+1] = 999, 999
	g, err := NewGraph(n, k, adj)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		walk  string
		alpha float64
		steps int
	}{{WalkRWR, 0.2, 0}, {WalkRWR, 1, 0}, {WalkRW, 0, 0}, {WalkBFS, 0, 0}, {WalkDFS, 0, 0}, {WalkRWR, 0.5, 1}} {
		s, err := NewBatchSampler(Config{BatchSize: b, M: 2, K: 2, Walk: tc.walk, Alpha: Schedule{Start: tc.alpha, Kind: ScheduleConstant}, MaxWalkSteps: tc.steps}, n, 9)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetGraph(g); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3*s.BatchesPerEpoch(); i++ {
			checkBatch(t, tc.walk, s.Next(), b, n)
		}
	}
}

// checkBatch fails unless batch holds want distinct indices in [0, n).
func checkBatch(t *testing.T, name string, batch []int, want, n int) {
	t.Helper()
	if len(batch) != want {
		t.Fatalf("%s: batch of %d, want %d", name, len(batch), want)
	}
	seen := make(map[int]bool, len(batch))
	for _, v := range batch {
		if v < 0 || v >= n || seen[v] {
			t.Fatalf("%s: bad or repeated index %d in %v", name, v, batch)
		}
		seen[v] = true
	}
}

// Every walk kind on a proximity graph gives full batches of distinct
// indices, for batch sizes up to N: B, and B+1 for the last batch of an
// epoch when N mod B = 1 (B = 299).
func TestWalksNoDuplicates(t *testing.T) {
	e := randomEmbeddings(300, 6, 2)
	for _, walk := range []string{WalkRWR, WalkRW, WalkBFS, WalkDFS} {
		for _, b := range []int{2, 7, 64, 299, 300} {
			s, err := NewBatchSampler(Config{BatchSize: b, M: 30, K: 5, Walk: walk}, 300, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Refresh(e); err != nil {
				t.Fatal(err)
			}
			bpe := s.BatchesPerEpoch()
			for i := 0; i < 2*bpe+1; i++ {
				want := b
				if 300%b == 1 && i%bpe == bpe-1 {
					want = b + 1
				}
				checkBatch(t, fmt.Sprintf("%s B=%d", walk, b), s.Next(), want, 300)
			}
		}
	}
}

// BFS with B = K+1 takes the start node and all its out-neighbours.
func TestBFSFirstLevel(t *testing.T) {
	e := randomEmbeddings(100, 5, 8)
	s, err := NewBatchSampler(Config{BatchSize: 6, M: 20, K: 5, Walk: WalkBFS}, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Refresh(e); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		b := s.Next()
		got := slices.Clone(b[1:])
		var want []int
		for _, v := range s.Graph().Neighbours(b[0]) {
			want = append(want, int(v))
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("BFS batch %v is not start %d plus its neighbours %v", b, b[0], want)
		}
	}
}

func TestWalkFunction(t *testing.T) {
	// 10 components of 3 nodes: a batch of 12 needs fallback starts.
	const n = 30
	adj := make([]int32, 0, 2*n)
	for v := 0; v < n; v++ {
		c := v / 3 * 3
		adj = append(adj, int32(c+(v-c+1)%3), int32(c+(v-c+2)%3))
	}
	g, err := NewGraph(n, 2, adj)
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(1, 2)
	for _, kind := range []string{"", WalkRW, WalkBFS, WalkDFS} {
		b, err := Walk(g, 4, WalkOptions{Kind: kind, B: 12, Alpha: 0.3}, src)
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, "Walk "+kind, b, 12, n)
		if b[0] != 4 || !slices.Contains(b, 3) || !slices.Contains(b, 5) {
			t.Errorf("%q: batch %v does not start with node 4's component", kind, b)
		}
	}
	for _, tc := range []struct {
		start int
		opt   WalkOptions
	}{{-1, WalkOptions{B: 3}}, {30, WalkOptions{B: 3}}, {0, WalkOptions{B: 0}}, {0, WalkOptions{B: 3, Alpha: 2}}, {0, WalkOptions{B: 3, Kind: "hop"}}} {
		if _, err := Walk(g, tc.start, tc.opt, src); err == nil {
			t.Errorf("Walk(start=%d, %+v) accepted", tc.start, tc.opt)
		}
	}
	if _, err := NewGraph(3, 1, []int32{1, 2, 3}); err == nil {
		t.Error("NewGraph accepted an out-of-range neighbour")
	}
}

package sampler

// Tests of the published code's candidate draw, with replacement
// (GraphOptions.Candidates = CandidatesWithReplacement).

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// replacementDraws re-derives, independently of the builder's code, the
// multiset of M candidates every node draws with replacement: for ShareNode
// node i's own generator, for ShareBlock the block's generator, the blocks
// cut from the builder's permutation with block size bs.
func replacementDraws(n, m, bs int, sharing string, seed uint64) [][]int {
	draws := make([][]int, n)
	if sharing == ShareNode {
		for i := range n {
			rng := rand.New(rand.NewPCG(mix64(seed^0x6e6f6465), uint64(i)))
			for range m {
				draws[i] = append(draws[i], rng.IntN(n))
			}
		}
		return draws
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	rand.New(rand.NewPCG(mix64(seed), 0x6b6c6f636b)).Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	for b := 0; b*bs < n; b++ {
		rng := rand.New(rand.NewPCG(mix64(seed^0x5a5a), uint64(b)))
		c := make([]int, m)
		for j := range c {
			c[j] = rng.IntN(n)
		}
		for _, v := range perm[b*bs : min((b+1)*bs, n)] {
			draws[v] = c
		}
	}
	return draws
}

// checkMultisetTopK checks row, node i's K out-neighbours, against a
// float64 reference: the cosine of i with every drawn column (the node
// itself and repeats included), the K-th best of those M scores, and then,
// node by node, that a node scoring above it by more than tol fills as many
// slots as it was drawn, a node below it by more than tol none, and no node
// more slots than it was drawn (what torch.topk over the M scores keeps,
// up to near-ties).
func checkMultisetTopK(t *testing.T, name string, e Embeddings, i int, row []int32, draw []int, tol float64) {
	t.Helper()
	ui := unitRows([]int{i}, e)[0]
	drawn := map[int]int{}
	score := map[int]float64{}
	all := make([]float64, 0, len(draw))
	for _, v := range draw {
		drawn[v]++
		if _, ok := score[v]; !ok {
			var s float64
			for j, x := range unitRows([]int{v}, e)[0] {
				s += x * ui[j]
			}
			score[v] = s
		}
		all = append(all, score[v])
	}
	slices.Sort(all)
	slices.Reverse(all)
	kth := all[len(row)-1]
	kept := map[int]int{}
	for _, v := range row {
		kept[int(v)]++
	}
	for v, c := range kept {
		switch {
		case drawn[v] == 0:
			t.Fatalf("%s: node %d has neighbour %d, which it did not draw", name, i, v)
		case c > drawn[v]:
			t.Fatalf("%s: node %d keeps %d %d times, drawn %d times", name, i, v, c, drawn[v])
		case score[v] < kth-tol:
			t.Fatalf("%s: node %d keeps %d (cosine %v) below the %d-th best %v", name, i, v, score[v], len(row), kth)
		}
	}
	for v, c := range drawn {
		if score[v] > kth+tol && kept[v] != c {
			t.Fatalf("%s: node %d keeps %d (cosine %v > %d-th best %v) %d times, drawn %d times", name, i, v, score[v], len(row), kth, kept[v], c)
		}
	}
}

// The with-replacement graph is the top K of the re-derived draws under a
// float64 reference, for both sharing modes, M below and above N (M = 2N,
// and more than one scoring chunk), K above the number of distinct nodes
// (K > N), and K = M (every draw kept). Self-loops and repeated
// neighbours appear where the draws make them likely.
func TestWithReplacementMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name         string
		n, m, k, bs  int
		sharing      string
		seed         uint64
		selfAndDupes bool // the graph must hold self-loops and repeats
	}{
		{"block M<N", 200, 64, 8, 0, ShareBlock, 1, false},
		{"block M=2N", 200, 400, 20, 0, ShareBlock, 2, true},
		{"block M=2N bs=7", 200, 400, 20, 7, ShareBlock, 3, true},
		{"block M>2 chunks", 300, 2*chunkCols + 50, 30, 0, ShareBlock, 4, true},
		{"block K>N", 12, 40, 20, 0, ShareBlock, 5, true},
		{"block K=M", 60, 90, 90, 0, ShareBlock, 6, true},
		{"node M<N", 200, 64, 8, 0, ShareNode, 7, false},
		{"node M=2N", 150, 300, 10, 0, ShareNode, 8, true},
		{"node K>N", 12, 40, 20, 0, ShareNode, 9, true},
		{"node K=M", 60, 90, 90, 0, ShareNode, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := randomEmbeddings(tc.n, 6, tc.seed)
			opt := GraphOptions{M: tc.m, K: tc.k, Candidates: CandidatesWithReplacement, CandidateSharing: tc.sharing, BlockSize: tc.bs, Seed: tc.seed, Workers: 2}
			g, err := BuildProximityGraph(e, opt)
			if err != nil {
				t.Fatal(err)
			}
			if g.N != tc.n || g.K != tc.k || len(g.Adj) != tc.n*tc.k {
				t.Fatalf("graph is %d×%d with %d entries, want %d×%d (no clamp)", g.N, g.K, len(g.Adj), tc.n, tc.k)
			}
			bs := tc.bs
			if bs == 0 {
				bs = DefaultBlockSize
			}
			bs = min(bs, max(minBlockSize, tc.m/minBlocksPerNode))
			draws := replacementDraws(tc.n, tc.m, bs, tc.sharing, opt.Seed)
			selfRows, dupRows := 0, 0
			for i := 0; i < tc.n; i++ {
				row := g.Neighbours(i)
				checkMultisetTopK(t, tc.name, e, i, row, draws[i], 1e-5)
				if slices.Contains(row, int32(i)) {
					selfRows++
				} else if slices.Contains(draws[i], i) {
					t.Fatalf("node %d drew itself (cosine 1, its best candidate) but does not keep it: %v", i, row)
				}
				if len(distinct(row)) < len(row) {
					dupRows++
				}
			}
			t.Logf("rows with a self-loop %d, with a repeated neighbour %d, of %d", selfRows, dupRows, tc.n)
			if tc.selfAndDupes && (selfRows == 0 || dupRows == 0) {
				t.Errorf("no self-loop (%d rows) or no repeated neighbour (%d rows)", selfRows, dupRows)
			}
			if tc.k > tc.n && dupRows != tc.n {
				t.Errorf("K = %d > N = %d, but only %d rows repeat a node", tc.k, tc.n, dupRows)
			}
		})
	}
}

// distinct returns the distinct values of v.
func distinct(v []int32) []int32 {
	s := slices.Clone(v)
	slices.Sort(s)
	return slices.Compact(s)
}

// M > N is accepted and matters: with replacement M = 2N and M = 4N give
// different graphs, and a node keeps its nearest other node about as
// often as it draws it, 1 − (1 − 1/N)^M (0.865 and 0.982), while without
// replacement both M clamp to N−1, the same exact kNN graph. (K = 20 is
// larger than the self-loops M = 4N draws, Poisson(4), except with
// probability 10⁻⁸.)
func TestWithReplacementLargeM(t *testing.T) {
	const n, d, k = 1000, 8, 20
	e := randomEmbeddings(n, d, 21)
	nearest, err := BuildKNNGraph(e, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	build := func(m int, candidates string) *Graph {
		t.Helper()
		s, err := NewBatchSampler(Config{BatchSize: 32, M: m, K: k, Candidates: candidates}, n, 3)
		if err != nil {
			t.Fatal(err)
		}
		if c := s.Config(); candidates == CandidatesWithReplacement && (c.M != m || c.K != k) {
			t.Fatalf("M = %d, K = %d: the config holds M = %d, K = %d (clamped)", m, k, c.M, c.K)
		}
		if err := s.Refresh(e); err != nil {
			t.Fatal(err)
		}
		return s.Graph()
	}
	keepsNearest := func(g *Graph) float64 {
		hit := 0
		for i := 0; i < n; i++ {
			if slices.Contains(g.Neighbours(i), nearest.Adj[i]) {
				hit++
			}
		}
		return float64(hit) / n
	}
	with2, with4 := build(2*n, CandidatesWithReplacement), build(4*n, CandidatesWithReplacement)
	if slices.Equal(with2.Adj, with4.Adj) {
		t.Error("with replacement, M = 2N and M = 4N gave the same graph")
	}
	for _, tc := range []struct {
		m int
		g *Graph
	}{{2 * n, with2}, {4 * n, with4}} {
		p := 1 - math.Pow(1-1.0/n, float64(tc.m))
		got := keepsNearest(tc.g)
		tol := 5 * math.Sqrt(p*(1-p)/n)
		t.Logf("M = %d: nearest neighbour kept by %.3f of the nodes, expected %.3f ± %.3f", tc.m, got, p, tol)
		if math.Abs(got-p) > tol {
			t.Errorf("M = %d: nearest neighbour kept by %.3f of the nodes, want %.3f ± %.3f", tc.m, got, p, tol)
		}
	}
	without2, without4 := build(2*n, ""), build(4*n, "")
	if !slices.Equal(without2.Adj, without4.Adj) || keepsNearest(without2) != 1 {
		t.Error("without replacement, M = 2N and 4N should both be the exact kNN graph")
	}
}

// The share of the N nodes among a node's M draws is 1 − (1 − 1/N)^M, and
// so is the share of nodes that draw themselves. With K = M the row is the
// whole draw, so its distinct nodes are counted directly. The tolerance is
// 5 standard errors of the binomial variance p(1 − p) per node and draw
// (independent draws: nodes for ShareNode, blocks for ShareBlock); the
// indicators of a draw are negatively correlated, so the true variance is
// smaller and the tolerance conservative. It is tight enough to tell the
// draw from one without replacement (share min(M, N−1)/N) at every M.
func TestWithReplacementDistinctFraction(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical test of the draw")
	}
	const n, builds = 400, 20
	e := randomEmbeddings(n, 4, 8)
	for _, sharing := range []string{ShareBlock, ShareNode} {
		for _, m := range []int{n / 2, n, 2 * n, 4 * n} {
			t.Run(fmt.Sprintf("%s M=%d", sharing, m), func(t *testing.T) {
				var sum, self float64
				draws := 0 // independent draws
				for b := range builds {
					g, err := BuildProximityGraph(e, GraphOptions{M: m, K: m, Candidates: CandidatesWithReplacement, CandidateSharing: sharing, Seed: uint64(100 + b)})
					if err != nil {
						t.Fatal(err)
					}
					seen := map[string]bool{}
					for i := 0; i < n; i++ {
						row := distinct(g.Neighbours(i))
						if slices.Contains(row, int32(i)) {
							self++
						}
						key := fmt.Sprint(row) // a block's nodes share one draw
						if sharing == ShareBlock && seen[key] {
							continue
						}
						seen[key] = true
						sum += float64(len(row)) / n
						draws++
					}
				}
				p := 1 - math.Pow(1-1.0/n, float64(m))
				got := sum / float64(draws)
				tol := 5 * math.Sqrt(p*(1-p)/float64(n*draws))
				selfShare := self / float64(n*builds)
				selfTol := 5 * math.Sqrt(p*(1-p)/float64(n*builds))
				t.Logf("distinct share %.4f over %d draws, expected %.4f ± %.4f; self drawn by %.4f ± %.4f", got, draws, p, tol, selfShare, selfTol)
				if math.Abs(got-p) > tol {
					t.Errorf("distinct share of the draws %.4f, want %.4f ± %.4f", got, p, tol)
				}
				if math.Abs(selfShare-p) > selfTol {
					t.Errorf("share of nodes that drew themselves %.4f, want %.4f ± %.4f", selfShare, p, selfTol)
				}
				if without := float64(min(m, n-1)) / n; math.Abs(without-p) <= tol {
					t.Errorf("the tolerance %.4f cannot tell %.4f from the draw without replacement (%.4f)", tol, p, without)
				}
				if sharing == ShareBlock && draws < 100 {
					t.Errorf("only %d independent block draws", draws)
				}
			})
		}
	}
}

// The graph does not depend on Workers, and BuildGraphRows (shards, and
// float16-resident rows) gives the rows of the whole graph, with
// replacement too; the default draw is the same with Candidates "" and
// "without_replacement".
func TestWithReplacementDeterministic(t *testing.T) {
	h := randomFloat16(500, 12, 4)
	e := h.Widen()
	for _, sharing := range []string{ShareBlock, ShareNode} {
		for _, m := range []int{60, 1200} {
			name := fmt.Sprintf("%s M=%d", sharing, m)
			opt := GraphOptions{M: m, K: 15, Candidates: CandidatesWithReplacement, CandidateSharing: sharing, Seed: BuildSeed(5, 2)}
			var graphs [][]int32
			for _, w := range []int{1, 2, 3} {
				opt.Workers = w
				g, err := BuildProximityGraph(e, opt)
				if err != nil {
					t.Fatal(err)
				}
				graphs = append(graphs, g.Adj)
			}
			if !slices.Equal(graphs[0], graphs[1]) || !slices.Equal(graphs[0], graphs[2]) {
				t.Errorf("%s: the graph depends on Workers", name)
			}
			for _, r := range [][2]int{{0, 500}, {0, 137}, {137, 390}, {390, 500}} {
				rows, err := BuildGraphRows(e, GraphProximity, opt, r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(rows.Adj, graphs[0][r[0]*15:r[1]*15]) {
					t.Errorf("%s: BuildGraphRows [%d, %d) differs from the whole graph", name, r[0], r[1])
				}
				half, err := BuildGraphRowsFloat16(h, GraphProximity, opt, r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(half.Adj, rows.Adj) {
					t.Errorf("%s: float16 rows [%d, %d) differ from float32", name, r[0], r[1])
				}
			}
			opt.Seed++
			if other, _ := BuildProximityGraph(e, opt); slices.Equal(other.Adj, graphs[0]) {
				t.Errorf("%s: the graph does not depend on the seed", name)
			}
		}
		a, _ := BuildProximityGraph(e, GraphOptions{M: 60, K: 15, CandidateSharing: sharing, Seed: 9})
		b, _ := BuildProximityGraph(e, GraphOptions{M: 60, K: 15, Candidates: CandidatesWithoutReplacement, CandidateSharing: sharing, Seed: 9})
		c, _ := BuildProximityGraph(e, GraphOptions{M: 60, K: 15, Candidates: CandidatesWithReplacement, CandidateSharing: sharing, Seed: 9})
		if !slices.Equal(a.Adj, b.Adj) {
			t.Errorf("%s: Candidates \"\" and %q give different graphs", sharing, CandidatesWithoutReplacement)
		}
		if slices.Equal(a.Adj, c.Adj) {
			t.Errorf("%s: with and without replacement give the same graph", sharing)
		}
	}
}

// A walk on a with-replacement graph (self-loops, repeated neighbours, K
// larger than N) still collects B distinct instances, for every walk kind
// and α, and so does a walk on a graph of nothing but self-loops, through
// the fallback (it cannot loop forever).
func TestWithReplacementWalks(t *testing.T) {
	const n, b = 40, 16
	e := randomEmbeddings(n, 5, 30)
	loops := make([]int32, n*8) // every row: the node itself, 8 times
	for i := range loops {
		loops[i] = int32(i / 8)
	}
	selfOnly, err := NewGraph(n, 8, loops)
	if err != nil {
		t.Fatal(err)
	}
	for _, walk := range Walks {
		for _, alpha := range []float64{0, 0.5, 1} {
			for _, steps := range []int{0, 3} {
				name := fmt.Sprintf("%s α=%v max_walk_steps=%d", walk, alpha, steps)
				cfg := Config{BatchSize: b, M: 4 * n, K: n + 20, Candidates: CandidatesWithReplacement, Walk: walk,
					Alpha: Schedule{Start: alpha, Kind: ScheduleConstant}, MaxWalkSteps: steps}
				s, err := NewBatchSampler(cfg, n, 2)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Refresh(e); err != nil {
					t.Fatal(err)
				}
				g := s.Graph()
				if g.K != n+20 {
					t.Fatalf("%s: graph K = %d, want %d", name, g.K, n+20)
				}
				for i := 0; i < 3*s.BatchesPerEpoch(); i++ {
					checkBatch(t, name, s.Next(), b, n)
				}
				if err := s.SetGraph(selfOnly); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 3*s.BatchesPerEpoch(); i++ {
					checkBatch(t, name+" self-loops only", s.Next(), b, n)
				}
			}
		}
	}
}

// The walk treats the rows as the published walk does (random.choice over
// the row): a self-loop step stays on the node (no new node, the walk
// goes on from there), and a neighbour listed r times of K is the next
// node with probability r/K.
func TestWalkSelfLoopsAndRepeats(t *testing.T) {
	// Node 0: itself twice, node 1 once, node 2 three times, of K = 6.
	adj := []int32{0, 0, 1, 2, 2, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}
	g, err := NewGraph(3, 6, adj)
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(1, 2)
	const walks = 30000
	var second [3]float64
	var stays float64
	for range walks {
		var steps []WalkStep
		batch, err := Walk(g, 0, WalkOptions{Kind: WalkRW, B: 2, Trace: func(s WalkStep) { steps = append(steps, s) }}, src)
		if err != nil {
			t.Fatal(err)
		}
		second[batch[1]]++
		for _, s := range steps[:len(steps)-1] {
			if s.From != 0 || s.To != 0 || s.New || s.Jump {
				t.Fatalf("before the second node: step %+v, want a self-loop on 0", s)
			}
			stays++
		}
	}
	// The second node: 1 with probability 1/4, 2 with 3/4 (the self-loops
	// are retried); the self-loops before it: geometric, mean (2/6)/(4/6).
	for _, c := range []struct {
		name      string
		got, want float64
		sd        float64
	}{
		{"P(second = 1)", second[1] / walks, 0.25, math.Sqrt(0.25 * 0.75 / walks)},
		{"P(second = 2)", second[2] / walks, 0.75, math.Sqrt(0.25 * 0.75 / walks)},
		{"self-loop steps per walk", stays / walks, 0.5, math.Sqrt(0.75 / walks)}, // var of Geom(p=2/3) failures: (1−p)/p² = 0.75
	} {
		if math.Abs(c.got-c.want) > 5*c.sd {
			t.Errorf("%s = %.4f, want %.4f ± %.4f", c.name, c.got, c.want, 5*c.sd)
		}
	}
	if second[0] != 0 {
		t.Errorf("the start node came back as a new node %v times", second[0])
	}
}

// Config, GraphOptions and the state of a sampler with the option.
func TestWithReplacementConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" = accepted; else part of the error
	}{
		{"default", Config{BatchSize: 4, M: 500}, ""},
		{"with replacement, M > N, K > N", Config{BatchSize: 4, M: 500, K: 120, Candidates: CandidatesWithReplacement}, ""},
		{"unknown", Config{BatchSize: 4, Candidates: "bootstrap"}, `Config.Candidates: "bootstrap" is not allowed; allowed values: without_replacement (default), with_replacement`},
		{"knn graph", Config{BatchSize: 4, Graph: GraphKNN, Candidates: CandidatesWithReplacement}, `Config.Candidates is "with_replacement", but Config.Graph "knn" draws no candidates`},
		{"M < K", Config{BatchSize: 4, M: 5, K: 6, Candidates: CandidatesWithReplacement}, "must be ≥ Config.K"},
	} {
		s, err := NewBatchSampler(tc.cfg, 100, 1)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		case tc.want == "" && tc.cfg.Candidates == CandidatesWithReplacement && (s.Config().M != tc.cfg.M || s.Config().K != tc.cfg.K):
			t.Errorf("%s: M, K = %d, %d: clamped", tc.name, s.Config().M, s.Config().K)
		case tc.want == "" && tc.cfg.Candidates == "" && (s.Config().M != 99 || s.Config().Candidates != CandidatesWithoutReplacement):
			t.Errorf("%s: resolved to %+v", tc.name, s.Config())
		}
	}
	e := randomEmbeddings(10, 3, 1)
	for _, opt := range []GraphOptions{
		{M: 5, K: 2, Candidates: "with"},
		{M: 3, K: 4, Candidates: CandidatesWithReplacement},
		{M: 3, K: 0, Candidates: CandidatesWithReplacement},
		{M: 1 << 31, K: 1, Candidates: CandidatesWithReplacement},
	} {
		if _, err := BuildProximityGraph(e, opt); err == nil {
			t.Errorf("%+v accepted", opt)
		} else if opt.Candidates == "with" && !strings.Contains(err.Error(), "Candidates: \"with\" is not allowed; allowed values: without_replacement (default), with_replacement") {
			t.Errorf("%+v: %v", opt, err)
		}
	}
	if _, err := BuildGraphRows(e, GraphProximity, GraphOptions{M: 5, K: 2, Candidates: "with"}, 0, 10); err == nil {
		t.Error("BuildGraphRows accepted Candidates \"with\"")
	}
	// A single node has no other node, but draws itself M times.
	one, err := BuildProximityGraph(randomEmbeddings(1, 3, 1), GraphOptions{M: 5, K: 2, Candidates: CandidatesWithReplacement})
	if err != nil || one.K != 2 || !slices.Equal(one.Adj, []int32{0, 0}) {
		t.Errorf("single node: %v %+v", err, one)
	}
	// published: true leaves the draw as it is.
	if c := (Spec{Kind: KindBatchSampler, M: 10, K: 5, Published: true}).Effective().Candidates; c != "" {
		t.Errorf("published: true set candidates %q", c)
	}

	// The state names the option: it restores into the same config only,
	// and a state written before the option (no Candidates) restores into
	// the default.
	with := Config{BatchSize: 8, M: 300, K: 20, Candidates: CandidatesWithReplacement}
	a, _ := NewBatchSampler(with, 100, 4)
	if err := a.Refresh(randomEmbeddings(100, 4, 2)); err != nil {
		t.Fatal(err)
	}
	a.Next()
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewBatchSampler(with, 100, 4)
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Next(), b.Next()) {
		t.Error("restored sampler draws another batch")
	}
	without, _ := NewBatchSampler(Config{BatchSize: 8, M: 300, K: 20}, 100, 4)
	if err := without.UnmarshalBinary(st); err == nil {
		t.Error("a with-replacement state restored into a sampler without replacement")
	}
	d, _ := NewBatchSampler(Config{BatchSize: 8, M: 30, K: 20}, 100, 4)
	var old batchSamplerState
	ds, _ := d.MarshalBinary()
	if err := gob.NewDecoder(bytes.NewReader(ds)).Decode(&old); err != nil {
		t.Fatal(err)
	}
	old.Cfg.Candidates = ""
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(old); err != nil {
		t.Fatal(err)
	}
	if err := d.UnmarshalBinary(buf.Bytes()); err != nil {
		t.Errorf("a state without Candidates: %v", err)
	}
}

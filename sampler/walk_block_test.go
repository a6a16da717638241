package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// rwrStepwise is the RWR / RW loop as it was before the blocked evaluation
// of rwr: one draw per step, taken when the step is made, and one dependent
// adjacency load per step. It is kept for the distribution test and the
// A/B benchmark.
func (w *walker) rwrStepwise(start int32, b int, alpha float64, maxSteps int, src *rand.PCG, next func() int32) {
	g := w.g
	k := uint64(g.K)
	adj := g.Adj
	mark, gen := w.mark, w.gen
	out := w.out
	athr := uint64(math.Ldexp(alpha, 32))
	stall := stallFactor * (g.K + 1)
	u, cur := start, start
	steps, since := 0, 0
	for len(out) < b {
		if k == 0 || steps >= maxSteps || since >= stall {
			w.out = out
			from := cur
			u = next()
			w.add(u)
			out = w.out
			cur = u
			steps, since = 0, 0
			if w.trace != nil {
				w.trace(WalkStep{From: int(from), To: int(u), Jump: true, New: true})
			}
			continue
		}
		r := src.Uint64()
		from := cur
		restart := r>>32 < athr
		if restart {
			from = u
		}
		v := adj[uint64(from)*k+(uint64(uint32(r))*k)>>32]
		cur = v
		steps++
		isNew := mark[v] != gen
		if isNew {
			mark[v] = gen
			out = append(out, int(v))
			since = 0
		} else {
			since++
		}
		if w.trace != nil {
			w.trace(WalkStep{From: int(from), To: int(v), Restart: restart, New: isNew})
		}
	}
	w.out = out
}

// referenceRWR is the documented RWR/RW walk of Walk written plainly, with
// no lockstep evaluation: it takes draws from src in blocks of r, makes one
// step per draw as the step-at-a-time loop does, and throws the rest of a
// block away when it falls back to a new start node; when the batch is full
// the rest of the block is left unused. Its fallback start is Walk's: a
// uniform node, then the next one not in the batch. It reports every step to
// trace.
func referenceRWR(g *Graph, start, b int, alpha float64, maxSteps, r int, src *rand.PCG, trace func(WalkStep)) []int {
	b = min(b, g.N)
	in := make([]bool, g.N)
	batch := []int{start}
	in[start] = true
	var block []uint64
	u, cur, steps, since := start, start, 0, 0
	for len(batch) < b {
		if g.K == 0 || steps >= maxSteps || since >= stallFactor*(g.K+1) {
			block = nil
			v := int((uint64(uint32(src.Uint64())) * uint64(g.N)) >> 32)
			for in[v] {
				v = (v + 1) % g.N
			}
			trace(WalkStep{From: cur, To: v, Jump: true, New: true})
			in[v] = true
			batch = append(batch, v)
			u, cur, steps, since = v, v, 0, 0
			continue
		}
		if len(block) == 0 {
			for range r {
				block = append(block, src.Uint64())
			}
		}
		d := block[0]
		block = block[1:]
		restart := d>>32 < uint64(math.Ldexp(alpha, 32))
		from := cur
		if restart {
			from = u
		}
		to := int(g.Neighbours(from)[(uint64(uint32(d))*uint64(g.K))>>32])
		isNew := !in[to]
		trace(WalkStep{From: from, To: to, Restart: restart, New: isNew})
		steps++
		if isNew {
			in[to] = true
			batch = append(batch, to)
			since = 0
		} else {
			since++
		}
		cur = to
	}
	return batch
}

// componentGraph returns n nodes in components of size c (the last one may
// be smaller), each node pointing at the next k nodes of its component
// (cyclically, with repeats when the component is smaller than k+1).
func componentGraph(t testing.TB, n, c, k int) *Graph {
	adj := make([]int32, 0, n*k)
	for v := range n {
		base := v / c * c
		size := min(c, n-base)
		for j := 1; j <= k; j++ {
			adj = append(adj, int32(base+(v-base+j)%size))
		}
	}
	g, err := NewGraph(n, k, adj)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// randomGraph returns a graph of n nodes whose k out-neighbours are uniform
// random nodes (repeats and self-loops allowed).
func randomGraph(t testing.TB, n, k int, seed uint64) *Graph {
	r := rand.New(rand.NewPCG(seed, 5))
	adj := make([]int32, n*k)
	for i := range adj {
		adj[i] = int32(r.IntN(n))
	}
	g, err := NewGraph(n, k, adj)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The blocked walk (Walk, and so BatchSampler) must make exactly the steps
// of referenceRWR, which consumes the draws the same way without the
// lockstep evaluation: identical traces, batches and generator states (and
// the same batch without a trace), on
// graphs and settings that exercise restarts, stalls in tiny components,
// MaxSteps fallbacks in the middle of a block and at its end, K = 0, RW and
// α = 1, over walks much longer than a block.
func TestBlockedRWRMatchesReference(t *testing.T) {
	const R = rwrBlock
	tests := []struct {
		name     string
		g        *Graph
		kind     string
		b        int
		alpha    float64
		maxSteps int
		walks    int
	}{
		{"random α=0.3", randomGraph(t, 60, 4, 1), WalkRWR, 40, 0.3, 0, 40},
		{"random α=0.05 long", randomGraph(t, 500, 6, 2), WalkRWR, 400, 0.05, 0, 5},
		{"random α=0.2 B=N", randomGraph(t, 50, 3, 3), WalkRWR, 80, 0.2, 0, 20},
		{"random RW", randomGraph(t, 60, 4, 4), WalkRW, 40, 0.7, 0, 40},
		{"random α=1", randomGraph(t, 60, 8, 5), WalkRWR, 30, 1, 0, 40},
		{"components stall", componentGraph(t, 90, 3, 2), WalkRWR, 20, 0.2, 0, 20},
		{"components stall RW", componentGraph(t, 90, 4, 3), WalkRW, 20, 0, 0, 20},
		{"self-loop stall", componentGraph(t, 40, 1, 2), WalkRWR, 10, 0.5, 0, 10},
		{"max steps mid-block", randomGraph(t, 200, 2, 6), WalkRWR, 100, 0.3, 7, 10},
		{"max steps = R", randomGraph(t, 300, 2, 7), WalkRWR, 150, 0.1, R, 10},
		{"max steps = R+1", componentGraph(t, 300, 30, 2), WalkRW, 100, 0, R + 1, 10},
		{"max steps 1", randomGraph(t, 100, 5, 8), WalkRWR, 60, 0.4, 1, 10},
		{"K=0", componentGraph(t, 30, 1, 0), WalkRWR, 12, 0.2, 0, 5},
	}
	var total struct{ restarts, jumps, midBlock, steps int }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, ref, plain := rand.NewPCG(11, 12), rand.NewPCG(11, 12), rand.NewPCG(11, 12)
			for i := range tc.walks {
				start := (i * 7) % tc.g.N
				var got, want []WalkStep
				opt := WalkOptions{Kind: tc.kind, B: tc.b, Alpha: tc.alpha, MaxSteps: tc.maxSteps}
				untraced, err := Walk(tc.g, start, opt, plain)
				if err != nil {
					t.Fatal(err)
				}
				opt.Trace = func(s WalkStep) { got = append(got, s) }
				batch, err := Walk(tc.g, start, opt, src)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(batch, untraced) {
					t.Fatalf("walk %d: traced batch %v, untraced %v", i, batch, untraced)
				}
				alpha, maxSteps := tc.alpha, tc.maxSteps
				if tc.kind == WalkRW {
					alpha = 0
				}
				if maxSteps == 0 {
					maxSteps = 100 * tc.b
				}
				wantBatch := referenceRWR(tc.g, start, tc.b, alpha, maxSteps, R, ref, func(s WalkStep) { want = append(want, s) })
				if !slices.Equal(got, want) {
					n := 0
					for n < min(len(got), len(want)) && got[n] == want[n] {
						n++
					}
					t.Fatalf("walk %d: traces differ at step %d of %d/%d: got %+v, want %+v", i, n, len(got), len(want),
						got[n:min(n+3, len(got))], want[n:min(n+3, len(want))])
				}
				if !slices.Equal(batch, wantBatch) {
					t.Fatalf("walk %d: batch %v, want %v", i, batch, wantBatch)
				}
				if a, b, c := src.Uint64(), ref.Uint64(), plain.Uint64(); a != b || a != c {
					t.Fatalf("walk %d: generators differ after the walk (%#x, reference %#x, untraced %#x)", i, a, b, c)
				}
				n := 0 // steps since the last block began
				for _, s := range want {
					switch {
					case s.Jump:
						total.jumps++
						if n%R != 0 {
							total.midBlock++
						}
						n = 0
					default:
						total.steps++
						n++
						if s.Restart {
							total.restarts++
						}
					}
				}
			}
		})
	}
	t.Logf("compared %d steps: %d restarts, %d fallback jumps, %d of them in the middle of a block", total.steps, total.restarts, total.jumps, total.midBlock)
	if total.restarts == 0 || total.midBlock == 0 || total.steps < 10*R {
		t.Errorf("the cases do not exercise restarts and fallbacks in the middle of blocks: %+v", total)
	}
}

// walkBatches draws batches of one RWR/RW setting from start 0 on g with a
// walker of its own, through the blocked rwr or the old rwrStepwise, with
// Walk's fallback start, and counts the ordered batches.
func walkBatches(g *Graph, b int, alpha float64, maxSteps, batches int, stepwise bool, seed uint64) map[string]float64 {
	var w walker
	src := rand.NewPCG(seed, 77)
	next := func() int32 {
		v := int32((uint64(uint32(src.Uint64())) * uint64(g.N)) >> 32)
		for w.has(v) {
			if v++; int(v) == g.N {
				v = 0
			}
		}
		return v
	}
	counts := map[string]float64{}
	for range batches {
		w.begin(g)
		var batch []int
		if stepwise {
			w.out = nil
			w.add(0)
			w.rwrStepwise(0, b, alpha, maxSteps, src, next)
			batch, w.out = w.out, nil
		} else {
			batch = w.walk(0, walkParams{kind: WalkRWR, b: b, alpha: alpha, maxSteps: maxSteps}, src, next, nil)
		}
		counts[fmt.Sprint(batch)]++
	}
	return counts
}

// homogeneity is the two-sample chi-square test that two samples of equal
// size come from one categorical distribution: it returns chi², the degrees
// of freedom and the p-value.
func homogeneity(a, b map[string]float64) (chi, df, p float64) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for k := range keys {
		x, y := a[k], b[k]
		chi += (x - y) * (x - y) / (x + y)
	}
	df = float64(len(keys) - 1)
	return chi, df, 1 - distuv.ChiSquared{K: df}.CDF(chi)
}

// The blocked walk consumes the generator differently from the old
// step-at-a-time loop but must sample batches from the same distribution,
// fallbacks included: a two-sample chi-square test on the ordered batches
// must accept blocked vs stepwise, and must reject a changed α or MaxSteps
// (to show that it can tell).
func TestBlockedRWRDistribution(t *testing.T) {
	strong := componentGraph(t, 8, 8, 3)   // i → i+1, i+2, i+3 (mod 8)
	tiny := componentGraph(t, 12, 3, 2)    // four 3-cycles: stalls
	chains := componentGraph(t, 10, 10, 1) // one 10-cycle: with α = 0.9, many stalls
	const batches = 20000
	tests := []struct {
		name               string
		g                  *Graph
		b                  int
		alpha, otherAlpha  float64 // α of the stepwise and of the blocked walk
		maxSteps, otherMax int     // MaxSteps of the stepwise and of the blocked walk
		same               bool    // the two settings sample the same distribution
	}{
		{name: "strong α=0.3", g: strong, b: 5, alpha: 0.3, otherAlpha: 0.3, maxSteps: 1 << 20, otherMax: 1 << 20, same: true},
		{name: "strong RW", g: strong, b: 6, alpha: 0, otherAlpha: 0, maxSteps: 1 << 20, otherMax: 1 << 20, same: true},
		{name: "tiny stall", g: tiny, b: 5, alpha: 0.3, otherAlpha: 0.3, maxSteps: 500, otherMax: 500, same: true},
		{name: "tiny max steps 4", g: tiny, b: 5, alpha: 0.3, otherAlpha: 0.3, maxSteps: 4, otherMax: 4, same: true},
		{name: "cycle max steps 70", g: chains, b: 4, alpha: 0.9, otherAlpha: 0.9, maxSteps: 70, otherMax: 70, same: true},
		{name: "strong α 0.3 vs 0.4", g: strong, b: 5, alpha: 0.3, otherAlpha: 0.4, maxSteps: 1 << 20, otherMax: 1 << 20},
		{name: "tiny max steps 4 vs 2", g: tiny, b: 5, alpha: 0.3, otherAlpha: 0.3, maxSteps: 4, otherMax: 2},
	}
	for _, tc := range tests {
		stepwise := walkBatches(tc.g, tc.b, tc.alpha, tc.maxSteps, batches, true, 1)
		blocked := walkBatches(tc.g, tc.b, tc.otherAlpha, tc.otherMax, batches, false, 2)
		chi, df, p := homogeneity(stepwise, blocked)
		t.Logf("%s: %d distinct ordered batches, chi²=%.1f df=%v p=%.3g", tc.name, int(df)+1, chi, df, p)
		if tc.same && p < 1e-3 {
			t.Errorf("%s: the blocked walk samples differently from the stepwise one (chi²=%.1f, df=%v, p=%.2g)", tc.name, chi, df, p)
		}
		if !tc.same && p >= 1e-3 {
			t.Errorf("%s: the test cannot tell the settings apart (p=%.2g)", tc.name, p)
		}
	}
}

// nextRWR is BatchSampler.Next in graph mode with the RWR loop chosen: the
// blocked rwr or the old rwrStepwise (for the A/B benchmark).
func nextRWR(s *BatchSampler, stepwise bool) []int {
	s.ep.begin(s.rng)
	s.w.begin(s.g)
	start := s.nextNode()
	out := make([]int, 0, s.cfg.BatchSize)
	var batch []int
	if stepwise {
		s.w.out = out
		s.w.add(start)
		s.w.rwrStepwise(start, min(s.cfg.BatchSize, s.g.N), s.Alpha(), s.cfg.MaxWalkSteps, s.src, s.nextNode)
		batch, s.w.out = s.w.out, nil
	} else {
		batch = s.w.walk(start, walkParams{kind: WalkRWR, b: s.cfg.BatchSize, alpha: s.Alpha(), maxSteps: s.cfg.MaxWalkSteps}, s.src, s.nextNode, out)
	}
	s.ep.finish(batch)
	return batch
}

func benchRWRNext(b *testing.B, alpha float64, stepwise bool) { benchRWRNextB(b, 256, alpha, stepwise) }

func benchRWRNextB(b *testing.B, batch int, alpha float64, stepwise bool) {
	g := getGraph50k(b)
	s, err := NewBatchSampler(Config{BatchSize: batch, M: 1000, K: 100, Alpha: Schedule{Start: alpha, Kind: ScheduleConstant}}, g.N, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.SetGraph(g); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(nextRWR(s, stepwise)) != batch {
			b.Fatal("short batch")
		}
	}
}

// BenchmarkRWRNextBlocked and BenchmarkRWRNextStepwise are the A/B pair of
// the blocked evaluation: one RWR batch of 256 (α = 0.2) on the N=50k, K=100
// proximity graph, as BatchSampler.Next makes it, with rwr or rwrStepwise.
func BenchmarkRWRNextBlocked(b *testing.B)  { benchRWRNext(b, 0.2, false) }
func BenchmarkRWRNextStepwise(b *testing.B) { benchRWRNext(b, 0.2, true) }

// The same pair for plain RW (α = 0: one segment per block, no gain).
func BenchmarkRWNextBlocked(b *testing.B)  { benchRWRNext(b, 0, false) }
func BenchmarkRWNextStepwise(b *testing.B) { benchRWRNext(b, 0, true) }

// BenchmarkRWRNextSizes is the A/B pair for other batch sizes (α = 0.2).
func BenchmarkRWRNextSizes(b *testing.B) {
	for _, batch := range []int{32, 128, 512} {
		for _, stepwise := range []bool{false, true} {
			name := fmt.Sprintf("B=%d/blocked", batch)
			if stepwise {
				name = fmt.Sprintf("B=%d/stepwise", batch)
			}
			b.Run(name, func(b *testing.B) { benchRWRNextB(b, batch, 0.2, stepwise) })
		}
	}
}

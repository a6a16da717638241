package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// replayTrace checks a trace against the definition of its walk kind and
// returns the batch its steps build (start first, then every New node).
func replayTrace(t *testing.T, name string, g *Graph, start int, kind string, alpha float64, steps []WalkStep) []int {
	t.Helper()
	in := map[int]bool{start: true}
	order := []int{start}
	u, cur := start, start
	for i, s := range steps {
		switch {
		case s.Jump:
			if in[s.To] || !s.New {
				t.Fatalf("%s: step %d: jump %+v to a node already in the batch", name, i, s)
			}
			if (kind == WalkRWR || kind == WalkRW) && s.From != cur {
				t.Fatalf("%s: step %d: jump from %d, walker is at %d", name, i, s.From, cur)
			}
			u = s.To
		case s.Restart:
			if kind != WalkRWR || alpha == 0 || s.From != u {
				t.Fatalf("%s: step %d: restart %+v (kind %s, α %v, u %d)", name, i, s, kind, alpha, u)
			}
		default:
			if (kind == WalkRWR || kind == WalkRW) && s.From != cur {
				t.Fatalf("%s: step %d: move from %d, walker is at %d", name, i, s.From, cur)
			}
			if (kind == WalkBFS || kind == WalkDFS) && !in[s.From] {
				t.Fatalf("%s: step %d: %s expands %d, which is not in the batch", name, i, kind, s.From)
			}
		}
		if !s.Jump && !slices.Contains(g.Neighbours(s.From), int32(s.To)) {
			t.Fatalf("%s: step %d: %d → %d is not an edge", name, i, s.From, s.To)
		}
		if s.New == in[s.To] {
			t.Fatalf("%s: step %d: New = %v but node %d in batch = %v", name, i, s.New, s.To, in[s.To])
		}
		if s.New {
			in[s.To] = true
			order = append(order, s.To)
		}
		cur = s.To
	}
	return order
}

// TestWalkTraceAllKinds: for every walk kind the trace replays to the batch
// Walk returns, follows edges of the graph, and tracing changes neither the
// batch nor the generator's state.
func TestWalkTraceAllKinds(t *testing.T) {
	graphs := map[string]*Graph{
		"random K=6":       randomGraph(t, 200, 6, 3),
		"components K=2":   componentGraph(t, 200, 20, 2),
		"random K=1":       randomGraph(t, 150, 1, 4),
		"no edges (K=0)":   componentGraph(t, 40, 1, 0),
		"random K=12 N=30": randomGraph(t, 30, 12, 5),
	}
	jumps := map[string]int{}
	for gname, g := range graphs {
		for _, kind := range Walks {
			for _, opt := range []WalkOptions{{B: 16, Alpha: 0.2}, {B: 60, Alpha: 0.5}, {B: g.N, Alpha: 1}, {B: 24, Alpha: 0.1, MaxSteps: 3}} {
				opt.Kind = kind
				for s := range uint64(3) {
					name := fmt.Sprintf("%s %s B=%d α=%v MaxSteps=%d seed %d", gname, kind, opt.B, opt.Alpha, opt.MaxSteps, s)
					start := int(s*37) % g.N
					plain, traced := rand.NewPCG(s, 9), rand.NewPCG(s, 9)
					want, err := Walk(g, start, opt, plain)
					if err != nil {
						t.Fatal(err)
					}
					var steps []WalkStep
					opt.Trace = func(st WalkStep) { steps = append(steps, st) }
					got, err := Walk(g, start, opt, traced)
					opt.Trace = nil
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s: traced batch %v, untraced %v", name, got, want)
					}
					if plain.Uint64() != traced.Uint64() {
						t.Fatalf("%s: tracing changed the generator's state", name)
					}
					if order := replayTrace(t, name, g, start, kind, opt.Alpha, steps); !slices.Equal(order, got) {
						t.Fatalf("%s: replaying the trace gives %v, the batch is %v", name, order, got)
					}
					for _, st := range steps {
						if st.Jump {
							jumps[kind]++
						}
					}
				}
			}
		}
	}
	for _, kind := range Walks {
		if jumps[kind] == 0 {
			t.Errorf("walk %s: no fallback jump in any traced walk: the fallback's trace is untested", kind)
		}
	}
}

// TestBatchSamplerWalkTrace: SetWalkTrace reports the walks of Next (start
// node first, fallback jumps to the epoch's uncovered nodes included),
// replays to each batch, and leaves the batches unchanged.
func TestBatchSamplerWalkTrace(t *testing.T) {
	e := randomEmbeddings(300, 5, 7)
	for _, walk := range Walks {
		for _, k := range []int{4, 40} { // K < B−1 forces fallback jumps at α = 1
			cfg := Config{BatchSize: 32, M: 60, K: k, Walk: walk, Workers: 1, Alpha: Schedule{Start: 1, Kind: ScheduleConstant}}
			plain, err := NewBatchSampler(cfg, 300, 5)
			if err != nil {
				t.Fatal(err)
			}
			traced, err := NewBatchSampler(cfg, 300, 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := plain.Refresh(e); err != nil {
				t.Fatal(err)
			}
			if err := traced.Refresh(e); err != nil {
				t.Fatal(err)
			}
			var steps []WalkStep
			traced.SetWalkTrace(func(s WalkStep) { steps = append(steps, s) })
			jumps := 0
			for i := range 12 {
				name := fmt.Sprintf("walk %s K=%d batch %d", walk, k, i)
				steps = steps[:0]
				want, got := plain.Next(), traced.Next()
				if !slices.Equal(got, want) {
					t.Fatalf("%s: traced %v, untraced %v", name, got, want)
				}
				if order := replayTrace(t, name, traced.Graph(), got[0], walk, 1, steps); !slices.Equal(order, got) {
					t.Fatalf("%s: replaying the trace gives %v, the batch is %v", name, order, got)
				}
				for _, s := range steps {
					if s.Jump {
						jumps++
					}
				}
			}
			if walk == WalkRWR && k == 4 && jumps == 0 {
				t.Errorf("RWR α=1 K=4 B=32: no fallback jump traced")
			}
			traced.SetWalkTrace(nil)
			if !slices.Equal(traced.Next(), plain.Next()) {
				t.Errorf("walk %s K=%d: batches differ after removing the trace", walk, k)
			}
		}
	}
}

// TestHardNegativeRatio checks HardNegativeRatio against a float64 double
// loop over thresholds, and its edge cases.
func TestHardNegativeRatio(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	e := randomEmbeddings(80, 4, 6)
	labels := make([]int, 80)
	for i := range labels {
		labels[i] = r.IntN(3)
	}
	for _, size := range []int{2, 5, 33} {
		batch := r.Perm(80)[:size]
		_, _, all := pairLoop(batch, labels, e)
		for _, thr := range []float64{-1, 0, 0.3, 0.8, 1.1} {
			var hard, p float64
			for i := range batch {
				for j := i + 1; j < len(batch); j++ {
					if labels[batch[i]] != labels[batch[j]] && all[int(p)] >= thr {
						hard++
					}
					p++
				}
			}
			if got := HardNegativeRatio(batch, labels, e, thr); math.Abs(got-hard/p) > 1e-12 {
				t.Errorf("B=%d threshold %v: %v, loop %v", size, thr, got, hard/p)
			}
		}
	}
	// Known values: four unit vectors, labels 0 0 1 1.
	k := Embeddings{N: 4, D: 2, Data: []float32{1, 0, 0, 1, 1, 0, -1, 0}}
	lab := []int{0, 0, 1, 1}
	// Pairs: (0,1) same; (0,2) diff cos 1; (0,3) diff cos −1; (1,2) diff cos 0; (1,3) diff cos 0; (2,3) same.
	for _, tc := range []struct {
		thr, want float64
	}{{0.5, 1.0 / 6}, {0, 3.0 / 6}, {-1, 4.0 / 6}} {
		if got := HardNegativeRatio([]int{0, 1, 2, 3}, lab, k, tc.thr); got != tc.want {
			t.Errorf("threshold %v: %v, want %v", tc.thr, got, tc.want)
		}
	}
	if got := HardNegativeRatio([]int{1}, lab, k, 0); got != 0 {
		t.Errorf("one instance: %v, want 0", got)
	}
	if got := HardNegativeRatio([]int{0, 4}, lab, k, 0); !math.IsNaN(got) {
		t.Errorf("index outside: %v, want NaN", got)
	}
}

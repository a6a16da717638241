package viz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// TestTraceRWRMatchesWalk checks that TraceRWR returns exactly the batch of
// sampler.Walk from the same generator state, over graphs, α, B (including
// B > K+1 and B = N, which force fallback jumps) and step caps, and that its
// path is a valid walk that produces that batch.
func TestTraceRWRMatchesWalk(t *testing.T) {
	e, _, err := CirclePoints(PointsConfig{N: 300, Classes: 5, Spread: 0.3, RadiusJitter: 0.1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	var graphs []*sampler.Graph
	for _, mk := range [][2]int{{6, 6}, {40, 6}, {299, 6}, {30, 1}} {
		g, err := sampler.BuildProximityGraph(e, sampler.GraphOptions{M: mk[0], K: mk[1], Seed: 11, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		graphs = append(graphs, g)
	}
	empty, err := sampler.NewGraph(300, 0, nil) // K = 0: every node is a fallback start
	if err != nil {
		t.Fatal(err)
	}
	graphs = append(graphs, empty)
	walks, jumps := 0, 0
	for gi, g := range graphs {
		for _, kind := range []string{"", sampler.WalkRWR, sampler.WalkRW} {
			for _, alpha := range []float64{0, 0.05, 0.2, 0.5, 1} {
				for _, opt := range []sampler.WalkOptions{{B: 24}, {B: 60}, {B: 300}, {B: 400}, {B: 24, MaxSteps: 3}} {
					opt.Kind, opt.Alpha = kind, alpha
					for s := range uint64(3) {
						start := int(s*97) % g.N
						name := fmt.Sprintf("graph %d kind %q α=%v B=%d MaxSteps=%d seed %d", gi, kind, alpha, opt.B, opt.MaxSteps, s)
						want, err := sampler.Walk(g, start, opt, rand.NewPCG(s, 1))
						if err != nil {
							t.Fatal(err)
						}
						tr, err := TraceRWR(g, start, opt, rand.NewPCG(s, 1))
						if err != nil {
							t.Fatal(err)
						}
						if !slices.Equal(tr.Batch, want) {
							t.Fatalf("%s: trace batch %v, sampler.Walk %v", name, tr.Batch, want)
						}
						checkTrace(t, name, g, start, kind, alpha, tr)
						walks++
						jumps += tr.Jumps()
					}
				}
			}
		}
	}
	if jumps == 0 {
		t.Errorf("no fallback jump in %d walks: the fallback path is untested", walks)
	}
}

// checkTrace checks a trace against the definition of the walk.
func checkTrace(t *testing.T, name string, g *sampler.Graph, start int, kind string, alpha float64, tr Trace) {
	t.Helper()
	if tr.Batch[0] != start || tr.Starts[0] != start {
		t.Fatalf("%s: batch or starts do not begin with the start node", name)
	}
	in := map[int]bool{start: true}
	order := []int{start}
	starts := []int{start}
	u, cur := start, start
	for i, s := range tr.Steps {
		switch s.Kind {
		case Jump:
			if in[s.To] || !s.New || s.From != cur {
				t.Fatalf("%s: step %d: jump %+v to a node already in the batch or from elsewhere", name, i, s)
			}
			u = s.To
			starts = append(starts, u)
		case Restart:
			if kind == sampler.WalkRW || alpha == 0 {
				t.Fatalf("%s: step %d: restart with α = 0", name, i)
			}
			if s.From != u {
				t.Fatalf("%s: step %d: restart from %d, restart node is %d", name, i, s.From, u)
			}
		case Move:
			if alpha == 1 && kind != sampler.WalkRW {
				t.Fatalf("%s: step %d: a plain move with α = 1", name, i)
			}
			if s.From != cur {
				t.Fatalf("%s: step %d: move from %d, walker is at %d", name, i, s.From, cur)
			}
		}
		if s.Kind != Jump && !slices.Contains(g.Neighbours(s.From), int32(s.To)) {
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
	if !slices.Equal(order, tr.Batch) || !slices.Equal(starts, tr.Starts) {
		t.Fatalf("%s: replaying the steps gives batch %v starts %v, trace has %v %v", name, order, starts, tr.Batch, tr.Starts)
	}
}

// TestTraceRWRRestartRate checks that the share of restarts is α (a
// binomial count, within 5 standard deviations).
func TestTraceRWRRestartRate(t *testing.T) {
	e, _, _ := CirclePoints(PointsConfig{N: 2000, Classes: 4, Spread: 0.3, Seed: 1})
	g, err := sampler.BuildProximityGraph(e, sampler.GraphOptions{M: 200, K: 10, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, alpha := range []float64{0.1, 0.3, 0.7} {
		src := rand.NewPCG(3, 4)
		restarts, steps := 0, 0
		for s := range 200 {
			tr, err := TraceRWR(g, s*7, sampler.WalkOptions{B: 64, Alpha: alpha}, src)
			if err != nil {
				t.Fatal(err)
			}
			restarts += tr.Restarts()
			steps += len(tr.Steps) - tr.Jumps()
		}
		p := float64(restarts) / float64(steps)
		if sd := math.Sqrt(alpha * (1 - alpha) / float64(steps)); math.Abs(p-alpha) > 5*sd {
			t.Errorf("α=%v: restart share %.4f over %d steps (± %.4f)", alpha, p, steps, sd)
		}
	}
}

func TestTraceRWRErrors(t *testing.T) {
	g, err := sampler.NewGraph(3, 1, []int32{1, 2, 0})
	if err != nil {
		t.Fatal(err)
	}
	src := rand.NewPCG(1, 1)
	for _, tc := range []struct {
		g     *sampler.Graph
		start int
		opt   sampler.WalkOptions
	}{
		{nil, 0, sampler.WalkOptions{B: 2}},
		{&sampler.Graph{N: 3, K: 2, Adj: []int32{1}}, 0, sampler.WalkOptions{B: 2}},
		{g, 3, sampler.WalkOptions{B: 2}},
		{g, -1, sampler.WalkOptions{B: 2}},
		{g, 0, sampler.WalkOptions{B: 0}},
		{g, 0, sampler.WalkOptions{B: 2, Alpha: 1.5}},
		{g, 0, sampler.WalkOptions{B: 2, Alpha: math.NaN()}},
		{g, 0, sampler.WalkOptions{B: 2, MaxSteps: -1}},
		{g, 0, sampler.WalkOptions{B: 2, Kind: sampler.WalkBFS}},
		{g, 0, sampler.WalkOptions{B: 2, Kind: "jump"}},
	} {
		if _, err := TraceRWR(tc.g, tc.start, tc.opt, src); err == nil {
			t.Errorf("TraceRWR(start %d, %+v) accepted", tc.start, tc.opt)
		}
	}
}

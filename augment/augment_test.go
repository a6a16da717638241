package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

func TestCount(t *testing.T) {
	tests := []struct {
		n     int
		ratio float64
		want  int
	}{
		{30, 0.1, 3}, {29, 0.1, 2}, {9, 0.1, 0}, {10, 0.1, 1}, {100, 0.1, 10},
		{10, 0.7, 7}, {100, 0.29, 29}, // 0.29·100 = 28.999999999999996 in float64
		{30, 0.2, 6}, {4, 0.2, 0}, {3, 0.5, 1}, {0, 0.5, 0}, {5, 0, 0},
		{5, 1, 5}, {5, 1.5, 5}, {5, -0.3, 0}, {5, math.NaN(), 0}, {5, math.Inf(1), 5},
	}
	for _, tt := range tests {
		if got := Count(tt.n, tt.ratio); got != tt.want {
			t.Errorf("Count(%d, %v) = %d, want %d", tt.n, tt.ratio, got, tt.want)
		}
	}
	// Decimal ratios p/q against exact integer arithmetic ⌊n·p/q⌋ (for
	// q = 10 this is GraphCL's int(n / 10) and int(n * 0.2)).
	for _, q := range []int{10, 100} {
		for p := 1; p < q; p++ {
			ratio := float64(p) / float64(q)
			for n := range 3000 {
				if got, want := Count(n, ratio), n*p/q; got != want {
					t.Fatalf("Count(%d, %v) = %d, want %d", n, ratio, got, want)
				}
			}
		}
	}
}

func TestNodeDrop(t *testing.T) {
	rng := newRNG(1)
	tests := []struct {
		name      string
		g         *data.Graph
		ratio     float64
		wantNodes int
	}{
		{"molecule 10%", molecule(), 0.1, 27},
		{"cycle30 10%", mkGraph(30, cycleEdges(30)), 0.1, 27},
		{"star12 25%", mkGraph(12, starEdges(12)), 0.25, 9},
		{"random50 70%", mkGraph(50, randomConnected(50, 30, rng)), 0.7, 15},
		{"complete8 50%", mkGraph(8, completeEdges(8)), 0.5, 4},
		{"path9 10% drops none", mkGraph(9, pathEdges(9)), 0.1, 9},
		{"no edges 40%", mkGraph(10, nil), 0.4, 6},
		{"ratio 0", mkGraph(6, cycleEdges(6)), 0, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(20) {
				out := NodeDrop{Ratio: tt.ratio}.Augment(tt.g, newRNG(seed))
				if out.NumNodes != tt.wantNodes {
					t.Fatalf("seed %d: %d nodes, want %d", seed, out.NumNodes, tt.wantNodes)
				}
				checkInduced(t, tt.g, out)
				if out.Label != tt.g.Label {
					t.Fatalf("graph label %d, want %d", out.Label, tt.g.Label)
				}
			}
		})
	}
}

func TestEdgeRemove(t *testing.T) {
	rng := newRNG(2)
	loops := mkGraph(5, [][2]int32{{0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 3}, {3, 3}, {3, 4}, {4, 4}, {0, 4}, {2, 2}})
	tests := []struct {
		name      string
		g         *data.Graph
		ratio     float64
		wantEdges int
	}{
		{"molecule 10%", molecule(), 0.1, 30},
		{"cycle30 10%", mkGraph(30, cycleEdges(30)), 0.1, 27},
		{"random40 50%", mkGraph(40, randomConnected(40, 41, rng)), 0.5, 40},
		{"complete6 90%", mkGraph(6, completeEdges(6)), 0.9, 2},
		{"self-loops 30%", loops, 0.3, 7},
		{"path9 10% removes none", mkGraph(9, pathEdges(9)), 0.1, 8},
		{"no edges", mkGraph(4, nil), 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(20) {
				out := EdgeRemove{Ratio: tt.ratio}.Augment(tt.g, newRNG(seed))
				if out.NumNodes != tt.g.NumNodes || len(out.Edges) != tt.wantEdges {
					t.Fatalf("seed %d: %d nodes %d edges, want %d nodes %d edges",
						seed, out.NumNodes, len(out.Edges), tt.g.NumNodes, tt.wantEdges)
				}
				ids := checkAligned(t, tt.g, out, false)
				for v, id := range ids {
					if int(id) != v {
						t.Fatalf("node %d renamed to %d", id, v)
					}
				}
				// The output edges are a subsequence of the input edges.
				j := 0
				for i, e := range out.Edges {
					for j < len(tt.g.Edges) && tt.g.Edges[j] != e {
						j++
					}
					if j == len(tt.g.Edges) {
						t.Fatalf("output edge %d %v is not an input edge in order", i, e)
					}
					if out.EdgeLabels[i] != tt.g.EdgeLabels[j] {
						t.Fatalf("edge %v label %d, want %d", e, out.EdgeLabels[i], tt.g.EdgeLabels[j])
					}
					j++
				}
			}
		})
	}
}

func TestEdgePerturb(t *testing.T) {
	rng := newRNG(3)
	// 20 nodes, all 190 pairs but 10: 9 edges moved must be drawn from the
	// 10 non-adjacent pairs (the enumeration path).
	dense := completeEdges(20)
	rng.Shuffle(len(dense), func(i, j int) { dense[i], dense[j] = dense[j], dense[i] })
	dense = dense[:180]
	tests := []struct {
		name              string
		g                 *data.Graph
		ratio             float64
		wantMoved, wantIn int // edges removed, new edges added
	}{
		{"molecule 10% (rejection)", molecule(), 0.1, 3, 3},
		{"cycle30 20%", mkGraph(30, cycleEdges(30)), 0.2, 6, 6},
		{"dense20 5% (enumeration)", mkGraph(20, dense), 0.05, 9, 9},
		{"complete6 minus 2 (adds all 2)", mkGraph(6, completeEdges(6)[2:]), 0.4, 5, 2},
		{"complete5 (nothing to add)", mkGraph(5, completeEdges(5)), 0.5, 5, 0},
		{"self-loops", mkGraph(4, [][2]int32{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {0, 1}}), 0.4, 2, 2},
		{"large path 3000 (map set)", mkGraph(3000, pathEdges(3000)), 0.1, 299, 299},
		{"path9 10% moves none", mkGraph(9, pathEdges(9)), 0.1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seeds := uint64(20)
			if tt.g.NumNodes > 1000 {
				seeds = 3
			}
			inSet := edgeSet(tt.g.Edges)
			for seed := range seeds {
				out := EdgePerturb{Ratio: tt.ratio}.Augment(tt.g, newRNG(seed))
				checkAligned(t, tt.g, out, false)
				m := len(tt.g.Edges)
				if len(out.Edges) != m-tt.wantMoved+tt.wantIn {
					t.Fatalf("seed %d: %d edges, want %d-%d+%d", seed, len(out.Edges), m, tt.wantMoved, tt.wantIn)
				}
				surv := m - tt.wantMoved
				for i, e := range out.Edges[:surv] {
					if inSet[e] == 0 {
						t.Fatalf("surviving edge %d %v is not an input edge", i, e)
					}
					if out.EdgeLabels[i] != edgeCode(e[0], e[1]) {
						t.Fatalf("surviving edge %v has label %d", e, out.EdgeLabels[i])
					}
				}
				removedLabels := map[int32]int{}
				for e, c := range inSet {
					removedLabels[edgeCode(e[0], e[1])] += c
				}
				for _, l := range out.EdgeLabels[:surv] {
					removedLabels[l]--
				}
				added := map[[2]int32]bool{}
				for i, e := range out.Edges[surv:] {
					if e[0] >= e[1] {
						t.Fatalf("new edge %v is a self-loop or not stored u < v", e)
					}
					if inSet[e] > 0 || added[e] {
						t.Fatalf("new edge %v was already an edge", e)
					}
					added[e] = true
					l := out.EdgeLabels[surv+i]
					if removedLabels[l] <= 0 {
						t.Fatalf("new edge %v has label %d, which is not the label of a removed edge", e, l)
					}
					removedLabels[l]--
				}
			}
		})
	}
}

// TestEdgePerturbUniform checks that the new edges are uniform over the
// non-adjacent pairs, for both the rejection and the enumeration paths.
func TestEdgePerturbUniform(t *testing.T) {
	tests := []struct {
		name  string
		g     *data.Graph
		ratio float64
	}{
		// path of 5: 4 edges, 6 non-adjacent pairs, 1 moved (rejection).
		{"rejection", mkGraph(5, pathEdges(5)), 0.25},
		// K6 minus 4 edges: 11 edges, 4 non-adjacent pairs, 2 moved
		// (4·4 < 15: enumeration).
		{"enumeration", mkGraph(6, completeEdges(6)[4:]), 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := edgeSet(tt.g.Edges)
			var pairs [][2]int32
			for _, e := range completeEdges(tt.g.NumNodes) {
				if in[e] == 0 {
					pairs = append(pairs, e)
				}
			}
			idx := map[[2]int32]int{}
			for i, p := range pairs {
				idx[p] = i
			}
			counts := make([]int, len(pairs))
			rng := newRNG(4)
			for range 6000 {
				out := EdgePerturb{Ratio: tt.ratio}.Augment(tt.g, rng)
				for _, e := range out.Edges {
					if in[e] == 0 {
						counts[idx[e]]++
					}
				}
			}
			if x := chiSquare(counts); x > chi2Crit999[len(counts)-1] {
				t.Errorf("new-edge counts %v: chi-square %.2f > %.2f (df %d, p=0.001)", counts, x, chi2Crit999[len(counts)-1], len(counts)-1)
			}
		})
	}
}

func TestSubgraph(t *testing.T) {
	rng := newRNG(5)
	twoParts := mkGraph(12, append(pathEdges(4), [][2]int32{{4, 5}, {5, 6}, {6, 7}, {7, 8}, {8, 9}, {9, 10}, {10, 11}}...))
	tests := []struct {
		name      string
		g         *data.Graph
		ratio     float64
		wantNodes int // for connected inputs
	}{
		{"molecule 20%", molecule(), 0.2, 6},
		// GraphCL's never-updated frontier could keep at most 3 nodes of a path.
		{"path30 50%", mkGraph(30, pathEdges(30)), 0.5, 15},
		{"cycle30 100%", mkGraph(30, cycleEdges(30)), 1, 30},
		{"star10 50%", mkGraph(10, starEdges(10)), 0.5, 5},
		{"random60 30%", mkGraph(60, randomConnected(60, 20, rng)), 0.3, 18},
		{"random60 dense 90%", mkGraph(60, randomConnected(60, 400, rng)), 0.9, 54},
		{"complete7 20% keeps at least 1", mkGraph(7, completeEdges(7)), 0.1, 1},
		{"single node", mkGraph(1, nil), 0.2, 1},
		{"disconnected", twoParts, 0.5, -1},
		{"no edges keeps the start", mkGraph(8, nil), 0.5, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(30) {
				out := Subgraph{Ratio: tt.ratio}.Augment(tt.g, newRNG(seed))
				ids := checkInduced(t, tt.g, out)
				if !connected(out) {
					t.Fatalf("seed %d: subgraph on %v is not connected", seed, ids)
				}
				switch {
				case tt.wantNodes >= 0 && out.NumNodes != tt.wantNodes:
					t.Fatalf("seed %d: %d nodes, want %d", seed, out.NumNodes, tt.wantNodes)
				case tt.wantNodes < 0:
					// Target 6 for twoParts; its components have 4 and 8
					// nodes; no edges: only the start node.
					target := max(1, Count(tt.g.NumNodes, tt.ratio))
					want := target
					if len(tt.g.Edges) == 0 {
						want = 1
					} else if ids[0] < 4 {
						want = min(target, 4)
					}
					if out.NumNodes != want {
						t.Fatalf("seed %d: %d nodes %v, want %d", seed, out.NumNodes, ids, want)
					}
				}
			}
		})
	}
}

// TestSubgraphStart checks that the start node is uniform: with a target
// of one node, the kept node is uniform over the graph.
func TestSubgraphStart(t *testing.T) {
	g := mkGraph(10, starEdges(10))
	counts := make([]int, 10)
	rng := newRNG(6)
	for range 5000 {
		out := Subgraph{Ratio: 0.1}.Augment(g, rng)
		if out.NumNodes != 1 {
			t.Fatalf("%d nodes, want 1", out.NumNodes)
		}
		counts[out.NodeLabels[0]]++
	}
	if x := chiSquare(counts); x > chi2Crit999[9] {
		t.Errorf("start counts %v: chi-square %.2f > %.2f", counts, x, chi2Crit999[9])
	}
}

func TestAttrMask(t *testing.T) {
	tests := []struct {
		name       string
		g          *data.Graph
		ratio      float64
		wantMasked int
	}{
		{"molecule-sized 10%", mkGraph(30, cycleEdges(30)), 0.1, 3},
		{"50%", mkGraph(11, pathEdges(11)), 0.5, 5},
		{"9 nodes 10% masks none", mkGraph(9, pathEdges(9)), 0.1, 0},
		{"ratio 0", mkGraph(5, nil), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(20) {
				out := AttrMask{Ratio: tt.ratio}.Augment(tt.g, newRNG(seed))
				checkAligned(t, tt.g, out, true)
				if out.NumNodes != tt.g.NumNodes || !sameSlice(out.Edges, tt.g.Edges) ||
					!sameSlice(out.EdgeLabels, tt.g.EdgeLabels) || !sameSlice(out.NodeLabels, tt.g.NodeLabels) {
					t.Fatal("structure or labels changed")
				}
				masked := 0
				for v := range out.NumNodes {
					a, b := out.X[v*featDim:(v+1)*featDim], tt.g.X[v*featDim:(v+1)*featDim]
					switch {
					case a[0] == b[0] && a[1] == b[1]:
					case a[0] != b[0] && a[1] != b[1]:
						masked++
					default:
						t.Fatalf("node %d: row only partly masked: %v (was %v)", v, a, b)
					}
				}
				if masked != tt.wantMasked {
					t.Fatalf("seed %d: %d rows masked, want %d", seed, masked, tt.wantMasked)
				}
			}
		})
	}
	t.Run("no features", func(t *testing.T) {
		g := mkGraph(10, pathEdges(10))
		g.X, g.FeatDim = nil, 0
		out := AttrMask{Ratio: 0.5}.Augment(g, newRNG(1))
		if !sameGraph(out, g) {
			t.Fatalf("graph without features changed: %+v", out)
		}
	})
}

// TestAttrMaskNoise checks the noise against N(0.5, 0.5²): sample mean within
// 5 standard errors and sample standard deviation within 5 of its standard
// errors (σ/√(2N) for a normal).
func TestAttrMaskNoise(t *testing.T) {
	g := mkGraph(40, nil)
	g.FeatDim = 50
	g.X = make([]float32, 40*50)
	for i := range g.X {
		g.X[i] = -100 // far outside the noise, to find masked values
	}
	rng := newRNG(7)
	var sum, sum2 float64
	n := 0
	for range 100 {
		out := AttrMask{Ratio: 0.25}.Augment(g, rng)
		for _, x := range out.X {
			if x != -100 {
				sum += float64(x)
				sum2 += float64(x) * float64(x)
				n++
			}
		}
	}
	if n != 100*10*50 {
		t.Fatalf("%d masked values, want %d", n, 100*10*50)
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sum2/float64(n) - mean*mean)
	if se := 0.5 / math.Sqrt(float64(n)); math.Abs(mean-0.5) > 5*se {
		t.Errorf("noise mean %.4f, want 0.5 ± %.4f", mean, 5*se)
	}
	if se := 0.5 / math.Sqrt(2*float64(n)); math.Abs(sd-0.5) > 5*se {
		t.Errorf("noise sd %.4f, want 0.5 ± %.4f", sd, 5*se)
	}
}

func TestDropIsolated(t *testing.T) {
	tests := []struct {
		name   string
		g      *data.Graph
		wantID []int32 // input ids of the nodes kept
	}{
		{"two isolated", mkGraph(7, [][2]int32{{0, 1}, {1, 3}, {3, 4}, {4, 6}}), []int32{0, 1, 3, 4, 6}},
		{"self-loop counts", mkGraph(4, [][2]int32{{1, 1}, {2, 3}}), []int32{1, 2, 3}},
		{"none isolated", mkGraph(5, cycleEdges(5)), []int32{0, 1, 2, 3, 4}},
		{"all isolated: unchanged", mkGraph(3, nil), []int32{0, 1, 2}},
		{"single node", mkGraph(1, nil), []int32{0}},
		{"empty", mkGraph(0, nil), []int32{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(tt.g)
			out := DropIsolated(tt.g)
			if !reflect.DeepEqual(tt.g, before) {
				t.Fatal("input modified")
			}
			ids := checkInduced(t, tt.g, out)
			if !reflect.DeepEqual(append([]int32{}, ids...), tt.wantID) {
				t.Fatalf("kept %v, want %v", ids, tt.wantID)
			}
		})
	}
}

// selfReturning breaks the GraphAugmenter contract by returning its input.
type selfReturning struct{}

func (selfReturning) Augment(g *data.Graph, _ *rand.Rand) *data.Graph { return g }

func TestWithoutIsolated(t *testing.T) {
	g := mkGraph(12, append(starEdges(6), [2]int32{6, 7}, [2]int32{8, 9}, [2]int32{9, 10}))
	for _, aug := range []GraphAugmenter{NodeDrop{Ratio: 0.3}, Subgraph{Ratio: 0.5}, EdgeRemove{Ratio: 0.4}, EdgePerturb{Ratio: 0.4}, AttrMask{Ratio: 0.2}, Identity{}} {
		for seed := range uint64(30) {
			got := WithoutIsolated{Aug: aug}.Augment(g, newRNG(seed))
			want := DropIsolated(aug.Augment(g, newRNG(seed)))
			if !sameGraph(got, want) {
				t.Fatalf("%v seed %d: WithoutIsolated gives %+v, DropIsolated after the augmentation %+v", aug, seed, got, want)
			}
		}
	}
	before := snapshot(g)
	out := WithoutIsolated{Aug: selfReturning{}}.Augment(g, newRNG(1))
	if !reflect.DeepEqual(g, before) {
		t.Fatal("input modified when the inner augmenter returns its input")
	}
	if out.NumNodes != 11 {
		t.Fatalf("%d nodes, want 11 (node 11 is isolated)", out.NumNodes)
	}
}

// allAugmenters lists every augmenter with representative settings,
// including out-of-range ratios set directly on the struct.
func allAugmenters() map[string]GraphAugmenter {
	return map[string]GraphAugmenter{
		"identity":          Identity{},
		"node_drop .1":      NodeDrop{Ratio: 0.1},
		"node_drop .9":      NodeDrop{Ratio: 0.9},
		"node_drop 1.5":     NodeDrop{Ratio: 1.5},
		"node_drop NaN":     NodeDrop{Ratio: math.NaN()},
		"edge_remove .1":    EdgeRemove{Ratio: 0.1},
		"edge_remove .99":   EdgeRemove{Ratio: 0.99},
		"edge_remove -1":    EdgeRemove{Ratio: -1},
		"edge_perturb .1":   EdgePerturb{Ratio: 0.1},
		"edge_perturb .9":   EdgePerturb{Ratio: 0.9},
		"edge_perturb 2":    EdgePerturb{Ratio: 2},
		"subgraph .2":       Subgraph{Ratio: 0.2},
		"subgraph 1":        Subgraph{Ratio: 1},
		"subgraph 0":        Subgraph{Ratio: 0},
		"attr_mask .1":      AttrMask{Ratio: 0.1},
		"attr_mask 1":       AttrMask{Ratio: 1},
		"random_choice":     RandomChoice{Augs: []GraphAugmenter{NodeDrop{Ratio: 0.5}, nil, Subgraph{Ratio: 0.5}}},
		"random_choice {}":  RandomChoice{},
		"compose":           Compose{Augs: []GraphAugmenter{NodeDrop{Ratio: 0.2}, nil, EdgePerturb{Ratio: 0.3}, AttrMask{Ratio: 0.3}, Subgraph{Ratio: 0.8}}},
		"compose {}":        Compose{},
		"without_isolated":  WithoutIsolated{Aug: EdgeRemove{Ratio: 0.5}},
		"without_isolated0": WithoutIsolated{},
		"graphcl default":   GraphCLDefault(),
	}
}

// edgeCaseGraphs lists small and degenerate graphs, with and without the
// optional fields.
func edgeCaseGraphs() map[string]*data.Graph {
	bare := func(n int, e [][2]int32) *data.Graph { return &data.Graph{NumNodes: n, Edges: e} }
	noX := mkGraph(10, pathEdges(10))
	noX.X, noX.FeatDim = nil, 0
	emptySlices := &data.Graph{NumNodes: 0, Edges: [][2]int32{}, NodeLabels: []int32{}, X: []float32{}, FeatDim: 3, NodeAttrs: []float32{}, AttrDim: 2, EdgeLabels: []int32{}}
	return map[string]*data.Graph{
		"empty":                &data.Graph{},
		"empty, empty slices":  emptySlices,
		"single node, bare":    bare(1, nil),
		"single node":          mkGraph(1, nil),
		"single self-loop":     mkGraph(1, [][2]int32{{0, 0}}),
		"one edge":             mkGraph(2, [][2]int32{{0, 1}}),
		"no edges":             mkGraph(6, nil),
		"bare path":            bare(10, pathEdges(10)),
		"no X":                 noX,
		"self-loops and multi": mkGraph(5, [][2]int32{{0, 0}, {0, 1}, {0, 1}, {1, 2}, {2, 2}, {3, 4}, {3, 4}, {4, 4}}),
		"complete6":            mkGraph(6, completeEdges(6)),
		"molecule":             molecule(),
		"all self-loops":       mkGraph(3, [][2]int32{{0, 0}, {1, 1}, {2, 2}}),
	}
}

func TestEdgeCases(t *testing.T) {
	for an, aug := range allAugmenters() {
		for gn, g := range edgeCaseGraphs() {
			before := snapshot(g)
			for seed := range uint64(5) {
				out := aug.Augment(g, newRNG(seed))
				if out == nil {
					t.Fatalf("%s on %s: nil output", an, gn)
				}
				if err := out.Validate(); err != nil {
					t.Fatalf("%s on %s seed %d: invalid output: %v", an, gn, seed, err)
				}
				if out == g {
					t.Fatalf("%s on %s: output is the input", an, gn)
				}
				if !reflect.DeepEqual(g, before) {
					t.Fatalf("%s on %s: input modified", an, gn)
				}
				// The output shares no memory with the input: scribbling
				// on it leaves the input as it was.
				for i := range out.Edges {
					out.Edges[i] = [2]int32{-7, -7}
				}
				for _, s := range [][]int32{out.NodeLabels, out.EdgeLabels} {
					for i := range s {
						s[i] = -7
					}
				}
				for _, s := range [][]float32{out.X, out.NodeAttrs} {
					for i := range s {
						s[i] = -7
					}
				}
				if !reflect.DeepEqual(g, before) {
					t.Fatalf("%s on %s: output shares memory with the input", an, gn)
				}
			}
			if out := aug.Augment(nil, newRNG(1)); out != nil {
				t.Fatalf("%s on nil: %+v, want nil", an, out)
			}
			bad := &data.Graph{NumNodes: 2, Edges: [][2]int32{{0, 5}}}
			if out := aug.Augment(bad, newRNG(1)); !sameGraph(out, bad) || out == bad {
				t.Fatalf("%s on an invalid graph: %+v, want an unchanged copy", an, out)
			}
		}
	}
	if DropIsolated(nil) != nil {
		t.Fatal("DropIsolated(nil) != nil")
	}
}

func TestDeterminism(t *testing.T) {
	g := molecule()
	for name, aug := range allAugmenters() {
		t.Run(name, func(t *testing.T) {
			distinct := map[string]bool{}
			for seed := range uint64(20) {
				a, b := aug.Augment(g, newRNG(seed)), aug.Augment(g, newRNG(seed))
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("seed %d: two runs differ", seed)
				}
				distinct[key(a)] = true
			}
			// Augmenters that change nothing on this connected graph give
			// one output. Node drop, subgraph, masking and perturbation have
			// thousands of outcomes, so 20 seeds give at most a few
			// collisions; the exceptions have few outcomes: edge_remove .99
			// keeps one of 33 edges and subgraph 0 one of 30 nodes (about 15
			// distinct expected), and random_choice has an identity branch
			// drawn a third of the time.
			minDistinct := map[string]int{
				"identity": 1, "random_choice {}": 1, "compose {}": 1, "without_isolated0": 1,
				"node_drop NaN": 1, "edge_remove -1": 1, "node_drop 1.5": 1, "subgraph 1": 1,
				"edge_remove .99": 8, "subgraph 0": 8, "random_choice": 5,
			}
			want, ok := minDistinct[name]
			if !ok {
				want = 15
			}
			if want == 1 && len(distinct) != 1 {
				t.Fatalf("%d distinct outputs over 20 seeds, want 1", len(distinct))
			}
			if len(distinct) < want {
				t.Fatalf("only %d distinct outputs over 20 seeds, want at least %d", len(distinct), want)
			}
		})
	}
}

// marker sets the graph label to its own value, to record which branch ran.
type marker int

func (m marker) Augment(g *data.Graph, _ *rand.Rand) *data.Graph {
	c := g.Clone()
	c.Label = c.Label*10 + int(m)
	return c
}

func TestRandomChoiceUniform(t *testing.T) {
	rc := RandomChoice{Augs: []GraphAugmenter{marker(1), marker(2), marker(3), marker(4)}}
	g := &data.Graph{NumNodes: 1}
	for seed := range uint64(5) {
		counts := make([]int, 4)
		rng := newRNG(100 + seed)
		for range 4000 {
			counts[rc.Augment(g, rng).Label-1]++
		}
		if x := chiSquare(counts); x > chi2Crit999[3] {
			t.Errorf("seed %d: choice counts %v, chi-square %.2f > %.2f (df 3, p=0.001)", seed, counts, x, chi2Crit999[3])
		}
	}
	// The GraphCL default draws each of its four augmentations about
	// equally often, recognised by their effect on K30 (where no node can
	// become isolated).
	k30 := mkGraph(30, completeEdges(30))
	m := len(k30.Edges)
	counts := make([]int, 4)
	rng := newRNG(9)
	for range 2000 {
		out := GraphCLDefault().Augment(k30, rng)
		switch {
		case out.NumNodes == 27 && len(out.Edges) == 27*26/2:
			counts[0]++
		case out.NumNodes == 30 && len(out.Edges) == m-Count(m, 0.1):
			counts[1]++
		case out.NumNodes == 6 && len(out.Edges) == 15:
			counts[2]++
		case out.NumNodes == 30 && len(out.Edges) == m && !sameSlice(out.X, k30.X):
			counts[3]++
		default:
			t.Fatalf("unrecognised output: %d nodes, %d edges", out.NumNodes, len(out.Edges))
		}
	}
	if x := chiSquare(counts); x > chi2Crit999[3] {
		t.Errorf("GraphCLDefault counts %v, chi-square %.2f > %.2f", counts, x, chi2Crit999[3])
	}
}

func TestComposeOrder(t *testing.T) {
	c := Compose{Augs: []GraphAugmenter{marker(1), marker(2), marker(3)}}
	g := &data.Graph{NumNodes: 1, Label: 0}
	if got := c.Augment(g, newRNG(1)).Label; got != 123 {
		t.Fatalf("compose label %d, want 123 (applied in order)", got)
	}
	// Node drop then edge removal: counts compose.
	h := mkGraph(30, completeEdges(30))
	out := Compose{Augs: []GraphAugmenter{NodeDrop{Ratio: 0.1}, EdgeRemove{Ratio: 0.5}}}.Augment(h, newRNG(2))
	if out.NumNodes != 27 || len(out.Edges) != 27*26/2-Count(27*26/2, 0.5) {
		t.Fatalf("%d nodes %d edges, want 27 nodes %d edges", out.NumNodes, len(out.Edges), 27*26/2-Count(27*26/2, 0.5))
	}
	checkAligned(t, h, out, false)
}

// TestChooseMaskUniform checks that chooseMask draws every k-subset with
// equal probability, on both of its paths (k ≤ n/2 and k > n/2).
func TestChooseMaskUniform(t *testing.T) {
	tests := []struct{ n, k, subsets int }{{5, 2, 10}, {5, 4, 5}, {4, 1, 4}, {2, 1, 2}}
	for _, tt := range tests {
		idx := map[int]int{}
		counts := make([]int, tt.subsets)
		rng := newRNG(uint64(10*tt.n + tt.k))
		mask := make([]bool, tt.n)
		for range 1000 * tt.subsets {
			clear(mask)
			chooseMask(rng, mask, tt.k)
			bits, cnt := 0, 0
			for i, m := range mask {
				if m {
					bits |= 1 << i
					cnt++
				}
			}
			if cnt != tt.k {
				t.Fatalf("n=%d k=%d: %d marked", tt.n, tt.k, cnt)
			}
			if _, ok := idx[bits]; !ok {
				idx[bits] = len(idx)
			}
			if len(idx) > tt.subsets {
				t.Fatalf("n=%d k=%d: more than %d subsets", tt.n, tt.k, tt.subsets)
			}
			counts[idx[bits]]++
		}
		if x := chiSquare(counts); x > chi2Crit999[tt.subsets-1] {
			t.Errorf("n=%d k=%d: subset counts %v, chi-square %.2f > %.2f", tt.n, tt.k, counts, x, chi2Crit999[tt.subsets-1])
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	aug := GraphCLDefault()
	g := molecule()
	want := make([]*data.Graph, 64)
	for i := range want {
		want[i] = aug.Augment(g, newRNG(uint64(i)))
	}
	done := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := range want {
				if out := aug.Augment(g, newRNG(uint64(i))); !reflect.DeepEqual(out, want[i]) {
					done <- &mismatch{w, i}
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

type mismatch struct{ worker, i int }

func (m *mismatch) Error() string {
	return fmt.Sprintf("worker %d, seed %d: concurrent augmentation differs from the sequential one", m.worker, m.i)
}

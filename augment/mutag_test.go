package augment

import (
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// TestMUTAG runs every augmentation on the real MUTAG graphs (188 molecules
// with node and edge labels, one-hot node-label features) and checks the
// exact counts and validity. It also logs how many nodes WithoutIsolated
// removes beyond the dropped ones, the difference from GraphCL described at
// DropIsolated.
func TestMUTAG(t *testing.T) {
	dir := testenv.Path(t, "tu", "MUTAG")
	set, err := data.ReadTU(dir, "MUTAG")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Graphs) != 188 {
		t.Fatalf("%d graphs, want 188", len(set.Graphs))
	}
	for _, g := range set.Graphs {
		if g.X == nil && g.NodeLabels != nil {
			g.FeatDim = set.NumNodeLabels
			g.X = make([]float32, g.NumNodes*g.FeatDim)
			for v, l := range g.NodeLabels {
				g.X[v*g.FeatDim+int(l)] = 1
			}
		}
	}
	rng := newRNG(11)
	var nodes, dropped, extra int
	for _, g := range set.Graphs {
		before := snapshot(g)
		n, m := g.NumNodes, len(g.Edges)
		for range 5 {
			nd := NodeDrop{Ratio: 0.1}.Augment(g, rng)
			if nd.NumNodes != n-Count(n, 0.1) {
				t.Fatalf("node_drop: %d nodes of %d", nd.NumNodes, n)
			}
			di := DropIsolated(nd)
			nodes += n
			dropped += n - nd.NumNodes
			extra += nd.NumNodes - di.NumNodes
			if er := (EdgeRemove{Ratio: 0.1}).Augment(g, rng); len(er.Edges) != m-Count(m, 0.1) {
				t.Fatalf("edge_remove: %d edges of %d", len(er.Edges), m)
			}
			if ep := (EdgePerturb{Ratio: 0.1}).Augment(g, rng); len(ep.Edges) != m {
				t.Fatalf("edge_perturb: %d edges of %d", len(ep.Edges), m)
			}
			sg := Subgraph{Ratio: 0.2}.Augment(g, rng)
			if connected(g) && sg.NumNodes != max(1, Count(n, 0.2)) {
				t.Fatalf("subgraph: %d nodes of a connected %d-node graph", sg.NumNodes, n)
			}
			for _, out := range []*data.Graph{nd, di, sg, AttrMask{Ratio: 0.1}.Augment(g, rng), GraphCLDefault().Augment(g, rng)} {
				if err := out.Validate(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !sameGraph(g, before) {
			t.Fatal("input graph modified")
		}
	}
	t.Logf("MUTAG, node_drop 0.1: %d of %d nodes dropped; DropIsolated then removes %d more (%.2f%% of nodes) that lost all their neighbours",
		dropped, nodes, extra, 100*float64(extra)/float64(nodes))
}

package augment

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// EdgeRemove deletes Count(|E|, Ratio) undirected edges chosen uniformly
// without replacement; nodes and their rows are unchanged. A self-loop counts
// as one edge.
//
// This is what GraphCL's TU code runs under the name "edge perturbation"
// (aug.py, permute_edges): it draws the edges to add but never adds them.
// Unlike that code, which works on the directed edge list (both directions
// plus one self-loop per node) and may keep one direction of an edge while
// removing the other, EdgeRemove removes whole undirected edges.
type EdgeRemove struct {
	// Ratio is the fraction of edges removed, in [0, 1) (GraphCL: 0.1).
	Ratio float64
}

// Augment returns g without Count(len(g.Edges), r.Ratio) random edges.
func (r EdgeRemove) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	if !usable(g) {
		return Identity{}.Augment(g, rng)
	}
	m := len(g.Edges)
	k := Count(m, r.Ratio)
	if k == 0 {
		return clone(g)
	}
	s := getScratch()
	defer putScratch(s)
	removed := cleared(&s.flags, m)
	chooseMask(rng, removed, k)
	out := alloc(g, g.NumNodes, m-k)
	copyNodes(out, g)
	keepEdges(out, g, removed)
	return out
}

// keepEdges sets out.Edges to the edges of g not marked removed, in input
// order, and writes their labels at the same indices of out.EdgeLabels (which
// must have room for them); out.Edges keeps its capacity for more edges.
func keepEdges(out, g *data.Graph, removed []bool) {
	out.Edges = out.Edges[:0]
	for i, e := range g.Edges {
		if removed[i] {
			continue
		}
		if g.EdgeLabels != nil {
			out.EdgeLabels[len(out.Edges)] = g.EdgeLabels[i]
		}
		out.Edges = append(out.Edges, e)
	}
}

// String returns "edge_remove(ratio)".
func (r EdgeRemove) String() string { return fmt.Sprintf("edge_remove(%g)", r.Ratio) }

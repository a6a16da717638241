package augment

import (
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// DropIsolated returns a copy of g without the nodes that have no incident
// edge (a self-loop counts as an edge), renumbered 0..n'-1 in their original
// order with their rows and labels aligned. When no node has an edge the
// graph is returned unchanged (copied), so that a graph never becomes empty;
// an empty graph stays empty. g is never modified; nil gives nil, and an
// invalid g an unchanged copy.
//
// GraphCL's TU training loop does this to the augmented view (gsimclr.py,
// idx_not_missing) whenever the augmentation is node dropping, subgraph or
// a random choice (random2/3/4), whichever augmentation was drawn. Note
// that GraphCL first gives every node a self-loop (aug.py, get), so there a
// node only disappears when the augmentation removed it or its self-loop;
// nodes that merely lost their neighbours stay. Graphs read by package data
// carry no such self-loops, so here such nodes are removed too.
func DropIsolated(g *data.Graph) *data.Graph {
	if !usable(g) {
		return Identity{}.Augment(g, nil)
	}
	s := getScratch()
	defer putScratch(s)
	keep, nk := touched(g, s)
	if nk == g.NumNodes || nk == 0 {
		return clone(g)
	}
	return induce(g, keep, s, false)
}

// touched marks the nodes with at least one incident edge and counts them.
func touched(g *data.Graph, s *scratch) ([]bool, int) {
	keep := cleared(&s.flags, g.NumNodes)
	nk := 0
	for _, e := range g.Edges {
		for _, v := range e {
			if !keep[v] {
				keep[v] = true
				nk++
			}
		}
	}
	return keep, nk
}

// WithoutIsolated applies Aug and then removes the isolated nodes of its
// output as [DropIsolated] does. A nil Aug acts as [Identity].
//
// The isolated nodes are removed in place in the graph Aug returned, which
// the GraphAugmenter contract makes a fresh copy; if Aug returns its input
// itself, that graph is copied first.
type WithoutIsolated struct {
	Aug GraphAugmenter
}

// Augment returns w.Aug.Augment(g, rng) without its isolated nodes.
func (w WithoutIsolated) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	var out *data.Graph
	if w.Aug == nil {
		out = Identity{}.Augment(g, rng)
	} else {
		out = w.Aug.Augment(g, rng)
	}
	if out == g {
		return DropIsolated(g)
	}
	if !usable(out) {
		return out
	}
	s := getScratch()
	defer putScratch(s)
	keep, nk := touched(out, s)
	if nk == out.NumNodes || nk == 0 {
		return out
	}
	return induce(out, keep, s, true)
}

// String returns "without_isolated(aug)".
func (w WithoutIsolated) String() string {
	return "without_isolated(" + join([]GraphAugmenter{w.Aug}) + ")"
}

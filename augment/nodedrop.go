package augment

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// NodeDrop is GraphCL's node dropping: it removes Count(n, Ratio) nodes
// chosen uniformly without replacement, together with their incident edges,
// and renumbers the remaining nodes 0..n'-1 in their original order.
//
// GraphCL's TU code (aug.py, drop_nodes) draws int(n/10) nodes with
// np.random.choice(replace=False) and deletes their rows and columns of the
// adjacency matrix; its loader then removes the nodes that have no edge left.
// Every node carries a self-loop there, so the nodes removed are exactly the
// dropped ones, which is what NodeDrop does directly.
type NodeDrop struct {
	// Ratio is the fraction of nodes dropped, in [0, 1) (GraphCL: 0.1).
	Ratio float64
}

// Augment returns g without Count(g.NumNodes, d.Ratio) random nodes.
func (d NodeDrop) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	if !usable(g) {
		return Identity{}.Augment(g, rng)
	}
	k := Count(g.NumNodes, d.Ratio)
	if k == 0 {
		return clone(g)
	}
	s := getScratch()
	defer putScratch(s)
	keep := cleared(&s.flags, g.NumNodes)
	chooseMask(rng, keep, g.NumNodes-k)
	return induce(g, keep, s, false)
}

// String returns "node_drop(ratio)".
func (d NodeDrop) String() string { return fmt.Sprintf("node_drop(%g)", d.Ratio) }

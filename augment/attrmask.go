package augment

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// AttrMask is GraphCL's attribute masking for TU datasets (aug.py,
// mask_nodes): it replaces the feature rows X of Count(n, Ratio) nodes,
// chosen uniformly without replacement, by independent Gaussian noise with
// mean 0.5 and standard deviation 0.5. Only X (what the encoder sees) is
// masked; NodeLabels, NodeAttrs and the structure are unchanged. A graph
// without features (X nil or FeatDim 0) is returned unchanged.
type AttrMask struct {
	// Ratio is the fraction of nodes masked, in [0, 1) (GraphCL: 0.1).
	Ratio float64
}

// Augment returns g with the features of Count(g.NumNodes, a.Ratio) random
// nodes replaced by N(0.5, 0.5²) noise.
func (a AttrMask) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	if !usable(g) {
		return Identity{}.Augment(g, rng)
	}
	out := clone(g)
	k := Count(g.NumNodes, a.Ratio)
	d := g.FeatDim
	if k == 0 || g.X == nil || d <= 0 {
		return out
	}
	s := getScratch()
	defer putScratch(s)
	mask := cleared(&s.flags, g.NumNodes)
	chooseMask(rng, mask, k)
	for v, m := range mask {
		if !m {
			continue
		}
		row := out.X[v*d : (v+1)*d]
		for j := range row {
			row[j] = float32(0.5 + 0.5*rng.NormFloat64())
		}
	}
	return out
}

// String returns "attr_mask(ratio)".
func (a AttrMask) String() string { return fmt.Sprintf("attr_mask(%g)", a.Ratio) }

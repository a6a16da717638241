package augment

import (
	"math/rand/v2"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
)

// RandomChoice applies one of Augs chosen uniformly at random for each call:
// GraphCL's "random4" when Augs are node dropping, edge removal, subgraph and
// attribute masking. An empty list, or a nil entry when chosen, acts as
// [Identity].
type RandomChoice struct {
	Augs []GraphAugmenter
}

// Augment applies one uniformly chosen augmenter of c.Augs to g.
func (c RandomChoice) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	if len(c.Augs) == 0 {
		return Identity{}.Augment(g, rng)
	}
	a := c.Augs[rng.IntN(len(c.Augs))]
	if a == nil {
		return Identity{}.Augment(g, rng)
	}
	return a.Augment(g, rng)
}

// String returns "random_choice(a, b, ...)".
func (c RandomChoice) String() string { return "random_choice(" + join(c.Augs) + ")" }

// Compose applies Augs in sequence, each to the output of the previous one.
// An empty list acts as [Identity]; nil entries are skipped.
type Compose struct {
	Augs []GraphAugmenter
}

// Augment applies every augmenter of c.Augs in order.
func (c Compose) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	out := g
	for _, a := range c.Augs {
		if a != nil {
			out = a.Augment(out, rng)
		}
	}
	if out == g {
		return Identity{}.Augment(g, rng)
	}
	return out
}

// String returns "compose(a, b, ...)".
func (c Compose) String() string { return "compose(" + join(c.Augs) + ")" }

func join(augs []GraphAugmenter) string {
	var b strings.Builder
	for i, a := range augs {
		if i > 0 {
			b.WriteString(", ")
		}
		if st, ok := a.(interface{ String() string }); ok {
			b.WriteString(st.String())
		} else if a == nil {
			b.WriteString("identity")
		} else {
			b.WriteString("?")
		}
	}
	return b.String()
}

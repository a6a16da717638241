package augment

import (
	"fmt"
	"math"
	"strings"
)

// Kinds of augmentation accepted by [New].
const (
	KindNodeDrop    = "node_drop"
	KindEdgeRemove  = "edge_remove"
	KindEdgePerturb = "edge_perturb"
	KindSubgraph    = "subgraph"
	KindAttrMask    = "attr_mask"
	KindIdentity    = "identity"
)

// Modes of combining several augmentations accepted by [New].
const (
	// ModeRandomChoice applies one augmentation chosen uniformly per call.
	ModeRandomChoice = "random_choice"
	// ModeCompose applies all augmentations in order.
	ModeCompose = "compose"
)

var kinds = []string{KindNodeDrop, KindEdgeRemove, KindEdgePerturb, KindSubgraph, KindAttrMask, KindIdentity}

// Spec names one augmentation and its ratio, as written in a configuration.
type Spec struct {
	// Kind is one of node_drop, edge_remove, edge_perturb, subgraph,
	// attr_mask, identity.
	Kind string `yaml:"kind" json:"kind"`
	// Ratio is the fraction of nodes or edges affected: in [0, 1) for
	// node_drop, edge_remove, edge_perturb and attr_mask; the fraction of
	// nodes kept, in (0, 1], for subgraph; 0 for identity.
	Ratio float64 `yaml:"ratio" json:"ratio"`
}

// New builds the augmenter described by specs, combined by mode
// ("random_choice": [RandomChoice], one per call; "compose": [Compose], all in
// order). It checks every kind and ratio and returns an error naming the
// offending field (specs[i].kind, specs[i].ratio or mode) and what it
// accepts. The result is always a RandomChoice or a Compose, even for one
// spec.
func New(specs []Spec, mode string) (GraphAugmenter, error) {
	if mode != ModeRandomChoice && mode != ModeCompose {
		return nil, fmt.Errorf("augment.New: mode = %q: want %q or %q", mode, ModeRandomChoice, ModeCompose)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("augment.New: specs is empty: want at least one of %s (use %q for none)",
			strings.Join(kinds, ", "), KindIdentity)
	}
	augs := make([]GraphAugmenter, len(specs))
	for i, sp := range specs {
		a, err := sp.build()
		if err != nil {
			return nil, fmt.Errorf("augment.New: specs[%d].%w", i, err)
		}
		augs[i] = a
	}
	if mode == ModeCompose {
		return Compose{Augs: augs}, nil
	}
	return RandomChoice{Augs: augs}, nil
}

// build returns the augmenter of one spec, or an error that starts with the
// field name.
func (sp Spec) build() (GraphAugmenter, error) {
	r := sp.Ratio
	half := func() error { // [0, 1)
		if math.IsNaN(r) || r < 0 || r >= 1 {
			return fmt.Errorf("ratio = %v for kind %q: want a value in [0, 1)", r, sp.Kind)
		}
		return nil
	}
	switch sp.Kind {
	case KindNodeDrop:
		return NodeDrop{Ratio: r}, half()
	case KindEdgeRemove:
		return EdgeRemove{Ratio: r}, half()
	case KindEdgePerturb:
		return EdgePerturb{Ratio: r}, half()
	case KindAttrMask:
		return AttrMask{Ratio: r}, half()
	case KindSubgraph:
		if math.IsNaN(r) || r <= 0 || r > 1 {
			return nil, fmt.Errorf("ratio = %v for kind %q: want a value in (0, 1] (the fraction of nodes kept)", r, sp.Kind)
		}
		return Subgraph{Ratio: r}, nil
	case KindIdentity:
		if r != 0 {
			return nil, fmt.Errorf("ratio = %v for kind %q: want 0 (identity takes no ratio)", r, sp.Kind)
		}
		return Identity{}, nil
	}
	return nil, fmt.Errorf("kind = %q: want one of %s", sp.Kind, strings.Join(kinds, ", "))
}

// GraphCLDefault returns GraphCL's "random4" view for TU datasets with the
// ratios of its unsupervised_TU code, followed by the removal of isolated
// nodes its loader applies:
//
//	WithoutIsolated{RandomChoice{NodeDrop{0.1}, EdgeRemove{0.1}, Subgraph{0.2}, AttrMask{0.1}}}
//
// See [DropIsolated] for how the isolated-node removal differs from
// GraphCL's when graphs carry no self-loops.
func GraphCLDefault() GraphAugmenter {
	return WithoutIsolated{Aug: RandomChoice{Augs: []GraphAugmenter{
		NodeDrop{Ratio: 0.1},
		EdgeRemove{Ratio: 0.1},
		Subgraph{Ratio: 0.2},
		AttrMask{Ratio: 0.1},
	}}}
}

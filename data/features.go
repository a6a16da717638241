package data

import (
	"fmt"
	"slices"
	"strings"
)

// FeatureKinds lists the values FeatureOptions.Kind accepts.
var FeatureKinds = []string{"auto", "auto-degree", "labels", "attributes", "labels+attributes", "constant", "degree"}

// MaxFeatureValues bounds the total size of the feature matrices SetFeatures
// builds (nodes × feature dimension), to fail clearly instead of exhausting
// memory on, say, a one-hot of a huge label range.
const MaxFeatureValues = 1 << 30

// FeatureOptions selects the node features the encoder sees.
//
// Kind is one of:
//   - "auto" (or ""): one-hot node labels where the dataset has them,
//     concatenated with the node attributes where it has them, and a
//     constant 1 per node when it has neither (GraphCL's convention);
//   - "auto-degree": as "auto", but one-hot degrees (as "degree") where
//     "auto" would give the constant, that is when the dataset has no node
//     attributes and at most one node label (the GIN text format gives
//     every node of an unlabelled dataset the label 0): the convention of
//     MVGRL and InfoGraph for unlabelled graphs;
//   - "labels": one-hot node labels (NumNodeLabels columns);
//   - "attributes": the node attributes (AttrDim columns);
//   - "labels+attributes": both, labels first;
//   - "constant": a single 1 per node;
//   - "degree": one-hot of min(degree, MaxDegree), MaxDegree+1 columns, where
//     MaxDegree 0 means the largest degree in the dataset (a self-loop counts
//     once, as in Graph.Degrees).
type FeatureOptions struct {
	Kind      string
	MaxDegree int
}

// SetFeatures fills every graph's X and FeatDim, and s.FeatDim, as opt says.
// It returns an error, listing the kinds available for this dataset, for an
// unknown kind or one that needs labels or attributes the dataset lacks.
func (s *GraphSet) SetFeatures(opt FeatureOptions) error {
	if err := s.checkNodeData(); err != nil {
		return err
	}
	kind, err := s.featureKind(opt)
	if err != nil {
		return err
	}
	f, err := s.nodeFeatures(kind, opt.MaxDegree)
	if err != nil {
		return err
	}
	return s.fillFeatures(f)
}

// checkNodeData checks that every graph has the node labels and attributes
// the set declares, labels in 0..NumNodeLabels-1 and attributes of
// dimension AttrDim.
func (s *GraphSet) checkNodeData() error {
	hasLabels := s.NumNodeLabels > 0
	hasAttrs := s.AttrDim > 0
	for i, g := range s.Graphs {
		if hasLabels && g.NodeLabels == nil && g.NumNodes > 0 {
			return fmt.Errorf("set features of %s: graph %d has no node labels although the set has %d", s.Name, i, s.NumNodeLabels)
		}
		if hasAttrs && (g.AttrDim != s.AttrDim || len(g.NodeAttrs) != g.NumNodes*s.AttrDim) {
			return fmt.Errorf("set features of %s: graph %d has %d attribute values of dimension %d for %d nodes: expected dimension %d",
				s.Name, i, len(g.NodeAttrs), g.AttrDim, g.NumNodes, s.AttrDim)
		}
		for v, l := range g.NodeLabels {
			if hasLabels && (l < 0 || int(l) >= s.NumNodeLabels) {
				return fmt.Errorf("set features of %s: graph %d node %d has label %d: expected 0..%d", s.Name, i, v, l, s.NumNodeLabels-1)
			}
		}
	}
	return nil
}

// availableFeatureKinds lists the kinds of FeatureKinds a set with or
// without node labels and attributes supports.
func availableFeatureKinds(hasLabels, hasAttrs bool) []string {
	available := []string{"auto", "auto-degree"}
	if hasLabels {
		available = append(available, "labels")
	}
	if hasAttrs {
		available = append(available, "attributes")
	}
	if hasLabels && hasAttrs {
		available = append(available, "labels+attributes")
	}
	return append(available, "constant", "degree")
}

// featureKind checks opt against the set and returns the kind to build,
// with "", "auto" and "auto-degree" resolved to the kind they stand for.
func (s *GraphSet) featureKind(opt FeatureOptions) (string, error) {
	hasLabels := s.NumNodeLabels > 0
	hasAttrs := s.AttrDim > 0
	available := availableFeatureKinds(hasLabels, hasAttrs)
	kind := opt.Kind
	if kind == "" {
		kind = "auto"
	}
	if !slices.Contains(FeatureKinds, kind) {
		return "", fmt.Errorf("set features of %s: unknown kind %q: expected one of %s", s.Name, opt.Kind, strings.Join(FeatureKinds, ", "))
	}
	if !slices.Contains(available, kind) {
		var lacks []string
		if strings.Contains(kind, "labels") && !hasLabels {
			lacks = append(lacks, "node labels")
		}
		if strings.Contains(kind, "attributes") && !hasAttrs {
			lacks = append(lacks, "node attributes")
		}
		return "", fmt.Errorf("set features of %s: kind %q needs %s, which the dataset lacks: expected one of %s",
			s.Name, kind, strings.Join(lacks, " and "), strings.Join(available, ", "))
	}
	if opt.MaxDegree < 0 {
		return "", fmt.Errorf("set features of %s: max degree %d: expected >= 0 (0 = the largest degree in the dataset)", s.Name, opt.MaxDegree)
	}
	if kind == "auto-degree" {
		kind = "auto"
		if s.NumNodeLabels <= 1 && !hasAttrs {
			kind = "degree"
		}
	}
	if kind == "auto" {
		switch {
		case hasLabels && hasAttrs:
			kind = "labels+attributes"
		case hasLabels:
			kind = "labels"
		case hasAttrs:
			kind = "attributes"
		default:
			kind = "constant"
		}
	}
	return kind, nil
}

// nodeFeatures is one kind of node features: its dimension and how it
// fills the zeroed row of node v of graph g, the i-th of the set.
type nodeFeatures struct {
	dim  int
	fill func(i int, g *Graph, v int, row []float32)
}

// nodeFeatures returns the features of kind, a resolved kind of
// FeatureKinds that the set supports; maxDegree is FeatureOptions.MaxDegree.
// An unresolved kind ("auto") is an error.
func (s *GraphSet) nodeFeatures(kind string, maxDegree int) (nodeFeatures, error) {
	switch kind {
	case "labels":
		return s.labelFeatures(), nil
	case "attributes":
		return s.attrFeatures(), nil
	case "labels+attributes":
		return s.labelAttrFeatures(), nil
	case "constant":
		return constantFeatures(), nil
	case "degree":
		return s.degreeFeatures(maxDegree), nil
	}
	return nodeFeatures{}, fmt.Errorf("set features of %s: kind %q: expected one of labels, attributes, labels+attributes, constant, degree", s.Name, kind)
}

// labelFeatures is the one-hot node label.
func (s *GraphSet) labelFeatures() nodeFeatures {
	return nodeFeatures{s.NumNodeLabels, func(_ int, g *Graph, v int, row []float32) {
		row[g.NodeLabels[v]] = 1
	}}
}

// attrFeatures is the node attributes.
func (s *GraphSet) attrFeatures() nodeFeatures {
	a := s.AttrDim
	return nodeFeatures{a, func(_ int, g *Graph, v int, row []float32) {
		copy(row, g.NodeAttrs[v*a:(v+1)*a])
	}}
}

// labelAttrFeatures is the one-hot node label followed by the node
// attributes.
func (s *GraphSet) labelAttrFeatures() nodeFeatures {
	l, a := s.NumNodeLabels, s.AttrDim
	return nodeFeatures{l + a, func(_ int, g *Graph, v int, row []float32) {
		row[g.NodeLabels[v]] = 1
		copy(row[l:], g.NodeAttrs[v*a:(v+1)*a])
	}}
}

// constantFeatures is a single 1 per node.
func constantFeatures() nodeFeatures {
	return nodeFeatures{1, func(_ int, _ *Graph, _ int, row []float32) {
		row[0] = 1
	}}
}

// degreeFeatures is the one-hot of min(degree, maxDeg), where maxDeg 0
// means the largest degree in the set.
func (s *GraphSet) degreeFeatures(maxDeg int) nodeFeatures {
	degrees := make([][]int, len(s.Graphs))
	top := 0
	for i, g := range s.Graphs {
		degrees[i] = g.Degrees()
		for _, d := range degrees[i] {
			top = max(top, d)
		}
	}
	if maxDeg == 0 {
		maxDeg = top
	}
	return nodeFeatures{maxDeg + 1, func(i int, _ *Graph, v int, row []float32) {
		row[min(degrees[i][v], maxDeg)] = 1
	}}
}

// fillFeatures builds the features f of every node, failing when they
// would exceed MaxFeatureValues.
func (s *GraphSet) fillFeatures(f nodeFeatures) error {
	dim := f.dim
	total := 0
	for _, g := range s.Graphs {
		total += g.NumNodes
	}
	if dim > 0 && total > MaxFeatureValues/dim {
		return fmt.Errorf("set features of %s: %d nodes × %d features exceeds %d values: expected a smaller feature dimension", s.Name, total, dim, MaxFeatureValues)
	}

	// One backing array; each graph gets a capacity-limited window so that
	// appending to one graph's X can never overwrite another's.
	x := make([]float32, total*dim)
	off := 0
	for i, g := range s.Graphs {
		n := g.NumNodes
		gx := x[off : off+n*dim : off+n*dim]
		off += n * dim
		for v := 0; v < n; v++ {
			f.fill(i, g, v, gx[v*dim:(v+1)*dim])
		}
		g.X = gx
		g.FeatDim = dim
	}
	s.FeatDim = dim
	return nil
}

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
	available = append(available, "constant", "degree")

	kind := opt.Kind
	if kind == "" {
		kind = "auto"
	}
	if !slices.Contains(FeatureKinds, kind) {
		return fmt.Errorf("set features of %s: unknown kind %q: expected one of %s", s.Name, opt.Kind, strings.Join(FeatureKinds, ", "))
	}
	if !slices.Contains(available, kind) {
		var lacks []string
		if strings.Contains(kind, "labels") && !hasLabels {
			lacks = append(lacks, "node labels")
		}
		if strings.Contains(kind, "attributes") && !hasAttrs {
			lacks = append(lacks, "node attributes")
		}
		return fmt.Errorf("set features of %s: kind %q needs %s, which the dataset lacks: expected one of %s",
			s.Name, kind, strings.Join(lacks, " and "), strings.Join(available, ", "))
	}
	if opt.MaxDegree < 0 {
		return fmt.Errorf("set features of %s: max degree %d: expected >= 0 (0 = the largest degree in the dataset)", s.Name, opt.MaxDegree)
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

	var degrees [][]int
	maxDeg := opt.MaxDegree
	if kind == "degree" {
		degrees = make([][]int, len(s.Graphs))
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
	}

	dim := 0
	switch kind {
	case "labels":
		dim = s.NumNodeLabels
	case "attributes":
		dim = s.AttrDim
	case "labels+attributes":
		dim = s.NumNodeLabels + s.AttrDim
	case "constant":
		dim = 1
	case "degree":
		dim = maxDeg + 1
	}
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
			row := gx[v*dim : (v+1)*dim]
			switch kind {
			case "labels":
				row[g.NodeLabels[v]] = 1
			case "attributes":
				copy(row, g.NodeAttrs[v*s.AttrDim:(v+1)*s.AttrDim])
			case "labels+attributes":
				row[g.NodeLabels[v]] = 1
				copy(row[s.NumNodeLabels:], g.NodeAttrs[v*s.AttrDim:(v+1)*s.AttrDim])
			case "constant":
				row[0] = 1
			case "degree":
				row[min(degrees[i][v], maxDeg)] = 1
			}
		}
		g.X = gx
		g.FeatDim = dim
	}
	s.FeatDim = dim
	return nil
}

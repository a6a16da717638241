package data

import (
	"fmt"
	"slices"
)

// TotalNodes returns the number of nodes over all graphs.
func (s *GraphSet) TotalNodes() int {
	n := 0
	for _, g := range s.Graphs {
		n += g.NumNodes
	}
	return n
}

// TotalEdges returns the number of undirected edges (self-loops included)
// over all graphs.
func (s *GraphSet) TotalEdges() int {
	n := 0
	for _, g := range s.Graphs {
		n += len(g.Edges)
	}
	return n
}

// ClassCounts returns the number of graphs of every class.
func (s *GraphSet) ClassCounts() []int {
	c := make([]int, s.NumClasses)
	for _, g := range s.Graphs {
		if g.Label >= 0 && g.Label < s.NumClasses {
			c[g.Label]++
		}
	}
	return c
}

// Validate checks every graph (Graph.Validate) and its agreement with the
// set: class indices in [0, NumClasses), node and edge labels below
// NumNodeLabels and NumEdgeLabels, attribute and feature dimensions equal to
// the set's, and no duplicate edge.
func (s *GraphSet) Validate() error {
	if s.ClassValues != nil && len(s.ClassValues) != s.NumClasses {
		return fmt.Errorf("set %s: %d class values for %d classes", s.Name, len(s.ClassValues), s.NumClasses)
	}
	for i, g := range s.Graphs {
		if g == nil {
			return fmt.Errorf("set %s: graph %d is nil", s.Name, i)
		}
		if err := g.Validate(); err != nil {
			return fmt.Errorf("set %s: graph %d: %w", s.Name, i, err)
		}
		if g.Label < 0 || g.Label >= s.NumClasses {
			return fmt.Errorf("set %s: graph %d: class %d: expected 0..%d", s.Name, i, g.Label, s.NumClasses-1)
		}
		for v, l := range g.NodeLabels {
			if l < 0 || int(l) >= s.NumNodeLabels {
				return fmt.Errorf("set %s: graph %d node %d: label %d: expected 0..%d", s.Name, i, v, l, s.NumNodeLabels-1)
			}
		}
		for e, l := range g.EdgeLabels {
			if l < 0 || int(l) >= s.NumEdgeLabels {
				return fmt.Errorf("set %s: graph %d edge %d: label %d: expected 0..%d", s.Name, i, e, l, s.NumEdgeLabels-1)
			}
		}
		if g.NodeAttrs != nil && g.AttrDim != s.AttrDim {
			return fmt.Errorf("set %s: graph %d: attribute dimension %d: expected %d", s.Name, i, g.AttrDim, s.AttrDim)
		}
		if g.X != nil && g.FeatDim != s.FeatDim {
			return fmt.Errorf("set %s: graph %d: feature dimension %d: expected %d", s.Name, i, g.FeatDim, s.FeatDim)
		}
		keys := make([]uint64, len(g.Edges))
		for e, uv := range g.Edges {
			keys[e] = uint64(uint32(uv[0]))<<32 | uint64(uint32(uv[1]))
		}
		slices.Sort(keys)
		for e := 1; e < len(keys); e++ {
			if keys[e] == keys[e-1] {
				return fmt.Errorf("set %s: graph %d: edge (%d,%d) stored twice", s.Name, i, keys[e]>>32, uint32(keys[e]))
			}
		}
	}
	return nil
}

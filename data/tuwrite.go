package data

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// WriteTU writes s in the TU Dortmund format to dir (created if missing) as
// NAME_A.txt, NAME_graph_indicator.txt and NAME_graph_labels.txt, plus
// NAME_node_labels.txt, NAME_node_attributes.txt and NAME_edge_labels.txt
// when the graphs have them; NAME is s.Name. ReadTU of the result gives s
// back (its graphs, class values and labels; X is not written: features
// are made from the labels and attributes by SetFeatures).
//
// Node ids are written global and 1-based, every edge in both directions
// (a self-loop once), class labels as s.ClassValues. Existing files are
// overwritten. It is how a generated dataset goes to another framework
// (for instance PyTorch Geometric's TUDataset).
func WriteTU(dir string, s *GraphSet) error {
	if s == nil || s.Name == "" {
		return errors.New("write TU: the graph set needs a name (NAME of NAME_A.txt)")
	}
	if len(s.Graphs) == 0 {
		return fmt.Errorf("write TU dataset %s: no graphs", s.Name)
	}
	if len(s.ClassValues) < s.NumClasses {
		return fmt.Errorf("write TU dataset %s: %d class values for %d classes", s.Name, len(s.ClassValues), s.NumClasses)
	}
	var nodeLabels, attrs, edgeLabels bool
	for i, g := range s.Graphs {
		if err := g.Validate(); err != nil {
			return fmt.Errorf("write TU dataset %s: graph %d: %w", s.Name, i, err)
		}
		if g.NumNodes < 1 {
			return fmt.Errorf("write TU dataset %s: graph %d has no nodes (the TU format gives every graph at least one)", s.Name, i)
		}
		if g.Label < 0 || g.Label >= s.NumClasses {
			return fmt.Errorf("write TU dataset %s: graph %d has class %d, want 0..%d", s.Name, i, g.Label, s.NumClasses-1)
		}
		nodeLabels = nodeLabels || g.NodeLabels != nil
		attrs = attrs || g.NodeAttrs != nil
		edgeLabels = edgeLabels || g.EdgeLabels != nil
	}
	for i, g := range s.Graphs {
		if (g.NodeLabels != nil) != nodeLabels || (g.NodeAttrs != nil) != attrs || (g.EdgeLabels != nil) != edgeLabels {
			return fmt.Errorf("write TU dataset %s: graph %d lacks node labels, attributes or edge labels that other graphs have", s.Name, i)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write TU dataset %s: %w", s.Name, err)
	}
	write := func(suffix string, body func(w *bufio.Writer)) error {
		p := filepath.Join(dir, s.Name+"_"+suffix+".txt")
		f, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("write TU dataset %s: %w", s.Name, err)
		}
		w := bufio.NewWriterSize(f, 1<<16)
		body(w)
		err = w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write TU dataset %s: %s: %w", s.Name, p, err)
		}
		return nil
	}
	line := func(w *bufio.Writer, v int64) {
		w.WriteString(strconv.FormatInt(v, 10))
		w.WriteByte('\n')
	}
	err := write("A", func(w *bufio.Writer) {
		base := int64(1)
		for _, g := range s.Graphs {
			for _, e := range g.Edges {
				u, v := base+int64(e[0]), base+int64(e[1])
				fmt.Fprintf(w, "%d, %d\n", u, v)
				if u != v {
					fmt.Fprintf(w, "%d, %d\n", v, u)
				}
			}
			base += int64(g.NumNodes)
		}
	})
	if err == nil {
		err = write("graph_indicator", func(w *bufio.Writer) {
			for i, g := range s.Graphs {
				for range g.NumNodes {
					line(w, int64(i+1))
				}
			}
		})
	}
	if err == nil {
		err = write("graph_labels", func(w *bufio.Writer) {
			for _, g := range s.Graphs {
				line(w, int64(s.ClassValues[g.Label]))
			}
		})
	}
	if err == nil && nodeLabels {
		err = write("node_labels", func(w *bufio.Writer) {
			for _, g := range s.Graphs {
				for _, l := range g.NodeLabels {
					line(w, int64(l))
				}
			}
		})
	}
	if err == nil && edgeLabels {
		err = write("edge_labels", func(w *bufio.Writer) {
			for _, g := range s.Graphs {
				for k, e := range g.Edges {
					line(w, int64(g.EdgeLabels[k]))
					if e[0] != e[1] {
						line(w, int64(g.EdgeLabels[k]))
					}
				}
			}
		})
	}
	if err == nil && attrs {
		err = write("node_attributes", func(w *bufio.Writer) {
			for _, g := range s.Graphs {
				for n := range g.NumNodes {
					for j, v := range g.NodeAttrs[n*g.AttrDim : (n+1)*g.AttrDim] {
						if j > 0 {
							w.WriteString(", ")
						}
						w.WriteString(strconv.FormatFloat(float64(v), 'g', -1, 32))
					}
					w.WriteByte('\n')
				}
			}
		})
	}
	return err
}

package data

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
)

// ReadTU reads the TU Dortmund graph classification dataset NAME stored in
// dir as NAME_A.txt, NAME_graph_indicator.txt and NAME_graph_labels.txt,
// plus, when present, NAME_node_labels.txt, NAME_node_attributes.txt and
// NAME_edge_labels.txt (other TU files are ignored).
//
// The files hold one record a line ("u, v" in A.txt; one integer in the
// indicator and label files; comma-separated floats in node_attributes.txt).
// Blank lines are allowed only at the end of a file, and CRLF line endings
// are accepted. Node ids in A.txt are global and 1-based; graph ids in the
// indicator are 1-based, sorted, and every graph has at least one node.
//
// In the result, node ids are 0-based and local to each graph, and every
// undirected edge is stored once with u <= v, sorted by (u, v): A.txt lists
// both directions (sometimes more than once), and the duplicates are
// dropped. Self-loops are kept once. Edge labels follow the deduplicated
// edges (each takes the label of its first line in A.txt). Class labels are
// mapped to 0..C-1 in sorted order of their values (ClassValues keeps the
// values, e.g. -1 and 1 for MUTAG); node and edge labels are shifted so that
// the smallest becomes 0.
//
// Malformed input gives an error (a *ParseError where a line is at fault)
// that names the file, the line and what was expected.
func ReadTU(dir, name string) (*GraphSet, error) {
	open := func(file string) (io.ReadCloser, string, error) {
		p := filepath.Join(dir, file)
		f, err := os.Open(p)
		return f, p, err
	}
	s, err := readTU(open, name)
	if err != nil {
		return nil, fmt.Errorf("read TU dataset %s from %s: %w", name, dir, err)
	}
	return s, nil
}

// ReadTUFS is ReadTU on a file system (for instance an embed.FS or an
// fstest.MapFS); the files are looked up as NAME_A.txt etc. at its root.
func ReadTUFS(fsys fs.FS, name string) (*GraphSet, error) {
	open := func(file string) (io.ReadCloser, string, error) {
		f, err := fsys.Open(file)
		return f, path.Clean(file), err
	}
	s, err := readTU(open, name)
	if err != nil {
		return nil, fmt.Errorf("read TU dataset %s: %w", name, err)
	}
	return s, nil
}

type tuOpener func(file string) (rc io.ReadCloser, display string, err error)

// tuFile is one open TU file.
type tuFile struct {
	lr   *lineReader
	c    io.Closer
	name string // display name
}

func openTU(open tuOpener, file string, optional bool) (*tuFile, error) {
	rc, disp, err := open(file)
	if err != nil {
		if optional && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	return &tuFile{lr: newLineReader(rc, disp), c: rc, name: disp}, nil
}

// readIntLines reads a file of one integer per line. When want >= 0 the file
// must have exactly want lines; what describes one line for error messages
// and other names the file that fixes the count.
func readIntLines(f *tuFile, want int, what, other string) ([]int64, error) {
	defer f.c.Close()
	var out []int64
	if want >= 0 {
		out = make([]int64, 0, want)
	}
	for {
		b, ok, err := f.lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if want >= 0 && len(out) == want {
			return nil, parseErr(f.name, f.lr.line, "found %s: expected end of file after %d lines (one per line of %s)", quote(b), want, other)
		}
		v, ok := parseOneInt(b)
		if !ok {
			return nil, parseErr(f.name, f.lr.line, "found %s: expected one integer (%s)", quote(b), what)
		}
		out = append(out, v)
	}
	if want >= 0 && len(out) != want {
		return nil, parseErr(f.name, len(out)+1, "file ends after %d lines: expected %d (one per line of %s)", len(out), want, other)
	}
	return out, nil
}

// readTU reads the TU dataset name, opening its files with open, as ReadTU
// describes: graph labels, indicator, optional node labels and attributes,
// adjacency and optional edge labels, in that order.
func readTU(open tuOpener, name string) (*GraphSet, error) {
	if name == "" {
		return nil, errors.New("empty dataset name: expected the NAME of NAME_A.txt")
	}
	pre := name + "_"

	// Graph labels fix the number of graphs.
	rawClass, labelsFile, err := readTUGraphLabels(open, pre+"graph_labels.txt")
	if err != nil {
		return nil, err
	}

	// Graph indicator: the graph of every node.
	f, err := openTU(open, pre+"graph_indicator.txt", false)
	if err != nil {
		return nil, err
	}
	indFile := f.name
	nodeGraph, gstart, err := readTUIndicator(f, len(rawClass), labelsFile)
	if err != nil {
		return nil, err
	}
	numNodes := len(nodeGraph)

	nodeLab, numNodeLabels, err := readTUOptionalLabels(open, pre+"node_labels.txt", numNodes, "node", "the label of a node", indFile)
	if err != nil {
		return nil, err
	}

	// Optional node attributes.
	var attrs []float32
	attrDim := 0
	if f, err = openTU(open, pre+"node_attributes.txt", true); err != nil {
		return nil, err
	} else if f != nil {
		attrs, attrDim, err = readTUAttrs(f, numNodes, indFile)
		if err != nil {
			return nil, err
		}
	}

	// Adjacency.
	if f, err = openTU(open, pre+"A.txt", false); err != nil {
		return nil, err
	}
	us, vs, err := readTUEdges(f, nodeGraph, gstart, indFile)
	if err != nil {
		return nil, err
	}

	// Optional edge labels, one per line of A.txt.
	rawEdgeLab, numEdgeLabels, err := readTUOptionalLabels(open, pre+"edge_labels.txt", len(us), "edge", "the label of an edge", f.name)
	if err != nil {
		return nil, err
	}

	edges, edgeLab := dedupTUEdges(numNodes, us, vs, rawEdgeLab)
	classes, values := classIndex(rawClass)
	s := &GraphSet{
		Name:          name,
		NumClasses:    len(values),
		ClassValues:   values,
		NumNodeLabels: numNodeLabels,
		NumEdgeLabels: numEdgeLabels,
		AttrDim:       attrDim,
	}
	s.Graphs = splitTUGraphs(gstart, edges, classes, nodeLab, attrs, attrDim, edgeLab)
	return s, nil
}

// readTUGraphLabels reads the graph labels file, which fixes the number of
// graphs (at least 1, at most MaxInt32), and returns the raw labels and the
// file's display name.
func readTUGraphLabels(open tuOpener, file string) (raw []int64, display string, err error) {
	f, err := openTU(open, file, false)
	if err != nil {
		return nil, "", err
	}
	raw, err = readIntLines(f, -1, "the class label of a graph", "")
	if err != nil {
		return nil, "", err
	}
	if len(raw) == 0 {
		return nil, "", parseErr(f.name, 0, "no graph labels: expected one line per graph")
	}
	if len(raw) > math.MaxInt32 {
		return nil, "", parseErr(f.name, 0, "%d graphs: expected at most %d", len(raw), math.MaxInt32)
	}
	return raw, f.name, nil
}

// readTUIndicator reads the graph indicator f: the 1-based graph id of every
// node, sorted, every one of the numGraphs graphs (named by labelsFile) with
// at least one node. It returns the 0-based graph of every node and the
// first node of every graph followed by the number of nodes.
func readTUIndicator(f *tuFile, numGraphs int, labelsFile string) (nodeGraph []int32, gstart []int, err error) {
	defer f.c.Close()
	gstart = make([]int, 0, numGraphs+1) // gstart[g] = first global node of graph g
	last := int64(0)
	for {
		b, ok, err := f.lr.next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		v, ok := parseOneInt(b)
		if !ok {
			return nil, nil, parseErr(f.name, f.lr.line, "found %s: expected one integer (the 1-based graph id of node %d)", quote(b), len(nodeGraph)+1)
		}
		switch {
		case v == last && last > 0:
		case v == last+1:
			if v > int64(numGraphs) {
				return nil, nil, parseErr(f.name, f.lr.line, "graph id %d out of range: expected 1..%d (%s has %d lines)", v, numGraphs, labelsFile, numGraphs)
			}
			gstart = append(gstart, len(nodeGraph))
			last = v
		case last == 0:
			return nil, nil, parseErr(f.name, f.lr.line, "graph id %d: expected the first node to be in graph 1", v)
		default:
			return nil, nil, parseErr(f.name, f.lr.line, "graph id %d after %d: expected sorted ids, each graph with at least one node (%d or %d)", v, last, last, last+1)
		}
		if len(nodeGraph) == math.MaxInt32 {
			return nil, nil, parseErr(f.name, f.lr.line, "too many nodes: expected at most %d", math.MaxInt32)
		}
		nodeGraph = append(nodeGraph, int32(v-1))
	}
	if len(gstart) < numGraphs {
		return nil, nil, parseErr(labelsFile, len(gstart)+1, "label of graph %d, but %s names only %d graphs: expected one label per graph", len(gstart)+1, f.name, len(gstart))
	}
	return nodeGraph, append(gstart, len(nodeGraph)), nil
}

// readTUOptionalLabels reads the optional node or edge labels file (kind
// "node" or "edge"), which must have one line per line of the file other,
// want in all; what describes one line. The labels are shifted to start at
// 0 and returned with their count; a missing file gives nil and 0.
func readTUOptionalLabels(open tuOpener, file string, want int, kind, what, other string) ([]int32, int, error) {
	f, err := openTU(open, file, true)
	if err != nil || f == nil {
		return nil, 0, err
	}
	raw, err := readIntLines(f, want, what, other)
	if err != nil {
		return nil, 0, err
	}
	return shiftLabels(raw, f.name, kind)
}

// dedupTUEdges stores every undirected edge of the 0-based global endpoints
// us, vs once with u <= v, sorted, and, when rawEdgeLab is not nil, gives
// each the label of its first line.
func dedupTUEdges(numNodes int, us, vs, rawEdgeLab []int32) (edges [][2]int32, edgeLab []int32) {
	var d edgeDedup
	var first []int32
	var fp *[]int32
	if rawEdgeLab != nil {
		fp = &first
	}
	edges = d.build(numNodes, us, vs, nil, fp)
	if rawEdgeLab != nil {
		edgeLab = make([]int32, len(first))
		for i, k := range first {
			edgeLab[i] = rawEdgeLab[k]
		}
	}
	return edges, edgeLab
}

// splitTUGraphs cuts the sorted global edges and the per-node labels and
// attributes into one Graph per graph (gstart holds the first node of every
// graph and the number of nodes), renumbering each graph's nodes from 0.
// The graphs share the backing arrays, each slice capped at its own end.
func splitTUGraphs(gstart []int, edges [][2]int32, classes []int, nodeLab []int32, attrs []float32, attrDim int, edgeLab []int32) []*Graph {
	numGraphs := len(gstart) - 1
	out := make([]*Graph, numGraphs)
	graphs := make([]Graph, numGraphs)
	e0 := 0
	for g := range graphs {
		lo, hi := gstart[g], gstart[g+1]
		e1 := e0
		for e1 < len(edges) && int(edges[e1][0]) < hi {
			edges[e1][0] -= int32(lo)
			edges[e1][1] -= int32(lo)
			e1++
		}
		gr := &graphs[g]
		gr.NumNodes = hi - lo
		gr.Edges = edges[e0:e1:e1]
		gr.Label = classes[g]
		if nodeLab != nil {
			gr.NodeLabels = nodeLab[lo:hi:hi]
		}
		if attrs != nil {
			gr.AttrDim = attrDim
			gr.NodeAttrs = attrs[lo*attrDim : hi*attrDim : hi*attrDim]
		}
		if edgeLab != nil {
			gr.EdgeLabels = edgeLab[e0:e1:e1]
		}
		out[g] = gr
		e0 = e1
	}
	return out
}

// shiftLabels stores raw labels as value - min and returns max - min + 1.
func shiftLabels(raw []int64, file, what string) ([]int32, int, error) {
	if len(raw) == 0 {
		return []int32{}, 0, nil
	}
	lo, hi := raw[0], raw[0]
	for _, v := range raw {
		lo = min(lo, v)
		hi = max(hi, v)
	}
	if hi-lo < 0 || hi-lo >= math.MaxInt32 { // the first test catches overflow
		return nil, 0, parseErr(file, 0, "%s labels span %d..%d: expected a range of fewer than %d values", what, lo, hi, math.MaxInt32)
	}
	out := make([]int32, len(raw))
	for i, v := range raw {
		out[i] = int32(v - lo)
	}
	return out, int(hi-lo) + 1, nil
}

// readTUAttrs reads numNodes lines of comma-separated floats, all with the
// same count.
func readTUAttrs(f *tuFile, numNodes int, indFile string) ([]float32, int, error) {
	defer f.c.Close()
	var attrs []float32
	dim, n := 0, 0
	for {
		b, ok, err := f.lr.next()
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			break
		}
		if n == numNodes {
			return nil, 0, parseErr(f.name, f.lr.line, "found %s: expected end of file after %d lines (one per line of %s)", quote(b), numNodes, indFile)
		}
		before := len(attrs)
		for i := 0; i < len(b); {
			j := i
			for j < len(b) && b[j] != ',' && !isBlank(b[j]) {
				j++
			}
			v, ok := parseFloat32(b[i:j])
			if !ok {
				return nil, 0, parseErr(f.name, f.lr.line, "field %d %s: expected a finite number (node attributes are comma-separated)", len(attrs)-before+1, quote(b[i:j]))
			}
			attrs = append(attrs, v)
			j = skipBlank(b, j)
			if j < len(b) && b[j] == ',' {
				j = skipBlank(b, j+1)
				if j == len(b) {
					return nil, 0, parseErr(f.name, f.lr.line, "line ends with a comma: expected a number after it")
				}
			}
			i = j
		}
		k := len(attrs) - before
		if n == 0 {
			dim = k
			attrs = append(make([]float32, 0, min(numNodes*k, 1<<24)), attrs...)
		} else if k != dim {
			return nil, 0, parseErr(f.name, f.lr.line, "%d values: expected %d, as on line 1", k, dim)
		}
		n++
	}
	if n != numNodes {
		return nil, 0, parseErr(f.name, n+1, "file ends after %d lines: expected %d (one per line of %s)", n, numNodes, indFile)
	}
	return attrs, dim, nil
}

// readTUEdges reads A.txt into 0-based global endpoints, checking ranges and
// that both ends lie in the same graph.
func readTUEdges(f *tuFile, nodeGraph []int32, gstart []int, indFile string) (us, vs []int32, err error) {
	defer f.c.Close()
	n := int64(len(nodeGraph))
	for {
		b, ok, err := f.lr.next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return us, vs, nil
		}
		u, v, ok := parseTwoInts(b)
		if !ok {
			return nil, nil, parseErr(f.name, f.lr.line, "found %s: expected \"u, v\" (two 1-based node ids)", quote(b))
		}
		for _, x := range [2]int64{u, v} {
			if x < 1 || x > n {
				return nil, nil, parseErr(f.name, f.lr.line, "node id %d out of range: expected 1..%d (%s has %d lines)", x, n, indFile, n)
			}
		}
		gu, gv := nodeGraph[u-1], nodeGraph[v-1]
		if gu != gv {
			return nil, nil, parseErr(f.name, f.lr.line, "edge (%d, %d) joins graph %d (nodes %d..%d) and graph %d: expected both ends in the same graph",
				u, v, gu+1, gstart[gu]+1, gstart[gu+1], gv+1)
		}
		if len(us) == math.MaxInt32 {
			return nil, nil, parseErr(f.name, f.lr.line, "too many lines: expected at most %d", math.MaxInt32)
		}
		us = append(us, int32(u-1))
		vs = append(vs, int32(v-1))
	}
}

package data

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// ReadGIN reads a graph classification dataset in the text format of GIN
// and DGCNN ("NAME.txt"), gzip-compressed or not (detected from the magic
// bytes, so a ".gz" name is not required). The set is named after the file
// without its ".txt"/".gz" extensions.
//
// The format: line 1 holds the number of graphs; each graph starts with a
// line "n label" followed by n node lines "tag m nb_1 ... nb_m [attr_1 ...
// attr_k]", where the nb_i are 0-based neighbours inside the graph and any
// numbers after them are node attributes (as GIN's loader reads them; k must
// be the same on every node line of the file).
//
// Node tags become NodeLabels (the sorted distinct tags numbered 0..T-1) and
// class labels become 0..C-1 in sorted order (ClassValues keeps the values).
// Edges are stored once per undirected edge with u <= v, sorted by (u, v);
// a neighbour listed in one direction only still makes an edge; self-loops
// are kept once.
func ReadGIN(path string) (*GraphSet, error) {
	return readPath(path, "read GIN dataset", ReadGINFrom)
}

// ReadGINFrom is ReadGIN on a reader; file names the input in error
// messages and gives the set its name.
func ReadGINFrom(r io.Reader, file string) (*GraphSet, error) {
	s, err := readGIN(r, file)
	if err != nil {
		return nil, fmt.Errorf("read GIN dataset: %w", err)
	}
	return s, nil
}

// ginName strips the directory and the ".gz" and ".txt" extensions.
func ginName(file string) string {
	base := filepath.Base(file)
	base = strings.TrimSuffix(base, ".gz")
	base = strings.TrimSuffix(base, ".txt")
	return base
}

// nextField returns the bounds of the next blank-separated field at or after
// b[i]; start == len(b) when there is none.
func nextField(b []byte, i int) (start, end int) {
	i = skipBlank(b, i)
	j := i
	for j < len(b) && !isBlank(b[j]) {
		j++
	}
	return i, j
}

// readGIN reads a GIN text dataset from r (see ReadGIN): the count of
// graphs, every graph, then nothing more.
func readGIN(r io.Reader, file string) (*GraphSet, error) {
	br, closeGz, err := ginInput(r, file)
	if err != nil {
		return nil, err
	}
	defer closeGz()
	p := &ginParser{lr: newLineReader(br, file), file: file, attrDim: -1}
	if err := p.readCount(); err != nil {
		return nil, err
	}
	for g := 0; g < int(p.numGraphs); g++ {
		if err := p.readGraph(g); err != nil {
			return nil, err
		}
	}
	if b, ok, err := p.lr.next(); err != nil {
		return nil, err
	} else if ok {
		return nil, parseErr(file, p.lr.line, "found %s: expected end of file after %d graphs", quote(b), p.numGraphs)
	}
	return p.graphSet(), nil
}

// ginInput buffers r, decompressing it when it starts with the gzip magic
// bytes; the returned function closes the decompressor.
func ginInput(r io.Reader, file string) (*bufio.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: gzip header: %w", file, err)
		}
		return bufio.NewReaderSize(gz, 1<<16), func() { gz.Close() }, nil
	}
	return br, func() {}, nil
}

// ginParser holds what readGIN has read so far.
type ginParser struct {
	lr        *lineReader
	file      string
	numGraphs int64
	rawClass  []int64
	tags      []int64 // every node's tag, in file order
	attrs     []float32
	attrDim   int // fixed by the first node line; -1 before
	graphs    []Graph
	us, vs    []int32 // the directed edges of the current graph
	edgeBuf   [][2]int32
	d         edgeDedup
	nodeStart []int // first entry of tags for each graph
}

// readCount reads line 1, the number of graphs (a positive integer).
func (p *ginParser) readCount() error {
	b, ok, err := p.lr.next()
	if err != nil {
		return err
	}
	if !ok {
		return parseErr(p.file, 1, "empty file: expected the number of graphs")
	}
	numGraphs, ok := parseOneInt(b)
	if !ok || numGraphs < 1 || numGraphs > math.MaxInt32 {
		return parseErr(p.file, p.lr.line, "found %s: expected the number of graphs (a positive integer)", quote(b))
	}
	p.numGraphs = numGraphs
	p.rawClass = make([]int64, 0, min(numGraphs, 1<<16))
	p.graphs = make([]Graph, 0, min(numGraphs, 1<<16))
	return nil
}

// readGraph reads graph g (0-based): its line "n label", its n node lines,
// and stores its deduplicated edges.
func (p *ginParser) readGraph(g int) error {
	b, ok, err := p.lr.next()
	if err != nil {
		return err
	}
	if !ok {
		return parseErr(p.file, p.lr.line+1, "file ends after %d of %d graphs: expected the line \"n label\" of graph %d", g, p.numGraphs, g+1)
	}
	n, label, ok := parseTwoInts(b)
	if !ok || n < 1 || n > math.MaxInt32 {
		return parseErr(p.file, p.lr.line, "found %s: expected \"n label\" for graph %d (n >= 1 nodes, an integer class label)", quote(b), g+1)
	}
	p.rawClass = append(p.rawClass, label)
	p.nodeStart = append(p.nodeStart, len(p.tags))
	p.us, p.vs = p.us[:0], p.vs[:0]
	for j := int64(0); j < n; j++ {
		if err := p.readNode(g, j, n); err != nil {
			return err
		}
	}
	p.edgeBuf = p.d.build(int(n), p.us, p.vs, p.edgeBuf[:0], nil)
	p.graphs = append(p.graphs, Graph{
		NumNodes: int(n),
		Edges:    slices.Clone(p.edgeBuf),
	})
	return nil
}

// readNode reads the line "tag m nb_1 ... nb_m [attr_1 ...]" of node j of
// graph g, which has n nodes.
func (p *ginParser) readNode(g int, j, n int64) error {
	file, lr := p.file, p.lr
	b, ok, err := lr.next()
	if err != nil {
		return err
	}
	if !ok {
		return parseErr(file, lr.line+1, "file ends in graph %d after %d of %d node lines: expected \"tag m nb_1 ... nb_m\"", g+1, j, n)
	}
	// tag
	i0, i1 := nextField(b, 0)
	tag, k, ok := scanInt(b, i0)
	if !ok || k != i1 {
		return parseErr(file, lr.line, "tag %s: expected an integer node tag first on the line of node %d of graph %d", quote(b[i0:i1]), j, g+1)
	}
	// m
	i0, i1 = nextField(b, i1)
	m, k, ok := scanInt(b, i0)
	if !ok || k != i1 || m < 0 {
		return parseErr(file, lr.line, "neighbour count %s: expected a non-negative integer after the tag of node %d of graph %d", quote(b[i0:i1]), j, g+1)
	}
	for e := int64(0); e < m; e++ {
		i0, i1 = nextField(b, i1)
		if i0 == len(b) {
			return parseErr(file, lr.line, "%d neighbours listed: expected m = %d for node %d of graph %d", e, m, j, g+1)
		}
		v, k, ok := scanInt(b, i0)
		if !ok || k != i1 || v < 0 || v >= n {
			return parseErr(file, lr.line, "neighbour %s: expected a node index in 0..%d of graph %d", quote(b[i0:i1]), n-1, g+1)
		}
		p.us = append(p.us, int32(j))
		p.vs = append(p.vs, int32(v))
	}
	if err := p.readAttrs(b, i1, g, j, m); err != nil {
		return err
	}
	p.tags = append(p.tags, tag)
	if len(p.tags) > math.MaxInt32 {
		return parseErr(file, lr.line, "too many nodes: expected at most %d", math.MaxInt32)
	}
	return nil
}

// readAttrs reads the attributes of node j of graph g, the fields of its
// line b after its m neighbours (which end at b[i1]): finite numbers, as
// many as on the first node line.
func (p *ginParser) readAttrs(b []byte, i1 int, g int, j, m int64) error {
	k0 := len(p.attrs)
	for {
		var i0 int
		i0, i1 = nextField(b, i1)
		if i0 == len(b) {
			break
		}
		a, ok := parseFloat32(b[i0:i1])
		if !ok {
			return parseErr(p.file, p.lr.line, "attribute %s: expected a finite number after the %d neighbours of node %d of graph %d", quote(b[i0:i1]), m, j, g+1)
		}
		p.attrs = append(p.attrs, a)
	}
	if k := len(p.attrs) - k0; p.attrDim < 0 {
		p.attrDim = k
	} else if k != p.attrDim {
		return parseErr(p.file, p.lr.line, "%d attributes after the neighbours: expected %d, as on the first node line", k, p.attrDim)
	}
	return nil
}

// graphSet numbers the node tags 0..T-1 in sorted order and the class
// labels 0..C-1, and returns the graphs read, each with its slice of the
// node labels and attributes.
func (p *ginParser) graphSet() *GraphSet {
	p.nodeStart = append(p.nodeStart, len(p.tags))
	uniq := slices.Clone(p.tags)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	nodeLab := make([]int32, len(p.tags))
	for i, t := range p.tags {
		k, _ := slices.BinarySearch(uniq, t)
		nodeLab[i] = int32(k)
	}
	classes, values := classIndex(p.rawClass)
	s := &GraphSet{
		Name:          ginName(p.file),
		Graphs:        make([]*Graph, len(p.graphs)),
		NumClasses:    len(values),
		ClassValues:   values,
		NumNodeLabels: len(uniq),
	}
	attrDim := p.attrDim
	if attrDim > 0 {
		s.AttrDim = attrDim
	}
	for g := range p.graphs {
		gr := &p.graphs[g]
		lo, hi := p.nodeStart[g], p.nodeStart[g+1]
		gr.Label = classes[g]
		gr.NodeLabels = nodeLab[lo:hi:hi]
		if attrDim > 0 {
			gr.AttrDim = attrDim
			gr.NodeAttrs = p.attrs[lo*attrDim : hi*attrDim : hi*attrDim]
		}
		s.Graphs[g] = gr
	}
	return s
}

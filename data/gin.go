package data

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"os"
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
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read GIN dataset: %w", err)
	}
	defer f.Close()
	return ReadGINFrom(f, path)
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

func readGIN(r io.Reader, file string) (*GraphSet, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip header: %w", file, err)
		}
		defer gz.Close()
		br = bufio.NewReaderSize(gz, 1<<16)
	}
	lr := newLineReader(br, file)

	b, ok, err := lr.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, parseErr(file, 1, "empty file: expected the number of graphs")
	}
	numGraphs, ok := parseOneInt(b)
	if !ok || numGraphs < 1 || numGraphs > math.MaxInt32 {
		return nil, parseErr(file, lr.line, "found %s: expected the number of graphs (a positive integer)", quote(b))
	}

	var (
		rawClass  = make([]int64, 0, min(numGraphs, 1<<16))
		tags      []int64 // every node's tag, in file order
		attrs     []float32
		attrDim   = -1 // fixed by the first node line
		graphs    = make([]Graph, 0, min(numGraphs, 1<<16))
		us, vs    []int32
		edgeBuf   [][2]int32
		d         edgeDedup
		nodeStart []int // first entry of tags for each graph
	)
	for g := 0; g < int(numGraphs); g++ {
		b, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, parseErr(file, lr.line+1, "file ends after %d of %d graphs: expected the line \"n label\" of graph %d", g, numGraphs, g+1)
		}
		n, label, ok := parseTwoInts(b)
		if !ok || n < 1 || n > math.MaxInt32 {
			return nil, parseErr(file, lr.line, "found %s: expected \"n label\" for graph %d (n >= 1 nodes, an integer class label)", quote(b), g+1)
		}
		rawClass = append(rawClass, label)
		nodeStart = append(nodeStart, len(tags))
		us, vs = us[:0], vs[:0]
		for j := int64(0); j < n; j++ {
			b, ok, err := lr.next()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, parseErr(file, lr.line+1, "file ends in graph %d after %d of %d node lines: expected \"tag m nb_1 ... nb_m\"", g+1, j, n)
			}
			// tag
			i0, i1 := nextField(b, 0)
			tag, k, ok := scanInt(b, i0)
			if !ok || k != i1 {
				return nil, parseErr(file, lr.line, "tag %s: expected an integer node tag first on the line of node %d of graph %d", quote(b[i0:i1]), j, g+1)
			}
			// m
			i0, i1 = nextField(b, i1)
			m, k, ok := scanInt(b, i0)
			if !ok || k != i1 || m < 0 {
				return nil, parseErr(file, lr.line, "neighbour count %s: expected a non-negative integer after the tag of node %d of graph %d", quote(b[i0:i1]), j, g+1)
			}
			for e := int64(0); e < m; e++ {
				i0, i1 = nextField(b, i1)
				if i0 == len(b) {
					return nil, parseErr(file, lr.line, "%d neighbours listed: expected m = %d for node %d of graph %d", e, m, j, g+1)
				}
				v, k, ok := scanInt(b, i0)
				if !ok || k != i1 || v < 0 || v >= n {
					return nil, parseErr(file, lr.line, "neighbour %s: expected a node index in 0..%d of graph %d", quote(b[i0:i1]), n-1, g+1)
				}
				us = append(us, int32(j))
				vs = append(vs, int32(v))
			}
			// attributes
			k0 := len(attrs)
			for {
				i0, i1 = nextField(b, i1)
				if i0 == len(b) {
					break
				}
				a, ok := parseFloat32(b[i0:i1])
				if !ok {
					return nil, parseErr(file, lr.line, "attribute %s: expected a finite number after the %d neighbours of node %d of graph %d", quote(b[i0:i1]), m, j, g+1)
				}
				attrs = append(attrs, a)
			}
			if k := len(attrs) - k0; attrDim < 0 {
				attrDim = k
			} else if k != attrDim {
				return nil, parseErr(file, lr.line, "%d attributes after the neighbours: expected %d, as on the first node line", k, attrDim)
			}
			tags = append(tags, tag)
			if len(tags) > math.MaxInt32 {
				return nil, parseErr(file, lr.line, "too many nodes: expected at most %d", math.MaxInt32)
			}
		}
		edgeBuf = d.build(int(n), us, vs, edgeBuf[:0], nil)
		graphs = append(graphs, Graph{
			NumNodes: int(n),
			Edges:    slices.Clone(edgeBuf),
		})
	}
	if b, ok, err := lr.next(); err != nil {
		return nil, err
	} else if ok {
		return nil, parseErr(file, lr.line, "found %s: expected end of file after %d graphs", quote(b), numGraphs)
	}
	nodeStart = append(nodeStart, len(tags))

	// Tags become node labels 0..T-1 in sorted order.
	uniq := slices.Clone(tags)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	nodeLab := make([]int32, len(tags))
	for i, t := range tags {
		k, _ := slices.BinarySearch(uniq, t)
		nodeLab[i] = int32(k)
	}
	classes, values := classIndex(rawClass)
	s := &GraphSet{
		Name:          ginName(file),
		Graphs:        make([]*Graph, len(graphs)),
		NumClasses:    len(values),
		ClassValues:   values,
		NumNodeLabels: len(uniq),
	}
	if attrDim > 0 {
		s.AttrDim = attrDim
	}
	for g := range graphs {
		gr := &graphs[g]
		lo, hi := nodeStart[g], nodeStart[g+1]
		gr.Label = classes[g]
		gr.NodeLabels = nodeLab[lo:hi:hi]
		if attrDim > 0 {
			gr.AttrDim = attrDim
			gr.NodeAttrs = attrs[lo*attrDim : hi*attrDim : hi*attrDim]
		}
		s.Graphs[g] = gr
	}
	return s, nil
}

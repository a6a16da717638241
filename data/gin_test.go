package data

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ginToyWant is testdata/gin/TOY.txt written out by hand: the TU TOY graphs
// without edge labels (the GIN format has none).
func ginToyWant() *GraphSet {
	w := toyWant()
	w.NumEdgeLabels = 0
	for _, g := range w.Graphs {
		g.EdgeLabels = nil
	}
	return w
}

func TestReadGINToy(t *testing.T) {
	s, err := ReadGIN(filepath.Join("testdata", "gin", "TOY.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sameGraphs(t, s, ginToyWant())
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestReadGINGzip(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "gin", "TOY.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	dir := t.TempDir()
	// Detected by the magic bytes, whatever the name.
	for _, name := range []string{"TOY.txt.gz", "TOY.txt", "TOY"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadGIN(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameGraphs(t, s, ginToyWant())
	}
	// A truncated gzip stream is an error naming the file.
	p := filepath.Join(dir, "cut.txt.gz")
	os.WriteFile(p, buf.Bytes()[:buf.Len()-12], 0o644)
	if _, err := ReadGIN(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("truncated gzip: error %v, want one naming %s", err, p)
	}
}

func TestReadGINFormatting(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "gin", "TOY.txt"))
	if err != nil {
		t.Fatal(err)
	}
	variants := map[string]string{
		"CRLF and trailing blank lines": strings.ReplaceAll(string(raw), "\n", "\r\n") + "\r\n\r\n",
		"tabs and double spaces":        strings.ReplaceAll(string(raw), " ", " \t "),
		"no final newline":              strings.TrimRight(string(raw), "\n"),
	}
	for name, v := range variants {
		t.Run(name, func(t *testing.T) {
			s, err := ReadGINFrom(strings.NewReader(v), "x/TOY.txt")
			if err != nil {
				t.Fatal(err)
			}
			sameGraphs(t, s, ginToyWant())
		})
	}
	// Without attributes, with unsorted tags and labels: tags and classes are
	// numbered in sorted order of their values.
	s, err := ReadGINFrom(strings.NewReader("2\n2 7\n9 1 1\n-3 1 0\n1 -2\n4 0\n"), "plain.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := &GraphSet{Name: "plain", NumClasses: 2, ClassValues: []int{-2, 7}, NumNodeLabels: 3, Graphs: []*Graph{
		{NumNodes: 2, Edges: [][2]int32{{0, 1}}, NodeLabels: []int32{2, 0}, Label: 1},
		{NumNodes: 1, Edges: [][2]int32{}, NodeLabels: []int32{1}, Label: 0},
	}}
	sameGraphs(t, s, want)
}

func TestReadGINErrors(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		contains string
	}{
		{"empty", "", 1, "expected the number of graphs"},
		{"bad count", "x\n", 1, "expected the number of graphs"},
		{"zero graphs", "0\n", 1, "expected the number of graphs"},
		{"missing graph", "2\n1 0\n0 0\n", 4, "file ends after 1 of 2 graphs"},
		{"bad header", "1\n1\n0 0\n", 2, `expected "n label"`},
		{"zero nodes", "1\n0 1\n", 2, "n >= 1"},
		{"missing node line", "1\n3 0\n0 1 1\n0 1 0\n", 5, "after 2 of 3 node lines"},
		{"neighbour out of range", "1\n2 0\n0 1 2\n0 0\n", 3, "expected a node index in 0..1"},
		{"negative neighbour", "1\n2 0\n0 1 -1\n0 0\n", 3, "expected a node index in 0..1"},
		{"too few neighbours", "1\n2 0\n0 2 1\n0 0\n", 3, "1 neighbours listed: expected m = 2"},
		{"bad tag", "1\n1 0\na 0\n", 3, "expected an integer node tag"},
		{"negative count", "1\n1 0\n0 -1\n", 3, "expected a non-negative integer"},
		{"bad attribute", "1\n2 0\n0 1 1 0.5\n0 1 0 zz\n", 4, "expected a finite number"},
		{"attribute count differs", "1\n2 0\n0 1 1 0.5 1\n0 1 0 2\n", 4, "1 attributes after the neighbours: expected 2"},
		{"trailing data", "1\n1 0\n0 0\n1 0\n", 4, "expected end of file after 1 graphs"},
		{"blank line inside", "1\n2 0\n\n0 1 1\n0 1 0\n", 3, "blank line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadGINFrom(strings.NewReader(tt.in), "bad.txt")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.File != "bad.txt" || pe.Line != tt.line || !strings.Contains(pe.Msg, tt.contains) {
				t.Fatalf("error %q: want bad.txt line %d containing %q", err, tt.line, tt.contains)
			}
		})
	}
	if _, err := ReadGIN(filepath.Join(t.TempDir(), "absent.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: error %v, want not-exist", err)
	}
}

// TestReadGINMatchesTU converts the TU TOY set to GIN text with the rule of
// SOURCES.md and reads it back: the structure must survive.
func TestReadGINMatchesTU(t *testing.T) {
	tu, err := ReadTU(filepath.Join("testdata", "tu", "TOY"), "TOY")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadGINFrom(strings.NewReader(writeGIN(tu)), "TOY.txt")
	if err != nil {
		t.Fatal(err)
	}
	sameGraphs(t, s, ginToyWant())
}

// writeGIN renders s in the GIN text format (neighbour lists from the
// undirected edges, tags = node labels, class values as labels).
func writeGIN(s *GraphSet) string {
	var b strings.Builder
	itoa := strconv.Itoa
	b.WriteString(itoa(len(s.Graphs)) + "\n")
	for _, g := range s.Graphs {
		b.WriteString(itoa(g.NumNodes) + " " + itoa(s.ClassValues[g.Label]) + "\n")
		adj := make([][]int, g.NumNodes)
		for _, e := range g.Edges {
			adj[e[0]] = append(adj[e[0]], int(e[1]))
			if e[0] != e[1] {
				adj[e[1]] = append(adj[e[1]], int(e[0]))
			}
		}
		for v := 0; v < g.NumNodes; v++ {
			b.WriteString(itoa(int(g.NodeLabels[v])+2) + " " + itoa(len(adj[v])))
			for _, u := range adj[v] {
				b.WriteString(" " + itoa(u))
			}
			for _, a := range g.NodeAttrs[v*g.AttrDim : (v+1)*g.AttrDim] {
				b.WriteString(" " + strconv.FormatFloat(float64(a), 'g', -1, 32))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

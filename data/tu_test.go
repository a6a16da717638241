package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// toyWant is the content of testdata/tu/TOY written out by hand: node ids
// made local and 0-based, edges deduplicated and sorted, labels shifted.
func toyWant() *GraphSet {
	return &GraphSet{
		Name:          "TOY",
		NumClasses:    3,
		ClassValues:   []int{-1, 2, 5},
		NumNodeLabels: 4,
		NumEdgeLabels: 3,
		AttrDim:       2,
		Graphs: []*Graph{
			{
				NumNodes:   3,
				Edges:      [][2]int32{{0, 1}, {0, 2}, {1, 2}},
				NodeLabels: []int32{0, 1, 0},
				NodeAttrs:  []float32{0.5, 1, -1.25, 0.2, 3, 0},
				AttrDim:    2,
				EdgeLabels: []int32{0, 1, 2},
				Label:      2,
			},
			{
				NumNodes:   4,
				Edges:      [][2]int32{{0, 1}, {1, 2}, {2, 2}, {2, 3}},
				NodeLabels: []int32{3, 2, 2, 0},
				NodeAttrs:  []float32{1e-3, -2, 0, 0, 7.5, 8, -0.5, 0.25},
				AttrDim:    2,
				EdgeLabels: []int32{0, 1, 2, 0},
				Label:      0,
			},
			{
				NumNodes:   1,
				Edges:      [][2]int32{},
				NodeLabels: []int32{1},
				NodeAttrs:  []float32{1, 1},
				AttrDim:    2,
				EdgeLabels: []int32{},
				Label:      2,
			},
			{
				NumNodes:   3,
				Edges:      [][2]int32{{0, 1}, {0, 2}},
				NodeLabels: []int32{0, 0, 3},
				NodeAttrs:  []float32{2, -3, 4.125, 5, 6, -7},
				AttrDim:    2,
				EdgeLabels: []int32{2, 1},
				Label:      1,
			},
		},
	}
}

// sameGraphs compares two sets field by field, treating nil and empty
// slices alike, and reports the first difference.
func sameGraphs(t *testing.T, got, want *GraphSet) {
	t.Helper()
	if got.Name != want.Name || got.NumClasses != want.NumClasses || !reflect.DeepEqual(got.ClassValues, want.ClassValues) ||
		got.NumNodeLabels != want.NumNodeLabels || got.NumEdgeLabels != want.NumEdgeLabels || got.AttrDim != want.AttrDim {
		t.Fatalf("set header = {%s C=%d %v NL=%d EL=%d A=%d}, want {%s C=%d %v NL=%d EL=%d A=%d}",
			got.Name, got.NumClasses, got.ClassValues, got.NumNodeLabels, got.NumEdgeLabels, got.AttrDim,
			want.Name, want.NumClasses, want.ClassValues, want.NumNodeLabels, want.NumEdgeLabels, want.AttrDim)
	}
	if len(got.Graphs) != len(want.Graphs) {
		t.Fatalf("%d graphs, want %d", len(got.Graphs), len(want.Graphs))
	}
	eq := func(a, b any) bool {
		va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
		if va.Len() == 0 && vb.Len() == 0 {
			return true // nil versus empty is checked separately
		}
		return reflect.DeepEqual(a, b)
	}
	for i, g := range got.Graphs {
		w := want.Graphs[i]
		if g.NumNodes != w.NumNodes || g.Label != w.Label || g.AttrDim != w.AttrDim ||
			!eq(g.Edges, w.Edges) || !eq(g.NodeLabels, w.NodeLabels) || !eq(g.NodeAttrs, w.NodeAttrs) || !eq(g.EdgeLabels, w.EdgeLabels) {
			t.Errorf("graph %d:\n got %+v\nwant %+v", i, *g, *w)
		}
		if (g.NodeLabels == nil) != (w.NodeLabels == nil) || (g.NodeAttrs == nil) != (w.NodeAttrs == nil) || (g.EdgeLabels == nil) != (w.EdgeLabels == nil) {
			t.Errorf("graph %d: presence of labels/attrs/edge labels differs: got %v %v %v, want %v %v %v", i,
				g.NodeLabels != nil, g.NodeAttrs != nil, g.EdgeLabels != nil, w.NodeLabels != nil, w.NodeAttrs != nil, w.EdgeLabels != nil)
		}
	}
}

func TestReadTUToy(t *testing.T) {
	s, err := ReadTU(filepath.Join("testdata", "tu", "TOY"), "TOY")
	if err != nil {
		t.Fatal(err)
	}
	sameGraphs(t, s, toyWant())
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	// Per-graph slices share backing arrays; appending to one graph must not
	// overwrite the next.
	g0, g1 := s.Graphs[0], s.Graphs[1]
	before := append([][2]int32(nil), g1.Edges...)
	_ = append(g0.Edges, [2]int32{9, 9})
	_ = append(g0.NodeLabels, 99)
	if !reflect.DeepEqual(g1.Edges, before) || g1.NodeLabels[0] != 3 {
		t.Fatal("appending to graph 0's slices changed graph 1")
	}
}

// toyFS loads testdata/tu/TOY into a MapFS that tests can edit.
func toyFS(t testing.TB) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	dir := filepath.Join("testdata", "tu", "TOY")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = &fstest.MapFile{Data: b}
	}
	return m
}

func TestReadTUFormatting(t *testing.T) {
	base := toyFS(t)
	want := toyWant()
	noOptional := toyWant()
	noOptional.NumNodeLabels, noOptional.NumEdgeLabels, noOptional.AttrDim = 0, 0, 0
	for _, g := range noOptional.Graphs {
		g.NodeLabels, g.NodeAttrs, g.EdgeLabels, g.AttrDim = nil, nil, nil, 0
	}
	tests := []struct {
		name string
		edit func(m fstest.MapFS)
		want *GraphSet
	}{
		{"as stored", func(fstest.MapFS) {}, want},
		{"all CRLF", func(m fstest.MapFS) {
			for _, f := range m {
				f.Data = []byte(strings.ReplaceAll(strings.ReplaceAll(string(f.Data), "\r\n", "\n"), "\n", "\r\n"))
			}
		}, want},
		{"no final newline, no blank lines", func(m fstest.MapFS) {
			for _, f := range m {
				f.Data = []byte(strings.TrimRight(string(f.Data), "\r\n"))
			}
		}, want},
		{"spaces and tabs, blank separators, BOM", func(m fstest.MapFS) {
			a := string(m["TOY_A.txt"].Data)
			a = strings.ReplaceAll(a, ", ", " \t")
			m["TOY_A.txt"].Data = []byte("\xef\xbb\xbf  " + a + "  \n \t\n")
			m["TOY_node_attributes.txt"].Data = []byte(strings.ReplaceAll(string(m["TOY_node_attributes.txt"].Data), ", ", " ,"))
		}, want},
		{"optional files absent", func(m fstest.MapFS) {
			delete(m, "TOY_node_labels.txt")
			delete(m, "TOY_edge_labels.txt")
			delete(m, "TOY_node_attributes.txt")
		}, noOptional},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fstest.MapFS{}
			for k, v := range base {
				m[k] = &fstest.MapFile{Data: append([]byte(nil), v.Data...)}
			}
			tt.edit(m)
			s, err := ReadTUFS(m, "TOY")
			if err != nil {
				t.Fatal(err)
			}
			sameGraphs(t, s, tt.want)
		})
	}
}

// replaceLine replaces 1-based line n of a file's content (n = count+1
// appends).
func replaceLine(data []byte, n int, with string) []byte {
	lines := strings.Split(strings.TrimRight(string(data), "\r\n"), "\n")
	if n == len(lines)+1 {
		lines = append(lines, with)
	} else {
		lines[n-1] = with
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

func deleteLines(data []byte, from, to int) []byte {
	lines := strings.Split(strings.TrimRight(string(data), "\r\n"), "\n")
	lines = append(lines[:from-1], lines[to:]...)
	return []byte(strings.Join(lines, "\n") + "\n")
}

func TestReadTUErrors(t *testing.T) {
	// Each case edits one file of TOY (TOY_<edit>.txt) and expects a
	// *ParseError in TOY_<file>.txt at line (0: the whole file).
	del := func(from, to int) func([]byte) []byte {
		return func(b []byte) []byte { return deleteLines(b, from, to) }
	}
	repl := func(n int, line string) func([]byte) []byte {
		return func(b []byte) []byte { return replaceLine(b, n, line) }
	}
	whole := func(data string) func([]byte) []byte { return func([]byte) []byte { return []byte(data) } }
	tests := []struct {
		name     string
		edit     string
		change   func([]byte) []byte
		file     string
		line     int
		contains string
	}{
		{"indicator missing its last node", "graph_indicator", del(11, 11), "node_labels", 11, "expected end of file after 10 lines"},
		{"indicator missing the last graph", "graph_indicator", del(9, 11), "graph_labels", 4, "names only 3 graphs"},
		{"indicator not sorted", "graph_indicator", repl(8, "1"), "graph_indicator", 8, "expected sorted ids"},
		{"indicator skips a graph", "graph_indicator", repl(8, "4"), "graph_indicator", 8, "expected sorted ids"},
		{"indicator starts at 2", "graph_indicator", whole("2\n2\n3\n"), "graph_indicator", 1, "expected the first node to be in graph 1"},
		{"indicator id zero", "graph_indicator", whole("0\n0\n1\n"), "graph_indicator", 1, "expected the first node to be in graph 1"},
		{"indicator id beyond labels", "graph_indicator", repl(12, "5"), "graph_indicator", 12, "expected 1..4"},
		{"edge across graphs", "A", repl(5, "3, 4"), "A", 5, "joins graph 1 (nodes 1..3) and graph 2"},
		{"node id out of range", "A", repl(2, "12, 1"), "A", 2, "node id 12 out of range: expected 1..11"},
		{"node id zero", "A", repl(3, "0, 1"), "A", 3, "expected 1..11"},
		{"float in A", "A", repl(4, "1, 2.5"), "A", 4, `expected "u, v"`},
		{"three numbers in A", "A", repl(6, "1, 2, 3"), "A", 6, `expected "u, v"`},
		{"huge number in A", "A", repl(7, "1, 99999999999999999999"), "A", 7, `expected "u, v"`},
		{"blank line inside A", "A", repl(9, ""), "A", 9, "blank line"},
		{"bad node label", "node_labels", repl(3, "x"), "node_labels", 3, "expected one integer"},
		{"node labels short", "node_labels", del(10, 11), "node_labels", 10, "file ends after 9 lines: expected 11"},
		{"graph label not an integer", "graph_labels", repl(2, "1.5"), "graph_labels", 2, "expected one integer"},
		{"empty graph labels", "graph_labels", whole("\n\n"), "graph_labels", 0, "expected one line per graph"},
		{"edge labels short", "edge_labels", del(17, 17), "edge_labels", 17, "expected 17 (one per line of TOY_A.txt)"},
		{"edge labels long", "edge_labels", repl(18, "1"), "edge_labels", 18, "expected end of file after 17 lines"},
		{"attribute not a number", "node_attributes", repl(5, "0, abc"), "node_attributes", 5, "expected a finite number"},
		{"attribute NaN", "node_attributes", repl(6, "NaN, 1"), "node_attributes", 6, "expected a finite number"},
		{"attribute count differs", "node_attributes", repl(7, "1, 2, 3"), "node_attributes", 7, "3 values: expected 2"},
		{"attribute trailing comma", "node_attributes", repl(8, "1, 2,"), "node_attributes", 8, "expected a number after it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := toyFS(t)
			edited := "TOY_" + tt.edit + ".txt"
			m[edited].Data = tt.change(m[edited].Data)
			_, err := ReadTUFS(m, "TOY")
			if err == nil {
				t.Fatal("no error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q is not a *ParseError", err)
			}
			file := "TOY_" + tt.file + ".txt"
			if pe.File != file || pe.Line != tt.line || !strings.Contains(pe.Msg, tt.contains) {
				t.Fatalf("error %q: want file %s line %d containing %q", err, file, tt.line, tt.contains)
			}
			if tt.line > 0 && !strings.Contains(err.Error(), file+" line ") {
				t.Fatalf("message %q does not name the file and line", err)
			}
		})
	}
}

func TestReadTUMissingFile(t *testing.T) {
	for _, file := range []string{"TOY_A.txt", "TOY_graph_indicator.txt", "TOY_graph_labels.txt"} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join("testdata", "tu", "TOY")
			ents, _ := os.ReadDir(src)
			for _, e := range ents {
				if e.Name() == file {
					continue
				}
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ReadTU(dir, "TOY")
			if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(dir, file)) {
				t.Fatalf("error %v: want a not-exist error naming %s", err, filepath.Join(dir, file))
			}
		})
	}
	if _, err := ReadTU("testdata/tu/TOY", ""); err == nil {
		t.Fatal("empty name accepted")
	}
}

func TestParseHelpers(t *testing.T) {
	ints := []struct {
		in   string
		v    int64
		ok   bool
		rest int
	}{
		{"0", 0, true, 1}, {"-7", -7, true, 2}, {"+12x", 12, true, 3},
		{"9223372036854775807", 9223372036854775807, true, 19},
		{"9223372036854775808", 0, false, 0},
		{"-9223372036854775808", -9223372036854775808, true, 20},
		{"-9223372036854775809", 0, false, 0},
		{"-", 0, false, 0}, {"", 0, false, 0}, {"a", 0, false, 0},
	}
	for _, tt := range ints {
		v, j, ok := scanInt([]byte(tt.in), 0)
		if ok != tt.ok || (ok && (v != tt.v || j != tt.rest)) {
			t.Errorf("scanInt(%q) = %d, %d, %v; want %d, %d, %v", tt.in, v, j, ok, tt.v, tt.rest, tt.ok)
		}
	}
	pairs := []struct {
		in   string
		x, y int64
		ok   bool
	}{
		{"1, 2", 1, 2, true}, {"1,2", 1, 2, true}, {"1 2", 1, 2, true}, {" 1\t,\t2 ", 1, 2, true},
		{"1,,2", 0, 0, false}, {"1-2", 0, 0, false}, {"1,", 0, 0, false}, {"1", 0, 0, false}, {"1, 2 3", 0, 0, false},
	}
	for _, tt := range pairs {
		x, y, ok := parseTwoInts([]byte(tt.in))
		if ok != tt.ok || (ok && (x != tt.x || y != tt.y)) {
			t.Errorf("parseTwoInts(%q) = %d, %d, %v; want %d, %d, %v", tt.in, x, y, ok, tt.x, tt.y, tt.ok)
		}
	}
}

// TestEdgeDedupAgainstMap checks edgeDedup on random multigraphs against a
// map-based reference.
func TestEdgeDedupAgainstMap(t *testing.T) {
	var d edgeDedup
	for trial := 0; trial < 50; trial++ {
		n := 1 + trial%17
		var a, b []int32
		x := uint32(trial*2654435761 + 1)
		for i := 0; i < 3*n; i++ {
			x = x*1664525 + 1013904223
			a = append(a, int32(x>>8)%int32(n))
			x = x*1664525 + 1013904223
			b = append(b, int32(x>>8)%int32(n))
		}
		firstRef := map[[2]int32]int32{}
		for i := range a {
			k := [2]int32{min(a[i], b[i]), max(a[i], b[i])}
			if _, ok := firstRef[k]; !ok {
				firstRef[k] = int32(i)
			}
		}
		var first []int32
		edges := d.build(n, a, b, nil, &first)
		if len(edges) != len(firstRef) || len(first) != len(edges) {
			t.Fatalf("trial %d: %d edges, want %d", trial, len(edges), len(firstRef))
		}
		for i, e := range edges {
			if i > 0 && !(edges[i-1][0] < e[0] || edges[i-1][0] == e[0] && edges[i-1][1] < e[1]) {
				t.Fatalf("trial %d: edges not strictly sorted at %d: %v", trial, i, edges)
			}
			if f, ok := firstRef[e]; !ok || f != first[i] {
				t.Fatalf("trial %d: edge %v first %d, want %d (present %v)", trial, e, first[i], f, ok)
			}
		}
	}
}

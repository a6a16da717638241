package data

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// tuFuzzFiles are the files FuzzReadTU builds, in the order of the parts of
// its input (split on NUL bytes); a missing part means an absent file.
var tuFuzzFiles = []string{"graph_labels.txt", "graph_indicator.txt", "A.txt", "node_labels.txt", "edge_labels.txt", "node_attributes.txt"}

func FuzzReadTU(f *testing.F) {
	dir := filepath.Join("testdata", "tu", "TOY")
	var parts [][]byte
	for _, name := range tuFuzzFiles {
		b, err := os.ReadFile(filepath.Join(dir, "TOY_"+name))
		if err != nil {
			f.Fatal(err)
		}
		parts = append(parts, b)
	}
	f.Add(bytes.Join(parts, []byte{0}))
	f.Add(bytes.Join(parts[:3], []byte{0}))
	f.Add(bytes.Join(parts[:4], []byte{0}))
	f.Add([]byte("1\n-1\n\x001\n1\n\x001, 1\n1,1\n"))
	f.Add([]byte("1\n2\n\x001\n2\n2\n\x001, 2\n2, 3\n3, 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := fstest.MapFS{}
		for i, p := range bytes.SplitN(data, []byte{0}, len(tuFuzzFiles)) {
			m["F_"+tuFuzzFiles[i]] = &fstest.MapFile{Data: p}
		}
		s, err := ReadTUFS(m, "F")
		if err != nil {
			return
		}
		checkFuzzSet(t, s)
	})
}

func FuzzReadGIN(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "gin", "TOY.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("2\n2 7\n9 1 1\n-3 1 0\n1 -2\n4 0\n"))
	f.Add([]byte("1\n3 0\n0 2 1 2 0.5\n0 1 0 1\n0 1 0 -2e3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadGINFrom(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			return
		}
		checkFuzzSet(t, s)
	})
}

// checkFuzzSet asserts what every successfully read set must satisfy.
func checkFuzzSet(t *testing.T, s *GraphSet) {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatalf("read a set that does not validate: %v", err)
	}
	if len(s.Graphs) == 0 || s.NumClasses < 1 {
		t.Fatalf("%d graphs, %d classes", len(s.Graphs), s.NumClasses)
	}
	for i, g := range s.Graphs {
		if g.NumNodes < 1 {
			t.Fatalf("graph %d has %d nodes", i, g.NumNodes)
		}
		for j := 1; j < len(g.Edges); j++ {
			a, b := g.Edges[j-1], g.Edges[j]
			if !(a[0] < b[0] || a[0] == b[0] && a[1] < b[1]) {
				t.Fatalf("graph %d: edges not strictly sorted: %v then %v", i, a, b)
			}
		}
	}
	if s.NumNodeLabels <= 64 && s.AttrDim <= 64 {
		if err := s.SetFeatures(FeatureOptions{Kind: "auto"}); err != nil {
			t.Fatalf("auto features: %v", err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("after SetFeatures: %v", err)
		}
	}
}

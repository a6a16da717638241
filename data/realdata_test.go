package data

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// naiveTU is an independent, slow reading of a TU dataset with the standard
// library (strings.Split, strconv, maps): per graph, the set of undirected
// edges and the node count, and the raw class labels.
type naiveTU struct {
	nodes   []int
	edges   []map[[2]int32]bool
	classes []int
	aLines  int
}

func readNaiveTU(t *testing.T, dir, name string) naiveTU {
	t.Helper()
	lines := func(file string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name+"_"+file))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	atoi := func(s string) int {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var r naiveTU
	for _, l := range lines("graph_labels.txt") {
		r.classes = append(r.classes, atoi(l))
	}
	ind := lines("graph_indicator.txt")
	graphOf := make([]int, len(ind))
	local := make([]int, len(ind))
	r.nodes = make([]int, len(r.classes))
	for i, l := range ind {
		g := atoi(l) - 1
		graphOf[i] = g
		local[i] = r.nodes[g]
		r.nodes[g]++
	}
	r.edges = make([]map[[2]int32]bool, len(r.classes))
	for g := range r.edges {
		r.edges[g] = map[[2]int32]bool{}
	}
	for _, l := range lines("A.txt") {
		p := strings.Split(l, ",")
		u, v := atoi(p[0])-1, atoi(p[1])-1
		if graphOf[u] != graphOf[v] {
			t.Fatalf("reference: edge %s crosses graphs", l)
		}
		a, b := int32(local[u]), int32(local[v])
		r.edges[graphOf[u]][[2]int32{min(a, b), max(a, b)}] = true
		r.aLines++
	}
	return r
}

// compareNaive checks s against the reference reading.
func compareNaive(t *testing.T, s *GraphSet, r naiveTU) {
	t.Helper()
	if len(s.Graphs) != len(r.classes) {
		t.Fatalf("%d graphs, reference %d", len(s.Graphs), len(r.classes))
	}
	for i, g := range s.Graphs {
		if g.NumNodes != r.nodes[i] {
			t.Fatalf("graph %d: %d nodes, reference %d", i, g.NumNodes, r.nodes[i])
		}
		if s.ClassValues[g.Label] != r.classes[i] {
			t.Fatalf("graph %d: class value %d, reference %d", i, s.ClassValues[g.Label], r.classes[i])
		}
		if len(g.Edges) != len(r.edges[i]) {
			t.Fatalf("graph %d: %d edges, reference %d", i, len(g.Edges), len(r.edges[i]))
		}
		for _, e := range g.Edges {
			if !r.edges[i][e] {
				t.Fatalf("graph %d: edge %v not in the reference", i, e)
			}
		}
	}
}

func TestRealTU(t *testing.T) {
	tests := []struct {
		name          string
		graphs, nodes int
		edges         int // undirected, -1: only compared with the reference
		classCounts   []int
		classValues   []int
		nodeLabels    int
		edgeLabels    int
	}{
		{"MUTAG", 188, 3371, 3721, []int{63, 125}, []int{-1, 1}, 7, 4},
		{"IMDB-BINARY", 1000, 19773, 386124 / 4, []int{500, 500}, []int{0, 1}, 0, 0},
		{"NCI1", 4110, 122747, -1, []int{2053, 2057}, []int{0, 1}, 37, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testenv.Path(t, "tu", tt.name)
			start := time.Now()
			s, err := ReadTU(dir, tt.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s read in %v: %d graphs, %d nodes, %d edges", tt.name, time.Since(start), len(s.Graphs), s.TotalNodes(), s.TotalEdges())
			if len(s.Graphs) != tt.graphs || s.TotalNodes() != tt.nodes {
				t.Fatalf("%d graphs %d nodes, want %d %d", len(s.Graphs), s.TotalNodes(), tt.graphs, tt.nodes)
			}
			if tt.edges >= 0 && s.TotalEdges() != tt.edges {
				t.Fatalf("%d edges, want %d", s.TotalEdges(), tt.edges)
			}
			if !slices.Equal(s.ClassCounts(), tt.classCounts) || !slices.Equal(s.ClassValues, tt.classValues) {
				t.Fatalf("classes %v values %v, want %v %v", s.ClassCounts(), s.ClassValues, tt.classCounts, tt.classValues)
			}
			if s.NumNodeLabels != tt.nodeLabels || s.NumEdgeLabels != tt.edgeLabels {
				t.Fatalf("%d node labels %d edge labels, want %d %d", s.NumNodeLabels, s.NumEdgeLabels, tt.nodeLabels, tt.edgeLabels)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			compareNaive(t, s, readNaiveTU(t, dir, tt.name))
		})
	}
}

// TestMUTAGDirected checks the MUTAG facts of SOURCES.md that tie the
// undirected edges to the file: 7,442 A lines, each edge in both directions,
// no self-loops, every edge label taken from a line of the file.
func TestMUTAGDirected(t *testing.T) {
	dir := testenv.Path(t, "tu", "MUTAG")
	s, err := ReadTU(dir, "MUTAG")
	if err != nil {
		t.Fatal(err)
	}
	r := readNaiveTU(t, dir, "MUTAG")
	if r.aLines != 7442 || 2*s.TotalEdges() != r.aLines {
		t.Fatalf("%d A lines for %d edges: want 7442 = 2 × edges", r.aLines, s.TotalEdges())
	}
	for i, g := range s.Graphs {
		for _, e := range g.Edges {
			if e[0] == e[1] {
				t.Fatalf("graph %d: self-loop %v", i, e)
			}
		}
		if len(g.EdgeLabels) != len(g.Edges) {
			t.Fatalf("graph %d: %d edge labels for %d edges", i, len(g.EdgeLabels), len(g.Edges))
		}
	}
}

func TestRealCOLLAB(t *testing.T) {
	if testing.Short() {
		t.Skip("COLLAB (84 MB of text) is read only without -short")
	}
	path := testenv.Path(t, "tu_gin_format", "COLLAB", "COLLAB.txt.gz")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	s, err := ReadGIN(path)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	selfLoops := 0
	for _, g := range s.Graphs {
		for _, e := range g.Edges {
			if e[0] == e[1] {
				selfLoops++
			}
		}
	}
	t.Logf("COLLAB read in %v, %.0f MB allocated, %.0f MB heap in use after", elapsed,
		float64(after.TotalAlloc-before.TotalAlloc)/1e6, float64(after.HeapInuse)/1e6)
	if s.Name != "COLLAB" || len(s.Graphs) != 5000 || s.TotalNodes() != 372474 || s.TotalEdges() != 12288916 || selfLoops != 2837 {
		t.Fatalf("%s: %d graphs %d nodes %d edges %d self-loops; want COLLAB 5000 372474 12288916 2837",
			s.Name, len(s.Graphs), s.TotalNodes(), s.TotalEdges(), selfLoops)
	}
	if !slices.Equal(s.ClassCounts(), []int{2600, 775, 1625}) || !slices.Equal(s.ClassValues, []int{0, 1, 2}) || s.NumNodeLabels != 1 || s.AttrDim != 0 {
		t.Fatalf("classes %v values %v, %d node labels, attr dim %d; want [2600 775 1625] [0 1 2] 1 0",
			s.ClassCounts(), s.ClassValues, s.NumNodeLabels, s.AttrDim)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

package data

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func readToy(t *testing.T) *GraphSet {
	t.Helper()
	s, err := ReadTU(filepath.Join("testdata", "tu", "TOY"), "TOY")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSetFeaturesToy(t *testing.T) {
	// Expected rows written out by hand for graph 1 of TOY (node labels
	// 3,2,2,0; attributes (1e-3,-2) (0,0) (7.5,8) (-0.5,0.25); degrees
	// 1,2,3,1 with the self-loop on node 2 counted once).
	tests := []struct {
		opt  FeatureOptions
		dim  int
		rows [][]float32
	}{
		{FeatureOptions{Kind: "labels"}, 4, [][]float32{{0, 0, 0, 1}, {0, 0, 1, 0}, {0, 0, 1, 0}, {1, 0, 0, 0}}},
		{FeatureOptions{Kind: "attributes"}, 2, [][]float32{{1e-3, -2}, {0, 0}, {7.5, 8}, {-0.5, 0.25}}},
		{FeatureOptions{Kind: "labels+attributes"}, 6, [][]float32{{0, 0, 0, 1, 1e-3, -2}, {0, 0, 1, 0, 0, 0}, {0, 0, 1, 0, 7.5, 8}, {1, 0, 0, 0, -0.5, 0.25}}},
		{FeatureOptions{Kind: "auto"}, 6, [][]float32{{0, 0, 0, 1, 1e-3, -2}, {0, 0, 1, 0, 0, 0}, {0, 0, 1, 0, 7.5, 8}, {1, 0, 0, 0, -0.5, 0.25}}},
		{FeatureOptions{Kind: "auto-degree"}, 6, [][]float32{{0, 0, 0, 1, 1e-3, -2}, {0, 0, 1, 0, 0, 0}, {0, 0, 1, 0, 7.5, 8}, {1, 0, 0, 0, -0.5, 0.25}}},
		{FeatureOptions{}, 6, [][]float32{{0, 0, 0, 1, 1e-3, -2}, {0, 0, 1, 0, 0, 0}, {0, 0, 1, 0, 7.5, 8}, {1, 0, 0, 0, -0.5, 0.25}}},
		{FeatureOptions{Kind: "constant"}, 1, [][]float32{{1}, {1}, {1}, {1}}},
		{FeatureOptions{Kind: "degree"}, 4, [][]float32{{0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}, {0, 1, 0, 0}}},
		{FeatureOptions{Kind: "degree", MaxDegree: 1}, 2, [][]float32{{0, 1}, {0, 1}, {0, 1}, {0, 1}}},
		{FeatureOptions{Kind: "degree", MaxDegree: 5}, 6, [][]float32{{0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0}, {0, 1, 0, 0, 0, 0}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q_max%d", tt.opt.Kind, tt.opt.MaxDegree), func(t *testing.T) {
			s := readToy(t)
			if err := s.SetFeatures(tt.opt); err != nil {
				t.Fatal(err)
			}
			if s.FeatDim != tt.dim {
				t.Fatalf("FeatDim %d, want %d", s.FeatDim, tt.dim)
			}
			g := s.Graphs[1]
			for v, row := range tt.rows {
				got := g.X[v*g.FeatDim : (v+1)*g.FeatDim]
				for j := range row {
					if got[j] != row[j] {
						t.Fatalf("node %d: row %v, want %v", v, got, row)
					}
				}
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			// The isolated node of graph 2 has degree 0.
			if tt.opt.Kind == "degree" && s.Graphs[2].X[0] != 1 {
				t.Fatalf("isolated node: row %v, want a one at degree 0", s.Graphs[2].X)
			}
			// Every graph's X is a capped window.
			if x := s.Graphs[0].X; cap(x) != len(x) {
				t.Fatalf("X of graph 0 has cap %d > len %d", cap(x), len(x))
			}
		})
	}
}

func TestSetFeaturesErrors(t *testing.T) {
	synth, err := GenerateGraphs(SynthConfig{Graphs: 10, Classes: 2, MinNodes: 6, MaxNodes: 8}, 1)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		set      *GraphSet
		opt      FeatureOptions
		contains []string
	}{
		{"unknown kind", readToy(t), FeatureOptions{Kind: "onehot"}, []string{`"onehot"`, "auto, auto-degree, labels, attributes, labels+attributes, constant, degree"}},
		{"labels missing", synth, FeatureOptions{Kind: "labels"}, []string{"needs node labels", "auto, auto-degree, constant, degree"}},
		{"attributes missing", synth, FeatureOptions{Kind: "attributes"}, []string{"needs node attributes", "auto, auto-degree, constant, degree"}},
		{"both missing", synth, FeatureOptions{Kind: "labels+attributes"}, []string{"needs node labels and node attributes"}},
		{"negative max degree", readToy(t), FeatureOptions{Kind: "degree", MaxDegree: -1}, []string{"expected >= 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.set.SetFeatures(tt.opt)
			if err == nil {
				t.Fatal("no error")
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Fatalf("error %q does not contain %q", err, c)
				}
			}
		})
	}
	// Auto on a set with neither labels nor attributes is a constant 1.
	if err := synth.SetFeatures(FeatureOptions{Kind: "auto"}); err != nil || synth.FeatDim != 1 || synth.Graphs[0].X[0] != 1 {
		t.Fatalf("auto without labels: err %v, dim %d", err, synth.FeatDim)
	}
	// Auto-degree on such a set is the one-hot degree, and so is it on a
	// set whose every node has the one label 0 (the GIN format's way of
	// writing an unlabelled dataset).
	for _, labels := range []int{0, 1} {
		s, err := GenerateGraphs(SynthConfig{Graphs: 5, Classes: 2, MinNodes: 6, MaxNodes: 12}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if labels == 1 {
			s.NumNodeLabels = 1
			for _, g := range s.Graphs {
				g.NodeLabels = make([]int32, g.NumNodes)
			}
		}
		want, err := GenerateGraphs(SynthConfig{Graphs: 5, Classes: 2, MinNodes: 6, MaxNodes: 12}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := want.SetFeatures(FeatureOptions{Kind: "degree"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetFeatures(FeatureOptions{Kind: "auto-degree"}); err != nil {
			t.Fatalf("auto-degree with %d node labels: %v", labels, err)
		}
		if s.FeatDim != want.FeatDim || s.FeatDim < 2 {
			t.Fatalf("auto-degree with %d node labels: dim %d, want the degree features' %d", labels, s.FeatDim, want.FeatDim)
		}
		for i, g := range s.Graphs {
			if !slices.Equal(g.X, want.Graphs[i].X) {
				t.Fatalf("auto-degree with %d node labels: graph %d features differ from degree's", labels, i)
			}
		}
	}
}

// TestSetFeaturesDegreeReference checks degree features on synthetic graphs
// against degrees counted from an adjacency matrix.
func TestSetFeaturesDegreeReference(t *testing.T) {
	s, err := GenerateGraphs(SynthConfig{Graphs: 60, Classes: 6, MinNodes: 6, MaxNodes: 30, Noise: 0.2}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetFeatures(FeatureOptions{Kind: "degree", MaxDegree: 4}); err != nil {
		t.Fatal(err)
	}
	for i, g := range s.Graphs {
		adj := make([][]bool, g.NumNodes)
		for v := range adj {
			adj[v] = make([]bool, g.NumNodes)
		}
		for _, e := range g.Edges {
			adj[e[0]][e[1]], adj[e[1]][e[0]] = true, true
		}
		for v := 0; v < g.NumNodes; v++ {
			d := 0
			for _, b := range adj[v] {
				if b {
					d++
				}
			}
			for j := 0; j < 5; j++ {
				want := float32(0)
				if j == min(d, 4) {
					want = 1
				}
				if g.X[v*5+j] != want {
					t.Fatalf("graph %d node %d (degree %d): row %v", i, v, d, g.X[v*5:v*5+5])
				}
			}
		}
	}
}

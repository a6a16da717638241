package data

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// connected reports whether g is connected (breadth-first search).
func connected(g *Graph) bool {
	if g.NumNodes == 0 {
		return true
	}
	adj := make([][]int32, g.NumNodes)
	for _, e := range g.Edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	seen := make([]bool, g.NumNodes)
	queue := []int32{0}
	seen[0] = true
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, u := range adj[v] {
			if !seen[u] {
				seen[u] = true
				queue = append(queue, u)
			}
		}
	}
	for _, b := range seen {
		if !b {
			return false
		}
	}
	return true
}

func TestGenerateGraphsDeterministic(t *testing.T) {
	cfg := DefaultSynthConfig()
	a, err := GenerateGraphs(cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateGraphs(cfg, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different sets")
	}
	c, _ := GenerateGraphs(cfg, 43)
	if reflect.DeepEqual(a.Labels(), c.Labels()) || reflect.DeepEqual(a.Graphs[0], c.Graphs[0]) {
		t.Fatal("seeds 42 and 43 gave the same classes or first graph")
	}
}

func TestGenerateGraphsProperties(t *testing.T) {
	tests := []SynthConfig{
		{Graphs: 600, Classes: 6, MinNodes: 6, MaxNodes: 12},
		{Graphs: 1000, Classes: 4, MinNodes: 20, MaxNodes: 40, NodeLabels: 5},
		{Graphs: 301, Classes: 3, MinNodes: 30, MaxNodes: 30, NodeLabels: 1},
		{Graphs: 7, Classes: 1, MinNodes: 9, MaxNodes: 50},
	}
	for _, cfg := range tests {
		s, err := GenerateGraphs(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		if s.Name != "synthetic" || len(s.Graphs) != cfg.Graphs || s.NumClasses != cfg.Classes || s.NumNodeLabels != cfg.NodeLabels || len(s.ClassValues) != cfg.Classes {
			t.Fatalf("%+v: header %s %d graphs %d classes %d node labels", cfg, s.Name, len(s.Graphs), s.NumClasses, s.NumNodeLabels)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		counts := s.ClassCounts()
		lo, hi := cfg.Graphs, 0
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		if hi-lo > 1 {
			t.Fatalf("%+v: class counts %v not balanced", cfg, counts)
		}
		for i, g := range s.Graphs {
			n := g.NumNodes
			if n < cfg.MinNodes || n > cfg.MaxNodes {
				t.Fatalf("%+v: graph %d has %d nodes", cfg, i, n)
			}
			if !connected(g) {
				t.Fatalf("%+v: graph %d (%s) not connected", cfg, i, SynthFamily(g.Label))
			}
			if (cfg.NodeLabels > 0) != (g.NodeLabels != nil) {
				t.Fatalf("%+v: graph %d node labels %v", cfg, i, g.NodeLabels)
			}
			deg := g.Degrees()
			maxDeg, minDeg := 0, n
			for _, d := range deg {
				maxDeg, minDeg = max(maxDeg, d), min(minDeg, d)
			}
			m := len(g.Edges)
			switch SynthFamily(g.Label) {
			case "cycle":
				if m < n || m > n+2 || minDeg < 2 {
					t.Fatalf("cycle graph %d: %d nodes %d edges min degree %d", i, n, m, minDeg)
				}
			case "tree":
				if m != n-1 { // connected with n-1 edges: a tree
					t.Fatalf("tree graph %d: %d nodes %d edges", i, n, m)
				}
			case "wheel":
				if m != 2*(n-1) || deg[0] != n-1 || minDeg != 3 {
					t.Fatalf("wheel graph %d: %d nodes %d edges hub degree %d", i, n, m, deg[0])
				}
			case "grid":
				if maxDeg > 4 || minDeg < 1 {
					t.Fatalf("grid graph %d: degrees %v", i, deg)
				}
			case "lollipop":
				c := max(3, n/3)
				if m != c*(c-1)/2+n-c || deg[n-1] != 1 {
					t.Fatalf("lollipop graph %d: %d nodes %d edges", i, n, m)
				}
			case "communities":
				a, across := n/2, 0
				for _, e := range g.Edges {
					if (e[0] < int32(a)) != (e[1] < int32(a)) {
						across++
					}
				}
				halves := [2]*Graph{{NumNodes: a}, {NumNodes: n - a}}
				for _, e := range g.Edges {
					if e[1] < int32(a) {
						halves[0].Edges = append(halves[0].Edges, e)
					} else if e[0] >= int32(a) {
						halves[1].Edges = append(halves[1].Edges, [2]int32{e[0] - int32(a), e[1] - int32(a)})
					}
				}
				if across < 1 || across > 2 || !connected(halves[0]) || !connected(halves[1]) {
					t.Fatalf("communities graph %d: %d edges across, halves connected %v %v", i, across, connected(halves[0]), connected(halves[1]))
				}
			}
		}
	}
}

// TestGenerateGraphsSizeNotClass checks that node counts carry no class
// information: every class's mean size is within 5 standard errors of the
// mean of the uniform distribution on [MinNodes, MaxNodes].
func TestGenerateGraphsSizeNotClass(t *testing.T) {
	cfg := SynthConfig{Graphs: 3000, Classes: 6, MinNodes: 10, MaxNodes: 50}
	s, err := GenerateGraphs(cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	sum := make([]float64, cfg.Classes)
	for _, g := range s.Graphs {
		sum[g.Label] += float64(g.NumNodes)
	}
	w := float64(cfg.MaxNodes - cfg.MinNodes + 1)
	mu, sd := float64(cfg.MinNodes+cfg.MaxNodes)/2, math.Sqrt((w*w-1)/12)
	counts := s.ClassCounts()
	for c := range sum {
		mean := sum[c] / float64(counts[c])
		if se := sd / math.Sqrt(float64(counts[c])); math.Abs(mean-mu) > 5*se {
			t.Errorf("class %d (%s): mean size %.2f, expected %.2f ± %.2f", c, SynthFamily(c), mean, mu, 5*se)
		}
	}
}

func TestGenerateGraphsNoise(t *testing.T) {
	base := SynthConfig{Graphs: 200, Classes: 6, MinNodes: 15, MaxNodes: 25}
	clean, _ := GenerateGraphs(base, 5)
	base.Noise = 0.3
	noisy, err := GenerateGraphs(base, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := noisy.Validate(); err != nil {
		t.Fatal(err)
	}
	changed, total := 0, 0
	for i, g := range noisy.Graphs {
		c := clean.Graphs[i]
		if g.NumNodes != c.NumNodes || g.Label != c.Label {
			t.Fatalf("graph %d: noise changed the size or class", i)
		}
		if len(g.Edges) != len(c.Edges) {
			t.Fatalf("graph %d: rewiring changed the edge count %d -> %d", i, len(c.Edges), len(g.Edges))
		}
		old := map[[2]int32]bool{}
		for _, e := range c.Edges {
			old[e] = true
		}
		for _, e := range g.Edges {
			if e[0] == e[1] {
				t.Fatalf("graph %d: self-loop %v after rewiring", i, e)
			}
			if !old[e] {
				changed++
			}
		}
		total += len(g.Edges)
	}
	// At most 30% of edges move; a few may stay for lack of a free endpoint
	// (dense communities and cliques), or return to an old slot.
	f := float64(changed) / float64(total)
	t.Logf("fraction of new edges: %.4f", f)
	if f > 0.3 || f < 0.2 {
		t.Fatalf("fraction of new edges %.3f, expected a little under 0.3", f)
	}
}

func TestGenerateGraphsConfigErrors(t *testing.T) {
	ok := SynthConfig{Graphs: 10, Classes: 2, MinNodes: 6, MaxNodes: 8}
	tests := []struct {
		name     string
		edit     func(*SynthConfig)
		contains string
	}{
		{"no graphs", func(c *SynthConfig) { c.Graphs = 0 }, "Graphs = 0"},
		{"too many classes", func(c *SynthConfig) { c.Classes = NumSynthFamilies + 1 }, "Classes = 7: expected 1..6"},
		{"no classes", func(c *SynthConfig) { c.Classes = 0 }, "Classes = 0"},
		{"tiny graphs", func(c *SynthConfig) { c.MinNodes = 5 }, "MinNodes = 5"},
		{"max below min", func(c *SynthConfig) { c.MaxNodes = 5 }, "MaxNodes = 5"},
		{"negative labels", func(c *SynthConfig) { c.NodeLabels = -1 }, "NodeLabels = -1"},
		{"noise above 1", func(c *SynthConfig) { c.Noise = 1.5 }, "Noise = 1.5"},
		{"noise NaN", func(c *SynthConfig) { c.Noise = math.NaN() }, "Noise = NaN"},
	}
	for _, tt := range tests {
		cfg := ok
		tt.edit(&cfg)
		if _, err := GenerateGraphs(cfg, 1); err == nil || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.contains)
		}
	}
	if _, err := GenerateGraphs(ok, 1); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkGenerateGraphs(b *testing.B) {
	cfg := DefaultSynthConfig()
	for b.Loop() {
		if _, err := GenerateGraphs(cfg, 1); err != nil {
			b.Fatal(err)
		}
	}
}

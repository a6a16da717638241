package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SynthConfig parameterises GenerateGraphs.
type SynthConfig struct {
	Graphs   int // number of graphs, > 0
	Classes  int // number of classes, 1..NumSynthFamilies
	MinNodes int // smallest graph, >= MinSynthNodes
	MaxNodes int // largest graph, >= MinNodes
	// NodeLabels > 0 gives every node a label drawn uniformly from
	// 0..NodeLabels-1 (independent of the class), so that one-hot label
	// features exist; 0 means no node labels.
	NodeLabels int
	// Noise is the fraction of edges, in [0, 1], whose one end is moved to
	// a random node after the graph is built.
	Noise float64
}

// NumSynthFamilies is the number of graph families GenerateGraphs knows,
// hence the largest number of classes it can make.
const NumSynthFamilies = 6

// MinSynthNodes is the smallest MinNodes GenerateGraphs accepts; below it
// the families start to coincide (a 2×2 grid is a 4-cycle).
const MinSynthNodes = 6

// MaxSynthNodes bounds MaxNodes.
const MaxSynthNodes = 1 << 20

var synthFamilies = [NumSynthFamilies]string{"cycle", "tree", "communities", "wheel", "grid", "lollipop"}

// SynthFamily returns the name of the graph family of class c of
// GenerateGraphs: "cycle", "tree", "communities", "wheel", "grid" or
// "lollipop" ("" when c is out of range).
func SynthFamily(c int) string {
	if c < 0 || c >= NumSynthFamilies {
		return ""
	}
	return synthFamilies[c]
}

// DefaultSynthConfig is a small, quickly learnt dataset for demos and tests:
// 1,000 graphs of 20-40 nodes in 4 classes, 4 random node labels, 5% noise.
func DefaultSynthConfig() SynthConfig {
	return SynthConfig{Graphs: 1000, Classes: 4, MinNodes: 20, MaxNodes: 40, NodeLabels: 4, Noise: 0.05}
}

// GenerateGraphs makes a balanced synthetic graph classification set named
// "synthetic", a deterministic function of cfg and seed. Class c is graph
// family c, and every class draws its node counts uniformly from the same
// range [MinNodes, MaxNodes], so classes differ in structure, not size:
//
//	0 cycle: a ring with 0-2 random chords;
//	1 tree: a random recursive tree (node i joins a uniform earlier node);
//	2 communities: two halves, each a random tree plus every other inner
//	  pair with probability 1/2, joined by 1-2 edges;
//	3 wheel: a hub joined to every node of a ring;
//	4 grid: a near-square lattice, row-major, the last row possibly partial;
//	5 lollipop: a clique of max(3, n/3) nodes with a path hanging from it.
//
// Every family is connected before noise. The class counts differ by at
// most one and the order of classes is shuffled. The graphs have no
// features until SetFeatures is called.
func GenerateGraphs(cfg SynthConfig, seed uint64) (*GraphSet, error) {
	switch {
	case cfg.Graphs < 1:
		return nil, fmt.Errorf("generate graphs: Graphs = %d: expected at least 1", cfg.Graphs)
	case cfg.Classes < 1 || cfg.Classes > NumSynthFamilies:
		return nil, fmt.Errorf("generate graphs: Classes = %d: expected 1..%d (families %v)", cfg.Classes, NumSynthFamilies, synthFamilies)
	case cfg.MinNodes < MinSynthNodes:
		return nil, fmt.Errorf("generate graphs: MinNodes = %d: expected at least %d", cfg.MinNodes, MinSynthNodes)
	case cfg.MaxNodes < cfg.MinNodes || cfg.MaxNodes > MaxSynthNodes:
		return nil, fmt.Errorf("generate graphs: MaxNodes = %d: expected MinNodes (%d) to %d", cfg.MaxNodes, cfg.MinNodes, MaxSynthNodes)
	case cfg.NodeLabels < 0 || cfg.NodeLabels > math.MaxInt32:
		return nil, fmt.Errorf("generate graphs: NodeLabels = %d: expected 0 (none) or a positive count", cfg.NodeLabels)
	case !(cfg.Noise >= 0 && cfg.Noise <= 1):
		return nil, fmt.Errorf("generate graphs: Noise = %g: expected a fraction in [0, 1]", cfg.Noise)
	}

	master := rand.New(rand.NewPCG(seed, 0))
	classes := make([]int, cfg.Graphs)
	for i := range classes {
		classes[i] = i % cfg.Classes
	}
	master.Shuffle(len(classes), func(i, j int) { classes[i], classes[j] = classes[j], classes[i] })

	s := &GraphSet{
		Name:          "synthetic",
		Graphs:        make([]*Graph, cfg.Graphs),
		NumClasses:    cfg.Classes,
		ClassValues:   make([]int, cfg.Classes),
		NumNodeLabels: cfg.NodeLabels,
	}
	for c := range s.ClassValues {
		s.ClassValues[c] = c
	}
	graphs := make([]Graph, cfg.Graphs)
	var gen synthGen
	for i := range graphs {
		r := rand.New(rand.NewPCG(seed, uint64(i)+1))
		n := cfg.MinNodes + r.IntN(cfg.MaxNodes-cfg.MinNodes+1)
		g := &graphs[i]
		g.NumNodes = n
		g.Label = classes[i]
		g.Edges = gen.graph(r, classes[i], n, cfg.Noise)
		if cfg.NodeLabels > 0 {
			g.NodeLabels = make([]int32, n)
			for v := range g.NodeLabels {
				g.NodeLabels[v] = int32(r.IntN(cfg.NodeLabels))
			}
		}
		s.Graphs[i] = g
	}
	return s, nil
}

// synthGen holds buffers reused from one graph to the next.
type synthGen struct {
	keys []uint64 // u<<32 | v with u < v
	set  map[uint64]struct{}
	idx  []int
}

// add records the edge {u, v} (self-loops are dropped).
func (gen *synthGen) add(u, v int) {
	if u > v {
		u, v = v, u
	}
	if u != v {
		gen.keys = append(gen.keys, uint64(u)<<32|uint64(v))
	}
}

// randomTree joins nodes lo..hi-1 by a random recursive tree.
func (gen *synthGen) randomTree(r *rand.Rand, lo, hi int) {
	for v := lo + 1; v < hi; v++ {
		gen.add(lo+r.IntN(v-lo), v)
	}
}

// graph builds one graph of the family on n nodes, rewires a fraction noise
// of its edges, and returns the edges sorted by (u, v).
func (gen *synthGen) graph(r *rand.Rand, family, n int, noise float64) [][2]int32 {
	gen.keys = gen.keys[:0]
	switch family {
	case 0: // cycle with chords
		for v := 0; v < n; v++ {
			gen.add(v, (v+1)%n)
		}
		for c := r.IntN(3); c > 0; c-- {
			u := r.IntN(n)
			d := 2 + r.IntN(n-3) // 2..n-2: never a ring edge
			gen.add(u, (u+d)%n)
		}
	case 1: // random recursive tree
		gen.randomTree(r, 0, n)
	case 2: // two dense communities
		a := n / 2
		for _, h := range [2][2]int{{0, a}, {a, n}} {
			gen.randomTree(r, h[0], h[1])
			for u := h[0]; u < h[1]; u++ {
				for v := u + 1; v < h[1]; v++ {
					if r.IntN(2) == 0 {
						gen.add(u, v)
					}
				}
			}
		}
		for b := 1 + r.IntN(2); b > 0; b-- {
			gen.add(r.IntN(a), a+r.IntN(n-a))
		}
	case 3: // wheel
		for v := 1; v < n; v++ {
			gen.add(0, v)
			w := v + 1
			if w == n {
				w = 1
			}
			gen.add(v, w)
		}
	case 4: // grid
		cols := int(math.Round(math.Sqrt(float64(n))))
		for v := 0; v < n; v++ {
			if (v+1)%cols != 0 && v+1 < n {
				gen.add(v, v+1)
			}
			if v+cols < n {
				gen.add(v, v+cols)
			}
		}
	case 5: // lollipop
		c := max(3, n/3)
		for u := 0; u < c; u++ {
			for v := u + 1; v < c; v++ {
				gen.add(u, v)
			}
		}
		for v := c; v < n; v++ {
			gen.add(v-1, v)
		}
	}
	slices.Sort(gen.keys)
	gen.keys = slices.Compact(gen.keys)
	if m := int(math.Round(noise * float64(len(gen.keys)))); m > 0 {
		gen.rewire(r, n, m)
		slices.Sort(gen.keys)
	}
	edges := make([][2]int32, len(gen.keys))
	for i, k := range gen.keys {
		edges[i] = [2]int32{int32(k >> 32), int32(uint32(k))}
	}
	return edges
}

// rewire moves one end of m distinct random edges to random nodes, keeping
// the graph simple (no self-loop, no duplicate); an edge for which 16 draws
// find no free endpoint stays.
func (gen *synthGen) rewire(r *rand.Rand, n, m int) {
	if gen.set == nil {
		gen.set = make(map[uint64]struct{})
	}
	clear(gen.set)
	for _, k := range gen.keys {
		gen.set[k] = struct{}{}
	}
	gen.idx = gen.idx[:0]
	for i := range gen.keys {
		gen.idx = append(gen.idx, i)
	}
	for t := 0; t < m; t++ { // partial Fisher-Yates: m distinct edges
		j := t + r.IntN(len(gen.idx)-t)
		gen.idx[t], gen.idx[j] = gen.idx[j], gen.idx[t]
		e := gen.idx[t]
		old := gen.keys[e]
		keep := int(old >> 32)
		if r.IntN(2) == 1 {
			keep = int(uint32(old))
		}
		for try := 0; try < 16; try++ {
			w := r.IntN(n)
			if w == keep {
				continue
			}
			u, v := min(keep, w), max(keep, w)
			k := uint64(u)<<32 | uint64(v)
			if _, dup := gen.set[k]; dup {
				continue
			}
			delete(gen.set, old)
			gen.set[k] = struct{}{}
			gen.keys[e] = k
			break
		}
	}
}

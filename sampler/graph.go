package sampler

import "fmt"

// Graph is a directed graph in which every node has exactly K out-neighbours,
// stored flat: the out-neighbours of node i are Adj[i*K : (i+1)*K]. It is the
// proximity graph G of the paper (Algorithm 2) or an exact kNN graph.
// Edge weights are not stored: the walks of walk.go pick out-neighbours
// uniformly, as the official BatchSampler code does. A row may list a node
// more than once, or the node itself (a proximity graph drawn with
// candidates with_replacement, as the published code draws it); see Walk.
type Graph struct {
	N, K int     // nodes and out-degree
	Adj  []int32 // N·K out-neighbours, row-major
}

// NewGraph checks and wraps a flat N×K adjacency list (adj is not copied).
// Every entry must be a node in [0, n).
func NewGraph(n, k int, adj []int32) (*Graph, error) {
	if n <= 0 {
		return nil, fmt.Errorf("sampler: graph: need at least one node, got n=%d", n)
	}
	if k < 0 {
		return nil, fmt.Errorf("sampler: graph: out-degree K must be ≥ 0, got %d", k)
	}
	if len(adj) != n*k {
		return nil, fmt.Errorf("sampler: graph: adjacency has %d entries, want N·K = %d·%d = %d", len(adj), n, k, n*k)
	}
	for i, v := range adj {
		if v < 0 || int(v) >= n {
			return nil, fmt.Errorf("sampler: graph: node %d neighbour %d is %d, want a node in [0,%d)", i/k, i%k, v, n)
		}
	}
	return &Graph{N: n, K: k, Adj: adj}, nil
}

// Neighbours returns the out-neighbours of node i (a view into Adj).
func (g *Graph) Neighbours(i int) []int32 { return g.Adj[i*g.K : (i+1)*g.K] }

// InDegrees returns the number of edges pointing at each node.
func (g *Graph) InDegrees() []int {
	in := make([]int, g.N)
	for _, v := range g.Adj {
		in[v]++
	}
	return in
}

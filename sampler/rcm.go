package sampler

import (
	"fmt"
	"slices"
)

// SymGraph is an undirected graph in compressed sparse row form: the
// neighbours of node i are Ind[Ptr[i]:Ptr[i+1]], in increasing order, each
// edge stored in both rows, no self-loops, no repeats.
type SymGraph struct {
	N   int
	Ptr []int
	Ind []int32
}

// NewSymGraph builds the undirected graph of the edge list (i, j): both
// directions are stored, self-loops and repeated edges dropped.
func NewSymGraph(n int, edges [][2]int32) (*SymGraph, error) {
	if n < 0 {
		return nil, fmt.Errorf("sampler: sym graph: n must be ≥ 0, got %d", n)
	}
	rows := make([][]int32, n)
	for k, e := range edges {
		i, j := e[0], e[1]
		if i < 0 || j < 0 || int(i) >= n || int(j) >= n {
			return nil, fmt.Errorf("sampler: sym graph: edge %d is (%d, %d), want nodes in [0,%d)", k, i, j, n)
		}
		if i == j {
			continue
		}
		rows[i] = append(rows[i], j)
		rows[j] = append(rows[j], i)
	}
	g := &SymGraph{N: n, Ptr: make([]int, n+1)}
	for i, r := range rows {
		slices.Sort(r)
		r = slices.Compact(r)
		g.Ind = append(g.Ind, r...)
		g.Ptr[i+1] = len(g.Ind)
	}
	return g, nil
}

// symmetrize returns the undirected graph of a directed K-out graph (an
// edge wherever either direction is; self-loops and repeats dropped).
func symmetrize(g *Graph) *SymGraph {
	deg := make([]int, g.N)
	for i := 0; i < g.N; i++ {
		for _, v := range g.Neighbours(i) {
			if int(v) != i {
				deg[i]++
				deg[v]++
			}
		}
	}
	ptr := make([]int, g.N+1)
	for i, d := range deg {
		ptr[i+1] = ptr[i] + d
	}
	ind := make([]int32, ptr[g.N])
	fill := slices.Clone(ptr[:g.N])
	for i := 0; i < g.N; i++ {
		for _, v := range g.Neighbours(i) {
			if int(v) != i {
				ind[fill[i]] = v
				fill[i]++
				ind[fill[v]] = int32(i)
				fill[v]++
			}
		}
	}
	out := &SymGraph{N: g.N, Ptr: make([]int, g.N+1), Ind: ind[:0]}
	for i := 0; i < g.N; i++ {
		r := ind[ptr[i]:ptr[i+1]]
		slices.Sort(r)
		r = slices.Compact(r)
		// r starts at or after len(out.Ind), so append moves values left.
		out.Ind = append(out.Ind, r...)
		out.Ptr[i+1] = len(out.Ind)
	}
	return out
}

// Degree returns the number of neighbours of node i.
func (g *SymGraph) Degree(i int) int { return g.Ptr[i+1] - g.Ptr[i] }

// ReverseCuthillMcKee returns the reverse Cuthill–McKee order of g: order[p]
// is the node placed at position p. It is SciPy's
// scipy.sparse.csgraph.reverse_cuthill_mckee: the components are taken in
// order of their node of lowest degree (ties: lowest index), which seeds a
// breadth-first search; the unvisited neighbours of each node visited are
// appended in increasing degree (ties: increasing index, a stable sort of
// the CSR row); the whole order is then reversed. Every node appears once.
func ReverseCuthillMcKee(g *SymGraph) []int32 {
	n := g.N
	order := make([]int32, 0, n)
	seeds := make([]int32, n)
	for i := range seeds {
		seeds[i] = int32(i)
	}
	slices.SortStableFunc(seeds, func(a, b int32) int { return g.Degree(int(a)) - g.Degree(int(b)) })
	visited := make([]bool, n)
	for _, seed := range seeds {
		if visited[seed] {
			continue
		}
		visited[seed] = true
		order = append(order, seed)
		for head := len(order) - 1; head < len(order); head++ {
			i := order[head]
			first := len(order)
			for _, j := range g.Ind[g.Ptr[i]:g.Ptr[i+1]] {
				if !visited[j] {
					visited[j] = true
					order = append(order, j)
				}
			}
			added := order[first:]
			slices.SortStableFunc(added, func(a, b int32) int { return g.Degree(int(a)) - g.Degree(int(b)) })
		}
		if len(order) == n {
			break
		}
	}
	slices.Reverse(order)
	return order
}

// Bandwidth returns the bandwidth of g's adjacency matrix with the nodes
// relabelled by order (node order[p] becomes p): the largest |p(i) − p(j)|
// over the edges {i, j}; 0 for a graph without edges.
func Bandwidth(g *SymGraph, order []int32) int {
	pos := make([]int, g.N)
	for p, v := range order {
		pos[v] = p
	}
	bw := 0
	for i := 0; i < g.N; i++ {
		for _, j := range g.Ind[g.Ptr[i]:g.Ptr[i+1]] {
			d := pos[i] - pos[j]
			if d < 0 {
				d = -d
			}
			bw = max(bw, d)
		}
	}
	return bw
}

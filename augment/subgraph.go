package augment

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// Subgraph is GraphCL's subgraph augmentation: it keeps
// max(1, Count(n, Ratio)) nodes grown from a uniformly random start node by
// neighbourhood expansion, and returns the subgraph they induce, renumbered
// in the original order of the nodes.
//
// The expansion repeatedly moves a node chosen uniformly from the frontier
// (the nodes adjacent to the kept set and not in it) into the kept set, and
// adds that node's new neighbours to the frontier. It stops when the target
// is reached or the frontier is empty, so fewer nodes are kept when the
// start node's connected component is smaller than the target. Every kept
// node was reached through an edge from an earlier one, so the result is
// always connected. Self-loops and repeated edges do not bias the choice:
// the frontier is a set.
//
// Two deliberate differences from GraphCL's TU code (aug.py, subgraph):
//   - There the frontier is never updated (idx_neigh.union(...) discards its
//     result), so only the start node and its direct neighbours can be kept:
//     at most 1 + deg(start) nodes. Here the frontier grows as it should.
//   - There the loop condition len(idx_sub) <= sub_num keeps up to
//     int(0.2·n) + 1 nodes; here the target is exactly ⌊n·Ratio⌋ (at least 1).
type Subgraph struct {
	// Ratio is the fraction of nodes kept, in (0, 1] (GraphCL: 0.2).
	Ratio float64
}

// Augment returns a random connected induced subgraph of g with
// max(1, Count(g.NumNodes, sg.Ratio)) nodes, or fewer when the component
// of the start node is smaller.
func (sg Subgraph) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	if !usable(g) || g.NumNodes == 0 {
		return Identity{}.Augment(g, rng)
	}
	n := g.NumNodes
	target := max(1, Count(n, sg.Ratio))
	s := getScratch()
	defer putScratch(s)
	kept := cleared(&s.flags, n)
	start := rng.IntN(n)
	kept[start] = true
	if target > 1 {
		off, adj := csr(g, s)
		queued := cleared(&s.flags2, n)
		frontier := int32s(&s.list, n)[:0]
		push := func(v int32) {
			for _, w := range adj[off[v]:off[v+1]] {
				if !kept[w] && !queued[w] {
					queued[w] = true
					frontier = append(frontier, w)
				}
			}
		}
		push(int32(start))
		for nk := 1; nk < target && len(frontier) > 0; nk++ {
			i := rng.IntN(len(frontier))
			v := frontier[i]
			frontier[i] = frontier[len(frontier)-1]
			frontier = frontier[:len(frontier)-1]
			kept[v] = true
			push(v)
		}
	}
	return induce(g, kept, s, false)
}

// String returns "subgraph(ratio)".
func (sg Subgraph) String() string { return fmt.Sprintf("subgraph(%g)", sg.Ratio) }

// csr builds the symmetric adjacency of g without self-loops in compressed
// sparse row form in scratch memory: the neighbours of v are
// adj[off[v]:off[v+1]], in edge order.
func csr(g *data.Graph, s *scratch) (off, adj []int32) {
	n := g.NumNodes
	off = int32s(&s.off, n+1)
	clear(off)
	for _, e := range g.Edges {
		if e[0] != e[1] {
			off[e[0]+1]++
			off[e[1]+1]++
		}
	}
	for v := range n {
		off[v+1] += off[v]
	}
	adj = int32s(&s.adj, int(off[n]))
	cur := int32s(&s.ids, n)
	copy(cur, off[:n])
	for _, e := range g.Edges {
		u, v := e[0], e[1]
		if u != v {
			adj[cur[u]] = v
			cur[u]++
			adj[cur[v]] = u
			cur[v]++
		}
	}
	return off, adj
}

package augment

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// EdgePerturb is edge perturbation as the GraphCL paper defines it: it
// removes k = Count(|E|, Ratio) undirected edges chosen uniformly without
// replacement and adds k new edges chosen uniformly among the node pairs
// {u, v}, u ≠ v, that are not edges of the input graph (so a removed edge is
// never put back and no self-loop or duplicate is created). When the input
// has fewer than k non-adjacent pairs, all of them are added. Each new edge
// takes the label of one removed edge (the i-th added edge that of the i-th
// removed edge in input order), so the multiset of edge labels is preserved.
// Nodes and their rows are unchanged. Surviving edges keep their input order
// and the new edges follow them.
//
// GraphCL's TU code only removes edges; use [EdgeRemove] to reproduce it.
type EdgePerturb struct {
	// Ratio is the fraction of edges removed and added back elsewhere, in
	// [0, 1).
	Ratio float64
}

// Augment returns g with Count(len(g.Edges), p.Ratio) random edges moved to
// random non-adjacent pairs.
func (p EdgePerturb) Augment(g *data.Graph, rng *rand.Rand) *data.Graph {
	if !usable(g) {
		return Identity{}.Augment(g, rng)
	}
	m := len(g.Edges)
	k := Count(m, p.Ratio)
	if k == 0 {
		return clone(g)
	}
	n := g.NumNodes
	s := getScratch()
	defer putScratch(s)
	removed := cleared(&s.flags, m)
	chooseMask(rng, removed, k)

	set := newPairSet(s, n)
	defer set.reset(g.Edges)
	distinct := 0
	for _, e := range g.Edges {
		if e[0] != e[1] && set.add(e[0], e[1]) {
			distinct++
		}
	}
	total := n * (n - 1) / 2
	avail := total - distinct
	nadd := min(k, avail)

	out := alloc(g, n, m-k+nadd)
	copyNodes(out, g)
	// Edges are appended up to the exact capacity; labels are written by
	// index.
	keepEdges(out, g, removed)
	surv := len(out.Edges)
	switch {
	case nadd == avail:
		// Every non-adjacent pair is added.
		for u := range int32(n) {
			for v := u + 1; v < int32(n); v++ {
				if !set.has(u, v) {
					out.Edges = append(out.Edges, [2]int32{u, v})
				}
			}
		}
	case 4*avail >= total:
		// Sparse enough: rejection sampling needs at most ~4 draws per edge.
		// A uniform ordered pair with u ≠ v is a uniform unordered pair.
		for len(out.Edges) < surv+nadd {
			u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
			if u == v {
				continue
			}
			if u > v {
				u, v = v, u
			}
			if set.add(u, v) {
				out.Edges = append(out.Edges, [2]int32{u, v})
			}
		}
	default:
		// Dense: list the non-adjacent pairs and take a uniform subset of
		// nadd of them by a partial Fisher–Yates shuffle.
		cand := s.pairs[:0]
		for u := range int32(n) {
			for v := u + 1; v < int32(n); v++ {
				if !set.has(u, v) {
					cand = append(cand, uint64(u)<<32|uint64(v))
				}
			}
		}
		s.pairs = cand
		for i := range nadd {
			j := i + rng.IntN(len(cand)-i)
			cand[i], cand[j] = cand[j], cand[i]
			out.Edges = append(out.Edges, [2]int32{int32(cand[i] >> 32), int32(uint32(cand[i]))})
		}
	}
	if g.EdgeLabels != nil {
		j := surv
		for i := 0; i < m && j < len(out.Edges); i++ {
			if removed[i] {
				out.EdgeLabels[j] = g.EdgeLabels[i]
				j++
			}
		}
	}
	// Pairs added by rejection sampling are in the set too; clear them.
	set.resetEdges(out.Edges[surv:])
	return out
}

// String returns "edge_perturb(ratio)".
func (p EdgePerturb) String() string { return fmt.Sprintf("edge_perturb(%g)", p.Ratio) }

// bitsetMaxNodes is the largest graph whose pair set is a bit matrix (n² bits,
// 512 KiB at 2048 nodes); larger graphs use a map.
const bitsetMaxNodes = 2048

// pairSet is a set of node pairs (u, v), u < v, of an n-node graph, backed by
// scratch memory that is all-zero (or an empty map) between uses.
type pairSet struct {
	n    int
	bits []uint64
	keys map[uint64]struct{}
}

func newPairSet(s *scratch, n int) pairSet {
	if n <= bitsetMaxNodes {
		words := (n*n + 63) / 64
		if cap(s.bits) < words {
			s.bits = make([]uint64, words)
		}
		return pairSet{n: n, bits: s.bits[:words]}
	}
	if s.keys == nil {
		s.keys = make(map[uint64]struct{})
	}
	return pairSet{n: n, keys: s.keys}
}

// add inserts (u, v) and reports whether it was absent.
func (p pairSet) add(u, v int32) bool {
	if p.bits != nil {
		i := int(u)*p.n + int(v)
		w, b := i>>6, uint64(1)<<(i&63)
		if p.bits[w]&b != 0 {
			return false
		}
		p.bits[w] |= b
		return true
	}
	key := uint64(u)<<32 | uint64(v)
	if _, ok := p.keys[key]; ok {
		return false
	}
	p.keys[key] = struct{}{}
	return true
}

func (p pairSet) has(u, v int32) bool {
	if p.bits != nil {
		i := int(u)*p.n + int(v)
		return p.bits[i>>6]&(uint64(1)<<(i&63)) != 0
	}
	_, ok := p.keys[uint64(u)<<32|uint64(v)]
	return ok
}

// resetEdges removes the pairs of edges from a bit-matrix set (a map is
// cleared by reset).
func (p pairSet) resetEdges(edges [][2]int32) {
	if p.bits == nil {
		return
	}
	for _, e := range edges {
		if e[0] != e[1] {
			i := int(e[0])*p.n + int(e[1])
			p.bits[i>>6] &^= uint64(1) << (i & 63)
		}
	}
}

// reset empties the set, given the input edges that were inserted; pairs
// inserted otherwise must have been removed with resetEdges first.
func (p pairSet) reset(edges [][2]int32) {
	if p.bits == nil {
		clear(p.keys)
		return
	}
	p.resetEdges(edges)
}

package augment

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/batchsampler-go/batchsampler/data"
)

// Count returns ⌊n·ratio⌋ clamped to [0, n]: the number of nodes, edges or
// rows an augmentation with this ratio touches. A NaN or non-positive ratio
// gives 0 and a ratio of at least 1 gives n. The product is taken with a
// relative tolerance of 1e-12 so that decimal ratios give the count one
// expects in exact arithmetic (0.29·100 is 28.999999999999996 in float64;
// Count(100, 0.29) is 29), which also makes Count(n, 0.1) equal GraphCL's
// int(n / 10).
func Count(n int, ratio float64) int {
	if n <= 0 || !(ratio > 0) {
		return 0
	}
	if ratio >= 1 {
		return n
	}
	k := int(math.Floor(float64(n) * ratio * (1 + 1e-12)))
	return min(max(k, 0), n)
}

// usable reports whether g can be augmented: non-nil and consistent.
func usable(g *data.Graph) bool {
	return g != nil && g.Validate() == nil
}

// scratch holds reusable buffers so that an augmentation allocates only its
// output. It is taken from and returned to scratchPool around one call.
type scratch struct {
	flags  []bool
	flags2 []bool
	ids    []int32
	off    []int32
	adj    []int32
	list   []int32
	bits   []uint64
	keys   map[uint64]struct{}
	pairs  []uint64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch  { return scratchPool.Get().(*scratch) }
func putScratch(s *scratch) { scratchPool.Put(s) }

// cleared returns (*buf)[:n] set to false, growing *buf when needed.
func cleared(buf *[]bool, n int) []bool {
	if cap(*buf) < n {
		*buf = make([]bool, n)
	}
	b := (*buf)[:n]
	clear(b)
	return b
}

// int32s returns (*buf)[:n] with unspecified contents.
func int32s(buf *[]int32, n int) []int32 {
	if cap(*buf) < n {
		*buf = make([]int32, n)
	}
	return (*buf)[:n]
}

// chooseMask marks k distinct positions of mask (len n, all false on entry)
// chosen uniformly among the k-subsets of [0, n). It uses Floyd's algorithm,
// which draws min(k, n-k) random numbers: when k > n/2 it chooses the n-k
// positions left unmarked instead.
func chooseMask(rng *rand.Rand, mask []bool, k int) {
	n := len(mask)
	k = min(max(k, 0), n)
	invert := k > n-k
	if invert {
		k = n - k
	}
	for j := n - k; j < n; j++ {
		t := rng.IntN(j + 1)
		if mask[t] {
			mask[j] = true
		} else {
			mask[t] = true
		}
	}
	if invert {
		for i := range mask {
			mask[i] = !mask[i]
		}
	}
}

// induce returns the subgraph of g induced by the nodes with keep[v] true,
// renumbered in increasing order of their original ids; every per-node row and
// every edge label follows its node or edge. With inPlace the result reuses
// g's struct and slices (g is the result; it must not be shared); otherwise
// it is freshly allocated and g is untouched. g must be valid.
func induce(g *data.Graph, keep []bool, s *scratch, inPlace bool) *data.Graph {
	n := g.NumNodes
	ids := int32s(&s.ids, n)
	nk := 0
	for v := range n {
		if keep[v] {
			ids[v] = int32(nk)
			nk++
		} else {
			ids[v] = -1
		}
	}
	ne := 0
	for _, e := range g.Edges {
		if ids[e[0]] >= 0 && ids[e[1]] >= 0 {
			ne++
		}
	}
	out := g
	if !inPlace {
		out = alloc(g, nk, ne)
	}
	// Writes go to positions at or before the ones read, so the loops are
	// also correct when out aliases g.
	j := 0
	for i, e := range g.Edges {
		a, b := ids[e[0]], ids[e[1]]
		if a < 0 || b < 0 {
			continue
		}
		// Renumbering is increasing, so a <= b still holds.
		out.Edges[j] = [2]int32{a, b}
		if g.EdgeLabels != nil {
			out.EdgeLabels[j] = g.EdgeLabels[i]
		}
		j++
	}
	if g.Edges != nil {
		out.Edges = out.Edges[:ne]
	}
	if g.EdgeLabels != nil {
		out.EdgeLabels = out.EdgeLabels[:ne]
	}
	if g.NodeLabels != nil {
		out.NodeLabels = keepRows(out.NodeLabels, g.NodeLabels, keep, 1)
	}
	if g.NodeAttrs != nil {
		out.NodeAttrs = keepRows(out.NodeAttrs, g.NodeAttrs, keep, g.AttrDim)
	}
	if g.X != nil {
		out.X = keepRows(out.X, g.X, keep, g.FeatDim)
	}
	out.NumNodes = nk
	return out
}

// keepRows copies the rows of src (row length d) with keep set into dst, in
// order, and returns dst resliced to them. dst may alias src. Runs of
// consecutive kept rows are copied at once.
func keepRows[T any](dst, src []T, keep []bool, d int) []T {
	j, n := 0, len(keep)
	for v := 0; v < n; {
		if !keep[v] {
			v++
			continue
		}
		w := v + 1
		for w < n && keep[w] {
			w++
		}
		j += copy(dst[j:], src[v*d:w*d])
		v = w
	}
	return dst[:j]
}

// alloc returns a graph with g's class label and dimensions and fresh slices
// for n nodes and m edges, each present only where g's is non-nil. The int32
// slices share one allocation and the float32 slices another (each capped at
// its length), so a graph costs four allocations.
func alloc(g *data.Graph, n, m int) *data.Graph {
	out := &data.Graph{NumNodes: n, AttrDim: g.AttrDim, FeatDim: g.FeatDim, Label: g.Label}
	if g.Edges != nil {
		out.Edges = make([][2]int32, m)
	}
	ni, nf := 0, 0
	if g.NodeLabels != nil {
		ni += n
	}
	if g.EdgeLabels != nil {
		ni += m
	}
	if g.X != nil {
		nf += n * g.FeatDim
	}
	if g.NodeAttrs != nil {
		nf += n * g.AttrDim
	}
	ints := make([]int32, ni)
	if g.NodeLabels != nil {
		out.NodeLabels, ints = ints[:n:n], ints[n:]
	}
	if g.EdgeLabels != nil {
		out.EdgeLabels = ints[:m:m]
	}
	floats := make([]float32, nf)
	if g.X != nil {
		k := n * g.FeatDim
		out.X, floats = floats[:k:k], floats[k:]
	}
	if g.NodeAttrs != nil {
		k := n * g.AttrDim
		out.NodeAttrs = floats[:k:k]
	}
	return out
}

// clone returns a deep copy of g in four allocations (see alloc).
func clone(g *data.Graph) *data.Graph {
	out := alloc(g, g.NumNodes, len(g.Edges))
	copyNodes(out, g)
	copy(out.Edges, g.Edges)
	copy(out.EdgeLabels, g.EdgeLabels)
	return out
}

// copyNodes copies the per-node slices of src into those of dst (same sizes).
func copyNodes(dst, src *data.Graph) {
	copy(dst.NodeLabels, src.NodeLabels)
	copy(dst.X, src.X)
	copy(dst.NodeAttrs, src.NodeAttrs)
}

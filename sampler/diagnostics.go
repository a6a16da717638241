package sampler

import (
	"fmt"
	"math"
	"slices"
)

// Batch diagnostics (reusable by any training loop): how many in-batch
// negatives are false negatives and how similar the batch is.

// FalseNegativeRatio returns the share of the unordered pairs {i, j} of the
// batch whose instances have the same label (false negatives for in-batch
// contrastive learning). It is 0 for batches of fewer than two instances and
// NaN if an index is outside labels.
func FalseNegativeRatio(batch []int, labels []int) float64 {
	n := len(batch)
	if n < 2 {
		return 0
	}
	ls := make([]int, n)
	for i, v := range batch {
		if v < 0 || v >= len(labels) {
			return math.NaN()
		}
		ls[i] = labels[v]
	}
	slices.Sort(ls)
	var same float64
	for i := 0; i < n; {
		j := i
		for j < n && ls[j] == ls[i] {
			j++
		}
		c := float64(j - i)
		same += c * (c - 1) / 2
		i = j
	}
	return same / (float64(n) * float64(n-1) / 2)
}

// unitRows returns the rows of batch as float64 unit vectors (zero rows stay
// zero), or nil if an index is outside e.
func unitRows(batch []int, e Embeddings) [][]float64 {
	rows := make([][]float64, len(batch))
	for i, v := range batch {
		if v < 0 || v >= e.N || len(e.Data) < (v+1)*e.D {
			return nil
		}
		r := make([]float64, e.D)
		var s float64
		for j, x := range e.Row(v) {
			r[j] = float64(x)
			s += r[j] * r[j]
		}
		if s > 0 {
			inv := 1 / math.Sqrt(s)
			for j := range r {
				r[j] *= inv
			}
		}
		rows[i] = r
	}
	return rows
}

// MeanCosine returns the mean cosine similarity over the unordered pairs of
// the batch (a zero row has cosine 0 with everything). It is 0 for batches of
// fewer than two instances and NaN if an index is outside e. It costs
// O(B·D): Σ_{i<j} u_i·u_j = (|Σ u_i|² − Σ |u_i|²)/2.
func MeanCosine(batch []int, e Embeddings) float64 {
	n := len(batch)
	if n < 2 {
		return 0
	}
	rows := unitRows(batch, e)
	if rows == nil {
		return math.NaN()
	}
	sum := make([]float64, e.D)
	var self float64
	for _, r := range rows {
		for j, x := range r {
			sum[j] += x
			self += x * x
		}
	}
	var tot float64
	for _, x := range sum {
		tot += x * x
	}
	return (tot - self) / 2 / (float64(n) * float64(n-1) / 2)
}

// PairCosines returns the cosine similarity of every unordered pair of the
// batch, in the order (0,1), (0,2), …, (1,2), …; nil if an index is outside e.
func PairCosines(batch []int, e Embeddings) []float64 {
	rows := unitRows(batch, e)
	if rows == nil {
		return nil
	}
	out := make([]float64, 0, len(batch)*(len(batch)-1)/2)
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			var s float64
			for k, x := range rows[i] {
				s += x * rows[j][k]
			}
			out = append(out, s)
		}
	}
	return out
}

// HardNegativeRatio returns the share of the unordered pairs {i, j} of the
// batch whose instances have different labels and a cosine similarity of
// at least threshold: hard true negatives, the negatives that teach a
// contrastive loss the most (FalseNegativeRatio counts the same-label
// pairs, whatever their cosine). It is 0 for batches of fewer than two
// instances and NaN if an index is outside labels or e.
func HardNegativeRatio(batch []int, labels []int, e Embeddings, threshold float64) float64 {
	n := len(batch)
	if n < 2 {
		return 0
	}
	for _, v := range batch {
		if v < 0 || v >= len(labels) {
			return math.NaN()
		}
	}
	cs := PairCosines(batch, e)
	if cs == nil {
		return math.NaN()
	}
	hard, p := 0, 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if labels[batch[i]] != labels[batch[j]] && cs[p] >= threshold {
				hard++
			}
			p++
		}
	}
	return float64(hard) / float64(len(cs))
}

// CosineHistogram returns the share of the batch's unordered pairs whose
// cosine similarity falls in each of bins equal bins over [−1, 1] (the last
// bin includes 1). It returns nil for bins < 1, an index outside e, or a batch
// of fewer than two instances.
func CosineHistogram(batch []int, e Embeddings, bins int) []float64 {
	if bins < 1 {
		return nil
	}
	cs := PairCosines(batch, e)
	if len(cs) == 0 {
		return nil
	}
	h := make([]float64, bins)
	for _, c := range cs {
		b := int((c + 1) / 2 * float64(bins))
		h[min(max(b, 0), bins-1)]++
	}
	for i := range h {
		h[i] /= float64(len(cs))
	}
	return h
}

// NeighbourStatistics describe a graph's edges against embeddings and labels.
type NeighbourStatistics struct {
	Edges int // N·K
	// SampledEdges is the number of edges MeanCosine and LabelAgreement
	// were computed on: all of them up to MaxStatEdges, else those of
	// evenly spaced nodes.
	SampledEdges   int
	MeanCosine     float64 // mean cosine similarity between a node and its out-neighbours
	LabelAgreement float64 // share of edges joining equal labels (NaN without labels)
	ZeroInDegree   float64 // share of nodes no edge points at (unreachable by walks except as starts)
	MaxInDegree    int     // largest number of edges pointing at one node
}

// edgeDots appends to dst, for every v of nb in order, the dot product of
// rows v and i of e in float64, summed in order of the coordinates (a
// multiply, then an add): on AVX-512 16 edges side by side (the last group
// padded with row i, whose sums are dropped), else in Go, with the same
// bits. sc holds the kernel's scratch between calls.
func edgeDots(dst []float64, e Embeddings, i int, nb []int32, sc *dotScratch) []float64 {
	ri := e.Row(i)
	if haveDots16 && e.D > 0 && len(nb) > 0 && len(e.Data) <= math.MaxInt32 {
		groups := (len(nb) + 15) / 16
		sc.ri = slices.Grow(sc.ri[:0], e.D)[:e.D]
		sc.offs = slices.Grow(sc.offs[:0], 16*groups)[:16*groups]
		sc.out = slices.Grow(sc.out[:0], 16*groups)[:16*groups]
		for k, x := range ri {
			sc.ri[k] = float64(x)
		}
		for t := range sc.offs {
			v := int32(i)
			if t < len(nb) {
				v = nb[t]
			}
			if v < 0 || int(v) >= e.N {
				panic("sampler: edgeDots: neighbour out of range")
			}
			sc.offs[t] = v * int32(e.D)
		}
		dots16F64(e.D, &sc.ri[0], &e.Data[0], &sc.offs[0], &sc.out[0], groups)
		return append(dst, sc.out[:len(nb)]...)
	}
	for _, v := range nb {
		var s float64
		for k, x := range e.Row(int(v)) {
			s += float64(x) * float64(ri[k])
		}
		dst = append(dst, s)
	}
	return dst
}

// dotScratch is edgeDots' scratch: row i in float64, the neighbours' row
// offsets and the kernel's sums, 16 per group.
type dotScratch struct {
	ri   []float64
	offs []int32
	out  []float64
}

// MaxStatEdges bounds the edges NeighbourStats scores, so that the
// diagnostic stays cheap on large graphs (139k nodes × K = 500 would be
// 7·10⁷ cosines).
const MaxStatEdges = 1 << 18

// NeighbourStats computes NeighbourStatistics of g for embeddings e (one row
// per node) and labels (nil to skip label agreement). The in-degree
// statistics are exact; the cosine and label statistics use every edge when
// N·K ≤ MaxStatEdges, else the edges of ⌊MaxStatEdges/K⌋ evenly spaced
// nodes (a deterministic sample). Every entry of a row counts as an edge:
// a graph drawn with candidates with_replacement may hold self-loops
// (cosine 1, the node's own label, an in-edge of the node) and repeated
// neighbours, which count as often as they appear, as the walk weighs them.
func NeighbourStats(g *Graph, e Embeddings, labels []int) (NeighbourStatistics, error) {
	var st NeighbourStatistics
	if g == nil || e.N != g.N || len(e.Data) != e.N*e.D {
		return st, fmt.Errorf("sampler: neighbour stats: graph and embeddings must have the same N and N·D values")
	}
	if labels != nil && len(labels) != g.N {
		return st, fmt.Errorf("sampler: neighbour stats: %d labels for %d nodes", len(labels), g.N)
	}
	nodes := g.N
	if g.K > 0 && g.N*g.K > MaxStatEdges {
		nodes = max(1, MaxStatEdges/g.K)
	}
	// invNorm[v] is 1/‖e_v‖ (0 for a zero row), for every node an edge may reach.
	invNorm := make([]float64, g.N)
	for v := range invNorm {
		var s float64
		for _, x := range e.Row(v) {
			s += float64(x) * float64(x)
		}
		if s > 0 {
			invNorm[v] = 1 / math.Sqrt(s)
		}
	}
	var cos, agree float64
	var dots []float64
	var sc dotScratch
	for j := 0; j < nodes; j++ {
		i := j * g.N / nodes
		nb := g.Neighbours(i)
		dots = edgeDots(dots[:0], e, i, nb, &sc)
		for q, v := range nb {
			cos += dots[q] * invNorm[i] * invNorm[v]
			if labels != nil && labels[i] == labels[v] {
				agree++
			}
			st.SampledEdges++
		}
	}
	st.Edges = g.N * g.K
	st.LabelAgreement = math.NaN()
	if st.SampledEdges > 0 {
		st.MeanCosine = cos / float64(st.SampledEdges)
		if labels != nil {
			st.LabelAgreement = agree / float64(st.SampledEdges)
		}
	}
	zero := 0
	for _, d := range g.InDegrees() {
		if d == 0 {
			zero++
		}
		st.MaxInDegree = max(st.MaxInDegree, d)
	}
	st.ZeroInDegree = float64(zero) / float64(g.N)
	return st, nil
}

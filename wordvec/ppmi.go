package wordvec

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/batchsampler-go/batchsampler/data"
)

// CSR is a sparse float64 matrix in compressed sparse row form: the entries
// of row i are ColIdx[RowPtr[i]:RowPtr[i+1]] (strictly increasing) with
// values Val[RowPtr[i]:RowPtr[i+1]].
type CSR struct {
	Rows, Cols int
	RowPtr     []int // len Rows+1
	ColIdx     []int32
	Val        []float64
}

// NNZ is the number of stored entries.
func (m *CSR) NNZ() int { return len(m.Val) }

// At returns entry (i, j), 0 when it is not stored. It panics when (i, j) is
// out of range.
func (m *CSR) At(i, j int) float64 {
	if i < 0 || i >= m.Rows || j < 0 || j >= m.Cols {
		panic(fmt.Sprintf("wordvec: CSR.At(%d, %d) out of range %d×%d", i, j, m.Rows, m.Cols))
	}
	cols := m.ColIdx[m.RowPtr[i]:m.RowPtr[i+1]]
	if k, ok := slices.BinarySearch(cols, int32(j)); ok {
		return m.Val[m.RowPtr[i]+k]
	}
	return 0
}

// Dense returns m as a dense matrix (Rows × Cols float64: mind the memory).
func (m *CSR) Dense() *mat.Dense {
	d := mat.NewDense(max(m.Rows, 1), max(m.Cols, 1), nil)
	for i := 0; i < m.Rows; i++ {
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			d.Set(i, int(m.ColIdx[k]), m.Val[k])
		}
	}
	return d
}

// Transpose returns mᵀ in CSR form.
func (m *CSR) Transpose() *CSR {
	t := &CSR{Rows: m.Cols, Cols: m.Rows, RowPtr: make([]int, m.Cols+1), ColIdx: make([]int32, len(m.ColIdx)), Val: make([]float64, len(m.Val))}
	for _, j := range m.ColIdx {
		t.RowPtr[j+1]++
	}
	for j := 0; j < m.Cols; j++ {
		t.RowPtr[j+1] += t.RowPtr[j]
	}
	next := slices.Clone(t.RowPtr[:m.Cols])
	for i := 0; i < m.Rows; i++ { // rows in order, so each row of t is sorted
		for k := m.RowPtr[i]; k < m.RowPtr[i+1]; k++ {
			j := m.ColIdx[k]
			t.ColIdx[next[j]] = int32(i)
			t.Val[next[j]] = m.Val[k]
			next[j]++
		}
	}
	return t
}

// Cooccurrence counts, for a corpus of sentences given as word ids in
// [0, vocabSize), how often each word occurs within window positions of
// each other word, in both directions: for positions p < q of one sentence
// with q − p ≤ window, entries (w_p, w_q) and (w_q, w_p) each grow by 1, or
// by 1/(q − p) when distWeight is set (the harmonic weighting of GloVe). A
// word twice in one window adds to the diagonal twice. The result is
// symmetric. The unknown token data.UnkID is neither a word nor a context,
// but it keeps its position, so it does not bring words closer together.
// Sentences never share windows.
func Cooccurrence(sentences [][]int32, vocabSize, window int, distWeight bool) (*CSR, error) {
	if window < 1 {
		return nil, fmt.Errorf("wordvec: co-occurrence window %d: expected >= 1", window)
	}
	if vocabSize < 1 || vocabSize > math.MaxInt32 {
		return nil, fmt.Errorf("wordvec: vocabulary size %d: expected in [1, 2^31)", vocabSize)
	}
	// Upper triangle (i <= j) keyed by i<<32 | j; the diagonal holds twice
	// the number of (unordered) co-occurrences of a word with itself.
	tri := make(map[uint64]float64)
	for si, s := range sentences {
		for p, wp := range s {
			if wp < 0 || int(wp) >= vocabSize {
				return nil, fmt.Errorf("wordvec: sentence %d position %d: id %d outside [0, %d)", si, p, wp, vocabSize)
			}
		}
		for p, wp := range s {
			if wp == data.UnkID {
				continue
			}
			for q := p + 1; q < len(s) && q-p <= window; q++ {
				wq := s[q]
				if wq == data.UnkID {
					continue
				}
				w := 1.0
				if distWeight {
					w = 1 / float64(q-p)
				}
				i, j := min(wp, wq), max(wp, wq)
				if i == j {
					w *= 2
				}
				tri[uint64(i)<<32|uint64(j)] += w
			}
		}
	}
	n := vocabSize
	m := &CSR{Rows: n, Cols: n, RowPtr: make([]int, n+1)}
	for key := range tri {
		i, j := int(key>>32), int(key&0xffffffff)
		m.RowPtr[i+1]++
		if i != j {
			m.RowPtr[j+1]++
		}
	}
	for i := 0; i < n; i++ {
		m.RowPtr[i+1] += m.RowPtr[i]
	}
	nnz := m.RowPtr[n]
	m.ColIdx = make([]int32, nnz)
	m.Val = make([]float64, nnz)
	next := slices.Clone(m.RowPtr[:n])
	for key, v := range tri {
		i, j := int(key>>32), int(key&0xffffffff)
		m.ColIdx[next[i]], m.Val[next[i]] = int32(j), v
		next[i]++
		if i != j {
			m.ColIdx[next[j]], m.Val[next[j]] = int32(i), v
			next[j]++
		}
	}
	sortRows(m)
	return m, nil
}

// sortRows sorts the entries of every row of m by column.
func sortRows(m *CSR) {
	type ent struct {
		c int32
		v float64
	}
	var buf []ent
	for i := 0; i < m.Rows; i++ {
		lo, hi := m.RowPtr[i], m.RowPtr[i+1]
		buf = buf[:0]
		for k := lo; k < hi; k++ {
			buf = append(buf, ent{m.ColIdx[k], m.Val[k]})
		}
		slices.SortFunc(buf, func(a, b ent) int { return int(a.c) - int(b.c) })
		for k, e := range buf {
			m.ColIdx[lo+k], m.Val[lo+k] = e.c, e.v
		}
	}
}

// PPMI turns a co-occurrence count matrix C (words × contexts) into positive
// pointwise mutual information with context-distribution smoothing (Levy,
// Goldberg & Dagan, 2015):
//
//	PMI_α(w, c) = log( C(w,c) · Σ_c' C(c')^α / ( C(w) · C(c)^α ) )
//	PPMI(w, c)  = max(PMI_α(w, c), 0)
//
// where C(w) = Σ_c C(w,c) is the row sum and C(c) = Σ_w C(w,c) the column sum
// (α = 1 is plain PMI; the paper's choice is 0.75). Only positive entries are
// stored. α must lie in (0, 1]; negative counts are an error.
func PPMI(c *CSR, alpha float64) (*CSR, error) {
	if !(alpha > 0 && alpha <= 1) {
		return nil, fmt.Errorf("wordvec: PPMI smoothing alpha %v: expected in (0, 1]", alpha)
	}
	rowSum := make([]float64, c.Rows)
	colSum := make([]float64, c.Cols)
	for i := 0; i < c.Rows; i++ {
		for k := c.RowPtr[i]; k < c.RowPtr[i+1]; k++ {
			v := c.Val[k]
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("wordvec: PPMI: count (%d, %d) = %v: expected finite and >= 0", i, c.ColIdx[k], v)
			}
			rowSum[i] += v
			colSum[c.ColIdx[k]] += v
		}
	}
	colPow := make([]float64, c.Cols)
	var z float64
	for j, s := range colSum {
		if s > 0 {
			colPow[j] = math.Pow(s, alpha)
			z += colPow[j]
		}
	}
	out := &CSR{Rows: c.Rows, Cols: c.Cols, RowPtr: make([]int, c.Rows+1)}
	for i := 0; i < c.Rows; i++ {
		for k := c.RowPtr[i]; k < c.RowPtr[i+1]; k++ {
			v := c.Val[k]
			if v == 0 {
				continue
			}
			j := c.ColIdx[k]
			pmi := math.Log(v * z / (rowSum[i] * colPow[j]))
			if pmi > 0 {
				out.ColIdx = append(out.ColIdx, j)
				out.Val = append(out.Val, pmi)
			}
		}
		out.RowPtr[i+1] = len(out.Val)
	}
	return out, nil
}

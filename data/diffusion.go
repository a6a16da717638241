package data

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// This file holds the two graph views of MVGRL (Hassani & Khasahmadi 2020):
// the symmetrically normalised adjacency with self-loops and its
// personalised-PageRank diffusion, both as sparse matrices.

// SparseMatrix is a square N×N matrix in compressed sparse row form: row r
// holds the columns Col[RowPtr[r]:RowPtr[r+1]], in increasing order, with
// the values Val at the same positions. Entries not listed are zero.
type SparseMatrix struct {
	N      int
	RowPtr []int32
	Col    []int32
	Val    []float64
}

// NNZ returns the number of stored entries.
func (m SparseMatrix) NNZ() int { return len(m.Col) }

// Dense returns the matrix as a dense row-major N×N slice.
func (m SparseMatrix) Dense() []float64 {
	d := make([]float64, m.N*m.N)
	for r := 0; r < m.N; r++ {
		for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
			d[r*m.N+int(m.Col[k])] += m.Val[k]
		}
	}
	return d
}

// Validate checks sizes, column ranges and order, and that every value is
// finite.
func (m SparseMatrix) Validate() error {
	if m.N < 0 {
		return fmt.Errorf("sparse matrix: negative size %d", m.N)
	}
	if len(m.RowPtr) != m.N+1 || m.RowPtr[0] != 0 {
		return fmt.Errorf("sparse matrix: RowPtr has %d entries (want N+1 = %d, starting at 0)", len(m.RowPtr), m.N+1)
	}
	if int(m.RowPtr[m.N]) != len(m.Col) || len(m.Val) != len(m.Col) {
		return fmt.Errorf("sparse matrix: RowPtr ends at %d, %d columns, %d values", m.RowPtr[m.N], len(m.Col), len(m.Val))
	}
	for r := 0; r < m.N; r++ {
		if m.RowPtr[r+1] < m.RowPtr[r] {
			return fmt.Errorf("sparse matrix: RowPtr decreases at row %d", r)
		}
		for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
			if c := m.Col[k]; c < 0 || int(c) >= m.N || (k > m.RowPtr[r] && c <= m.Col[k-1]) {
				return fmt.Errorf("sparse matrix: row %d: column %d out of range [0, %d) or not increasing", r, c, m.N)
			}
			if v := m.Val[k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("sparse matrix: entry (%d, %d) is %v", r, m.Col[k], v)
			}
		}
	}
	return nil
}

// NormalizedAdjacency returns Â = D^-½(A+I)D^-½, where A is the 0/1
// adjacency of g (an edge listed twice counts once, a self-loop sets
// A_vv = 1, so that its diagonal entry of A+I is 2, as MVGRL's
// normalize_adj on networkx's adjacency) and D the row sums of A+I. It is
// symmetric with eigenvalues in (−1, 1].
func NormalizedAdjacency(g *Graph) (SparseMatrix, error) {
	if g == nil {
		return SparseMatrix{}, errors.New("normalized adjacency: nil graph")
	}
	if err := g.Validate(); err != nil {
		return SparseMatrix{}, fmt.Errorf("normalized adjacency: %w", err)
	}
	n := g.NumNodes
	if n > math.MaxInt32 || 2*len(g.Edges)+n > math.MaxInt32 {
		return SparseMatrix{}, fmt.Errorf("normalized adjacency: graph too large (%d nodes, %d edges)", n, len(g.Edges))
	}
	nbr := make([][]int32, n)
	for v := range nbr {
		nbr[v] = []int32{int32(v)} // the self-loop of A+I
	}
	selfLoop := make([]bool, n)
	for _, e := range g.Edges {
		if e[0] == e[1] {
			selfLoop[e[0]] = true
			continue
		}
		nbr[e[0]] = append(nbr[e[0]], e[1])
		nbr[e[1]] = append(nbr[e[1]], e[0])
	}
	deg := make([]float64, n)
	nnz := 0
	for v := range nbr {
		slices.Sort(nbr[v])
		nbr[v] = slices.Compact(nbr[v])
		nnz += len(nbr[v])
		deg[v] = float64(len(nbr[v]))
		if selfLoop[v] {
			deg[v]++
		}
	}
	// Exactly sized: the views of a dataset stay in memory.
	m := SparseMatrix{N: n, RowPtr: make([]int32, n+1), Col: make([]int32, 0, nnz), Val: make([]float64, 0, nnz)}
	for v := range nbr {
		for _, u := range nbr[v] {
			a := 1.0
			if int(u) == v && selfLoop[v] {
				a = 2
			}
			m.Col = append(m.Col, u)
			m.Val = append(m.Val, a/math.Sqrt(deg[v]*deg[u]))
		}
		m.RowPtr[v+1] = int32(len(m.Col))
	}
	return m, nil
}

// Defaults of DiffusionOptions.
const (
	// DefaultPPRAlpha is MVGRL's teleport probability α.
	DefaultPPRAlpha = 0.2
	// DefaultDiffusionEps is the default threshold ε below which diffusion
	// entries are dropped.
	DefaultDiffusionEps = 1e-4
	// DefaultExactMaxNodes is the largest graph whose diffusion is computed
	// by a dense inverse by default.
	DefaultExactMaxNodes = 256
	// DefaultSeriesTol is the default bound on the error of every entry of
	// a diffusion computed by the truncated series.
	DefaultSeriesTol = 1e-7
	// DenseMaxNodes is the largest graph above ExactMaxNodes whose
	// diffusion may still be computed by the dense inverse when the series
	// would cost more (a dense graph; see DiffusionOptions.ExactMaxNodes):
	// its n×n float64 matrices take 32 MiB each.
	DenseMaxNodes = 2048
)

// DiffusionOptions configures PPRDiffusion. Zero fields take their
// defaults.
type DiffusionOptions struct {
	// Alpha is the teleport probability α in (0, 1); default 0.2.
	Alpha float64
	// Eps drops every entry below Eps (all entries of S are positive
	// within a connected component and zero outside it). Default 1e-4;
	// a negative value keeps every entry the computation produces.
	Eps float64
	// TopK keeps at most the TopK largest entries of every row (ties broken
	// by the lower column); 0 keeps every entry above Eps. The diagonal,
	// S_vv >= α, is among them unless TopK is tiny.
	TopK int
	// ExactMaxNodes: graphs with at most this many nodes get the exact
	// diffusion from a dense Cholesky inverse (n³ work). Larger ones get
	// the truncated series (work ≈ n · nnz(Â) · T for T terms), unless
	// that is more than the inverse's n³ — a dense graph, n <= nnz(Â)·T/n
	// — and the graph has at most DenseMaxNodes nodes: those get the
	// exact inverse too. Default 256; a negative value always uses the
	// series.
	ExactMaxNodes int
	// SeriesTol bounds the error of every entry of a diffusion computed by
	// the truncated series; default 1e-7.
	SeriesTol float64
}

// withDefaults fills in the zero fields of o and checks the result.
func (o DiffusionOptions) withDefaults() (DiffusionOptions, error) {
	if o.Alpha == 0 {
		o.Alpha = DefaultPPRAlpha
	}
	if o.Eps == 0 {
		o.Eps = DefaultDiffusionEps
	}
	if o.ExactMaxNodes == 0 {
		o.ExactMaxNodes = DefaultExactMaxNodes
	}
	if o.SeriesTol == 0 {
		o.SeriesTol = DefaultSeriesTol
	}
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return o, fmt.Errorf("diffusion: alpha = %v, want in (0, 1)", o.Alpha)
	case math.IsNaN(o.Eps) || math.IsInf(o.Eps, 0):
		return o, fmt.Errorf("diffusion: eps = %v, want a finite number", o.Eps)
	case o.TopK < 0:
		return o, fmt.Errorf("diffusion: top_k = %d, want >= 0 (0: no cap)", o.TopK)
	case !(o.SeriesTol > 0 && o.SeriesTol < 1):
		return o, fmt.Errorf("diffusion: series tolerance = %v, want in (0, 1)", o.SeriesTol)
	}
	return o, nil
}

// seriesTerms is an upper bound on the number of terms the truncated
// series computes for any row: the t-th term has norm at most (1−α)^t, and
// the series stops at the first t where (1−α)^(t+1) <= tol.
func seriesTerms(alpha, tol float64) int {
	return max(1, int(math.Ceil(math.Log(tol)/math.Log(1-alpha))))
}

// useExact reports whether PPRDiffusion computes the diffusion of a with
// the dense inverse (see DiffusionOptions.ExactMaxNodes).
func useExact(a SparseMatrix, opt DiffusionOptions) bool {
	n := a.N
	switch {
	case opt.ExactMaxNodes < 0:
		return false
	case n <= opt.ExactMaxNodes:
		return true
	case n > DenseMaxNodes:
		return false
	}
	// n³ (inverse) against n · nnz(Â) · T (series), in float64: no overflow.
	return float64(n)*float64(n) <= float64(a.NNZ())*float64(seriesTerms(opt.Alpha, opt.SeriesTol))
}

// PPRDiffusion returns the personalised-PageRank diffusion of g,
// S = α(I − (1−α)Â)^-1 with Â = NormalizedAdjacency(g) (MVGRL's
// compute_ppr), sparsified as opt says. S is symmetric and positive on
// every connected component.
//
// MVGRL keeps the dense S of every graph. Here S is sparse: entries below
// opt.Eps (default 1e-4) are dropped, and with opt.TopK > 0 only the TopK
// largest of every row are kept; rows are not renormalised afterwards.
// Graphs of up to opt.ExactMaxNodes nodes (default 256: every graph of
// MUTAG and IMDB-BINARY), and dense graphs of up to DenseMaxNodes nodes on
// which the series below would cost more (COLLAB's largest), get the exact
// S from a dense Cholesky inverse of the symmetric positive definite
// I − (1−α)Â (its eigenvalues lie in [α, 2−α]). Other large graphs
// (REDDIT-BINARY's reach ~3,800 nodes, sparse) get the truncated series
// S ≈ α Σ_{t=0}^{T} ((1−α)Â)^t, computed row by row on the rows' sparse
// support: as ‖Â‖₂ <= 1, the omitted tail of a row is at most
// (1−α)·‖((1−α)Â)^T e_v‖₂ in Euclidean norm, and T is the first term where
// that bound falls below opt.SeriesTol (default 1e-7), so every entry is
// within SeriesTol of the exact one before sparsification.
//
// Each row is sparsified as soon as it is computed: besides the result,
// the exact path holds the dense n×n matrix and its inverse, the series
// path O(n) per row. The result's slices have no spare capacity beyond an
// eighth of their length (the views of a dataset stay in memory).
func PPRDiffusion(g *Graph, opt DiffusionOptions) (SparseMatrix, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return SparseMatrix{}, err
	}
	a, err := NormalizedAdjacency(g)
	if err != nil {
		return SparseMatrix{}, fmt.Errorf("diffusion: %w", err)
	}
	n := a.N
	s := SparseMatrix{N: n, RowPtr: make([]int32, n+1)}
	if opt.TopK > 0 {
		// At most TopK entries a row: rows that keep fewer leave the rest
		// unused, trimmed below.
		c := n * min(n, opt.TopK)
		s.Col, s.Val = make([]int32, 0, c), make([]float64, 0, c)
	}
	var tooMany bool
	emit := func(r int, row []entry) {
		if tooMany {
			return
		}
		for _, e := range sparsifyRow(row, opt.Eps, opt.TopK) {
			s.Col = append(s.Col, e.col)
			s.Val = append(s.Val, e.val)
		}
		if len(s.Col) > math.MaxInt32 {
			tooMany = true
			s.Col, s.Val = nil, nil
			return
		}
		s.RowPtr[r+1] = int32(len(s.Col))
	}
	if useExact(a, opt) {
		if err := exactPPR(a, opt.Alpha, emit); err != nil {
			return SparseMatrix{}, err
		}
	} else {
		seriesPPR(a, opt.Alpha, opt.SeriesTol, emit)
	}
	if tooMany {
		return SparseMatrix{}, fmt.Errorf("diffusion: more than %d entries; raise eps or set top_k", math.MaxInt32)
	}
	if nnz := len(s.Col); cap(s.Col)-nnz > nnz/8 {
		s.Col, s.Val = slices.Clone(s.Col), slices.Clone(s.Val)
	}
	return s, nil
}

// entry is one stored value of a sparse row.
type entry struct {
	col int32
	val float64
}

// exactPPR computes α(I − (1−α)Â)^-1 by a dense Cholesky inverse and hands
// its rows, in order, to emit (every nonzero entry, by column; the slice is
// reused for the next row).
func exactPPR(a SparseMatrix, alpha float64, emit func(r int, row []entry)) error {
	n := a.N
	if n == 0 {
		return nil
	}
	m := mat.NewSymDense(n, nil)
	for r := 0; r < n; r++ {
		m.SetSym(r, r, 1)
	}
	for r := 0; r < n; r++ {
		for k := a.RowPtr[r]; k < a.RowPtr[r+1]; k++ {
			if c := int(a.Col[k]); c >= r {
				m.SetSym(r, c, m.At(r, c)-(1-alpha)*a.Val[k])
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(m) {
		return fmt.Errorf("diffusion: I − (1−α)Â of a %d-node graph is not positive definite", n)
	}
	m = nil // the factor holds its own copy
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return fmt.Errorf("diffusion: inverse of a %d-node graph: %w", n, err)
	}
	row := make([]entry, 0, n)
	for r := 0; r < n; r++ {
		row = row[:0]
		for c := 0; c < n; c++ {
			if v := alpha * inv.At(r, c); v != 0 {
				row = append(row, entry{int32(c), v})
			}
		}
		emit(r, row)
	}
	return nil
}

// pprBlock is the number of source nodes seriesPPR propagates together:
// the columns of its n×pprBlock blocks.
const pprBlock = 8

// seriesPPR computes the rows of the truncated series α Σ_t ((1−α)Â)^t
// (see PPRDiffusion for the stopping rule) and hands them, in order, to
// emit (by column; the slice is reused for the next row). Â is symmetric,
// so row v is the column α Σ_t ((1−α)Â)^t e_v.
//
// The columns of pprBlock consecutive sources are propagated together, as
// an n×pprBlock block X: a term is X' = ((1−α)Â)·X, row j of X' the sum
// over row j of (1−α)Â in column order, each entry a pprBlock-wide
// multiply-add over contiguous memory, and α·X' is added to the sums as
// soon as a row of X' is made. Only the rows within t hops of the block's
// sources are computed at term t (the others are zero). Each column stops
// at its own term, by the rule of PPRDiffusion, and its entries do not
// depend on the other columns of its block: the exact zeros of rows that
// no source of the column has reached leave its sums unchanged.
func seriesPPR(a SparseMatrix, alpha, tol float64, emit func(r int, row []entry)) {
	n := a.N
	const B = pprBlock
	w := make([]float64, len(a.Val)) // (1−α)Â
	for k, v := range a.Val {
		w[k] = (1 - alpha) * v
	}
	x := make([]float64, n*B)    // ((1−α)Â)^t e_v
	next := make([]float64, n*B) // the following term
	acc := make([]float64, n*B)  // α Σ of the terms so far
	reached := make([]bool, n)   // rows that may be nonzero in x
	var rows, frontier, grown []int32
	var row []entry
	for v0 := 0; v0 < n; v0 += B {
		nb := min(B, n-v0)
		rows, frontier = rows[:0], frontier[:0]
		// am[b] is α while column b is summed, then 0.
		var am [B]float64
		for b := 0; b < nb; b++ {
			x[(v0+b)*B+b] = 1
			acc[(v0+b)*B+b] = alpha
			am[b] = alpha
			reached[v0+b] = true
			rows = append(rows, int32(v0+b))
			frontier = append(frontier, int32(v0+b))
		}
		// The first term, e_v, has norm 1.
		left := nb
		for b := 0; b < nb; b++ {
			if 1-alpha <= tol {
				am[b] = 0
				left--
			}
		}
		for left > 0 {
			// The rows one hop further become reachable.
			grown = grown[:0]
			for _, i := range frontier {
				for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
					if j := a.Col[k]; !reached[j] {
						reached[j] = true
						grown = append(grown, j)
					}
				}
			}
			if len(grown) > 0 {
				// In index order (a scan: cheaper than sorting).
				rows = rows[:0]
				for j, r := range reached {
					if r {
						rows = append(rows, int32(j))
					}
				}
			}
			frontier, grown = grown, frontier
			var norm [B]float64
			pprTerm(rows, a, w, x, next, acc, &am, &norm)
			x, next = next, x
			for b := 0; b < nb; b++ {
				if am[b] != 0 && (1-alpha)*math.Sqrt(norm[b]) <= tol {
					am[b] = 0
					left--
				}
			}
		}
		for b := 0; b < nb; b++ {
			row = row[:0]
			for _, j := range rows {
				if v := acc[int(j)*B+b]; v != 0 {
					row = append(row, entry{j, v})
				}
			}
			emit(v0+b, row)
		}
		for _, j := range rows {
			clear(x[int(j)*B : int(j+1)*B])
			clear(next[int(j)*B : int(j+1)*B])
			clear(acc[int(j)*B : int(j+1)*B])
			reached[j] = false
		}
	}
}

// pprTerm computes the rows of a term of seriesPPR: for every row j of
// rows, next[j] = Σ_k w[k]·x[a.Col[k]] over row j of a (k in order, a
// multiply and then an add per entry and lane), acc[j] += am·next[j] and
// norm += next[j]², each a pprBlock-lane row. It checks that rows and a's
// columns lie inside x, next and acc, then runs pprTermAVX512 where it can
// (the same operations, the same bits).
func pprTerm(rows []int32, a SparseMatrix, w, x, next, acc []float64, am, norm *[pprBlock]float64) {
	const B = pprBlock
	if len(rows) == 0 {
		return
	}
	if len(x) < a.N*B || len(next) < a.N*B || len(acc) < a.N*B || len(w) < len(a.Col) || len(a.RowPtr) != a.N+1 {
		panic("data: pprTerm: buffers shorter than the matrix")
	}
	for _, j := range rows {
		if j < 0 || int(j) >= a.N {
			panic("data: pprTerm: row out of range")
		}
	}
	if havePPRKernel {
		// The columns of a are in [0, N) (SparseMatrix.Validate; built by
		// NormalizedAdjacency).
		pprTermAVX512(&rows[0], len(rows), &a.RowPtr[0], &a.Col[0], &w[0], &x[0], &next[0], &acc[0], &am[0], &norm[0])
		return
	}
	pprTermGo(rows, a, w, x, next, acc, am, norm)
}

// pprTermGo is pprTerm in Go.
func pprTermGo(rows []int32, a SparseMatrix, w, x, next, acc []float64, am, norm *[pprBlock]float64) {
	const B = pprBlock
	for _, j := range rows {
		var s [B]float64
		for k := a.RowPtr[j]; k < a.RowPtr[j+1]; k++ {
			wk, xc := w[k], (*[B]float64)(x[int(a.Col[k])*B:])
			for b := range B {
				s[b] += wk * xc[b]
			}
		}
		*(*[B]float64)(next[int(j)*B:]) = s
		aj := (*[B]float64)(acc[int(j)*B:])
		for b := range B {
			aj[b] += am[b] * s[b]
			norm[b] += s[b] * s[b]
		}
	}
}

// sparsifyRow returns the entries of row (ordered by column) that reach
// eps and, with topK > 0, the topK largest of them (ties: lower column
// first), ordered by column. The result may share row's memory (row's order
// is then changed); it is valid until row is reused.
func sparsifyRow(row []entry, eps float64, topK int) []entry {
	kept := row[:0]
	for _, e := range row {
		if e.val >= eps {
			kept = append(kept, e)
		}
	}
	if topK > 0 && len(kept) > topK {
		slices.SortStableFunc(kept, func(p, q entry) int {
			if c := cmp.Compare(q.val, p.val); c != 0 {
				return c
			}
			return cmp.Compare(p.col, q.col)
		})
		kept = kept[:topK]
		slices.SortFunc(kept, func(p, q entry) int { return cmp.Compare(p.col, q.col) })
	}
	return kept
}

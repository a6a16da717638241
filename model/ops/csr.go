package ops

import (
	"fmt"
	"sync"
)

// CSR is a fixed sparse pattern matrix in compressed sparse row form. Every
// stored entry has the value 1; an index listed twice in a row counts twice.
// Row r holds the column indices Col[RowPtr[r]:RowPtr[r+1]].
//
// A CSR must not be modified after it has been passed to NewCSR: it caches
// its transpose and a hash of its contents.
type CSR struct {
	Rows, Cols int
	RowPtr     []int32 // len Rows+1, RowPtr[0] = 0, non-decreasing
	Col        []int32 // len RowPtr[Rows], each in [0, Cols)

	tOnce sync.Once
	t     *CSR
	hOnce sync.Once
	h     uint64
	rOnce sync.Once
	rOK   bool
}

// inRange reports (once) whether the pattern's indices are in range, so
// that the row kernels may use raw pointers.
func (m *CSR) inRange() bool {
	m.rOnce.Do(func() { m.rOK = checkPattern(m.Rows, m.Cols, m.RowPtr, m.Col) == nil })
	return m.rOK
}

// NewCSR validates the arrays and returns the matrix. The slices are used,
// not copied.
func NewCSR(rows, cols int, rowPtr, col []int32) (*CSR, error) {
	if err := checkPattern(rows, cols, rowPtr, col); err != nil {
		return nil, err
	}
	return &CSR{Rows: rows, Cols: cols, RowPtr: rowPtr, Col: col}, nil
}

// NNZ returns the number of stored entries.
func (m *CSR) NNZ() int { return len(m.Col) }

// T returns the transpose (computed once and cached). Within each row of
// the transpose the column indices are in increasing order of the original
// row, so products with it are deterministic.
func (m *CSR) T() *CSR {
	m.tOnce.Do(func() {
		rowPtr, col := transposePattern(m.Rows, m.Cols, m.RowPtr, m.Col, nil)
		m.t = &CSR{Rows: m.Cols, Cols: m.Rows, RowPtr: rowPtr, Col: col}
		m.t.tOnce.Do(func() {}) // the transpose of the transpose is m itself
		m.t.t = m
	})
	return m.t
}

// transposePattern returns the row pointers and column indices of the
// transpose of the rows×cols pattern (rowPtr, col): within each row of the
// transpose the entries are in increasing order of the original row. If
// move is not nil it is called once per entry with the entry's index in
// the transpose and in the original, for the caller to carry its values.
func transposePattern(rows, cols int, rowPtr, col []int32, move func(dst, src int32)) (tRowPtr, tCol []int32) {
	tRowPtr = make([]int32, cols+1)
	for _, c := range col {
		tRowPtr[c+1]++
	}
	for i := 0; i < cols; i++ {
		tRowPtr[i+1] += tRowPtr[i]
	}
	next := make([]int32, cols)
	copy(next, tRowPtr[:cols])
	tCol = make([]int32, len(col))
	for r := 0; r < rows; r++ {
		for k := rowPtr[r]; k < rowPtr[r+1]; k++ {
			c := col[k]
			tCol[next[c]] = int32(r)
			if move != nil {
				move(next[c], k)
			}
			next[c]++
		}
	}
	return tRowPtr, tCol
}

// Hash returns a 64-bit hash of the size and the arrays (hashWords),
// computed once. Ops include it in their WriteHash so that products with
// different matrices are not merged (and the graph compiler checks equality
// on a hash match: see third_party/gorgonia).
func (m *CSR) Hash() uint64 {
	m.hOnce.Do(func() {
		h := hashWords(hashSeed, uint64(m.Rows), uint64(m.Cols))
		h = hashInt32s(h, m.RowPtr)
		m.h = hashInt32s(h, m.Col)
	})
	return m.h
}

// hashSeed starts every matrix hash.
const hashSeed = 0xcbf29ce484222325

// hashWords folds 64-bit words into h: xor, multiply by an odd constant and
// fold the high half down (a multiply–xorshift mix, deterministic across
// runs and machines). It replaced FNV-1a, whose byte-at-a-time loop took 11%
// of a GraphCL step on COLLAB.
func hashWords(h uint64, words ...uint64) uint64 {
	for _, w := range words {
		h ^= w
		h *= 0x9e3779b97f4a7c15
		h ^= h >> 32
	}
	return h
}

// hashInt32s folds the length and the values of a, two to a word.
func hashInt32s(h uint64, a []int32) uint64 {
	h = hashWords(h, uint64(len(a)))
	i := 0
	for ; i+1 < len(a); i += 2 {
		h ^= uint64(uint32(a[i])) | uint64(uint32(a[i+1]))<<32
		h *= 0x9e3779b97f4a7c15
		h ^= h >> 32
	}
	if i < len(a) {
		h = hashWords(h, uint64(uint32(a[i])))
	}
	return h
}

// checkPattern validates a sparse pattern (NewCSR's checks): sizes, rowPtr
// non-decreasing from 0 to len(col), every column index in [0, cols).
func checkPattern(rows, cols int, rowPtr, col []int32) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("ops: NewCSR: negative size %d×%d", rows, cols)
	}
	if len(rowPtr) != rows+1 {
		return fmt.Errorf("ops: NewCSR: len(RowPtr) = %d, want rows+1 = %d", len(rowPtr), rows+1)
	}
	if rowPtr[0] != 0 {
		return fmt.Errorf("ops: NewCSR: RowPtr[0] = %d, want 0", rowPtr[0])
	}
	for r := 0; r < rows; r++ {
		if rowPtr[r+1] < rowPtr[r] {
			return fmt.Errorf("ops: NewCSR: RowPtr decreases at row %d (%d → %d)", r, rowPtr[r], rowPtr[r+1])
		}
	}
	if int(rowPtr[rows]) != len(col) {
		return fmt.Errorf("ops: NewCSR: RowPtr[%d] = %d but len(Col) = %d", rows, rowPtr[rows], len(col))
	}
	for k, c := range col {
		if c < 0 || int(c) >= cols {
			return fmt.Errorf("ops: NewCSR: Col[%d] = %d out of range [0, %d)", k, c, cols)
		}
	}
	return nil
}

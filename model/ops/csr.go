package ops

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
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
}

// NewCSR validates the arrays and returns the matrix. The slices are used,
// not copied.
func NewCSR(rows, cols int, rowPtr, col []int32) (*CSR, error) {
	if rows < 0 || cols < 0 {
		return nil, fmt.Errorf("ops: NewCSR: negative size %d×%d", rows, cols)
	}
	if len(rowPtr) != rows+1 {
		return nil, fmt.Errorf("ops: NewCSR: len(RowPtr) = %d, want rows+1 = %d", len(rowPtr), rows+1)
	}
	if rowPtr[0] != 0 {
		return nil, fmt.Errorf("ops: NewCSR: RowPtr[0] = %d, want 0", rowPtr[0])
	}
	for r := 0; r < rows; r++ {
		if rowPtr[r+1] < rowPtr[r] {
			return nil, fmt.Errorf("ops: NewCSR: RowPtr decreases at row %d (%d → %d)", r, rowPtr[r], rowPtr[r+1])
		}
	}
	if int(rowPtr[rows]) != len(col) {
		return nil, fmt.Errorf("ops: NewCSR: RowPtr[%d] = %d but len(Col) = %d", rows, rowPtr[rows], len(col))
	}
	for k, c := range col {
		if c < 0 || int(c) >= cols {
			return nil, fmt.Errorf("ops: NewCSR: Col[%d] = %d out of range [0, %d)", k, c, cols)
		}
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
		rowPtr := make([]int32, m.Cols+1)
		for _, c := range m.Col {
			rowPtr[c+1]++
		}
		for i := 0; i < m.Cols; i++ {
			rowPtr[i+1] += rowPtr[i]
		}
		next := make([]int32, m.Cols)
		copy(next, rowPtr[:m.Cols])
		col := make([]int32, len(m.Col))
		for r := 0; r < m.Rows; r++ {
			for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
				c := m.Col[k]
				col[next[c]] = int32(r)
				next[c]++
			}
		}
		m.t = &CSR{Rows: m.Cols, Cols: m.Rows, RowPtr: rowPtr, Col: col}
		m.t.tOnce.Do(func() {}) // the transpose of the transpose is m itself
		m.t.t = m
	})
	return m.t
}

// Hash returns a 64-bit FNV-1a hash of the size and the arrays, computed
// once. Ops include it in their WriteHash so that products with different
// matrices are never merged.
func (m *CSR) Hash() uint64 {
	m.hOnce.Do(func() {
		h := fnv.New64a()
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], uint64(m.Rows))
		h.Write(buf[:])
		binary.LittleEndian.PutUint64(buf[:], uint64(m.Cols))
		h.Write(buf[:])
		b := make([]byte, 0, 4*1024)
		for _, arr := range [][]int32{m.RowPtr, m.Col} {
			for i, v := range arr {
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
				if len(b) == cap(b) || i == len(arr)-1 {
					h.Write(b)
					b = b[:0]
				}
			}
		}
		m.h = h.Sum64()
	})
	return m.h
}

package ops

import (
	"fmt"
	"math"
)

// WeightedBlock is one square block of a block-diagonal matrix: N rows and
// columns, row r holding the columns Col[RowPtr[r]:RowPtr[r+1]], each in
// [0, N), with the values Val at the same positions (a graph's propagation
// matrix over its own nodes).
type WeightedBlock struct {
	N      int
	RowPtr []int32
	Col    []int32
	Val    []float64
}

// BlockDiagWeighted returns the block-diagonal matrix of blocks, in order
// (block b's rows and columns follow those of blocks 0..b−1), with what
// Prepare would compute except the hashes already in place: its transpose,
// assembled block by block (the transpose of a block-diagonal matrix is
// the block-diagonal matrix of the blocks' transposes, with the same
// entry order as T's), and the float32 values of both. The arrays are
// those NewWeightedCSR and T give for the assembled matrix, bit for bit,
// in one pass over the entries and one over each block's transpose
// instead of T's passes over the whole matrix. Each block is checked as
// NewWeightedCSR checks a matrix; errors name the block.
func BlockDiagWeighted(blocks []WeightedBlock) (*WeightedCSR, error) {
	n, nnz := 0, 0
	for b, blk := range blocks {
		if blk.N < 0 || len(blk.RowPtr) != blk.N+1 || blk.RowPtr[0] != 0 || int(blk.RowPtr[blk.N]) != len(blk.Col) || len(blk.Val) != len(blk.Col) {
			return nil, fmt.Errorf("ops: BlockDiagWeighted: block %d: %d rows, %d row pointers from %v, %d columns, %d values", b, blk.N, len(blk.RowPtr), blk.RowPtr[:min(len(blk.RowPtr), 1)], len(blk.Col), len(blk.Val))
		}
		n += blk.N
		nnz += len(blk.Col)
		if n > math.MaxInt32 || nnz > math.MaxInt32 {
			return nil, fmt.Errorf("ops: BlockDiagWeighted: more than %d rows or entries", math.MaxInt32)
		}
	}
	m := &WeightedCSR{Rows: n, Cols: n, RowPtr: make([]int32, n+1), Col: make([]int32, nnz), Val: make([]float64, nnz), v32: make([]float32, nnz)}
	t := &WeightedCSR{Rows: n, Cols: n, RowPtr: make([]int32, n+1), Col: make([]int32, nnz), Val: make([]float64, nnz), v32: make([]float32, nnz)}
	var next []int32 // a block's next free position in each row of the transpose
	r0, e0 := 0, 0   // the block's first row and first entry
	for b, blk := range blocks {
		bn := blk.N
		rowPtr, col, val, v32 := m.RowPtr[r0+1:r0+bn+1], m.Col[e0:e0+len(blk.Col)], m.Val[e0:e0+len(blk.Col)], m.v32[e0:e0+len(blk.Col)]
		// The transpose's row pointers count the entries of each column
		// first (at tp[c+1]), then add up.
		tp := t.RowPtr[r0 : r0+bn+1]
		for r := range bn {
			lo, hi := blk.RowPtr[r], blk.RowPtr[r+1]
			if hi < lo || int(hi) > len(blk.Col) {
				return nil, fmt.Errorf("ops: BlockDiagWeighted: block %d: RowPtr[%d:%d] = %d, %d: decreasing or past the %d entries", b, r, r+2, lo, hi, len(blk.Col))
			}
			rowPtr[r] = int32(e0) + hi
			for k := lo; k < hi; k++ {
				c, v := blk.Col[k], blk.Val[k]
				if c < 0 || int(c) >= bn {
					return nil, fmt.Errorf("ops: BlockDiagWeighted: block %d: Col[%d] = %d out of range [0, %d)", b, k, c, bn)
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("ops: BlockDiagWeighted: block %d: Val[%d] is %v", b, k, v)
				}
				col[k] = int32(r0) + c
				val[k] = v
				v32[k] = float32(v)
				tp[c+1]++
			}
		}
		tp[0] = int32(e0)
		for c := range bn {
			tp[c+1] += tp[c]
		}
		if cap(next) < bn {
			next = make([]int32, bn)
		}
		next = next[:bn]
		copy(next, tp[:bn])
		for r := range bn {
			for k := blk.RowPtr[r]; k < blk.RowPtr[r+1]; k++ {
				c := blk.Col[k]
				p := next[c]
				t.Col[p], t.Val[p], t.v32[p] = int32(r0+r), val[k], v32[k]
				next[c]++
			}
		}
		r0 += bn
		e0 += len(blk.Col)
	}
	for _, a := range []*WeightedCSR{m, t} {
		a.v32Once.Do(func() {})
		a.rOnce.Do(func() { a.rOK = true })
	}
	m.tOnce.Do(func() { m.t = t })
	t.tOnce.Do(func() { t.t = m })
	return m, nil
}

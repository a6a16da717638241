// Package gemm is the float32 matrix-multiply kernel shared by the model
// operators (model/ops) and the sampler's graph builders.
//
// Sgemm has BLAS semantics on row-major storage. The default build is pure
// Go and cgo-free.
package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, where op(X) is X or Xᵀ as
// transA/transB say, C is m×n, op(A) is m×k and op(B) is k×n. All matrices
// are row-major; lda, ldb and ldc are the row strides of A, B and C as
// stored (A is k×m when transA). Sgemm runs on the calling goroutine;
// callers parallelise over independent products.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	ar, ac, br, bc := m, k, k, n
	if transA {
		ta, ar, ac = blas.Trans, k, m
	}
	if transB {
		tb, br, bc = blas.Trans, n, k
	}
	blas32.Gemm(ta, tb, alpha,
		blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

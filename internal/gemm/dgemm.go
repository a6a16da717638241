package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Dgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float64
// matrices, with Sgemm's arguments (op(A) m×k, op(B) k×n, C m×n; transA
// and transB transpose A and B as stored): it is gonum's blas64.Gemm,
// called with the stored shapes, so its results are gonum's to the bit.
// Like gonum it panics on inconsistent arguments.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	ta, tb, ar, ac, br, bc := gonumShapes(transA, transB, m, n, k)
	blas64.Gemm(ta, tb, alpha,
		blas64.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas64.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

// gonumShapes turns Sgemm's arguments into gonum's: the transpose flags and
// the stored shapes of A (ar×ac) and B (br×bc) of op(A)·op(B), op(A) m×k
// and op(B) k×n.
func gonumShapes(transA, transB bool, m, n, k int) (ta, tb blas.Transpose, ar, ac, br, bc int) {
	ta, tb = blas.NoTrans, blas.NoTrans
	ar, ac, br, bc = m, k, k, n
	if transA {
		ta, ar, ac = blas.Trans, k, m
	}
	if transB {
		tb, br, bc = blas.Trans, n, k
	}
	return ta, tb, ar, ac, br, bc
}

//go:build openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int num_threads);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

func init() {
	C.openblas_set_num_threads(1)
	G.Use(netlib.Implementation{})
}

// Sgemm calls cblas_sgemm in row-major layout: C = alpha·op(A)·op(B) +
// beta·C with the argument conventions of internal/gemm.Sgemm. It panics on
// inconsistent sizes, strides or slice lengths, as gonum's BLAS does.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	netlib.Implementation{}.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

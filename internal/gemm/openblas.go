//go:build openblas && cgo

package gemm

import "github.com/batchsampler-go/batchsampler/internal/gemm/openblas"

// sgemm is the implementation behind Sgemm in the openblas build: OpenBLAS's
// cblas_sgemm on one OpenBLAS thread (see package internal/gemm/openblas).
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmNoDot is the implementation behind SgemmPacked: in the openblas
// build, OpenBLAS (which has no dot path to avoid).
func sgemmNoDot(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Backend names the implementation behind Sgemm: "openblas" in this build
// (openblas build tag with cgo); "avx2" or "go" for the native micro-kernels
// otherwise.
func Backend() string { return "openblas" }

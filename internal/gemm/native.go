//go:build !openblas || !cgo

package gemm

// sgemm is the implementation behind Sgemm: the native blocked GEMM.
func sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmNative(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmNoDot is the implementation behind SgemmPacked: the native blocked
// GEMM without the dot path.
func sgemmNoDot(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmNativeWith(false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Backend names the implementation behind Sgemm: "avx512" or "avx2" for the
// assembly micro-kernels (amd64, chosen from the CPU's features), "go" for
// the plain Go micro-kernel (purego build tag, other architectures, or an
// older CPU), "openblas" with the openblas build tag.
func Backend() string { return kernels().name }

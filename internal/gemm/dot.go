package gemm

// The dot path, for C = alpha·A·Bᵀ + beta·C with few rows: the weight
// gradient of a convolution, dW = dY·colᵀ, has m = output channels (16-64)
// and k = pixels × images (thousands). The packed path would have to
// transpose all of B (n×k) to use each of its elements only m times; the dot
// path instead reads rows of A and B in place and computes each 4×4 tile of
// C as 16 vector dot products (dot4x4AVX512).
const (
	dotMaxM   = 64   // at most this many rows of C
	dotMinK   = 128  // at least this long dot products
	kcDotMax  = 1024 // k block: an m×kcDot block of A stays in L2
	dotRowBlk = 4    // tile of the dot kernel is dotRowBlk×dotRowBlk
)

// useDot reports whether the product takes the dot path. The choice depends
// on the shape of the whole product; SgemmParallel makes it once and hands
// it to every block.
func useDot(transA, transB bool, m, n, k int) bool {
	return haveDot && level == levelAVX512 && !transA && transB &&
		m <= dotMaxM && k >= dotMinK && m >= dotRowBlk && n >= dotRowBlk
}

// sgemmDot computes C = alpha·A·Bᵀ + beta·C (A m×k, B n×k, both row-major)
// for m, n, k > 0 and alpha != 0: 4×4 tiles with the dot kernel, and the
// leftover rows (m mod 4) and columns (n mod 4) with the packed path.
func sgemmDot(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	m4, n4 := m&^(dotRowBlk-1), n&^(dotRowBlk-1)
	dotKBlocks(k, beta, func(p0, kb int, bet float32) {
		// The 4 rows of B of one column block stay in L1 while the rows of
		// A stream past them.
		for j := 0; j < n4; j += dotRowBlk {
			for i := 0; i < m4; i += dotRowBlk {
				dotKernel(kb, a[i*lda+p0:], lda, b[j*ldb+p0:], ldb, c[i*ldc+j:], ldc, alpha, bet)
			}
		}
	})
	if m4 < m {
		sgemmPacked(false, true, m-m4, n, k, alpha, a[m4*lda:], lda, b, ldb, beta, c[m4*ldc:], ldc)
	}
	if n4 < n && m4 > 0 {
		sgemmPacked(false, true, m4, n-n4, k, alpha, a, lda, b[n4*ldb:], ldb, beta, c[n4:], ldc)
	}
}

// dotKBlocks calls f for each k block of the dot path in order: k split into
// blocks of at most about kcDotMax, multiples of 16 but the last, and the
// beta of each block (the caller's for the first, then 1).
func dotKBlocks(k int, beta float32, f func(p0, kb int, bet float32)) {
	nblk := (k + kcDotMax - 1) / kcDotMax
	kc := roundUp((k+nblk-1)/nblk, 16)
	for p0 := 0; p0 < k; p0 += kc {
		bet := beta
		if p0 > 0 {
			bet = 1
		}
		f(p0, min(kc, k-p0), bet)
	}
}

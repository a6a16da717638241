// Package gemm is the float32 matrix-multiply kernel shared by the model
// operators (model/ops) and the sampler's graph builders, and the float64
// products of the losses (package loss).
//
// Sgemm has BLAS semantics on row-major storage: C = alpha·op(A)·op(B) +
// beta·C. The default build is pure Go plus Go assembly and cgo-free:
//
//   - It is a Goto/BLIS-style blocked GEMM (driver.go): op(B) is packed into
//     k×16 column panels and op(A) into k×mr row panels (all four transpose
//     combinations are handled by the packing, so the micro-kernel sees one
//     layout), with kc, mc and nc blocking for the caches.
//   - On amd64 the micro-kernel is Go assembly (kernel_amd64.s), chosen from
//     the CPU's features with golang.org/x/sys/cpu: 16×16 tiles with
//     AVX-512, else 6×16 tiles with AVX2+FMA.
//   - Shortcuts for thin products (AVX-512): an untransposed B used by at
//     most 4 row panels is read in place instead of packed; full panels of
//     A are read in place (rows of an untransposed A, steps of a
//     transposed one) when every column panel is full, and with k <= 64 an
//     untransposed B as well; A·Bᵀ with at most 64 rows (a weight gradient
//     dY·colᵀ) is computed as 4×4 blocks of dot products along the
//     contiguous rows of A and B, without packing (dot.go). Each element
//     keeps the FMA chain of the packed path.
//   - Products whose B is not stored as a matrix: SgemmIndirect and
//     SgemmDotIndirect read B's rows through a table of offsets (the
//     implicit GEMM of a stride-1 convolution, indirect.go).
//   - SgemmAxpyNN reproduces gonum's blas32.Gemm bit for bit, 16 lanes at
//     a time (axpy.go).
//   - Elsewhere (other architectures, the purego build tag, or an amd64
//     CPU without AVX2/FMA) Sgemm is gonum's pure-Go BLAS.
//   - With the openblas build tag (cgo, Debian's libopenblas-dev) Sgemm calls
//     OpenBLAS's cblas_sgemm on one OpenBLAS thread instead, and Gorgonia's
//     own BLAS calls are routed to OpenBLAS too (package gemm/openblas).
//
// DgemmNT and DsyrkUpper (dot64.go) are the float64 A·Bᵀ and A·Aᵀ of the
// contrastive losses: gonum's Dgemm and Dsyrk to the last bit, in AVX-512
// registers.
//
// Backend reports which of these runs. Sgemm runs on the calling goroutine;
// SgemmParallel splits one large product over several goroutines with
// results bit-identical to Sgemm's; SgemmPacked never takes the dot path,
// so that an element's bits do not depend on the shape of the product.
//
// Why written by hand: gonum's pure-Go SGEMM runs at 10-15 GFLOP/s on the
// machines this was measured on and OpenBLAS needs cgo; no BLAS interface
// reads B through a table of row offsets (the implicit GEMM of stride-1
// convolutions); and the recorded results depend on gonum's order of sums,
// which SgemmAxpyNN, DgemmNT and DsyrkUpper keep bit for bit while running
// 8 or 16 lanes at a time. docs/dependencies.md lists every hand-written
// part of the module and why.
package gemm

import "fmt"

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, where op(X) is X or Xᵀ as
// transA/transB say, C is m×n, op(A) is m×k and op(B) is k×n. All matrices
// are row-major; lda, ldb and ldc are the row strides of A, B and C as
// stored (A is stored k×m when transA, B is stored n×k when transB).
//
// As in BLAS, C is not read when beta == 0 (it may hold NaN), and A and B
// are not read when alpha == 0 or k == 0. Sgemm runs on the calling
// goroutine and, once warm, does not allocate (the go backend, gonum's BLAS,
// allocates and parallelises large products internally). Like gonum's BLAS
// it panics on inconsistent arguments (negative sizes, a stride smaller than
// the row width, a slice too short), which are programming errors, not bad
// data.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmPacked is Sgemm that always takes the packed micro-kernel path,
// never the dot path Sgemm takes for thin A·Bᵀ products with long rows
// (AVX-512, see dot.go). Each element of C is then computed by the same
// FMA chain over k (split into blocks that depend on k alone; one block for
// k ≤ 384) wherever it lies in C: a row's results do not depend on m, n or
// on the other rows, and SgemmPacked on a block of rows or columns gives
// the bits of the full product. The sampler's graph builders score blocks
// of up to 64 nodes against up to 2048 candidates with it; for those
// shapes (n ≫ m, k ≈ 128) the packed path is also the faster one. With
// the go backend it is gonum's Sgemm; with openblas, OpenBLAS's.
func SgemmPacked(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmNoDot(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// checkArgs panics with a message naming the offending argument when the
// sizes, strides or slice lengths are inconsistent.
func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative size m=%d n=%d k=%d", m, n, k))
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	checkMatrix("A", ar, ac, a, lda)
	checkMatrix("B", br, bc, b, ldb)
	checkMatrix("C", m, n, c, ldc)
}

// checkMatrix panics unless x can hold a rows×cols row-major matrix with row
// stride ld.
func checkMatrix(name string, rows, cols int, x []float32, ld int) {
	if ld < max(1, cols) {
		panic(fmt.Sprintf("gemm: ld%s=%d is smaller than the %d columns of %s as stored", lowerName(name), ld, cols, name))
	}
	if rows == 0 || cols == 0 {
		return
	}
	if need := (rows-1)*ld + cols; len(x) < need {
		panic(fmt.Sprintf("gemm: len(%s)=%d is too short for %d×%d with stride %d (need %d)", lowerName(name), len(x), rows, cols, ld, need))
	}
}

func lowerName(name string) string {
	switch name {
	case "A":
		return "a"
	case "B":
		return "b"
	}
	return "c"
}

// scaleC sets C = beta·C for an m×n block without reading C when beta == 0.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	switch beta {
	case 1:
		return
	case 0:
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
	default:
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

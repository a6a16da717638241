//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// bestLevel is the fastest kernel set this CPU supports: AVX-512 F+VL (16×16
// tiles), else AVX2+FMA (6×16 tiles), else gonum's pure-Go BLAS. golang.org/x/sys/cpu
// also checks that the OS saves the vector registers.
var bestLevel = func() int {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return levelAVX512
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return levelAVX2
	}
	return levelGo
}()

var kernelSets = []kernelSet{
	levelGo:     {name: "go", mr: mr6, nr: nr16},
	levelAVX2:   {name: "avx2", mr: mr6, nr: nr16, kernel: kernelAVX2},
	levelAVX512: {name: "avx512", mr: 16, nr: 16, kernel: kernelAVX512, strided: kernelAVX512Strided, directA: kernelAVX512DirectA, stridedA: kernelAVX512StridedA},
}

// kern6x16AVX2 and kern16x16AVX512 are the micro-kernels in kernel_amd64.s;
// see microKernel for their contract (rows is 1..6, resp. 1..16).
//
//go:noescape
func kern6x16AVX2(k int, a, b, c *float32, ldc, rows int, alpha, beta float32)

//go:noescape
func kern16x16AVX512(k int, a, b *float32, ldb int, offs *int32, lda, astep int, c *float32, ldc, rows int, alpha, beta float32)

func kernelAVX2(k int, a, b, c []float32, ldc, rows int, alpha, beta float32) {
	_ = a[k*6-1]
	_ = b[k*16-1]
	_ = c[(rows-1)*ldc+15]
	kern6x16AVX2(k, &a[0], &b[0], &c[0], ldc, rows, alpha, beta)
}

func kernelAVX512(k int, a, b, c []float32, ldc, rows int, alpha, beta float32) {
	_ = a[k*16-1]
	_ = b[k*16-1]
	_ = c[(rows-1)*ldc+15]
	kern16x16AVX512(k, &a[0], &b[0], 16, nil, 0, 0, &c[0], ldc, rows, alpha, beta)
}

// kernelAVX512DirectA is kernelAVX512 reading 16 rows of A in place (row r
// at a[r*lda]) and B with row stride ldb (16 for a packed panel).
func kernelAVX512DirectA(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	_ = a[15*lda+k-1]
	_ = b[(k-1)*ldb+15]
	_ = c[15*ldc+15]
	kern16x16AVX512(k, &a[0], &b[0], ldb, nil, lda, 0, &c[0], ldc, 16, alpha, beta)
}

// kernelAVX512StridedA is kernelAVX512 reading a transposed A in place —
// step l's 16 values at a[l*astep:] — and B with row stride ldb.
func kernelAVX512StridedA(k int, a []float32, astep int, b []float32, ldb int, c []float32, ldc, rows int, alpha, beta float32) {
	_ = a[(k-1)*astep+15]
	_ = b[(k-1)*ldb+15]
	_ = c[(rows-1)*ldc+15]
	kern16x16AVX512(k, &a[0], &b[0], ldb, nil, 0, astep, &c[0], ldc, rows, alpha, beta)
}

// kernelAVX512Strided is kernelAVX512 reading B in place: row l of the
// 16-column panel at b[l*ldb:].
func kernelAVX512Strided(k int, a, b []float32, ldb int, c []float32, ldc, rows int, alpha, beta float32) {
	_ = a[k*16-1]
	_ = b[(k-1)*ldb+15]
	_ = c[(rows-1)*ldc+15]
	kern16x16AVX512(k, &a[0], &b[0], ldb, nil, 0, 0, &c[0], ldc, rows, alpha, beta)
}

// haveIndirect reports whether kernIndirect exists (amd64).
const haveIndirect = true

// kernIndirect is the AVX-512 micro-kernel (alpha 1) reading row l of B at
// b[offs[l]], l < k; SgemmIndirect has checked the bounds.
func kernIndirect(k int, a, b []float32, offs []int32, c []float32, ldc, rows int, beta float32) {
	kern16x16AVX512(k, &a[0], &b[0], 0, &offs[0], 0, 0, &c[0], ldc, rows, 1, beta)
}

// dot4x4AVX512 (kernel_amd64.s) computes the 4×4 tile C = alpha·A·Bᵀ +
// beta·C from 4 rows of A and 4 rows of B of length k, read in place; C is
// not read when beta == 0.
//
//go:noescape
func dot4x4AVX512(k int, a *float32, lda int, b *float32, ldb int, boffs, seg *int32, c *float32, ldc int, alpha, beta float32)

// haveDot reports whether dotKernel exists (the AVX-512 level).
const haveDot = true

func dotKernel(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	_ = a[3*lda+k-1]
	_ = b[3*ldb+k-1]
	_ = c[3*ldc+3]
	dot4x4AVX512(k, &a[0], lda, &b[0], ldb, nil, nil, &c[0], ldc, alpha, beta)
}

// dotIndirect is dotKernel (alpha 1) for an indirect B: B[j][16t+i] =
// b[boffs[j]+seg[t]+i], k a multiple of 16; SgemmDotIndirect has checked
// the bounds.
func dotIndirect(k int, a []float32, lda int, b []float32, boffs, seg []int32, c []float32, ldc int, beta float32) {
	dot4x4AVX512(k, &a[0], lda, &b[0], 0, &boffs[0], &seg[0], &c[0], ldc, 1, beta)
}

// haveAxpyKernel reports whether axpyRows64 can run (AVX-512 F). Tests
// turn it off to run the Go loop.
var haveAxpyKernel = cpu.X86.HasAVX512F

//go:noescape
func axpyRows64AVX512(m, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, masks *uint16, relu int)

// axpyRows64 runs axpyRows64AVX512 on the columns masks select of the
// first 64 of B and C; SgemmAxpyNN has checked the sizes (the masked-off
// columns are not touched).
func axpyRows64(m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, masks *[4]uint16, relu bool) {
	r := 0
	if relu {
		r = 1
	}
	axpyRows64AVX512(m, k, &a[0], lda, &b[0], ldb, &c[0], ldc, &masks[0], r)
}

// The assembly packers (kernel_amd64.s, AVX2): copy16AVX2 copies kb rows of
// 16 floats (stride lds) into a panel, gather16AVX2 and gather6AVX2
// transpose 16, resp. 6, rows of kb floats (kb a multiple of 8).
//
//go:noescape
func copy16AVX2(kb int, src *float32, lds int, dst *float32)

//go:noescape
func gather16AVX2(kb int, src *float32, lds int, dst *float32)

//go:noescape
func gather6AVX2(kb int, src *float32, lds int, dst *float32)

// copyPanelAsm is copyPanel for a full panel of width 16; it reports false
// for other widths.
func copyPanelAsm(w int, dst, src []float32, lds, p0, kb, j0 int) bool {
	if w != 16 || kb == 0 {
		return false
	}
	o := p0*lds + j0
	_ = src[o+(kb-1)*lds+15]
	_ = dst[kb*16-1]
	copy16AVX2(kb, &src[o], lds, &dst[0])
	return true
}

// gatherPanelAsm is gatherPanel for the first kb&^7 values of l of a full
// panel of width 6 or 16; it returns how many it packed.
func gatherPanelAsm(w int, dst, src []float32, lds, p0, kb, j0 int) int {
	k8 := kb &^ 7
	if k8 == 0 || (w != 6 && w != 16) {
		return 0
	}
	o := j0*lds + p0
	_ = src[o+(w-1)*lds+kb-1]
	_ = dst[kb*w-1]
	if w == 16 {
		gather16AVX2(k8, &src[o], lds, &dst[0])
	} else {
		gather6AVX2(k8, &src[o], lds, &dst[0])
	}
	return k8
}

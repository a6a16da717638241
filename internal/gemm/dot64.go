package gemm

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The float64 products of the contrastive losses (loss/kernel.go: the
// similarity matrix S = U·Uᵀ and the gradient dU = dS·U) were computed by
// gonum's blas64.Gemm and blas64.Syrk, whose A·Bᵀ kernels call f64.DotUnitary
// once per element of C (SSE2, two lanes). DgemmNT and DsyrkUpper compute
// the same elements with the same sequence of roundings, eight columns at a
// time in AVX-512 registers and four rows per pass, so their results are
// gonum's to the last bit (the losses' golden results depend on them):
//
//   - an element is alpha·dot(a_i, b_j) added to C, where dot sums in
//     DotUnitary's order (four partial sums over the whole quads, the
//     remainder added to the first, then (s₀+s₂)+(s₁+s₃));
//   - Gemm splits k into blocks of 64 and adds alpha·dot of each block to C
//     in order when C has at least four 64×64 blocks (its parallel path),
//     and takes one dot over the whole of k otherwise (its serial path);
//     Syrk takes one dot over the whole of k.
//
// Without AVX-512 (other architectures, the purego tag) they call gonum.

// dot64Block is gonum's k block (blas/gonum: blockSize) and dot64MinPar its
// minParBlock: the number of 64×64 blocks of C from which Dgemm goes
// parallel, splitting k into blocks.
const (
	dot64Block  = 64
	dot64MinPar = 4
)

// dot64ParallelMin is the number of multiply-adds from which DgemmNT and
// DsyrkUpper split C's rows over goroutines. Tests lower it.
var dot64ParallelMin = 1 << 19

// DgemmNT computes C = alpha·A·Bᵀ + beta·C for row-major float64 A (m×k,
// row stride lda), B (n×k, stride ldb) and C (m×n, stride ldc), with the
// bits of gonum's blas64.Gemm(blas.NoTrans, blas.Trans, …) on the same
// arguments. It panics on inconsistent arguments, as gonum does.
func DgemmNT(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !haveDot64 || m == 0 || n == 0 {
		blas64.Gemm(blas.NoTrans, blas.Trans, alpha,
			blas64.General{Rows: m, Cols: k, Stride: lda, Data: a},
			blas64.General{Rows: n, Cols: k, Stride: ldb, Data: b},
			beta, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: c})
		return
	}
	checkDot64(m, n, k, a, lda, b, ldb, c, ldc)
	if (alpha == 0 || k == 0) && beta == 1 {
		return
	}
	if beta != 1 {
		for i := range m {
			ci := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(ci)
				continue
			}
			for j := range ci {
				ci[j] *= beta
			}
		}
	}
	kb := k
	if blocks64(m)*blocks64(n) >= dot64MinPar {
		kb = dot64Block
		if k == 0 {
			return // gonum's parallel path adds nothing
		}
	}
	dot64Rows(m, n, k, kb, alpha, a, lda, b, ldb, c, ldc, false, false)
}

// DsyrkUpper computes the upper triangle (j ≥ i) of C = alpha·A·Aᵀ + beta·C
// for row-major float64 A (n×k, stride lda) and C (n×n, stride ldc), with
// the bits of gonum's blas64.Syrk(blas.Upper, blas.NoTrans, …); the strict
// lower triangle is not touched. It panics on inconsistent arguments.
func DsyrkUpper(n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if !haveDot64 || n == 0 || alpha == 0 || (beta != 0 && beta != 1) {
		// gonum's scaling paths (alpha == 0) and its beta·C + alpha·dot
		// (another rounding sequence) are left to gonum.
		blas64.Syrk(blas.NoTrans, alpha,
			blas64.General{Rows: n, Cols: k, Stride: lda, Data: a},
			beta, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: ldc, Data: c})
		return
	}
	checkDot64(n, n, k, a, lda, a, lda, c, ldc)
	// beta == 0: gonum assigns alpha·dot (so −0 stays −0); beta == 1: it
	// computes c·1 + alpha·dot = c + alpha·dot.
	dot64Rows(n, n, k, k, alpha, a, lda, a, lda, c, ldc, true, beta == 0)
}

func blocks64(d int) int { return (d + dot64Block - 1) / dot64Block }

func checkDot64(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	switch {
	case m < 0 || n < 0 || k < 0:
		panic("gemm: negative dimension")
	case lda < max(1, k) || ldb < max(1, k) || ldc < max(1, n):
		panic("gemm: stride smaller than the row")
	case k > 0 && (len(a) < (m-1)*lda+k || len(b) < (n-1)*ldb+k):
		panic("gemm: short A or B")
	case len(c) < (m-1)*ldc+n:
		panic("gemm: short C")
	}
}

// dot64Scratch holds B packed into 8-column panels and A's last rows padded
// to four.
type dot64Scratch struct {
	bp  []float64
	pad []float64
}

var dot64Pool = sync.Pool{New: func() any { return new(dot64Scratch) }}

// dot64Rows adds alpha·dot(a_i, b_j) over k blocks of kb (the last one
// shorter; one empty block if k is 0) to C, block after block; with upper
// only j ≥ i; with assign C is set to alpha·dot of the one block instead
// (kb == k).
func dot64Rows(m, n, k, kb int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int, upper, assign bool) {
	s := dot64Pool.Get().(*dot64Scratch)
	defer dot64Pool.Put(s)
	panels := (n + 7) / 8
	s.bp = growF64(s.bp, panels*k*8)
	packPanels64(s.bp, b, ldb, n, k)

	groups := (m + 3) / 4
	workers := 1
	if m*n*k >= dot64ParallelMin {
		workers = min(runtime.GOMAXPROCS(0), groups)
	}
	// Only the last group of rows can be short, so one padded block serves
	// every worker.
	s.pad = growF64(s.pad, 4*k)
	pad := s.pad
	run := func(g0, g1 int) {
		var out [32]float64
		for g := g0; g < g1; g++ {
			i0 := 4 * g
			rows := min(4, m-i0)
			ai, ldai := a[i0*lda:], lda
			if rows < 4 && k > 0 {
				// Copy the last rows into a zero-padded 4×k block.
				clear(pad)
				for r := range rows {
					copy(pad[r*k:(r+1)*k], a[(i0+r)*lda:(i0+r)*lda+k])
				}
				ai, ldai = pad, k
			}
			for p := range panels {
				j0 := 8 * p
				cols := min(8, n-j0)
				if upper && j0+cols <= i0 {
					continue // the panel lies below the diagonal
				}
				bp := s.bp[p*k*8 : (p+1)*k*8]
				// A whole tile (above the diagonal, with upper) is
				// updated in place by the kernel; the others go through
				// out.
				whole := rows == 4 && cols == 8 && (!upper || j0 >= i0+3)
				for k0 := 0; k0 < max(k, 1); k0 += max(kb, 1) {
					kl := min(kb, k-k0)
					if whole && kl > 0 {
						mode := 1
						if assign {
							mode = 2
						}
						dot64x4x8(kl, &ai[k0], ldai, &bp[k0*8], &c[i0*ldc+j0], ldc, alpha, mode)
						continue
					}
					if kl > 0 {
						dot64x4x8(kl, &ai[k0], ldai, &bp[k0*8], &out[0], 8, 0, 0)
					} else {
						out = [32]float64{}
					}
					for r := range rows {
						ci := c[(i0+r)*ldc:]
						jLo := 0
						if upper {
							jLo = max(0, i0+r-j0)
						}
						if assign {
							for jj := jLo; jj < cols; jj++ {
								ci[j0+jj] = alpha * out[r*8+jj]
							}
							continue
						}
						for jj := jLo; jj < cols; jj++ {
							ci[j0+jj] += float64(alpha * out[r*8+jj])
						}
					}
				}
			}
		}
	}
	if workers <= 1 {
		run(0, groups)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		g0, g1 := w*groups/workers, (w+1)*groups/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(g0, g1)
		}()
	}
	run(0, groups/workers) // the first share on the calling goroutine
	wg.Wait()
}

// packPanels64 writes the n×k row-major b as 8-column panels of bᵀ: panel
// p holds dst[p·8k + l·8 + j] = b[(8p+j)·ldb + l], zero past column n.
func packPanels64(dst, b []float64, ldb, n, k int) {
	for p := 0; p < (n+7)/8; p++ {
		panel := dst[p*k*8 : (p+1)*k*8]
		for j := range 8 {
			col := 8*p + j
			if col >= n {
				for l := range k {
					panel[l*8+j] = 0
				}
				continue
			}
			row := b[col*ldb : col*ldb+k]
			for l, v := range row {
				panel[l*8+j] = v
			}
		}
	}
}

func growF64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

package gemm

import "sync"

// parallelMin is the number of multiply-adds (m·n·k) below which
// SgemmParallel runs inline. Tests lower it.
var parallelMin = 1 << 20

// SgemmParallel computes the same product as Sgemm on up to workers
// goroutines (the caller's included), each computing a block of C made of
// whole 16-column panels, or of whole row panels (6 or 16 rows, depending on
// the micro-kernel) when that packs less. Products smaller than about 10⁶
// multiply-adds, or workers <= 1, run inline on the calling goroutine.
//
// With the native backends every C element is computed by the same sequence
// of floating-point operations as in Sgemm, so the results are bit-identical
// to Sgemm's whatever workers is. OpenBLAS (openblas build tag) makes no
// such promise: there the blocks agree with Sgemm only to rounding.
func SgemmParallel(workers int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	mr, nr := kernels().mr, kernels().nr
	np, mp := (n+nr-1)/nr, (m+mr-1)/mr
	if workers <= 1 || m*n*k < parallelMin || (np < 2 && mp < 2) || Backend() == "go" {
		// The go backend (gonum) parallelises large products itself.
		sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// Split along n unless C has too few column panels or splitting along m
	// repacks less (each block packs all of the other operand).
	alongN := np >= workers && (m <= n || mp < workers)
	if !alongN && mp < workers && np > mp {
		alongN = true
	}
	parts := np
	if !alongN {
		parts = mp
	}
	workers = min(workers, parts)
	call := sgemm
	if Backend() != "openblas" {
		dot := useDot(transA, transB, m, n, k)
		call = func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			sgemmNativeWith(dot, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		}
	}
	var wg sync.WaitGroup
	for w := workers - 1; w >= 0; w-- {
		lo, hi := w*parts/workers, (w+1)*parts/workers
		run := func() {
			if alongN {
				j0, j1 := lo*nr, min(hi*nr, n)
				bo := j0 // column offset into op(B)
				if transB {
					bo = j0 * ldb
				}
				call(transA, transB, m, j1-j0, k, alpha, a, lda, b[bo:], ldb, beta, c[j0:], ldc)
				return
			}
			i0, i1 := lo*mr, min(hi*mr, m)
			ao := i0 * lda
			if transA {
				ao = i0
			}
			call(transA, transB, i1-i0, n, k, alpha, a[ao:], lda, b, ldb, beta, c[i0*ldc:], ldc)
		}
		if w == 0 {
			run()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	wg.Wait()
}

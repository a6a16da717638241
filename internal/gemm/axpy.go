package gemm

// SgemmAxpyNN computes C += A·B for row-major A (m×k, stride lda), B (k×n,
// stride ldb) and C (m×n, stride ldc) with the bits of gonum's
// blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, A, B, 1, C): every element is
// C[i][j] plus, in order of l, the products A[i][l]·B[l][j] (a multiply,
// then an add), where the products of a zero A[i][l] are skipped. That is
// gonum's serial kernel, an axpy of B's row l for every nonzero A[i][l];
// its blocked and parallel paths keep that order for every element.
//
// The GIN's evaluation-mode embedding (package model) multiplies with it,
// so that its embeddings, and the samplers' graphs and SVM scores built on
// them, keep the bits they had with gonum. With AVX-512 it does 64 columns
// of a row at a time in registers (gonum's assembly does 4); elsewhere the
// same loop in Go. Like Sgemm it panics on inconsistent arguments.
func SgemmAxpyNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	sgemmAxpyNN(m, n, k, a, lda, b, ldb, c, ldc, false)
}

// SgemmAxpyNNReLU is SgemmAxpyNN followed by C[i][j] = 0 where C[i][j] < 0
// (−0 and NaN stay as they are), on the values still in registers.
func SgemmAxpyNNReLU(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	sgemmAxpyNN(m, n, k, a, lda, b, ldb, c, ldc, true)
}

func sgemmAxpyNN(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, relu bool) {
	checkArgs(false, false, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if haveAxpyKernel && k > 0 {
		for j0 := 0; j0 < n; j0 += 64 {
			var masks [4]uint16
			for q := range masks {
				lanes := min(max(n-j0-16*q, 0), 16)
				masks[q] = uint16(1<<lanes - 1)
			}
			axpyRows64(m, k, a, lda, b[j0:], ldb, c[j0:], ldc, &masks, relu)
		}
		return
	}
	for i := 0; i < m; i++ {
		ci := c[i*ldc : i*ldc+n]
		for l, v := range a[i*lda : i*lda+k] {
			if v == 0 {
				continue
			}
			for j, bv := range b[l*ldb : l*ldb+n] {
				ci[j] += float32(v * bv) // the conversion rounds: no fused multiply-add
			}
		}
		if relu {
			for j, v := range ci {
				if v < 0 {
					ci[j] = 0
				}
			}
		}
	}
}

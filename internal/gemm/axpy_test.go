package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// TestSgemmAxpyNNMatchesGonum compares SgemmAxpyNN and SgemmAxpyNNReLU,
// with the AVX-512 kernel and with the Go loop, with gonum's blas32.Gemm
// (and a scalar ReLU) bit for bit: rows of A with zeros and −0 (skipped), a
// NaN, −0 and NaN reaching the ReLU, widths around the 16-column groups and
// the 64-column strips, and products large enough for gonum's blocked
// parallel path.
func TestSgemmAxpyNNMatchesGonum(t *testing.T) {
	orig := haveAxpyKernel
	defer func() { haveAxpyKernel = orig }()
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int{1, 5, 64, 130} {
		for _, n := range []int{1, 15, 16, 17, 32, 64, 65, 96, 200, 300} {
			for _, k := range []int{1, 7, 32, 128} {
				lda, ldb, ldc := k+3, n+1, n+2
				a, b, c0 := make([]float32, m*lda), make([]float32, k*ldb), make([]float32, m*ldc)
				for i := range a {
					switch rng.IntN(5) {
					case 0:
						a[i] = 0
					case 1:
						a[i] = float32(math.Copysign(0, -1))
					default:
						a[i] = float32(rng.NormFloat64())
					}
				}
				for i := range b {
					b[i] = float32(rng.NormFloat64())
				}
				for i := range c0 {
					c0[i] = float32(rng.NormFloat64())
				}
				if k == 1 && len(c0) > 2 {
					// With no nonzero product, −0 and NaN reach the ReLU as they are.
					c0[0], c0[1] = float32(math.Copysign(0, -1)), float32(math.NaN())
					a[0] = 0
				}
				if m > 1 && k > 1 {
					a[lda+1] = float32(math.NaN()) // a NaN row: never skipped
				}
				want := append([]float32(nil), c0...)
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
					blas32.General{Rows: m, Cols: k, Stride: lda, Data: a},
					blas32.General{Rows: k, Cols: n, Stride: ldb, Data: b},
					1, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: want})
				wantReLU := append([]float32(nil), want...)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if wantReLU[i*ldc+j] < 0 {
							wantReLU[i*ldc+j] = 0
						}
					}
				}
				for _, kernel := range []bool{true, false} {
					if kernel && !orig {
						continue
					}
					haveAxpyKernel = kernel
					for _, relu := range []bool{false, true} {
						got := append([]float32(nil), c0...)
						w := want
						if relu {
							SgemmAxpyNNReLU(m, n, k, a, lda, b, ldb, got, ldc)
							w = wantReLU
						} else {
							SgemmAxpyNN(m, n, k, a, lda, b, ldb, got, ldc)
						}
						name := fmt.Sprintf("m%d n%d k%d kernel=%t relu=%t", m, n, k, kernel, relu)
						for i := range w {
							if math.Float32bits(got[i]) != math.Float32bits(w[i]) {
								t.Fatalf("%s: C[%d][%d] = %v, gonum %v", name, i/ldc, i%ldc, got[i], w[i])
							}
						}
					}
				}
				haveAxpyKernel = orig
			}
		}
	}
}

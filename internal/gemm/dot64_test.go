package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

func randF64(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		// Mixed magnitudes, so that the order of the sums shows in the bits.
		x[i] = rng.NormFloat64() * math.Exp2(float64(rng.IntN(12)-6))
	}
	return x
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: element %d = %v (%#x), gonum %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// TestDgemmNTMatchesGonum compares DgemmNT bit for bit with gonum's Dgemm
// (NoTrans, Trans) over shapes that take both of gonum's paths (serial:
// one dot over k; parallel: k in blocks of 64), every remainder of k mod 4
// and of the 4-row and 8-column tiles, padded strides, and several alpha
// and beta.
func TestDgemmNTMatchesGonum(t *testing.T) {
	if !haveDot64 {
		t.Log("no AVX-512: DgemmNT is gonum's Dgemm; comparing anyway")
	}
	for _, par := range []int{1 << 19, 1} {
		old := dot64ParallelMin
		dot64ParallelMin = par
		rng := rand.New(rand.NewPCG(1, uint64(par)))
		for _, m := range []int{1, 3, 4, 5, 64, 65, 130, 256} {
			for _, n := range []int{1, 7, 8, 9, 33, 96, 129} {
				for _, k := range []int{0, 1, 2, 3, 5, 63, 64, 65, 131, 256} {
					for _, ab := range [][2]float64{{1, 0}, {0.37, 1}, {-2, 0.5}} {
						alpha, beta := ab[0], ab[1]
						lda, ldb, ldc := k+rng.IntN(3), k+rng.IntN(3), n+rng.IntN(3)
						lda, ldb = max(lda, 1), max(ldb, 1)
						a, b := randF64(rng, m*lda), randF64(rng, n*ldb)
						c0 := randF64(rng, m*ldc)
						want := append([]float64(nil), c0...)
						blas64.Gemm(blas.NoTrans, blas.Trans, alpha,
							blas64.General{Rows: m, Cols: k, Stride: lda, Data: a},
							blas64.General{Rows: n, Cols: k, Stride: ldb, Data: b},
							beta, blas64.General{Rows: m, Cols: n, Stride: ldc, Data: want})
						got := append([]float64(nil), c0...)
						DgemmNT(m, n, k, alpha, a, lda, b, ldb, beta, got, ldc)
						sameBits(t, fmt.Sprintf("m=%d n=%d k=%d alpha=%v beta=%v parallelMin=%d", m, n, k, alpha, beta, par), got, want)
					}
				}
			}
		}
		dot64ParallelMin = old
	}
}

// TestDsyrkUpperMatchesGonum compares DsyrkUpper with gonum's Dsyrk (Upper,
// NoTrans) bit for bit, the lower triangle included (left as it was).
func TestDsyrkUpperMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for _, n := range []int{1, 3, 4, 5, 8, 9, 17, 64, 130, 256} {
		for _, k := range []int{0, 1, 3, 4, 7, 64, 97, 128} {
			for _, ab := range [][2]float64{{1, 0}, {0.5, 1}, {-1.5, 0.25}, {0, 0}} {
				alpha, beta := ab[0], ab[1]
				lda, ldc := max(k+rng.IntN(3), 1), n+rng.IntN(3)
				a := randF64(rng, n*lda)
				c0 := randF64(rng, n*ldc)
				want := append([]float64(nil), c0...)
				blas64.Syrk(blas.NoTrans, alpha,
					blas64.General{Rows: n, Cols: k, Stride: lda, Data: a},
					beta, blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: ldc, Data: want})
				got := append([]float64(nil), c0...)
				DsyrkUpper(n, k, alpha, a, lda, beta, got, ldc)
				sameBits(t, fmt.Sprintf("n=%d k=%d alpha=%v beta=%v", n, k, alpha, beta), got, want)
			}
		}
	}
}

// TestDot64NegativeZero: −1·(0·0) is −0; gonum's Syrk assigns it (−0),
// its Gemm adds it to a zeroed C (+0). Both are kept.
func TestDot64NegativeZero(t *testing.T) {
	zero := []float64{0}
	want := []float64{7}
	blas64.Syrk(blas.NoTrans, -1, blas64.General{Rows: 1, Cols: 1, Stride: 1, Data: zero}, 0,
		blas64.Symmetric{Uplo: blas.Upper, N: 1, Stride: 1, Data: want})
	got := []float64{7}
	DsyrkUpper(1, 1, -1, zero, 1, 0, got, 1)
	sameBits(t, "syrk", got, want)
	if !math.Signbit(got[0]) {
		t.Errorf("syrk: %v, want −0", got[0])
	}
	// 64×64·4 = four 64-blocks of C: gonum's parallel path.
	for _, m := range []int{1, 128} {
		a, c, w := make([]float64, m), make([]float64, m*m), make([]float64, m*m)
		DgemmNT(m, m, 1, -1, a, 1, a, 1, 0, c, m)
		blas64.Gemm(blas.NoTrans, blas.Trans, -1,
			blas64.General{Rows: m, Cols: 1, Stride: 1, Data: a},
			blas64.General{Rows: m, Cols: 1, Stride: 1, Data: a},
			0, blas64.General{Rows: m, Cols: m, Stride: m, Data: w})
		sameBits(t, fmt.Sprintf("gemm m=%d", m), c, w)
		if math.Signbit(c[0]) {
			t.Errorf("gemm m=%d: %v, want +0", m, c[0])
		}
	}
}

// TestDot64Kernel checks the assembly kernel against a float64 loop that
// sums in DotUnitary's order.
func TestDot64Kernel(t *testing.T) {
	if !haveDot64 {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(4, 5))
	for _, kb := range []int{1, 2, 3, 4, 5, 8, 13, 64} {
		lda := kb + 2
		a := randF64(rng, 4*lda)
		bp := randF64(rng, kb*8)
		var out [32]float64
		dot64x4x8(kb, &a[0], lda, &bp[0], &out[0], 8, 0, 0)
		for r := range 4 {
			for j := range 8 {
				var s [4]float64
				q := kb / 4 * 4
				for l := 0; l < q; l++ {
					s[l%4] += float64(a[r*lda+l] * bp[l*8+j])
				}
				for l := q; l < kb; l++ {
					s[0] += float64(a[r*lda+l] * bp[l*8+j])
				}
				want := (s[0] + s[2]) + (s[1] + s[3])
				if math.Float64bits(out[r*8+j]) != math.Float64bits(want) {
					t.Fatalf("kb=%d r=%d j=%d: %v, loop %v", kb, r, j, out[r*8+j], want)
				}
			}
		}
	}
}

// BenchmarkDgemmNT compares DgemmNT with gonum's Dgemm on the shapes of the
// InfoNCE gradient (dU = dS·U: 2B×2B times 2B×d).
func BenchmarkDgemmNT(b *testing.B) {
	for _, sz := range [][3]int{{256, 96, 256}, {512, 128, 512}} {
		m, n, k := sz[0], sz[1], sz[2]
		rng := rand.New(rand.NewPCG(1, 2))
		x, y, c := randF64(rng, m*k), randF64(rng, n*k), make([]float64, m*n)
		b.Run(fmt.Sprintf("%dx%dx%d/dot64", m, n, k), func(b *testing.B) {
			for range b.N {
				DgemmNT(m, n, k, 1, x, k, y, k, 0, c, n)
			}
		})
		b.Run(fmt.Sprintf("%dx%dx%d/gonum", m, n, k), func(b *testing.B) {
			for range b.N {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1,
					blas64.General{Rows: m, Cols: k, Stride: k, Data: x},
					blas64.General{Rows: n, Cols: k, Stride: k, Data: y},
					0, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
			}
		})
	}
}

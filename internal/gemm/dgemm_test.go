package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDgemmMatchesLoop checks Dgemm against a float64 triple loop for every
// combination of transposes, with padded strides and alpha, beta ≠ 1.
func TestDgemmMatchesLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const m, n, k, pad = 5, 7, 3, 2
	const alpha, beta = 0.5, -1.5
	for _, tc := range []struct{ ta, tb bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		// A is stored m×k (or k×m transposed), B k×n (or n×k).
		ar, ac := m, k
		if tc.ta {
			ar, ac = k, m
		}
		br, bc := k, n
		if tc.tb {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+pad, bc+pad, n+pad
		a := randSlice(rng, ar*lda)
		b := randSlice(rng, br*ldb)
		c := randSlice(rng, m*ldc)
		want := append([]float64(nil), c...)
		for i := range m {
			for j := range n {
				var s float64
				for p := range k {
					var av, bv float64
					if tc.ta {
						av = a[p*lda+i]
					} else {
						av = a[i*lda+p]
					}
					if tc.tb {
						bv = b[j*ldb+p]
					} else {
						bv = b[p*ldb+j]
					}
					s += av * bv
				}
				want[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
		Dgemm(tc.ta, tc.tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		for i := range m {
			for j := range ldc {
				got, w := c[i*ldc+j], want[i*ldc+j]
				if j >= n {
					if got != w {
						t.Fatalf("transA=%v transB=%v: padding C[%d][%d] changed to %g", tc.ta, tc.tb, i, j, got)
					}
					continue
				}
				if math.Abs(got-w) > 1e-12*(1+math.Abs(w)) {
					t.Fatalf("transA=%v transB=%v: C[%d][%d] = %g, want %g", tc.ta, tc.tb, i, j, got, w)
				}
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 2*rng.Float64() - 1
	}
	return s
}

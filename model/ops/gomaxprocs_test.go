package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestGemmTransBIndependentOfGOMAXPROCS checks that Linear's dX product
// gives the same bits whatever the core count: internal/gemm picks its
// kernel by the rows of each call, so the rows must be split the same way
// on every machine. Each product is also checked against a float64 loop.
func TestGemmTransBIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rng := rand.New(rand.NewPCG(7, 39))
	for _, tc := range []struct{ n, m, k int }{
		{1, 128, 128}, {63, 128, 128}, {64, 128, 128}, {65, 128, 128},
		{128, 128, 128}, {130, 200, 128}, {192, 128, 64}, {257, 128, 130}, {1000, 160, 128},
	} {
		a := make([]float32, tc.n*tc.m)
		b := make([]float32, tc.k*tc.m)
		for i := range a {
			a[i] = float32(rng.NormFloat64())
		}
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
		var want []float32
		for _, procs := range []int{2, 1, 3, 8} {
			runtime.GOMAXPROCS(procs)
			out := make([]float32, tc.n*tc.k)
			gemmTransB(out, a, b, tc.n, tc.m, tc.k)
			if want == nil {
				want = out
				for i := 0; i < tc.n; i++ {
					for j := 0; j < tc.k; j++ {
						var s, abs float64
						for p := 0; p < tc.m; p++ {
							x := float64(a[i*tc.m+p]) * float64(b[j*tc.m+p])
							s += x
							abs += math.Abs(x)
						}
						if d := math.Abs(float64(out[i*tc.k+j]) - s); d > 1e-5*abs {
							t.Fatalf("n=%d m=%d k=%d: out[%d][%d] = %v, float64 loop %v", tc.n, tc.m, tc.k, i, j, out[i*tc.k+j], s)
						}
					}
				}
				continue
			}
			for i := range out {
				if math.Float32bits(out[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d m=%d k=%d: GOMAXPROCS %d gives out[%d] = %v, GOMAXPROCS 2 %v", tc.n, tc.m, tc.k, procs, i, out[i], want[i])
				}
			}
		}
	}
}

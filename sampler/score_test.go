package sampler

import (
	"fmt"
	"math"
	"testing"
)

// refDot is the float64 reference inner product of two rows.
func refDot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// scoreBlock computes the block's inner products with gathered or
// contiguous candidate rows, for the shapes of both graph builders (block
// rows up to 64, short and long rows, chunks not a multiple of 16).
func TestScoreBlockMatchesFloat64(t *testing.T) {
	for _, tc := range []struct{ rows, cols, d int }{
		{1, 1, 1}, {3, 5, 2}, {6, 16, 8}, {7, 17, 3}, {13, 40, 37}, {62, 1001, 128}, {64, 100, 200}, {5, 300, 130},
	} {
		for _, gather := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%dx%d gather=%v", tc.rows, tc.cols, tc.d, gather), func(t *testing.T) {
				const n = 1200
				u := randomEmbeddings(n, tc.d, 2)
				bw := newBlockWork(n, tc.d, tc.rows, tc.cols, 1)
				a := randomEmbeddings(tc.rows, tc.d, 1)
				copy(bw.a, a.Data)
				for i := range bw.c {
					bw.c[i] = float32(math.NaN()) // must be overwritten
				}
				var idx []int32
				c0 := 7
				col := func(j int) int { return c0 + j }
				if gather {
					idx = make([]int32, tc.cols)
					for j := range idx {
						idx[j] = int32((j*7919 + 13) % n) // scattered, reversed runs
					}
					col = func(j int) int { return int(idx[j]) }
				}
				scoreBlock(bw, u.Data, tc.d, tc.rows, c0, idx, tc.cols)
				for i := 0; i < tc.rows; i++ {
					for j := 0; j < tc.cols; j++ {
						want := refDot(a.Row(i), u.Row(col(j)))
						if got := float64(bw.c[i*bw.ldc+j]); !(math.Abs(got-want) <= 1e-4*(1+math.Abs(want))) {
							t.Fatalf("C[%d][%d] = %v, want %v", i, j, got, want)
						}
					}
				}
			})
		}
	}
}

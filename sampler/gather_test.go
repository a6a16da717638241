package sampler

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGatherRows: gatherRows copies exactly the rows asked for, in order,
// for float32 and float16 rows of every width (whole 64-byte lines, which
// the AVX-512 kernel copies, and others), fewer and more rows than it asks
// for ahead, repeated rows and the first and last rows, with the kernel on
// and off.
func TestGatherRows(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "go", true: "asm"}[on], func(t *testing.T) { testGatherRows(t, on) })
	}
}

func testGatherRows(t *testing.T, on bool) {
	setGatherAsm(t, on)
	r := rand.New(rand.NewPCG(1, 5))
	for _, d := range []int{1, 3, 16, 32, 37, 64, 128, 200} {
		const n = 500
		u := make([]float32, n*d)
		h := make([]uint16, n*d)
		for i := range u {
			u[i] = float32(r.NormFloat64())
			h[i] = uint16(r.Uint32())
		}
		for _, m := range []int{1, 7, 8, 9, 100} {
			idx := make([]int32, m)
			for j := range idx {
				idx[j] = int32(r.IntN(n))
			}
			idx[0], idx[m-1] = n-1, 0
			if m > 2 {
				idx[1] = idx[2]
			}
			got32 := make([]float32, m*d)
			got16 := make([]uint16, m*d)
			gatherRows(got32, u, d, idx)
			gatherRows(got16, h, d, idx)
			for j, v := range idx {
				if !slices.Equal(got32[j*d:(j+1)*d], u[int(v)*d:(int(v)+1)*d]) || !slices.Equal(got16[j*d:(j+1)*d], h[int(v)*d:(int(v)+1)*d]) {
					t.Fatalf("kernel %v, d %d, %d rows: row %d is not row %d of the matrix", on, d, m, j, v)
				}
			}
		}
	}
}

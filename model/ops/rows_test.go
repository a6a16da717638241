package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowKernelsMatchLoops: ScaleShiftRows and AddRows give the bits of
// their doc comments' loops, with and without the AVX-512 kernels, for
// widths around the 16-column blocks.
func TestRowKernelsMatchLoops(t *testing.T) {
	defer setKernels(haveKernels)
	r := rand.New(rand.NewPCG(16, 17))
	for _, c := range []int{1, 7, 16, 17, 32, 100} {
		for _, n := range []int{0, 1, 3, 50} {
			x := make([]float32, n*c)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 10)
			}
			scale, shift, acc := make([]float32, c), make([]float32, c), make([]float32, c)
			for j := range scale {
				scale[j], shift[j], acc[j] = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			wantSS := append([]float32(nil), x...)
			for i := 0; i < len(wantSS); i += c {
				for j := 0; j < c; j++ {
					wantSS[i+j] = wantSS[i+j]*scale[j] + shift[j]
				}
			}
			wantAdd := append([]float32(nil), acc...)
			for i := 0; i < len(x); i += c {
				for j := 0; j < c; j++ {
					wantAdd[j] += x[i+j]
				}
			}
			for _, kernels := range []bool{false, true} {
				setKernels(kernels)
				gotSS := append([]float32(nil), x...)
				ScaleShiftRows(gotSS, scale, shift)
				gotAdd := append([]float32(nil), acc...)
				AddRows(gotAdd, x)
				for i := range wantSS {
					if math.Float32bits(gotSS[i]) != math.Float32bits(wantSS[i]) {
						t.Fatalf("c=%d n=%d kernels=%t: ScaleShiftRows[%d] = %v, want %v", c, n, kernels, i, gotSS[i], wantSS[i])
					}
				}
				for j := range wantAdd {
					if math.Float32bits(gotAdd[j]) != math.Float32bits(wantAdd[j]) {
						t.Fatalf("c=%d n=%d kernels=%t: AddRows[%d] = %v, want %v", c, n, kernels, j, gotAdd[j], wantAdd[j])
					}
				}
			}
		}
	}
}

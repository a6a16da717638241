package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBranchlessReLU(t *testing.T) {
	in32 := []float32{-2, -0.5, float32(math.Copysign(0, -1)), 0, 1e-30, 3, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, v := range in32 {
		s := []float32{v}
		reluInPlace(s)
		want := float32(math.Max(float64(v), 0))
		if s[0] != want || math.Signbit(float64(s[0])) {
			t.Errorf("relu32(%v) = %v, want +%v", v, s[0], want)
		}
		mask := positiveMask32(v) != 0
		if mask != (v > 0) {
			t.Errorf("positiveMask32(%v) = %t, want %t", v, mask, v > 0)
		}
		s64 := []float64{float64(v)}
		reluInPlace(s64)
		if s64[0] != float64(want) || math.Signbit(s64[0]) {
			t.Errorf("relu64(%v) = %v, want +%v", v, s64[0], want)
		}
		if (positiveMask64(float64(v)) != 0) != (v > 0) {
			t.Errorf("positiveMask64(%v) wrong", v)
		}
	}
}

// TestReLUKernelsMatchScalar: the AVX-512 ReLU, ReLU-of-a-sum and ReLU-mask
// kernels give the scalar loops' bits (signed zeros, NaNs of either sign, infinities,
// denormals) for lengths around the 16-lane blocks.
func TestReLUKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	defer setKernels(haveKernels)
	for _, n := range []int{1, 7, 15, 16, 17, 31, 32, 33, 100, 1000} {
		y, dy := preluInput(r, n), preluInput(r, n)
		for i := range y {
			if r.IntN(10) == 0 {
				y[i] = math.Float32frombits(0xffc00001) // a NaN with the sign bit set
			}
		}
		var fwd, mask, to, add [2][]float32
		for pass, kernels := range []bool{false, true} {
			setKernels(kernels)
			fwd[pass] = append([]float32(nil), y...)
			reluInPlace(fwd[pass])
			mask[pass] = make([]float32, n)
			reluMask(mask[pass], y, dy)
			to[pass], add[pass] = make([]float32, n), make([]float32, n)
			reluTo(to[pass], y, nil)
			reluTo(add[pass], y, dy)
		}
		if i := sameBits32(to[1], to[0]); i >= 0 {
			t.Fatalf("n=%d: reluTo[%d] of %v = %v with the kernel, %v scalar", n, i, y[i], to[1][i], to[0][i])
		}
		if i := sameBits32(add[1], add[0]); i >= 0 {
			t.Fatalf("n=%d: reluTo[%d] of %v + %v = %v with the kernel, %v scalar", n, i, y[i], dy[i], add[1][i], add[0][i])
		}
		if i := sameBits32(fwd[1], fwd[0]); i >= 0 {
			t.Fatalf("n=%d: relu[%d] of %v = %v with the kernel, %v scalar", n, i, y[i], fwd[1][i], fwd[0][i])
		}
		if i := sameBits32(mask[1], mask[0]); i >= 0 {
			t.Fatalf("n=%d: mask[%d] (y %v) = %v with the kernel, %v scalar", n, i, y[i], mask[1][i], mask[0][i])
		}
	}
}

// TestColSumKernelMatchesScalar: the AVX-512 column sums give the scalar
// loop's float32 bits (the same additions in row order) for widths around
// the 16-column blocks, with a trailing partial row ignored as the loop does.
func TestColSumKernelMatchesScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	defer setKernels(haveKernels)
	for _, shape := range [][2]int{{1, 1}, {3, 15}, {5, 16}, {7, 17}, {100, 32}, {33, 100}} {
		n, c := shape[0], shape[1]
		x := preluInput(r, n*c+c/2) // a partial row at the end
		for i := range x {
			if math.IsNaN(float64(x[i])) {
				x[i] = 1e30 // NaN sums' payloads are the compiler's choice
			}
		}
		var got [2][]float32
		for pass, kernels := range []bool{false, true} {
			setKernels(kernels)
			got[pass] = make([]float32, c)
			for i := range got[pass] {
				got[pass][i] = 7 // colSum clears out first
			}
			colSum(got[pass], x, c)
		}
		if i := sameBits32(got[1], got[0]); i >= 0 {
			t.Fatalf("%dx%d: column %d = %v with the kernel, %v scalar", n, c, i, got[1][i], got[0][i])
		}
	}
}

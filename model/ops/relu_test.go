package ops

import (
	"math"
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

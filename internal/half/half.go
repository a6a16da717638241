// Package half converts IEEE 754 half-precision values (float16, as bits)
// to float32 for scoring loops that keep their data as float16: a 256 KB
// table for single values and, for rows, a scaled conversion with an
// F16C/AVX kernel on amd64 (pure Go elsewhere) whose results are bit for
// bit those of the scalar Go expression it documents.
package half

import (
	"sync"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// Table returns the float32 value of every float16 bit pattern (built on
// first use; npy.Float16ToFloat32, exact).
var Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = npy.Float16ToFloat32(uint16(i))
	}
	return &t
})

// ToFloat32Scaled sets dst[j] = float32(float64(x_j)·scale) for the
// float16 values x_j of src (len(dst) ≥ len(src)): the product in float64,
// rounded once to float32 (to nearest, ties to even), as Go evaluates that
// expression. The F16C/AVX kernel computes exactly this (the conversions
// are exact, the multiplication and the narrowing are IEEE operations in
// the default rounding mode), so the result does not depend on the CPU.
func ToFloat32Scaled(dst []float32, src []uint16, scale float64) {
	dst = dst[:len(src)]
	n := 0
	if haveKernel && len(src) >= 4 {
		n = len(src) &^ 3
		scaledKernel(&dst[0], &src[0], n, scale)
	}
	scaledGo(dst[n:], src[n:], scale)
}

// scaledGo is ToFloat32Scaled in Go (the kernel's tail and fallback).
func scaledGo(dst []float32, src []uint16, scale float64) {
	t := Table()
	dst = dst[:len(src)]
	for j, x := range src {
		dst[j] = float32(float64(t[x]) * scale)
	}
}

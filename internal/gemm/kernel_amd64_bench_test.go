//go:build amd64 && !purego

package gemm

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// BenchmarkMicroKernel16x16 runs the AVX-512 16×16 micro-kernel alone on
// one goroutine with both panels in L1 (k = 144, the ResNet's first
// stage): the ceiling of every float32 GEMM here, in GFLOP/s of one core.
// A convolution can approach it only as far as its packing, im2col and
// memory traffic allow.
func BenchmarkMicroKernel16x16(b *testing.B) {
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX512VL {
		b.Skip("no AVX-512")
	}
	const k = 144
	a, bp, c := make([]float32, 16*k), make([]float32, 16*k), make([]float32, 16*16)
	for i := range a {
		a[i], bp[i] = float32(i%7)/7, float32(i%5)/5
	}
	for b.Loop() {
		kernelAVX512(k, a, bp, c, 16, 16, 1, 0)
	}
	b.ReportMetric(2*16*16*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

package half

import (
	"math"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// TestToFloat32Scaled checks ToFloat32Scaled (the kernel where the CPU has
// one) bit for bit against the Go expression it documents, on every
// float16 value and scales that give exact, rounded, subnormal, zero and
// infinite float32 results.
func TestToFloat32Scaled(t *testing.T) {
	t.Logf("F16C/AVX kernel: %v", haveKernel)
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	dst := make([]float32, len(src))
	for _, scale := range []float64{1, 0, -2.5, 1.0 / 3, 0.0883883476, 1e-3, 1e-38, 1e-45, 1e30, math.Inf(1)} {
		ToFloat32Scaled(dst, src, scale)
		for i, x := range src {
			want := float32(float64(npy.Float16ToFloat32(x)) * scale)
			got := dst[i]
			if math.IsNaN(float64(want)) {
				if !math.IsNaN(float64(got)) {
					t.Fatalf("scale %v, bits %#04x: %v, want NaN", scale, x, got)
				}
				continue
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("scale %v, bits %#04x: %v (%#08x), want %v (%#08x)", scale, x, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
}

// TestToFloat32ScaledLengths: every length and offset (the kernel's blocks
// of 8 and 4 and the Go tail), writing exactly len(src) values.
func TestToFloat32ScaledLengths(t *testing.T) {
	src := make([]uint16, 40)
	for i := range src {
		src[i] = npy.Float64ToFloat16(float64(i)*0.37 - 5)
	}
	for off := 0; off < 4; off++ {
		for n := 0; off+n <= len(src); n++ {
			dst := make([]float32, n+3)
			for i := range dst {
				dst[i] = -7
			}
			ToFloat32Scaled(dst, src[off:off+n], 0.125)
			for i := 0; i < n; i++ {
				if want := float32(float64(npy.Float16ToFloat32(src[off+i])) * 0.125); dst[i] != want {
					t.Fatalf("offset %d, length %d: element %d = %v, want %v", off, n, i, dst[i], want)
				}
			}
			for i := n; i < len(dst); i++ {
				if dst[i] != -7 {
					t.Fatalf("offset %d, length %d: element %d written", off, n, i)
				}
			}
		}
	}
}

func BenchmarkToFloat32Scaled128(b *testing.B) {
	src := make([]uint16, 128)
	for i := range src {
		src[i] = npy.Float64ToFloat16(float64(i) * 0.01)
	}
	dst := make([]float32, 128)
	b.SetBytes(2 * 128)
	for i := 0; i < b.N; i++ {
		ToFloat32Scaled(dst, src, 0.3)
	}
}

func BenchmarkToFloat32Scaled128Go(b *testing.B) {
	src := make([]uint16, 128)
	for i := range src {
		src[i] = npy.Float64ToFloat16(float64(i) * 0.01)
	}
	dst := make([]float32, 128)
	b.SetBytes(2 * 128)
	for i := 0; i < b.N; i++ {
		scaledGo(dst, src, 0.3)
	}
}

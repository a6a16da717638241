package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// preluInput draws n values with zeros of both signs, NaN and infinities
// among them.
func preluInput(r *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, -1e-40}
	x := make([]float32, n)
	for i := range x {
		if r.IntN(8) == 0 {
			x[i] = special[r.IntN(len(special))]
		} else {
			x[i] = float32(r.NormFloat64())
		}
	}
	return x
}

func sameBits32(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestPReLUKernelsMatchScalar: with one shared slope, the forward pass and
// the gradient with respect to x (the AVX-512 kernel where the CPU has it)
// give the scalar loops' bits, signed zeros and NaN included, for sizes
// around the 16-lane blocks; the slope's gradient equals a plain float64
// loop in index order (per column for per-column slopes).
func TestPReLUKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	defer setKernels(haveKernels)
	for _, shape := range [][2]int{{1, 1}, {1, 15}, {1, 16}, {3, 17}, {7, 33}, {100, 128}, {513, 3}} {
		rows, c := shape[0], shape[1]
		x, dy := preluInput(r, rows*c), preluInput(r, rows*c)
		for _, a := range [][]float32{{0.25}, {-1.5}, {0}} {
			var want, got [2][]float32
			for pass, kernels := range []bool{false, true} {
				setKernels(kernels)
				fwd, gx := make([]float32, rows*c), make([]float32, rows*c)
				preluForward(fwd, x, a, c)
				preluGradX(gx, x, a, dy, c)
				if pass == 0 {
					want = [2][]float32{fwd, gx}
				} else {
					got = [2][]float32{fwd, gx}
				}
			}
			for k, name := range []string{"forward", "grad x"} {
				if i := sameBits32(got[k], want[k]); i >= 0 {
					t.Fatalf("%dx%d a=%v: %s[%d] = %v, scalar %v", rows, c, a, name, i, got[k][i], want[k][i])
				}
			}
		}
		for _, slopes := range []int{1, c} {
			ref := make([]float64, slopes)
			for i, v := range x {
				if v <= 0 {
					ref[(i%c)%slopes] += float64(dy[i]) * float64(v)
				}
			}
			out := make([]float32, slopes)
			preluGradSlope(out, x, dy, c)
			for s := range out {
				w := float32(ref[s])
				if math.IsNaN(float64(w)) && math.IsNaN(float64(out[s])) {
					continue // which NaN a sum of two NaNs keeps is the compiler's operand order
				}
				if math.Float32bits(out[s]) != math.Float32bits(w) {
					t.Fatalf("%dx%d, %d slopes: grad slope[%d] = %v, reference %v", rows, c, slopes, s, out[s], w)
				}
			}
		}
	}
}

// BenchmarkPReLUGradSlope times the slope's gradient on an MVGRL layer's
// pre-activations (3,827 nodes × 128, about half of them negative): one
// shared slope and one slope per column.
func BenchmarkPReLUGradSlope(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const rows, c = 3827, 128
	x, dy := make([]float32, rows*c), make([]float32, rows*c)
	for i := range x {
		x[i], dy[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	for _, slopes := range []int{1, c} {
		b.Run(map[int]string{1: "shared", c: "per-column"}[slopes], func(b *testing.B) {
			out := make([]float32, slopes)
			b.SetBytes(int64(8 * len(x)))
			for b.Loop() {
				preluGradSlope(out, x, dy, c)
			}
		})
	}
}

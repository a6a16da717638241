package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBatchNormKernelsMatchScalar: BatchNorm's forward pass (training and
// evaluation mode) and both gradient ops give the same bits with the
// AVX-512 passes as with the scalar loops, for widths around the 8- and
// 16-column blocks and values with a large common offset (where the
// float64 statistics' order matters).
func TestBatchNormKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	defer setKernels(haveKernels)
	for _, shape := range [][2]int{{1, 1}, {2, 7}, {3, 8}, {5, 9}, {64, 15}, {33, 16}, {17, 17}, {200, 32}, {9, 100}} {
		n, c := shape[0], shape[1]
		x, dy := make([]float32, n*c), make([]float32, n*c)
		for i := range x {
			x[i] = float32(100 + 3*r.NormFloat64())
			dy[i] = float32(r.NormFloat64())
		}
		gamma, beta := make([]float32, c), make([]float32, c)
		runMean, runVar := make([]float64, c), make([]float64, c)
		for j := range gamma {
			gamma[j], beta[j] = float32(1+r.NormFloat64()/4), float32(r.NormFloat64())
			runMean[j], runVar[j] = 100+r.NormFloat64(), 1+r.Float64()
		}
		for _, training := range []bool{true, false} {
			var res [2][3][]float32 // scalar, kernels × out, dx, dγ
			var stats [2][]float64
			for pass, kernels := range []bool{false, true} {
				setKernels(kernels)
				cfg := BNConfig{Eps: 1e-5, Training: training}
				if !training {
					cfg.RunningMean, cfg.RunningVar = runMean, runVar
				}
				op, err := newBatchNormOp(c, cfg, false)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]float32, n*c)
				bnForward(op, out, x, gamma, beta)
				dx, dg := make([]float32, n*c), make([]float32, c)
				bnBackward(newBNGradOp(op, true), dx, x, gamma, dy)
				bnBackward(newBNGradOp(op, false), dg, x, gamma, dy)
				mean, invStd := op.stats()
				stats[pass] = append(append([]float64(nil), mean...), invStd...)
				res[pass] = [3][]float32{out, dx, dg}
			}
			for i := range stats[0] {
				if math.Float64bits(stats[0][i]) != math.Float64bits(stats[1][i]) {
					t.Fatalf("%dx%d training=%v: statistic %d = %v with the kernels, %v scalar", n, c, training, i, stats[1][i], stats[0][i])
				}
			}
			for k, name := range []string{"output", "dx", "dgamma"} {
				for i := range res[0][k] {
					if math.Float32bits(res[0][k][i]) != math.Float32bits(res[1][k][i]) {
						t.Fatalf("%dx%d training=%v: %s[%d] = %v with the kernels, %v scalar", n, c, training, name, i, res[1][k][i], res[0][k][i])
					}
				}
			}
		}
	}
}

// TestBatchNorm2DKernelsMatchScalar: BatchNorm2D's forward pass (with and
// without the fused ReLU) and dx give the same bits with the AVX-512 plane
// passes as with the scalar loops, for planes around the 16-value blocks,
// values with a large common offset, and special values in x (NaN, ±Inf,
// −0) where the fused ReLU's sign-bit rule decides.
func TestBatchNorm2DKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	defer setKernels(haveKernels)
	specials := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), -float32(math.NaN())}
	for _, shape := range [][3]int{{1, 1, 1}, {2, 3, 15}, {3, 2, 16}, {2, 4, 17}, {4, 3, 64}, {3, 5, 100}, {8, 2, 1024}} {
		n, c, hw := shape[0], shape[1], shape[2]
		for _, special := range []bool{false, true} {
			x, dy := make([]float32, n*c*hw), make([]float32, n*c*hw)
			for i := range x {
				x[i] = float32(50 + 2*r.NormFloat64())
				dy[i] = float32(r.NormFloat64())
			}
			if special {
				for i, v := range specials {
					if i*7 < len(x) {
						x[i*7] = v
					}
				}
			}
			gamma, beta := make([]float32, c), make([]float32, c)
			for j := range gamma {
				gamma[j], beta[j] = float32(1+r.NormFloat64()/4), float32(r.NormFloat64())
			}
			for _, relu := range []bool{false, true} {
				var res [2][2][]float32
				for pass, kernels := range []bool{false, true} {
					setKernels(kernels)
					op, err := newBatchNormOp(c, BNConfig{Eps: 1e-5, Training: true, ReLU: relu}, true)
					if err != nil {
						t.Fatal(err)
					}
					y, dx := make([]float32, len(x)), make([]float32, len(x))
					bn4Forward(op, y, x, gamma, beta, n, hw)
					var yy []float32
					if relu {
						yy = y
					}
					bn4Backward(op, dx, x, gamma, dy, yy, n, hw)
					res[pass] = [2][]float32{y, dx}
				}
				for k, name := range []string{"y", "dx"} {
					for i := range res[0][k] {
						if math.Float32bits(res[0][k][i]) != math.Float32bits(res[1][k][i]) {
							t.Fatalf("%v special=%v relu=%v: %s[%d] = %v with the kernels, %v scalar", shape, special, relu, name, i, res[1][k][i], res[0][k][i])
						}
					}
				}
			}
		}
	}
}

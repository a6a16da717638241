package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// oneHotRun builds y = Linear(x, W, b) (x one-hot at hot, no input
// gradient) or OneHotLinear(hot, W, b), the loss Σ y⊙R, and returns y, dW
// and db after one run, float32.
func oneHotRun(t *testing.T, oneHot bool, hot []int32, k int, w, b, r []float32) (y, dw, db []float32) {
	t.Helper()
	n, m := len(hot), len(b)
	g := gorgonia.NewGraph()
	wn := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(k, m), gorgonia.WithName("W"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(k, m), tensor.WithBacking(append([]float32(nil), w...)))))
	bn := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(m), gorgonia.WithName("b"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(m), tensor.WithBacking(append([]float32(nil), b...)))))
	var out *gorgonia.Node
	var err error
	if oneHot {
		out, err = OneHotLinear(hot, wn, bn)
	} else {
		x := make([]float32, n*k)
		for i, c := range hot {
			x[i*k+int(c)] = 1
		}
		xn := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(n, k), gorgonia.WithName("x"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(n, k), tensor.WithBacking(x))))
		out, err = Linear(xn, wn, bn, LinearOpts{NoInputGrad: true})
	}
	if err != nil {
		t.Fatal(err)
	}
	rn := gorgonia.NewConstant(tensor.New(tensor.WithShape(n, m), tensor.WithBacking(append([]float32(nil), r...))), gorgonia.WithName("R"))
	loss, err := gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(out, rn)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gorgonia.Grad(loss, wn, bn); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	gw, err := wn.Grad()
	if err != nil {
		t.Fatal(err)
	}
	gb, err := bn.Grad()
	if err != nil {
		t.Fatal(err)
	}
	cp := func(v gorgonia.Value) []float32 { return append([]float32(nil), v.Data().([]float32)...) }
	return cp(out.Value()), cp(gw), cp(gb)
}

// sameBits reports the first element whose bits differ.
func sameBits(a, b []float32) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

// TestOneHotLinearMatchesLinear: OneHotLinear's output and gradients are
// bit for bit those of Linear on the one-hot input (float32, with the FMA
// kernels of internal/gemm; equal values with other backends), for widths k below and above the GEMM's
// k block (384), row counts below, at and above gemmReduceChunk (256) and
// its multiples, rows concentrated on few columns (long sums), and weights,
// biases and gradients holding signed zeros.
func TestOneHotLinearMatchesLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	for _, c := range []struct{ n, k, m, cols int }{
		{1, 1, 4, 1}, {5, 7, 3, 7}, {100, 37, 128, 37}, {256, 37, 16, 5}, {257, 64, 33, 64},
		{1000, 492, 128, 492}, {1000, 385, 20, 3}, {3000, 800, 17, 40}, {2600, 492, 128, 200},
	} {
		t.Run(fmt.Sprintf("n%d_k%d_m%d", c.n, c.k, c.m), func(t *testing.T) {
			hot := make([]int32, c.n)
			for i := range hot {
				hot[i] = int32(rng.IntN(c.cols))
			}
			val := func(n int) []float32 {
				v := make([]float32, n)
				for i := range v {
					switch rng.IntN(20) {
					case 0:
						v[i] = 0
					case 1:
						v[i] = float32(math.Copysign(0, -1))
					default:
						v[i] = float32(rng.NormFloat64())
					}
				}
				return v
			}
			w, b, r := val(c.k*c.m), val(c.m), val(c.n*c.m)
			y0, dw0, db0 := oneHotRun(t, false, hot, c.k, w, b, r)
			y1, dw1, db1 := oneHotRun(t, true, hot, c.k, w, b, r)
			for _, p := range []struct {
				name       string
				want, got_ []float32
			}{{"y", y0, y1}, {"dW", dw0, dw1}, {"db", db0, db1}} {
				if !OneHotMatchesLinear() { // gonum's or OpenBLAS's GEMM: equal values, zeros' signs aside
					for i := range p.want {
						if p.want[i] != p.got_[i] {
							t.Fatalf("%s: element %d is %v with OneHotLinear, %v with Linear", p.name, i, p.got_[i], p.want[i])
						}
					}
					continue
				}
				if i, ok := sameBits(p.want, p.got_); !ok {
					t.Fatalf("%s: element %d is %v (bits %#x) with OneHotLinear, %v (bits %#x) with Linear",
						p.name, i, p.got_[max(i, 0)], math.Float32bits(p.got_[max(i, 0)]), p.want[max(i, 0)], math.Float32bits(p.want[max(i, 0)]))
				}
			}
		})
	}
}

func TestOneHotLinearRejects(t *testing.T) {
	g := gorgonia.NewGraph()
	w := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 2), gorgonia.WithName("W"))
	b := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("b"))
	for _, c := range []struct {
		hot  []int32
		want string
	}{{[]int32{0, 3}, "column 3, W has 3 rows"}, {[]int32{-1}, "column -1"}, {nil, "no rows"}} {
		if _, err := OneHotLinear(c.hot, w, b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hot %v: err = %v, want one containing %q", c.hot, err, c.want)
		}
	}
}

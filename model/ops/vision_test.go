package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// tensorNode returns an input node of any rank holding v (converted to dt).
func tensorNode(g *gorgonia.ExprGraph, dt tensor.Dtype, shape []int, v []float64, name string) *gorgonia.Node {
	var val *tensor.Dense
	if dt == tensor.Float32 {
		val = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(to32(v)))
	} else {
		val = dense64(shape, v)
	}
	return gorgonia.NewTensor(g, dt, len(shape), gorgonia.WithShape(shape...), gorgonia.WithValue(val), gorgonia.WithName(name))
}

func prod(s []int) int {
	p := 1
	for _, d := range s {
		p *= d
	}
	return p
}

// convGeomCase is one convolution geometry: x [n,c,h,w], w [o,c,kh,kw].
type convGeomCase struct {
	n, c, h, w, o, kh, kw, stride, pad int
}

func (g convGeomCase) String() string {
	return fmt.Sprintf("x%dx%dx%dx%d_w%dx%dx%d_s%d_p%d", g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.stride, g.pad)
}
func (g convGeomCase) xShape() []int { return []int{g.n, g.c, g.h, g.w} }
func (g convGeomCase) wShape() []int { return []int{g.o, g.c, g.kh, g.kw} }
func (g convGeomCase) out() (int, int) {
	return (g.h+2*g.pad-g.kh)/g.stride + 1, (g.w+2*g.pad-g.kw)/g.stride + 1
}

// convRef is the direct 7-loop convolution in float64, and the adjoint
// loops for dX and dW given dY.
func convRef(g convGeomCase, x, w []float64) []float64 {
	ho, wo := g.out()
	y := make([]float64, g.n*g.o*ho*wo)
	for n := 0; n < g.n; n++ {
		for o := 0; o < g.o; o++ {
			for oh := 0; oh < ho; oh++ {
				for ow := 0; ow < wo; ow++ {
					s := 0.0
					for c := 0; c < g.c; c++ {
						for a := 0; a < g.kh; a++ {
							for b := 0; b < g.kw; b++ {
								ih, iw := oh*g.stride-g.pad+a, ow*g.stride-g.pad+b
								if ih < 0 || ih >= g.h || iw < 0 || iw >= g.w {
									continue
								}
								s += x[((n*g.c+c)*g.h+ih)*g.w+iw] * w[((o*g.c+c)*g.kh+a)*g.kw+b]
							}
						}
					}
					y[((n*g.o+o)*ho+oh)*wo+ow] = s
				}
			}
		}
	}
	return y
}

func convRefGrads(g convGeomCase, x, w, dy []float64) (dx, dw []float64) {
	ho, wo := g.out()
	dx = make([]float64, len(x))
	dw = make([]float64, len(w))
	for n := 0; n < g.n; n++ {
		for o := 0; o < g.o; o++ {
			for oh := 0; oh < ho; oh++ {
				for ow := 0; ow < wo; ow++ {
					d := dy[((n*g.o+o)*ho+oh)*wo+ow]
					for c := 0; c < g.c; c++ {
						for a := 0; a < g.kh; a++ {
							for b := 0; b < g.kw; b++ {
								ih, iw := oh*g.stride-g.pad+a, ow*g.stride-g.pad+b
								if ih < 0 || ih >= g.h || iw < 0 || iw >= g.w {
									continue
								}
								xi := ((n*g.c+c)*g.h+ih)*g.w + iw
								wi := ((o*g.c+c)*g.kh+a)*g.kw + b
								dx[xi] += w[wi] * d
								dw[wi] += x[xi] * d
							}
						}
					}
				}
			}
		}
	}
	return dx, dw
}

var convCases = []convGeomCase{
	{1, 2, 5, 4, 3, 3, 3, 1, 1},      // 3×3 same, non-square, N=1
	{3, 3, 7, 6, 4, 3, 3, 2, 1},      // 3×3 stride 2 pad 1 (col2im backward)
	{3, 2, 6, 5, 3, 3, 3, 1, 0},      // 3×3 valid (row-wise im2col)
	{2, 2, 5, 5, 3, 3, 3, 2, 0},      // stride 2, no padding
	{3, 3, 6, 6, 4, 1, 1, 1, 0},      // 1×1 pointwise (no im2col)
	{3, 4, 7, 8, 5, 1, 1, 2, 0},      // 1×1 stride 2 (projection shortcut)
	{1, 1, 4, 3, 2, 2, 3, 1, 2},      // rectangular kernel, pad > k−1
	{2, 2, 3, 3, 2, 5, 5, 1, 2},      // kernel as large as the padded input
	{2, 2, 8, 7, 3, 3, 3, 3, 1},      // stride 3 (three phases, uneven planes)
	{2, 3, 6, 7, 2, 2, 2, 2, 0},      // 2×2 kernel, stride 2, odd width
	{2, 2, 5, 6, 3, 1, 1, 2, 1},      // 1×1 stride 2 with padding
	{10, 16, 12, 12, 16, 3, 3, 1, 1}, // parallel, N > dwChunks
	{11, 8, 9, 10, 12, 3, 3, 2, 1},   // parallel, stride 2, uneven chunks
}

// TestConv2DAgainstLoops checks the forward op and both gradient ops, in
// float64 and float32, against the direct loops.
func TestConv2DAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	for _, gc := range convCases {
		t.Run(gc.String(), func(t *testing.T) {
			x, w := randVec(rng, prod(gc.xShape())), randVec(rng, prod(gc.wShape()))
			want := convRef(gc, x, w)
			ho, wo := gc.out()
			yShape := []int{gc.n, gc.o, ho, wo}
			dy := randVec(rng, len(want))
			wantDx, wantDw := convRefGrads(gc, x, w, dy)
			fwd := newConvOp(gc.stride, gc.pad, false, false)
			gx := newConvGradXOp(gc.stride, gc.pad, gc.c, gc.h, gc.w, false)
			gw := newConvGradWOp(gc.stride, gc.pad, gc.kh, gc.kw, false)
			for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
				tol := 1e-12
				mk := func(s []int, v []float64) *tensor.Dense { return dense64(s, v) }
				if dt == tensor.Float32 {
					tol = 2e-5
					mk = func(s []int, v []float64) *tensor.Dense {
						return tensor.New(tensor.WithShape(s...), tensor.WithBacking(to32(v)))
					}
				}
				check := func(what string, got gorgonia.Value, err error, want []float64) {
					t.Helper()
					if err != nil {
						t.Fatalf("%v %s: %v", dt, what, err)
					}
					gv := valueFloats(got)
					scale := 0.0
					for _, v := range want {
						scale = math.Max(scale, math.Abs(v))
					}
					for i := range want {
						if math.Abs(gv[i]-want[i]) > tol*(1+scale) {
							t.Fatalf("%v %s[%d] = %v, want %v", dt, what, i, gv[i], want[i])
						}
					}
				}
				y, err := fwd.Do(mk(gc.xShape(), x), mk(gc.wShape(), w))
				check("y", y, err, want)
				dX, err := gx.Do(mk(gc.wShape(), w), mk(yShape, dy))
				check("dX", dX, err, wantDx)
				dW, err := gw.Do(mk(gc.xShape(), x), mk(yShape, dy))
				check("dW", dW, err, wantDw)
			}
		})
	}
}

// TestConv2DKnownValue: a 3×3 box filter over a 3×3 image of ones with
// padding 1 counts the in-image neighbours.
func TestConv2DKnownValue(t *testing.T) {
	x := dense64([]int{1, 1, 3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1})
	w := dense64([]int{1, 1, 3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1})
	y, err := newConvOp(1, 1, false, false).Do(x, w)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{4, 6, 4, 6, 9, 6, 4, 6, 4}
	for i, v := range y.(*tensor.Dense).Float64s() {
		if v != want[i] {
			t.Fatalf("y = %v, want %v", y.(*tensor.Dense).Float64s(), want)
		}
	}
}

// TestIm2colAdjoint checks ⟨im2col(x), C⟩ = ⟨x, col2im(C)⟩ for every
// geometry (col2im is the adjoint used by the strided dX).
func TestIm2colAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	for _, gc := range convCases {
		g, err := newConvGeom("test", tensor.Shape{1, gc.c, gc.h, gc.w}, tensor.Shape(gc.wShape()), gc.stride, gc.pad)
		if err != nil {
			t.Fatal(err)
		}
		x := randVec(rng, gc.c*gc.h*gc.w)
		cm := randVec(rng, g.k()*g.p())
		col := make([]float64, len(cm))
		for i := range col {
			col[i] = math.NaN() // every entry must be written
		}
		im2col(&g, x, col, g.p(), make([]float64, g.planeSize()))
		back := make([]float64, len(x))
		col2imAdd(&g, cm, g.p(), back)
		var l, r float64
		for i := range col {
			l += col[i] * cm[i]
		}
		for i := range x {
			r += x[i] * back[i]
		}
		if math.IsNaN(l) || math.Abs(l-r) > 1e-10*(1+math.Abs(l)) {
			t.Errorf("%v: ⟨im2col x, C⟩ = %v, ⟨x, col2im C⟩ = %v", gc, l, r)
		}
	}
}

// ndCase is a finite-difference check for ops of any rank.
type ndCase struct {
	name   string
	shapes [][]int
	wrt    []int
	build  func(in []*gorgonia.Node) (*gorgonia.Node, error)
}

// ndGraph builds the graph of c on vals with loss Σ y⊙R (R from seed) and,
// when grad is set, the gradients of the wrt inputs.
func ndGraph(t testing.TB, c ndCase, vals [][]float64, dt tensor.Dtype, grad bool) (*gorgonia.ExprGraph, []*gorgonia.Node, *gorgonia.Node, *gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	in := make([]*gorgonia.Node, len(vals))
	for i, v := range vals {
		in[i] = tensorNode(g, dt, c.shapes[i], v, fmt.Sprintf("in%d", i))
	}
	y, err := c.build(in)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 99))
	rv := randVec(rng, y.Shape().TotalSize())
	var rt *tensor.Dense
	if dt == tensor.Float32 {
		rt = tensor.New(tensor.WithShape(y.Shape()...), tensor.WithBacking(to32(rv)))
	} else {
		rt = dense64(y.Shape(), rv)
	}
	r := gorgonia.NewConstant(rt, gorgonia.WithName("R"))
	loss, err := gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(y, r)))
	if err != nil {
		t.Fatal(err)
	}
	if grad {
		var wrt gorgonia.Nodes
		for _, i := range c.wrt {
			wrt = append(wrt, in[i])
		}
		if _, err := gorgonia.Grad(loss, wrt...); err != nil {
			t.Fatal(err)
		}
	}
	return g, in, y, loss
}

func ndLoss(t *testing.T, c ndCase, vals [][]float64, grad bool) (float64, [][]float64) {
	t.Helper()
	g, in, _, loss := ndGraph(t, c, vals, tensor.Float64, grad)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var grads [][]float64
	if grad {
		for _, i := range c.wrt {
			gv, err := in[i].Grad()
			if err != nil {
				t.Fatal(err)
			}
			grads = append(grads, valueFloats(gv))
		}
	}
	return loss.Value().Data().(float64), grads
}

func checkNDGradient(t *testing.T, c ndCase, vals [][]float64) {
	t.Helper()
	const h, tol = 1e-6, 1e-6
	_, grads := ndLoss(t, c, vals, true)
	for k, i := range c.wrt {
		for e := range vals[i] {
			orig := vals[i][e]
			vals[i][e] = orig + h
			lp, _ := ndLoss(t, c, vals, false)
			vals[i][e] = orig - h
			lm, _ := ndLoss(t, c, vals, false)
			vals[i][e] = orig
			num := (lp - lm) / (2 * h)
			ana := grads[k][e]
			if rel := math.Abs(num-ana) / math.Max(1, math.Max(math.Abs(num), math.Abs(ana))); rel > tol {
				t.Errorf("%s: d/d in%d[%d]: analytic %.10g, numeric %.10g (rel err %.2g)", c.name, i, e, ana, num, rel)
			}
		}
	}
}

func convCase(gc convGeomCase) ndCase {
	return ndCase{"Conv2D " + gc.String(), [][]int{gc.xShape(), gc.wShape()}, []int{0, 1},
		func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			return Conv2D(in[0], in[1], ConvOpts{Stride: gc.stride, Pad: gc.pad})
		}}
}

// block is a residual block in miniature: conv → BN+ReLU → conv → BN →
// AddReLU with a projection shortcut (1×1 stride-2 conv → BN) → GAP.
func block(in []*gorgonia.Node) (*gorgonia.Node, error) {
	x, w1, w2, ws, g1, b1, g2, b2, g3, b3 := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], in[8], in[9]
	h, err := Conv2D(x, w1, ConvOpts{Stride: 2, Pad: 1})
	if err != nil {
		return nil, err
	}
	if h, _, err = BatchNorm2D(h, g1, b1, BNConfig{Eps: 1e-5, Training: true, ReLU: true}); err != nil {
		return nil, err
	}
	if h, err = Conv2D(h, w2, ConvOpts{Stride: 1, Pad: 1}); err != nil {
		return nil, err
	}
	if h, _, err = BatchNorm2D(h, g2, b2, BNConfig{Eps: 1e-5, Training: true}); err != nil {
		return nil, err
	}
	s, err := Conv2D(x, ws, ConvOpts{Stride: 2})
	if err != nil {
		return nil, err
	}
	if s, _, err = BatchNorm2D(s, g3, b3, BNConfig{Eps: 1e-5, Training: true}); err != nil {
		return nil, err
	}
	if h, err = AddReLU(h, s); err != nil {
		return nil, err
	}
	return GlobalAvgPool(h)
}

// blockCase has input [n,2,6,5] and 3 output channels.
func blockCase(n int) ndCase {
	return ndCase{"Block", [][]int{{n, 2, 6, 5}, {3, 2, 3, 3}, {3, 3, 3, 3}, {3, 2, 1, 1}, {3}, {3}, {3}, {3}, {3}, {3}},
		[]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, block}
}

func randInputs(rng *rand.Rand, shapes [][]int) [][]float64 {
	vals := make([][]float64, len(shapes))
	for i, s := range shapes {
		vals[i] = randVec(rng, prod(s))
	}
	return vals
}

func TestVisionGradientsFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	rm, rv := randVec(rng, 3), randVec(rng, 3)
	for j := range rv {
		rv[j] = rv[j]*rv[j] + 0.2
	}
	bn := func(cfg BNConfig) func(in []*gorgonia.Node) (*gorgonia.Node, error) {
		return func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			y, _, err := BatchNorm2D(in[0], in[1], in[2], cfg)
			return y, err
		}
	}
	cases := []ndCase{}
	for _, gc := range convCases[:11] {
		cases = append(cases, convCase(gc))
	}
	cases = append(cases,
		ndCase{"BatchNorm2D train", [][]int{{3, 3, 2, 4}, {3}, {3}}, []int{0, 1, 2}, bn(BNConfig{Eps: 1e-5, Training: true})},
		ndCase{"BatchNorm2D train ReLU", [][]int{{3, 3, 2, 4}, {3}, {3}}, []int{0, 1, 2}, bn(BNConfig{Eps: 1e-5, Training: true, ReLU: true})},
		ndCase{"BatchNorm2D eval", [][]int{{2, 3, 3, 2}, {3}, {3}}, []int{0, 1, 2}, bn(BNConfig{Eps: 1e-5, RunningMean: rm, RunningVar: rv})},
		ndCase{"BatchNorm2D eval ReLU", [][]int{{2, 3, 3, 2}, {3}, {3}}, []int{0, 1, 2}, bn(BNConfig{Eps: 1e-5, RunningMean: rm, RunningVar: rv, ReLU: true})},
		ndCase{"ReLU 4-D", [][]int{{2, 3, 2, 2}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return ReLU(in[0]) }},
		ndCase{"ReLU matrix", [][]int{{4, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return ReLU(in[0]) }},
		ndCase{"AddReLU", [][]int{{2, 3, 2, 2}, {2, 3, 2, 2}}, []int{0, 1}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return AddReLU(in[0], in[1]) }},
		ndCase{"AddReLU same input", [][]int{{2, 3, 2, 2}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return AddReLU(in[0], in[0]) }},
		ndCase{"GlobalAvgPool", [][]int{{2, 3, 2, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return GlobalAvgPool(in[0]) }},
		blockCase(2),
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkNDGradient(t, c, randInputs(rng, c.shapes))
		})
	}
}

// reference loops for BatchNorm2D, ReLU and GlobalAvgPool.
func bn2dRef(x []float64, n, c, hw int, gamma, beta, mean, variance []float64, eps float64, relu bool) []float64 {
	if mean == nil {
		mean, variance = make([]float64, c), make([]float64, c)
		cnt := float64(n * hw)
		for j := 0; j < c; j++ {
			for i := 0; i < n; i++ {
				for k := 0; k < hw; k++ {
					mean[j] += x[(i*c+j)*hw+k]
				}
			}
			mean[j] /= cnt
			for i := 0; i < n; i++ {
				for k := 0; k < hw; k++ {
					d := x[(i*c+j)*hw+k] - mean[j]
					variance[j] += d * d
				}
			}
			variance[j] /= cnt
		}
	}
	y := make([]float64, len(x))
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			for k := 0; k < hw; k++ {
				v := gamma[j]*(x[(i*c+j)*hw+k]-mean[j])/math.Sqrt(variance[j]+eps) + beta[j]
				if relu && v < 0 {
					v = 0
				}
				y[(i*c+j)*hw+k] = v
			}
		}
	}
	return y
}

func TestVisionForwardAgainstLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	// Large enough that the channel and element loops run in parallel.
	n, c, h, w := 6, 5, 40, 33
	hw := h * w
	x := randVec(rng, n*c*hw)
	for i := range x {
		x[i] = 3*x[i] + 2
	}
	x2 := randVec(rng, len(x))
	gamma, beta := randVec(rng, c), randVec(rng, c)
	rm, rv := randVec(rng, c), randVec(rng, c)
	for j := range rv {
		rv[j] = rv[j]*rv[j] + 0.1
	}
	shape := []int{n, c, h, w}
	for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
		tol := 1e-12
		if dt == tensor.Float32 {
			tol = 2e-5
		}
		cmp := func(t *testing.T, what string, got, want []float64) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
					t.Fatalf("%v %s[%d] = %v, want %v", dt, what, i, got[i], want[i])
				}
			}
		}
		for _, bc := range []struct {
			name  string
			train bool
			relu  bool
		}{{"train", true, false}, {"trainReLU", true, true}, {"eval", false, false}, {"evalReLU", false, true}} {
			t.Run(fmt.Sprintf("BatchNorm2D_%s_%v", bc.name, dt), func(t *testing.T) {
				g := gorgonia.NewGraph()
				y, op, err := BatchNorm2D(tensorNode(g, dt, shape, x, "x"), tensorNode(g, dt, []int{c}, gamma, "g"), tensorNode(g, dt, []int{c}, beta, "b"),
					BNConfig{Eps: 1e-5, Training: bc.train, RunningMean: rm, RunningVar: rv, ReLU: bc.relu})
				if err != nil {
					t.Fatal(err)
				}
				vm := gorgonia.NewTapeMachine(g)
				defer vm.Close()
				if err := vm.RunAll(); err != nil {
					t.Fatal(err)
				}
				var want []float64
				if bc.train {
					want = bn2dRef(x, n, c, hw, gamma, beta, nil, nil, 1e-5, bc.relu)
				} else {
					want = bn2dRef(x, n, c, hw, gamma, beta, rm, rv, 1e-5, bc.relu)
				}
				cmp(t, "y", valueFloats(y.Value()), want)
				mean, variance, cnt, err := op.BatchStats()
				if !bc.train {
					if err == nil {
						t.Fatal("BatchStats in evaluation mode: want an error")
					}
					return
				}
				if err != nil || cnt != n*hw {
					t.Fatalf("BatchStats: n = %d (want %d), err = %v", cnt, n*hw, err)
				}
				for j := 0; j < c; j++ {
					var m, v float64
					for i := 0; i < n; i++ {
						for k := 0; k < hw; k++ {
							m += x[(i*c+j)*hw+k]
						}
					}
					m /= float64(n * hw)
					for i := 0; i < n; i++ {
						for k := 0; k < hw; k++ {
							d := x[(i*c+j)*hw+k] - m
							v += d * d
						}
					}
					v /= float64(n * hw)
					// The statistics are float64 sums of the (rounded) input.
					if math.Abs(mean[j]-m) > 1e-6 || math.Abs(variance[j]-v) > 1e-5*v {
						t.Fatalf("stats[%d] = (%v, %v), want (%v, %v)", j, mean[j], variance[j], m, v)
					}
				}
			})
		}
		t.Run(fmt.Sprintf("ReLU_AddReLU_GAP_%v", dt), func(t *testing.T) {
			g := gorgonia.NewGraph()
			a, b := tensorNode(g, dt, shape, x2, "a"), tensorNode(g, dt, shape, x, "b")
			r, err := ReLU(a)
			if err != nil {
				t.Fatal(err)
			}
			ar, err := AddReLU(a, b)
			if err != nil {
				t.Fatal(err)
			}
			p, err := GlobalAvgPool(b)
			if err != nil {
				t.Fatal(err)
			}
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			wr, war := make([]float64, len(x)), make([]float64, len(x))
			for i := range x {
				wr[i] = math.Max(x2[i], 0)
				war[i] = math.Max(x2[i]+x[i], 0)
			}
			wp := make([]float64, n*c)
			for i := range wp {
				for k := 0; k < hw; k++ {
					wp[i] += x[i*hw+k]
				}
				wp[i] /= float64(hw)
			}
			cmp(t, "ReLU", valueFloats(r.Value()), wr)
			cmp(t, "AddReLU", valueFloats(ar.Value()), war)
			cmp(t, "GlobalAvgPool", valueFloats(p.Value()), wp)
			if s := p.Shape(); !s.Eq(tensor.Shape{n, c}) {
				t.Fatalf("GlobalAvgPool shape %v, want (%d, %d)", s, n, c)
			}
		})
	}
}

// runBlock builds blockCase(n) in dtype dt on vals, runs the machine
// `runs` times (resetting in between) and returns the loss and the
// gradients of every input after each run, as float64.
func runBlock(t *testing.T, vals [][]float64, dt tensor.Dtype, runs int, between func(run int, in []*gorgonia.Node)) [][]float64 {
	t.Helper()
	c := blockCase(len(vals[0]) / (2 * 6 * 5))
	g, in, _, loss := ndGraph(t, c, vals, dt, true)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	var out [][]float64
	for r := 0; r < runs; r++ {
		if between != nil {
			between(r, in)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		var res []float64
		switch l := loss.Value().Data().(type) {
		case float64:
			res = []float64{l}
		case float32:
			res = []float64{float64(l)}
		default:
			t.Fatalf("loss has type %T", l)
		}
		for _, n := range in {
			gv, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, valueFloats(gv)...)
		}
		out = append(out, res)
		vm.Reset()
	}
	return out
}

func TestVisionFloat32MatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	vals := randInputs(rng, blockCase(4).shapes)
	r64 := runBlock(t, vals, tensor.Float64, 1, nil)[0]
	r32 := runBlock(t, vals, tensor.Float32, 1, nil)[0]
	scale := 0.0
	for _, v := range r64 {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range r64 {
		if math.Abs(r32[i]-r64[i]) > 1e-4*scale {
			t.Fatalf("value %d (0 is the loss, then the gradients): float32 %v, float64 %v (scale %v)", i, r32[i], r64[i], scale)
		}
	}
}

// TestVisionRerunIdentical runs one machine with inputs A, then B, then A:
// the third run must reproduce the first bit for bit (every buffer is
// fully rewritten, no state leaks between runs), and B must differ. With
// output reuse on, the results must be the same bits as with it off.
func TestVisionRerunIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	shapes := blockCase(9).shapes
	a, b := randInputs(rng, shapes), randInputs(rng, shapes)
	same := func(p, q []float64) bool {
		for i := range p {
			if math.Float64bits(p[i]) != math.Float64bits(q[i]) {
				return false
			}
		}
		return true
	}
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		var byMode [2][][]float64
		for mode, reuse := range []bool{false, true} {
			prev := SetOutputReuse(reuse)
			res := runBlock(t, a, dt, 3, func(run int, in []*gorgonia.Node) {
				src := a
				if run == 1 {
					src = b
				}
				for i, n := range in {
					var v gorgonia.Value = dense64(shapes[i], src[i])
					if dt == tensor.Float32 {
						v = tensor.New(tensor.WithShape(shapes[i]...), tensor.WithBacking(to32(src[i])))
					}
					if err := gorgonia.Let(n, v); err != nil {
						t.Fatal(err)
					}
				}
			})
			SetOutputReuse(prev)
			if !same(res[0], res[2]) {
				t.Errorf("%v reuse=%t: rerunning with the same inputs changed the loss or gradients", dt, reuse)
			}
			if same(res[0], res[1]) {
				t.Errorf("%v reuse=%t: different inputs gave identical results", dt, reuse)
			}
			byMode[mode] = res
		}
		for r := range byMode[0] {
			if !same(byMode[0][r], byMode[1][r]) {
				t.Errorf("%v run %d: output reuse changed the results", dt, r)
			}
		}
	}
}

// TestOutputReuseSavesAllocation checks that with SetOutputReuse(true) a
// rerun of a warm machine allocates far less than without.
func TestOutputReuseSavesAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop entries: allocation counts are not representative")
	}
	rng := rand.New(rand.NewPCG(30, 1))
	// Large enough images that the outputs dominate the machine's own
	// per-run allocations.
	c := blockCase(16)
	c.shapes[0] = []int{16, 2, 32, 32}
	vals := randInputs(rng, c.shapes)
	allocated := func(reuse bool) uint64 {
		defer SetOutputReuse(SetOutputReuse(reuse))
		g, _, _, _ := ndGraph(t, c, vals, tensor.Float32, true)
		vm := gorgonia.NewTapeMachine(g)
		defer vm.Close()
		var ms runtime.MemStats
		var before uint64
		for r := 0; r < 4; r++ {
			if r == 1 {
				runtime.ReadMemStats(&ms)
				before = ms.TotalAlloc
			}
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			vm.Reset()
		}
		runtime.ReadMemStats(&ms)
		return (ms.TotalAlloc - before) / 3
	}
	off, on := allocated(false), allocated(true)
	t.Logf("bytes allocated per run: %d without reuse, %d with", off, on)
	if on*2 > off {
		t.Errorf("output reuse allocates %d bytes per run, without %d: want less than half", on, off)
	}
}

// TestVisionDeterministicAcrossGOMAXPROCS checks that float32 results (dW
// above all) have identical bits with 1, 2 and 3 threads, with the direct
// and the Winograd stride-1 convolution.
func TestVisionDeterministicAcrossGOMAXPROCS(t *testing.T) {
	for _, wino := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(26, 1))
		// Large enough for the parallel paths: 12 images, 16 channels 16×16.
		gc := convGeomCase{12, 16, 16, 16, 16, 3, 3, 1, 1}
		c := ndCase{"ConvBN", [][]int{gc.xShape(), gc.wShape(), {16}, {16}, {16, 16, 3, 3}}, []int{0, 1, 2, 3, 4},
			func(in []*gorgonia.Node) (*gorgonia.Node, error) {
				h, err := Conv2D(in[0], in[1], ConvOpts{Stride: 1, Pad: 1, Winograd: wino})
				if err != nil {
					return nil, err
				}
				if h, _, err = BatchNorm2D(h, in[2], in[3], BNConfig{Eps: 1e-5, Training: true, ReLU: true}); err != nil {
					return nil, err
				}
				if h, err = Conv2D(h, in[4], ConvOpts{Stride: 2, Pad: 1}); err != nil {
					return nil, err
				}
				return ReLU(h)
			}}
		vals := randInputs(rng, c.shapes)
		run := func(procs int) [][]float32 {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			g, in, _, _ := ndGraph(t, c, vals, tensor.Float32, true)
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			var out [][]float32
			for _, n := range in {
				gv, err := n.Grad()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, append([]float32(nil), gv.(*tensor.Dense).Float32s()...))
			}
			return out
		}
		ref := run(1)
		for _, p := range []int{2, 3} {
			got := run(p)
			for i := range ref {
				for e := range ref[i] {
					if math.Float32bits(ref[i][e]) != math.Float32bits(got[i][e]) {
						t.Fatalf("winograd %t, GOMAXPROCS %d: gradient of input %d differs at %d: %v vs %v", wino, p, i, e, got[i][e], ref[i][e])
					}
				}
			}
		}
	}
}

func TestVisionRejectsBadShapes(t *testing.T) {
	g := gorgonia.NewGraph()
	rng := rand.New(rand.NewPCG(27, 1))
	mk := func(name string, shape ...int) *gorgonia.Node {
		return tensorNode(g, tensor.Float64, shape, randVec(rng, prod(shape)), name)
	}
	x := mk("x", 2, 3, 5, 5)
	w := mk("w", 4, 3, 3, 3)
	w2ch := mk("w2ch", 4, 2, 3, 3)
	big := mk("big", 4, 3, 9, 9)
	x3 := mk("x3", 3, 5, 5)
	m := mk("m", 4, 3)
	v3, v4 := mk("v3", 3), mk("v4", 4)
	x32 := tensorNode(g, tensor.Float32, []int{2, 3, 5, 5}, randVec(rng, 150), "x32")
	cases := []struct {
		name string
		f    func() error
		want string
	}{
		{"conv channel mismatch", func() error { _, err := Conv2D(x, w2ch, ConvOpts{Pad: 1}); return err }, "channels"},
		{"conv 3-D x", func() error { _, err := Conv2D(x3, w, ConvOpts{}); return err }, "[N,C,H,W]"},
		{"conv matrix w", func() error { _, err := Conv2D(x, m, ConvOpts{}); return err }, "[O,C,KH,KW]"},
		{"conv kernel too large", func() error { _, err := Conv2D(x, big, ConvOpts{Pad: 1}); return err }, "larger than"},
		{"conv negative stride", func() error { _, err := Conv2D(x, w, ConvOpts{Stride: -1}); return err }, "stride"},
		{"conv negative pad", func() error { _, err := Conv2D(x, w, ConvOpts{Pad: -1}); return err }, "pad"},
		{"conv mixed dtypes", func() error { _, err := Conv2D(x32, w, ConvOpts{Pad: 1}); return err }, "Conv2D"},
		{"conv nil", func() error { _, err := Conv2D(nil, w, ConvOpts{}); return err }, "nil"},
		{"bn2d matrix x", func() error { _, _, err := BatchNorm2D(m, v3, v3, BNConfig{Eps: 1e-5, Training: true}); return err }, "[N,C,H,W]"},
		{"bn2d gamma length", func() error { _, _, err := BatchNorm2D(x, v4, v3, BNConfig{Eps: 1e-5, Training: true}); return err }, "length"},
		{"bn2d eps", func() error { _, _, err := BatchNorm2D(x, v3, v3, BNConfig{Training: true}); return err }, "Eps"},
		{"bn2d eval without stats", func() error { _, _, err := BatchNorm2D(x, v3, v3, BNConfig{Eps: 1e-5}); return err }, "running"},
		{"bn matrix ReLU", func() error {
			_, _, err := BatchNorm(m, v3, v3, BNConfig{Eps: 1e-5, Training: true, ReLU: true})
			return err
		}, "BatchNorm2D"},
		{"addrelu shapes", func() error { _, err := AddReLU(x, big); return err }, "shape"},
		{"gap matrix", func() error { _, err := GlobalAvgPool(m); return err }, "[N,C,H,W]"},
		{"relu nil", func() error { _, err := ReLU(nil); return err }, "nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.f()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}

	// Run-time checks on values (Do), e.g. from a machine fed a wrong shape.
	d := func(shape ...int) *tensor.Dense { return dense64(shape, make([]float64, prod(shape))) }
	f32 := tensor.New(tensor.WithShape(4, 3, 3, 3), tensor.Of(tensor.Float32))
	runCases := []struct {
		name string
		f    func() error
	}{
		{"conv x 3-D", func() error { _, err := newConvOp(1, 0, false, false).Do(d(3, 5, 5), d(4, 3, 3, 3)); return err }},
		{"conv channels", func() error { _, err := newConvOp(1, 0, false, false).Do(d(2, 2, 5, 5), d(4, 3, 3, 3)); return err }},
		{"conv dtypes", func() error { _, err := newConvOp(1, 0, false, false).Do(d(2, 3, 5, 5), f32); return err }},
		{"conv arity", func() error { _, err := newConvOp(1, 0, false, false).Do(d(2, 3, 5, 5)); return err }},
		{"gradX dy shape", func() error {
			_, err := newConvGradXOp(1, 1, 3, 5, 5, false).Do(d(4, 3, 3, 3), d(2, 4, 4, 5))
			return err
		}},
		{"gradW dy shape", func() error {
			_, err := newConvGradWOp(1, 1, 3, 3, false).Do(d(2, 3, 5, 5), d(2, 4, 5, 6))
			return err
		}},
		{"addrelu shapes", func() error { _, err := newAddReLUOp().Do(d(2, 3), d(3, 2)); return err }},
		{"relugrad shapes", func() error { _, err := newReluGradOp().Do(d(2, 3, 1, 1), d(2, 3)); return err }},
		{"gap rank", func() error { _, err := newGapOp().Do(d(2, 3)); return err }},
		{"bn2d one value per channel", func() error {
			op, err := newBatchNormOp(3, BNConfig{Eps: 1e-5, Training: true}, true)
			if err != nil {
				return nil
			}
			_, err = op.Do(d(1, 3, 1, 1), d(3), d(3))
			return err
		}},
	}
	for _, c := range runCases {
		t.Run("Do "+c.name, func(t *testing.T) {
			if err := c.f(); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestVisionNoInputGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	g := gorgonia.NewGraph()
	x := tensorNode(g, tensor.Float64, []int{2, 3, 5, 5}, randVec(rng, 150), "x")
	w := tensorNode(g, tensor.Float64, []int{4, 3, 3, 3}, randVec(rng, 108), "w")
	y, err := Conv2D(x, w, ConvOpts{Stride: 1, Pad: 1, NoInputGrad: true})
	if err != nil {
		t.Fatal(err)
	}
	loss := gorgonia.Must(gorgonia.Sum(y))
	if _, err := gorgonia.Grad(loss, w); err != nil {
		t.Fatalf("NoInputGrad, gradient w.r.t. w: %v", err)
	}
	for _, n := range g.AllNodes() {
		if _, ok := n.Op().(*convGradXOp); ok {
			t.Fatal("NoInputGrad: the graph contains a dX op")
		}
	}
	if _, err := gorgonia.Grad(loss, x); err == nil {
		t.Error("NoInputGrad, gradient w.r.t. x: want an error")
	}
}

func TestVisionWriteHashDistinguishesParameters(t *testing.T) {
	bn1 := described(&BatchNormOp{id: 1, c: 3, eps: 1e-5, training: true, rank4: true})
	bn1r := described(&BatchNormOp{id: 1, c: 3, eps: 1e-5, training: true, rank4: true, relu: true})
	bn1m := described(&BatchNormOp{id: 1, c: 3, eps: 1e-5, training: true})
	type hasher interface{ Hashcode() uint32 }
	differ := []struct {
		name string
		x, y hasher
	}{
		{"conv stride", newConvOp(1, 0, false, false), newConvOp(2, 0, false, false)},
		{"conv pad", newConvOp(1, 1, false, false), newConvOp(1, 0, false, false)},
		{"conv input grad", newConvOp(1, 0, true, false), newConvOp(1, 0, false, false)},
		{"gradX size", newConvGradXOp(2, 0, 3, 8, 8, false), newConvGradXOp(2, 0, 3, 7, 7, false)},
		{"gradX stride", newConvGradXOp(2, 0, 3, 8, 8, false), newConvGradXOp(1, 0, 3, 8, 8, false)},
		{"gradW kernel", newConvGradWOp(1, 0, 3, 3, false), newConvGradWOp(1, 0, 1, 1, false)},
		{"gradW pad", newConvGradWOp(1, 1, 3, 3, false), newConvGradWOp(1, 0, 3, 3, false)},
		{"conv winograd", newConvOp(1, 1, false, true), newConvOp(1, 1, false, false)},
		{"gradX winograd", newConvGradXOp(1, 1, 3, 8, 8, true), newConvGradXOp(1, 1, 3, 8, 8, false)},
		{"gradW winograd", newConvGradWOp(1, 1, 3, 3, true), newConvGradWOp(1, 1, 3, 3, false)},
		{"bn2d relu", bn1, bn1r},
		{"bn2d vs bn", bn1, bn1m},
		{"bn2d gamma vs beta", newBN4ParamGradOp(bn1, true), newBN4ParamGradOp(bn1, false)},
		{"gap grad size", newGapGradOp(2, 3), newGapGradOp(3, 2)},
		{"relu vs addrelu", newReluOp(), newAddReLUOp()},
		{"relu vs relugrad", newReluOp(), newReluGradOp()},
	}
	for _, d := range differ {
		if d.x.Hashcode() == d.y.Hashcode() {
			t.Errorf("%s: equal hashes %x", d.name, d.x.Hashcode())
		}
	}
}

// TestVisionUsePreallocDo checks that every new op overwrites a NaN-filled
// buffer with exactly what Do returns and rejects a wrong-shaped buffer.
func TestVisionUsePreallocDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	fwd := described(&BatchNormOp{id: 98, c: 3, eps: 1e-5, training: true, rank4: true, relu: true,
		mean: make([]float64, 3), variance: make([]float64, 3), invStd: make([]float64, 3), gsdy: make([]float64, 3), gsdyx: make([]float64, 3)})
	x := dense64([]int{2, 3, 4, 5}, randVec(rng, 120))
	x2 := dense64([]int{2, 3, 4, 5}, randVec(rng, 120))
	w := dense64([]int{4, 3, 3, 3}, randVec(rng, 108))
	dy := dense64([]int{2, 4, 2, 3}, randVec(rng, 48))
	v3 := dense64([]int{3}, randVec(rng, 3))
	m23 := dense64([]int{2, 3}, randVec(rng, 6))
	// Run the forward BN once so that its gradient ops have statistics.
	y, err := fwd.Do(x, v3, v3)
	if err != nil {
		t.Fatal(err)
	}
	type preallocOp interface {
		Do(...gorgonia.Value) (gorgonia.Value, error)
		UsePreallocDo(gorgonia.Value, ...gorgonia.Value) (gorgonia.Value, error)
	}
	cases := []struct {
		name string
		op   preallocOp
		in   []gorgonia.Value
	}{
		{"Conv2D", newConvOp(2, 1, false, false), []gorgonia.Value{x, w}},
		{"Conv2DGradX", newConvGradXOp(2, 1, 3, 4, 5, false), []gorgonia.Value{w, dy}},
		{"Conv2DGradW", newConvGradWOp(2, 1, 3, 3, false), []gorgonia.Value{x, dy}},
		{"ReLU", newReluOp(), []gorgonia.Value{x}},
		{"AddReLU", newAddReLUOp(), []gorgonia.Value{x, x2}},
		{"ReLUGrad4D", newReluGradOp(), []gorgonia.Value{x, x2}},
		{"GlobalAvgPool", newGapOp(), []gorgonia.Value{x}},
		{"GlobalAvgPoolGrad", newGapGradOp(4, 5), []gorgonia.Value{m23}},
		{"BatchNorm2D", fwd, []gorgonia.Value{x, v3, v3}},
		{"BatchNorm2DGradX", newBN4GradXOp(fwd), []gorgonia.Value{x, v3, x2, y}},
		{"BatchNorm2DGradGamma", newBN4ParamGradOp(fwd, true), []gorgonia.Value{x2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.op.Do(c.in...)
			if err != nil {
				t.Fatal(err)
			}
			wd := want.(*tensor.Dense)
			buf := tensor.New(tensor.WithShape(wd.Shape()...), tensor.Of(tensor.Float64))
			for i := range buf.Float64s() {
				buf.Float64s()[i] = math.NaN()
			}
			got, err := c.op.UsePreallocDo(buf, c.in...)
			if err != nil {
				t.Fatal(err)
			}
			if !got.(*tensor.Dense).Eq(wd) {
				t.Fatalf("UsePreallocDo = %v, want %v", got, want)
			}
			wrong := tensor.New(tensor.WithShape(wd.Shape().TotalSize()+1), tensor.Of(tensor.Float64))
			if _, err := c.op.UsePreallocDo(wrong, c.in...); err == nil {
				t.Fatal("wrong-shaped buffer: want an error")
			}
		})
	}
}

func TestScratchPoolReuses(t *testing.T) {
	// Start from an empty pool: buffers left by earlier tests would be
	// chosen first when they are the smallest large enough.
	scratchPool.mu.Lock()
	f32, f64 := scratchPool.f32, scratchPool.f64
	scratchPool.f32, scratchPool.f64 = nil, nil
	scratchPool.mu.Unlock()
	defer func() {
		scratchPool.mu.Lock()
		scratchPool.f32, scratchPool.f64 = f32, f64
		scratchPool.mu.Unlock()
	}()
	a := getScratch[float32](1000)
	putScratch(a)
	b := getScratch[float32](500)
	if &b[0] != &a[0] {
		t.Error("a returned buffer large enough was not reused")
	}
	c := getScratch[float32](2000)
	if len(c) != 2000 {
		t.Fatalf("len = %d, want 2000", len(c))
	}
	putScratch(b)
	putScratch(c)
	d := getScratch[float64](10)
	if len(d) != 10 {
		t.Fatalf("len = %d, want 10", len(d))
	}
	putScratch(d)
}

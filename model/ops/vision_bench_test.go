package ops

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func randVec32(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// BenchmarkConv2D times the float32 kernels of one convolution on a batch
// of 256 images: the forward pass, dX and dW (fwdbwd runs all three), and
// reports images per second and GFLOP/s (2 FLOP per multiply-add).
func BenchmarkConv2D(b *testing.B) {
	for _, gc := range []convGeomCase{
		{256, 16, 32, 32, 16, 3, 3, 1, 1}, // stage 1
		{256, 16, 32, 32, 32, 3, 3, 2, 1}, // stage 2 entry
		{256, 32, 16, 16, 32, 3, 3, 1, 1}, // stage 2
		{256, 64, 8, 8, 64, 3, 3, 1, 1},   // stage 3
		{256, 32, 16, 16, 64, 1, 1, 2, 0}, // stage 3 projection shortcut
		{256, 3, 32, 32, 16, 3, 3, 1, 1},  // stem
	} {
		g, err := newConvGeom("bench", gc.xShape(), gc.wShape(), gc.stride, gc.pad)
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		x, w := randVec32(rng, prod(gc.xShape())), randVec32(rng, prod(gc.wShape()))
		y, dy := make([]float32, g.n*g.o*g.p()), randVec32(rng, g.n*g.o*g.p())
		dx, dw := make([]float32, len(x)), make([]float32, len(w))
		gw := g // the same convolution by Winograd's F(2×2, 3×3) where it applies
		gw.winograd = true
		flop := 2 * float64(g.macs())
		name := fmt.Sprintf("%d→%d_%dx%d_k%d_s%d", gc.c, gc.o, gc.h, gc.w, gc.kh, gc.stride)
		for _, part := range []struct {
			name   string
			passes float64
			run    func()
		}{
			{"fwdbwd", 3, func() {
				convForward(g, y, x, w)
				convBackwardX(g, dx, w, dy)
				convBackwardW(g, dw, x, dy)
			}},
			{"fwd", 1, func() { convForward(g, y, x, w) }},
			{"dX", 1, func() { convBackwardX(g, dx, w, dy) }},
			{"dW", 1, func() { convBackwardW(g, dw, x, dy) }},
			{"winograd-fwd", 1, func() { convForward(gw, y, x, w) }},
			{"winograd-dX", 1, func() { convBackwardX(gw, dx, w, dy) }},
			{"winograd-dW", 1, func() { convBackwardW(gw, dw, x, dy) }},
			{"winograd-fwdbwd", 3, func() {
				convForward(gw, y, x, w)
				convBackwardX(gw, dx, w, dy)
				convBackwardW(gw, dw, x, dy)
			}},
		} {
			if strings.HasPrefix(part.name, "winograd") && winogradPlanFor(&gw) == nil {
				continue
			}
			b.Run(name+"/"+part.name, func(b *testing.B) {
				part.run() // warm the scratch pool
				c0 := cpuTime()
				for b.Loop() {
					part.run()
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(g.n)/sec, "img/s")
				b.ReportMetric(part.passes*flop/sec/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkBatchNorm2D times the float32 forward and backward (dx, with the
// saved sums for dγ, dβ) of a training-mode BatchNorm2D on [256,16,32,32],
// with and without the fused ReLU, and the unfused alternative
// (BatchNorm2D, then ReLU and its gradient as separate passes).
func BenchmarkBatchNorm2D(b *testing.B) {
	n, c, hw := 256, 16, 32*32
	rng := rand.New(rand.NewPCG(3, 4))
	x, dy := randVec32(rng, n*c*hw), randVec32(rng, n*c*hw)
	y, y2, dx, dz := make([]float32, len(x)), make([]float32, len(x)), make([]float32, len(x)), make([]float32, len(x))
	gamma, beta := randVec32(rng, c), randVec32(rng, c)
	for _, mode := range []string{"plain", "fusedReLU", "unfusedReLU"} {
		op, err := newBatchNormOp(c, BNConfig{Eps: 1e-5, Training: true, ReLU: mode == "fusedReLU"}, true)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(mode, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				bn4Forward(op, y, x, gamma, beta, n, hw)
				switch mode {
				case "plain":
					bn4Backward(op, dx, x, gamma, dy, nil, n, hw)
				case "fusedReLU":
					bn4Backward(op, dx, x, gamma, dy, y, n, hw)
				case "unfusedReLU":
					reluTo(y2, y, nil)
					reluGrad(dz, y2, dy)
					bn4Backward(op, dx, x, gamma, dz, nil, n, hw)
				}
			}
			b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "img/s")
			b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkReLU times ReLU forward + backward and AddReLU forward on
// [256,16,32,32] float32.
func BenchmarkReLU(b *testing.B) {
	sz := 256 * 16 * 32 * 32
	rng := rand.New(rand.NewPCG(5, 6))
	x, x2, dy := randVec32(rng, sz), randVec32(rng, sz), randVec32(rng, sz)
	y, dx := make([]float32, sz), make([]float32, sz)
	b.Run("ReLU_fwdbwd", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			reluTo(y, x, nil)
			reluGrad(dx, y, dy)
		}
		b.ReportMetric(float64(sz)*4*4/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GB/s")
		b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
	})
	b.Run("AddReLU_fwd", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			reluTo(y, x, x2)
		}
		b.ReportMetric(float64(sz)*4*3/(b.Elapsed().Seconds()/float64(b.N))/1e9, "GB/s")
		b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
	})
}

// BenchmarkResNetForwardBackward times one tape-machine run (forward and
// gradients, no optimiser) of a CIFAR ResNet built from these ops: a 3×3
// stem of 16 channels, three stages of `blocks` BasicBlocks (16/32/64
// channels, projection shortcut at each stage change), global average pool,
// on 256 float32 images of 3×32×32; the loss is Σ R⊙pool. The ReLU after
// a BatchNorm2D is either fused (BNConfig.ReLU) or a separate ReLU node;
// output reuse (SetOutputReuse) is off or on.
func BenchmarkResNetForwardBackward(b *testing.B) {
	for _, blocks := range []int{2, 3} {
		for _, fused := range []bool{true, false} {
			for _, reuse := range []bool{false, true} {
				b.Run(fmt.Sprintf("blocks%d/fusedReLU=%t/reuse=%t", blocks, fused, reuse), func(b *testing.B) {
					defer SetOutputReuse(SetOutputReuse(reuse))
					resNetStep(b, blocks, fused)
				})
			}
		}
	}
}

func resNetStep(b *testing.B, blocks int, fused bool) {
	const n = 256
	rng := rand.New(rand.NewPCG(7, 8))
	g := gorgonia.NewGraph()
	var params gorgonia.Nodes
	param := func(shape ...int) *gorgonia.Node {
		v := randVec(rng, prod(shape))
		for i := range v {
			v[i] *= 0.1
		}
		p := tensorNode(g, tensor.Float32, shape, v, fmt.Sprintf("p%d", len(params)))
		params = append(params, p)
		return p
	}
	ones := func(c int) *gorgonia.Node {
		v := make([]float64, c)
		for i := range v {
			v[i] = 1
		}
		p := tensorNode(g, tensor.Float32, []int{c}, v, fmt.Sprintf("p%d", len(params)))
		params = append(params, p)
		return p
	}
	must := func(nd *gorgonia.Node, err error) *gorgonia.Node {
		if err != nil {
			b.Fatal(err)
		}
		return nd
	}
	bn := func(x *gorgonia.Node, c int, relu bool) *gorgonia.Node {
		y, _, err := BatchNorm2D(x, ones(c), param(c), BNConfig{Eps: 1e-5, Training: true, ReLU: relu && fused})
		y = must(y, err)
		if relu && !fused {
			y = must(ReLU(y))
		}
		return y
	}
	x := tensorNode(g, tensor.Float32, []int{n, 3, 32, 32}, randVec(rng, n*3*32*32), "x")
	h := must(Conv2D(x, param(16, 3, 3, 3), ConvOpts{Stride: 1, Pad: 1, NoInputGrad: true}))
	h = bn(h, 16, true)
	in := 16
	for s, c := range []int{16, 32, 64} {
		for k := 0; k < blocks; k++ {
			stride := 1
			if s > 0 && k == 0 {
				stride = 2
			}
			r := must(Conv2D(h, param(c, in, 3, 3), ConvOpts{Stride: stride, Pad: 1}))
			r = bn(r, c, true)
			r = must(Conv2D(r, param(c, c, 3, 3), ConvOpts{Stride: 1, Pad: 1}))
			r = bn(r, c, false)
			short := h
			if stride != 1 || in != c {
				short = bn(must(Conv2D(h, param(c, in, 1, 1), ConvOpts{Stride: stride})), c, false)
			}
			h = must(AddReLU(r, short))
			in = c
		}
	}
	pool := must(GlobalAvgPool(h))
	rt := tensor.New(tensor.WithShape(n, 64), tensor.WithBacking(to32(randVec(rng, n*64))))
	loss := must(gorgonia.Sum(must(gorgonia.HadamardProd(pool, gorgonia.NewConstant(rt)))))
	if _, err := gorgonia.Grad(loss, params...); err != nil {
		b.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	step := func() {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
	step()
	c0 := cpuTime()
	for b.Loop() {
		step()
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(n/sec, "img/s")
}

// BenchmarkIm2col times the column matrix of one 16×32×32 image for a 3×3
// kernel with padding 1 at stride 1 and 2, and for a 1×1 stride-2 kernel.
func BenchmarkIm2col(b *testing.B) {
	for _, k := range []struct{ k, stride, pad int }{{3, 1, 1}, {3, 2, 1}, {1, 2, 0}} {
		g, err := newConvGeom("bench", tensor.Shape{1, 16, 32, 32}, tensor.Shape{16, 16, k.k, k.k}, k.stride, k.pad)
		if err != nil {
			b.Fatal(err)
		}
		x := randVec32(rand.New(rand.NewPCG(9, 9)), 16*32*32)
		col := make([]float32, g.k()*g.p())
		planes := make([]float32, g.planeSize())
		b.Run(fmt.Sprintf("k%d_stride%d", k.k, k.stride), func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				im2col(&g, x, col, g.p(), planes)
			}
			b.ReportMetric(float64(cpuTime()-c0)/1e3/float64(b.N), "cpu-µs/op")
		})
	}
}

package ops

import (
	"errors"
	"fmt"
	"math"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BatchNorm2D normalises x [N,C,H,W] per channel over N, H and W (PyTorch's
// BatchNorm2d) and applies y = γ·x̂ + β with vectors γ, β of length C,
// followed by max(·, 0) when cfg.ReLU is set (fused into the same pass).
// The configuration and the returned op are those of [BatchNorm]:
// BatchStats reports the statistics with n = N·H·W.
//
// Statistics are accumulated in float64 over a fixed partition of the
// images, added in a fixed order, so results are deterministic. The backward pass computes
// Σ dy and Σ dy·x̂ once (in the dx op) and dγ, dβ read them back.
func BatchNorm2D(x, gamma, beta *gorgonia.Node, cfg BNConfig) (*gorgonia.Node, *BatchNormOp, error) {
	if x == nil || gamma == nil || beta == nil {
		return nil, nil, errors.New("ops: BatchNorm2D: nil input")
	}
	if x.Shape().Dims() != 4 {
		return nil, nil, fmt.Errorf("ops: BatchNorm2D: x must be [N,C,H,W], got shape %v", x.Shape())
	}
	op, err := newBatchNormOp(x.Shape()[1], cfg, true)
	if err != nil {
		return nil, nil, err
	}
	y, err := applyOp(op, x, gamma, beta)
	if err != nil {
		return nil, nil, fmt.Errorf("ops: BatchNorm2D: %w", err)
	}
	return y, op, nil
}

// bnChunks is the number of fixed image chunks over which BatchNorm2D
// accumulates partial per-channel sums (in parallel, each chunk in memory
// order) before adding them in chunk order: the statistics do not depend on
// the core count or on scheduling.
const bnChunks = 8

// bn4Forward normalises x [n,C,hw]. Both passes stream through memory in
// order (image by image), split between goroutines by images.
func bn4Forward[T float32 | float64](op *BatchNormOp, out, x, gamma, beta []T, n, hw int) {
	c := op.c
	chunks := min(n, bnChunks)
	workers := numWorkers(chunks, len(x))
	if op.training {
		// One pass in float64 over values shifted by each channel's first
		// value K (so the variance does not cancel when |mean| ≫ std):
		// S1 = Σ(x−K), S2 = Σ(x−K)², as partial sums per chunk.
		part := getScratch[float64](2 * chunks * c)
		defer putScratch(part)
		forEachTask(workers, chunks, func(_, ch int) {
			s1, s2 := part[2*ch*c:(2*ch+1)*c], part[(2*ch+1)*c:(2*ch+2)*c]
			clear(s1)
			clear(s2)
			for i := n * ch / chunks; i < n*(ch+1)/chunks; i++ {
				for j := 0; j < c; j++ {
					a, b := sumShifted64(x[(i*c+j)*hw:(i*c+j+1)*hw], float64(x[j*hw]))
					s1[j] += a
					s2[j] += b
				}
			}
		})
		cnt := float64(n * hw)
		for j := 0; j < c; j++ {
			var a, b float64
			for ch := 0; ch < chunks; ch++ {
				a += part[2*ch*c+j]
				b += part[(2*ch+1)*c+j]
			}
			d := a / cnt
			v := max(b/cnt-d*d, 0)
			op.mean[j], op.variance[j], op.invStd[j] = float64(x[j*hw])+d, v, 1/math.Sqrt(v+op.eps)
		}
		op.n = n * hw
		op.ran = true
	}
	mean, invStd := op.stats()
	forEachTask(workers, chunks, func(_, ch int) {
		for i := n * ch / chunks; i < n*(ch+1)/chunks; i++ {
			for j := 0; j < c; j++ {
				m, scale, b := T(mean[j]), T(float64(gamma[j])*invStd[j]), beta[j]
				affine(out[(i*c+j)*hw:(i*c+j+1)*hw], x[(i*c+j)*hw:(i*c+j+1)*hw], m, scale, b, op.relu)
			}
		}
	})
}

// sumShifted64 returns Σ (v − k) and Σ (v − k)² in float64, with four
// accumulators each (a fixed order, so the result is deterministic).
func sumShifted64[T float32 | float64](v []T, k float64) (s1, s2 float64) {
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	i := 0
	if f, ok := any(v).([]float32); ok && haveKernels && len(f) >= 4 {
		var acc [8]float64
		sumShifted4x32(&f[0], len(f), k, &acc[0])
		a0, a1, a2, a3, b0, b1, b2, b3 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
		i = len(f) &^ 3
	}
	for ; i+4 <= len(v); i += 4 {
		d0, d1, d2, d3 := float64(v[i])-k, float64(v[i+1])-k, float64(v[i+2])-k, float64(v[i+3])-k
		a0 += d0
		a1 += d1
		a2 += d2
		a3 += d3
		b0 += d0 * d0
		b1 += d1 * d1
		b2 += d2 * d2
		b3 += d3 * d3
	}
	for ; i < len(v); i++ {
		d := float64(v[i]) - k
		a0 += d
		b0 += d * d
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// sumProdDev64 returns Σ g and Σ g·(x − m) in float64 with four
// accumulators each.
func sumProdDev64[T float32 | float64](g, x []T, m float64) (sg, sgx float64) {
	x = x[:len(g)]
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	i := 0
	if f, ok := any(g).([]float32); ok && haveKernels && len(f) >= 4 {
		var acc [8]float64
		sumProdDev4x32(&f[0], &any(x).([]float32)[0], len(f), m, &acc[0])
		a0, a1, a2, a3, b0, b1, b2, b3 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
		i = len(f) &^ 3
	}
	for ; i+4 <= len(g); i += 4 {
		g0, g1, g2, g3 := float64(g[i]), float64(g[i+1]), float64(g[i+2]), float64(g[i+3])
		a0 += g0
		a1 += g1
		a2 += g2
		a3 += g3
		b0 += g0 * (float64(x[i]) - m)
		b1 += g1 * (float64(x[i+1]) - m)
		b2 += g2 * (float64(x[i+2]) - m)
		b3 += g3 * (float64(x[i+3]) - m)
	}
	for ; i < len(g); i++ {
		g0 := float64(g[i])
		a0 += g0
		b0 += g0 * (float64(x[i]) - m)
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// affine writes dst = (src − m)·scale + b, followed by max(·, 0) when relu
// is set, in one branch-free pass.
func affine[T float32 | float64](dst, src []T, m, scale, b T, relu bool) {
	dst = dst[:len(src)]
	if d, ok := any(dst).([]float32); ok && haveKernels && len(d) > 0 {
		r := 0
		if relu {
			r = 1
		}
		bnPlaneAffine32(&d[0], &any(src).([]float32)[0], len(d), any(m).(float32), any(scale).(float32), any(b).(float32), r)
		return
	}
	if !relu {
		for k, v := range src {
			dst[k] = (v-m)*scale + b
		}
		return
	}
	switch d := any(dst).(type) {
	case []float32:
		m, scale, b := any(m).(float32), any(scale).(float32), any(b).(float32)
		for k, v := range any(src).([]float32) {
			u := math.Float32bits((v-m)*scale + b)
			d[k] = math.Float32frombits(u &^ uint32(int32(u)>>31))
		}
	case []float64:
		m, scale, b := any(m).(float64), any(scale).(float64), any(b).(float64)
		for k, v := range any(src).([]float64) {
			u := math.Float64bits((v-m)*scale + b)
			d[k] = math.Float64frombits(u &^ uint64(int64(u)>>63))
		}
	}
}

// maskedSums writes g = dy ⊙ [y > 0] into out and returns Σ g and
// Σ g·(x − m) in float64 (four accumulators each), in one pass.
func maskedSums[T float32 | float64](out, y, dy, x []T, m float64) (sg, sgx float64) {
	var a0, a1, a2, a3, b0, b1, b2, b3 float64
	switch o := any(out).(type) {
	case []float32:
		yy, gg, xx := any(y).([]float32), any(dy).([]float32), any(x).([]float32)
		n := len(o)
		yy, gg, xx = yy[:n], gg[:n], xx[:n]
		i := 0
		if haveKernels && n >= 4 {
			var acc [8]float64
			maskedSums4x32(&o[0], &yy[0], &gg[0], &xx[0], n, m, &acc[0])
			a0, a1, a2, a3, b0, b1, b2, b3 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]
			i = n &^ 3
		}
		for ; i+4 <= n; i += 4 {
			g0 := math.Float32frombits(math.Float32bits(gg[i]) & positiveMask32(yy[i]))
			g1 := math.Float32frombits(math.Float32bits(gg[i+1]) & positiveMask32(yy[i+1]))
			g2 := math.Float32frombits(math.Float32bits(gg[i+2]) & positiveMask32(yy[i+2]))
			g3 := math.Float32frombits(math.Float32bits(gg[i+3]) & positiveMask32(yy[i+3]))
			o[i], o[i+1], o[i+2], o[i+3] = g0, g1, g2, g3
			a0 += float64(g0)
			a1 += float64(g1)
			a2 += float64(g2)
			a3 += float64(g3)
			b0 += float64(g0) * (float64(xx[i]) - m)
			b1 += float64(g1) * (float64(xx[i+1]) - m)
			b2 += float64(g2) * (float64(xx[i+2]) - m)
			b3 += float64(g3) * (float64(xx[i+3]) - m)
		}
		for ; i < n; i++ {
			g0 := math.Float32frombits(math.Float32bits(gg[i]) & positiveMask32(yy[i]))
			o[i] = g0
			a0 += float64(g0)
			b0 += float64(g0) * (float64(xx[i]) - m)
		}
	case []float64:
		reluMask(out, y, dy)
		return sumProdDev64(out, x, m)
	}
	return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)
}

// reluMask writes out = dy ⊙ [y > 0] on the calling goroutine.
func reluMask[T float32 | float64](out, y, dy []T) {
	switch yy := any(y).(type) {
	case []float32:
		o, g := any(out).([]float32), any(dy).([]float32)
		g = g[:len(yy)]
		o = o[:len(yy)]
		if haveKernels && len(yy) > 0 {
			reluMask32(&o[0], &yy[0], &g[0], len(yy))
			return
		}
		for i, v := range yy {
			o[i] = math.Float32frombits(math.Float32bits(g[i]) & positiveMask32(v))
		}
	case []float64:
		o, g := any(out).([]float64), any(dy).([]float64)
		g = g[:len(yy)]
		o = o[:len(yy)]
		for i, v := range yy {
			o[i] = math.Float64frombits(math.Float64bits(g[i]) & positiveMask64(v))
		}
	}
}

// symDiff4 builds the BatchNorm2D gradients: dx from x, γ, dy (and the
// output y for the fused ReLU); dγ and dβ from the sums the dx op saves.
func (op *BatchNormOp) symDiff4(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	in := gorgonia.Nodes{inputs[0], inputs[1], grad}
	if op.relu {
		in = append(in, output)
	}
	dx, err := applyOp(newBN4GradXOp(op), in...)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm2D.SymDiff dx: %w", err)
	}
	dg, err := applyOp(newBN4ParamGradOp(op, true), dx)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm2D.SymDiff dgamma: %w", err)
	}
	db, err := applyOp(newBN4ParamGradOp(op, false), dx)
	if err != nil {
		return nil, fmt.Errorf("ops: BatchNorm2D.SymDiff dbeta: %w", err)
	}
	return gorgonia.Nodes{dx, dg, db}, nil
}

// bn4GradXOp computes dx of a BatchNorm2D from x, γ, dy (and y with the
// fused ReLU), using the statistics saved by the forward op, and saves
// Σ dy and Σ dy·x̂ per channel for dγ and dβ. It is not itself
// differentiated.
type bn4GradXOp struct {
	gop.Base
	fwd *BatchNormOp
	out outBuf
}

// newBN4GradXOp returns the dx op of fwd: Tensor-4 a → Vector a →
// Tensor-4 a (→ Tensor-4 a with the fused ReLU) → Tensor-4 a, hashed with
// fwd's id.
func newBN4GradXOp(fwd *BatchNormOp) *bn4GradXOp {
	key := fmt.Sprintf("BatchNorm2DGradX{id=%d}", fwd.id)
	ranks := []int{4, 1, 4, 4}
	if fwd.relu {
		ranks = []int{4, 1, 4, 4, 4}
	}
	return &bn4GradXOp{Base: gop.New(key, "", ranks...), fwd: fwd}
}

// args are the inputs x, γ, dy, and y with the fused ReLU.
func (op *bn4GradXOp) args() []arg {
	if op.fwd.relu {
		return bn4GradXArgs
	}
	return bn4GradXArgs[:3]
}

var bn4GradXArgs = []arg{{"x", 4}, {"gamma", 1}, {"dy", 4}, {"y", 4}}

func (op *bn4GradXOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstInputShape(op.String(), ds, op.args()...)
}

func (op *bn4GradXOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *bn4GradXOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, op.args()...)
	if err != nil {
		return nil, err
	}
	x, gamma, dy := in[0], in[1], in[2]
	var y *tensor.Dense
	if op.fwd.relu {
		if y = in[3]; !y.Shape().Eq(x.Shape()) {
			return nil, fmt.Errorf("ops: %s: y has shape %v, x has %v", op, y.Shape(), x.Shape())
		}
	}
	if !x.Shape().Eq(dy.Shape()) || x.Shape()[1] != op.fwd.c || gamma.Shape()[0] != op.fwd.c {
		return nil, fmt.Errorf("ops: %s: x %v, gamma %v, dy %v do not match %d channels",
			op, x.Shape(), gamma.Shape(), dy.Shape(), op.fwd.c)
	}
	if op.fwd.training && (!op.fwd.ran || op.fwd.n != x.Shape().TotalSize()/op.fwd.c) {
		return nil, fmt.Errorf("ops: %s: the forward op has not run on this input", op)
	}
	out, err := outputTensor(&op.out, op.String(), prealloc, x.Dtype(), x.Shape(), in[:op.Arity()]...)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, gamma, dy, y), nil
}

func (op *bn4GradXOp) compute(out, x, gamma, dy, y *tensor.Dense) *tensor.Dense {
	s := x.Shape()
	n, hw := s[0], s[2]*s[3]
	switch x.Dtype() {
	case tensor.Float32:
		var yv []float32
		if y != nil {
			yv = y.Float32s()
		}
		bn4Backward(op.fwd, out.Float32s(), x.Float32s(), gamma.Float32s(), dy.Float32s(), yv, n, hw)
	case tensor.Float64:
		var yv []float64
		if y != nil {
			yv = y.Float64s()
		}
		bn4Backward(op.fwd, out.Float64s(), x.Float64s(), gamma.Float64s(), dy.Float64s(), yv, n, hw)
	}
	return out
}

// bn4Backward computes dx: in training mode
// dx = γ·istd·(g − mean(g) − x̂·mean(g·x̂)), in evaluation mode
// dx = γ·istd·g, where g = dy (masked by y > 0 with the fused ReLU). It
// saves Σ g and Σ g·x̂ per channel in fwd. Like the forward pass it streams
// through memory image by image, with per-chunk partial sums added in
// chunk order.
func bn4Backward[T float32 | float64](fwd *BatchNormOp, out, x, gamma, dy, y []T, n, hw int) {
	c := fwd.c
	mean, invStd := fwd.stats()
	chunks := min(n, bnChunks)
	workers := numWorkers(chunks, len(x))
	part := getScratch[float64](2 * chunks * c)
	defer putScratch(part)
	// Pass 1: Σ g and Σ g·(x − μ). With the fused ReLU, g = dy ⊙ [y > 0] is
	// written into out and read back from there in pass 2.
	forEachTask(workers, chunks, func(_, ch int) {
		sg, sgx := part[2*ch*c:(2*ch+1)*c], part[(2*ch+1)*c:(2*ch+2)*c]
		clear(sg)
		clear(sgx)
		for i := n * ch / chunks; i < n*(ch+1)/chunks; i++ {
			for j := 0; j < c; j++ {
				lo, hi := (i*c+j)*hw, (i*c+j+1)*hw
				var a, b float64
				if y != nil {
					a, b = maskedSums(out[lo:hi], y[lo:hi], dy[lo:hi], x[lo:hi], mean[j])
				} else {
					a, b = sumProdDev64(dy[lo:hi], x[lo:hi], mean[j])
				}
				sg[j] += a
				sgx[j] += b
			}
		}
	})
	for j := 0; j < c; j++ {
		var a, b float64
		for ch := 0; ch < chunks; ch++ {
			a += part[2*ch*c+j]
			b += part[(2*ch+1)*c+j]
		}
		fwd.gsdy[j], fwd.gsdyx[j] = a, b*invStd[j]
	}
	fwd.gran = true
	src := dy
	if y != nil {
		src = out
	}
	cnt := float64(n * hw)
	forEachTask(workers, chunks, func(_, ch int) {
		for i := n * ch / chunks; i < n*(ch+1)/chunks; i++ {
			for j := 0; j < c; j++ {
				lo, hi := (i*c+j)*hw, (i*c+j+1)*hw
				g, dst := src[lo:hi], out[lo:hi]
				dst = dst[:len(g)]
				k := T(float64(gamma[j]) * invStd[j])
				if !fwd.training {
					for e, v := range g {
						dst[e] = k * v
					}
					continue
				}
				m, is := T(mean[j]), T(invStd[j])
				m1, m2 := T(fwd.gsdy[j]/cnt), T(fwd.gsdyx[j]/cnt)
				xs := x[lo:hi]
				xs = xs[:len(g)]
				if d, ok := any(dst).([]float32); ok && haveKernels && len(d) > 0 {
					bnPlaneDx32(&d[0], &any(g).([]float32)[0], &any(xs).([]float32)[0], len(d),
						any(m).(float32), any(is).(float32), any(m1).(float32), any(m2).(float32), any(k).(float32))
					continue
				}
				for e, v := range g {
					xh := (xs[e] - m) * is
					dst[e] = k * (v - m1 - xh*m2)
				}
			}
		}
	})
}

// bn4ParamGradOp returns dγ = Σ g·x̂ (gamma) or dβ = Σ g per channel, as
// saved by the BatchNorm2D dx op, which is its only input (so that it runs
// first). It is not itself differentiated.
type bn4ParamGradOp struct {
	gop.Base
	fwd   *BatchNormOp
	gamma bool
}

// newBN4ParamGradOp returns the dγ (gamma) or dβ op of fwd (Tensor-4 a →
// Vector a), hashed with fwd's id.
func newBN4ParamGradOp(fwd *BatchNormOp, gamma bool) *bn4ParamGradOp {
	name := "BatchNorm2DGradBeta"
	if gamma {
		name = "BatchNorm2DGradGamma"
	}
	return &bn4ParamGradOp{Base: gop.New(fmt.Sprintf("%s{id=%d}", name, fwd.id), "", 4, 1), fwd: fwd, gamma: gamma}
}

func (op *bn4ParamGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, arg{"dx", 4})
	if err != nil {
		return nil, err
	}
	if s[0][1] != op.fwd.c {
		return nil, fmt.Errorf("ops: %s: dx has %d channels, want %d", op, s[0][1], op.fwd.c)
	}
	return tensor.Shape{op.fwd.c}, nil
}

func (op *bn4ParamGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *bn4ParamGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, arg{"dx", 4})
	if err != nil {
		return nil, err
	}
	dx := in[0]
	if dx.Shape()[1] != op.fwd.c {
		return nil, fmt.Errorf("ops: %s: dx has %d channels, want %d", op, dx.Shape()[1], op.fwd.c)
	}
	if !op.fwd.gran {
		return nil, fmt.Errorf("ops: %s: the dx op has not run", op)
	}
	out, err := outputTensor(nil, op.String(), prealloc, dx.Dtype(), tensor.Shape{op.fwd.c}, dx)
	if err != nil {
		return nil, err
	}
	return op.compute(out), nil
}

func (op *bn4ParamGradOp) compute(out *tensor.Dense) *tensor.Dense {
	src := op.fwd.gsdy
	if op.gamma {
		src = op.fwd.gsdyx
	}
	switch out.Dtype() {
	case tensor.Float32:
		for j, v := range src {
			out.Float32s()[j] = float32(v)
		}
	case tensor.Float64:
		copy(out.Float64s(), src)
	}
	return out
}

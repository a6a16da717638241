package ops

import (
	"errors"
	"fmt"
	"math"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// elemBlock is the granularity (elements) at which element-wise kernels are
// split between goroutines.
const elemBlock = 4096

// ReLU returns max(x, 0) for a float32 or float64 tensor of any shape. Its
// gradient masks the upstream gradient by the sign of the output in one
// branch-free pass (no compare-then-multiply).
func ReLU(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil {
		return nil, errors.New("ops: ReLU: nil input")
	}
	n, err := applyOp(newReluOp(), x)
	if err != nil {
		return nil, fmt.Errorf("ops: ReLU: %w", err)
	}
	return n, nil
}

// AddReLU returns max(a+b, 0) for two tensors of the same shape and dtype
// (the join of a residual block), in one pass. Both inputs receive the
// same gradient, dy ⊙ [output > 0].
func AddReLU(a, b *gorgonia.Node) (*gorgonia.Node, error) {
	if a == nil || b == nil {
		return nil, errors.New("ops: AddReLU: nil input")
	}
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("ops: AddReLU: a has shape %v, b has %v; want equal shapes", a.Shape(), b.Shape())
	}
	n, err := applyOp(newAddReLUOp(), a, b)
	if err != nil {
		return nil, fmt.Errorf("ops: AddReLU: %w", err)
	}
	return n, nil
}

// reluTo writes dst = max(a (+ b), 0) element-wise, branch-free; b may be
// nil. The work is split between goroutines in fixed blocks.
func reluTo[T float32 | float64](dst, a, b []T) {
	n := len(a)
	blocks := (n + elemBlock - 1) / elemBlock
	parallelFor(blocks, n, func(lo, hi int) {
		s, e := lo*elemBlock, min(hi*elemBlock, n)
		switch d := any(dst[s:e]).(type) {
		case []float32:
			x := any(a[s:e]).([]float32)
			d = d[:len(x)]
			if haveKernels && len(x) > 0 {
				if b == nil {
					reluCopy32(&d[0], &x[0], len(x))
				} else {
					y := any(b[s:e]).([]float32)
					reluAdd32(&d[0], &x[0], &y[:len(x)][0], len(x))
				}
				return
			}
			if b == nil {
				for i, v := range x {
					u := math.Float32bits(v)
					d[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
				}
				return
			}
			y := any(b[s:e]).([]float32)
			y = y[:len(x)]
			for i, v := range x {
				u := math.Float32bits(v + y[i])
				d[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
			}
		case []float64:
			x := any(a[s:e]).([]float64)
			d = d[:len(x)]
			if b == nil {
				for i, v := range x {
					u := math.Float64bits(v)
					d[i] = math.Float64frombits(u &^ uint64(int64(u)>>63))
				}
				return
			}
			y := any(b[s:e]).([]float64)
			y = y[:len(x)]
			for i, v := range x {
				u := math.Float64bits(v + y[i])
				d[i] = math.Float64frombits(u &^ uint64(int64(u)>>63))
			}
		}
	})
}

// reluOp is the op of ReLU (a → a, any shape).
type reluOp struct {
	gop.Base
	out outBuf
}

func newReluOp() *reluOp { return &reluOp{Base: gop.New("ReLU", "", 0, 0)} }

func (*reluOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return firstInputShape("ReLU", ds, arg{"x", -1})
}

func (op *reluOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *reluOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("ReLU", vals, arg{"x", -1})
	if err != nil {
		return nil, err
	}
	x := in[0]
	out, err := outputTensor(&op.out, "ReLU", prealloc, x.Dtype(), x.Shape(), x)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x), nil
}

func (*reluOp) compute(out, x *tensor.Dense) *tensor.Dense {
	switch x.Dtype() {
	case tensor.Float32:
		reluTo(out.Float32s(), x.Float32s(), nil)
	case tensor.Float64:
		reluTo(out.Float64s(), x.Float64s(), nil)
	}
	return out
}

func (*reluOp) DiffWRT(inputs int) []bool { return []bool{true} }

func (*reluOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("ops: ReLU.SymDiff: got %d inputs, want 1", len(inputs))
	}
	dx, err := applyOp(newReluGradOp(), output, grad)
	if err != nil {
		return nil, fmt.Errorf("ops: ReLU.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// addReLUOp is the op of AddReLU (a → a → a, any equal shapes).
type addReLUOp struct {
	gop.Base
	out outBuf
}

func newAddReLUOp() *addReLUOp { return &addReLUOp{Base: gop.New("AddReLU", "", 0, 0, 0)} }

func (*addReLUOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return addReLUKind.inferShape(ds)
}

// addReLUKind describes AddReLU for the shared binary-op machinery.
var addReLUKind = sameShapeKind{name: "AddReLU", a: "a", b: "b", k32: reluTo[float32], k64: reluTo[float64]}

func (op *addReLUOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return addReLUKind.do(&op.out, nil, vals)
}

func (op *addReLUOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return addReLUKind.do(&op.out, prealloc, vals)
}

func (*addReLUOp) DiffWRT(inputs int) []bool { return []bool{true, true} }

func (*addReLUOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("ops: AddReLU.SymDiff: got %d inputs, want 2", len(inputs))
	}
	dz, err := applyOp(newReluGradOp(), output, grad)
	if err != nil {
		return nil, fmt.Errorf("ops: AddReLU.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dz, dz}, nil
}

// GlobalAvgPool returns the mean over H and W of x [N,C,H,W]: an [N,C]
// matrix. Its gradient spreads dY/(H·W) over every position.
func GlobalAvgPool(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil {
		return nil, errors.New("ops: GlobalAvgPool: nil input")
	}
	if x.Shape().Dims() != 4 {
		return nil, fmt.Errorf("ops: GlobalAvgPool: x must be [N,C,H,W], got shape %v", x.Shape())
	}
	n, err := applyOp(newGapOp(), x)
	if err != nil {
		return nil, fmt.Errorf("ops: GlobalAvgPool: %w", err)
	}
	return n, nil
}

// gapOp is the op of GlobalAvgPool (Tensor-4 a → Matrix a).
type gapOp struct{ gop.Base }

func newGapOp() gapOp { return gapOp{Base: gop.New("GlobalAvgPool", "", 4, 2)} }

func (gapOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("GlobalAvgPool", ds, arg{"x", 4})
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0][0], s[0][1]}, nil
}

func (op gapOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op gapOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("GlobalAvgPool", vals, arg{"x", 4})
	if err != nil {
		return nil, err
	}
	x := in[0]
	out, err := outputTensor(nil, "GlobalAvgPool", prealloc, x.Dtype(), tensor.Shape{x.Shape()[0], x.Shape()[1]}, x)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x), nil
}

func (gapOp) compute(out, x *tensor.Dense) *tensor.Dense {
	s := x.Shape()
	hw := s[2] * s[3]
	switch x.Dtype() {
	case tensor.Float32:
		blockMeans(out.Float32s(), x.Float32s(), hw)
	case tensor.Float64:
		blockMeans(out.Float64s(), x.Float64s(), hw)
	}
	return out
}

// blockMeans writes out[i] = mean(x[i·hw:(i+1)·hw]), summed in float64.
func blockMeans[T float32 | float64](out, x []T, hw int) {
	parallelFor(len(out), len(x), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = T(sum64(x[i*hw:(i+1)*hw]) / float64(hw))
		}
	})
}

// sum64 returns Σ v in float64, with four independent accumulators (a
// fixed order, so the result is deterministic).
func sum64[T float32 | float64](v []T) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(v); i += 4 {
		s0 += float64(v[i])
		s1 += float64(v[i+1])
		s2 += float64(v[i+2])
		s3 += float64(v[i+3])
	}
	for ; i < len(v); i++ {
		s0 += float64(v[i])
	}
	return (s0 + s1) + (s2 + s3)
}

func (gapOp) DiffWRT(inputs int) []bool { return []bool{true} }

func (gapOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("ops: GlobalAvgPool.SymDiff: got %d inputs, want 1", len(inputs))
	}
	s := inputs[0].Shape()
	if s.Dims() != 4 {
		return nil, fmt.Errorf("ops: GlobalAvgPool.SymDiff: x must be 4-D, got %v", s)
	}
	dx, err := applyOp(newGapGradOp(s[2], s[3]), grad)
	if err != nil {
		return nil, fmt.Errorf("ops: GlobalAvgPool.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// gapGradOp spreads dY [N,C] over [N,C,H,W] as dY/(H·W). It is not itself
// differentiated.
type gapGradOp struct {
	gop.Base
	h, w int
	out  outBuf
}

// newGapGradOp returns a gapGradOp to h×w (Matrix a → Tensor-4 a), whose
// hash includes the size.
func newGapGradOp(h, w int) *gapGradOp {
	return &gapGradOp{Base: gop.New(fmt.Sprintf("GlobalAvgPoolGrad{%d×%d}", h, w), "", 2, 4), h: h, w: w}
}

func (op *gapGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, arg{"dy", 2})
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0][0], s[0][1], op.h, op.w}, nil
}

func (op *gapGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *gapGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, arg{"dy", 2})
	if err != nil {
		return nil, err
	}
	dy := in[0]
	out, err := outputTensor(&op.out, op.String(), prealloc, dy.Dtype(), tensor.Shape{dy.Shape()[0], dy.Shape()[1], op.h, op.w}, dy)
	if err != nil {
		return nil, err
	}
	return op.compute(out, dy), nil
}

func (op *gapGradOp) compute(out, dy *tensor.Dense) *tensor.Dense {
	hw := op.h * op.w
	switch dy.Dtype() {
	case tensor.Float32:
		spread(out.Float32s(), dy.Float32s(), hw)
	case tensor.Float64:
		spread(out.Float64s(), dy.Float64s(), hw)
	}
	return out
}

// spread writes out[i·hw:(i+1)·hw] = v[i]/hw.
func spread[T float32 | float64](out, v []T, hw int) {
	inv := 1 / float64(hw)
	parallelFor(len(v), len(out), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			val := T(float64(v[i]) * inv)
			dst := out[i*hw : (i+1)*hw]
			for j := range dst {
				dst[j] = val
			}
		}
	})
}

package ops

import (
	"fmt"
	"math"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// PReLU returns max(x, 0) + a·min(x, 0) for an n×C matrix x and a
// learnable slope a: a vector of length 1 (one slope shared by every
// channel, torch.nn.PReLU()) or of length C (one per column,
// torch.nn.PReLU(C)). Gradients, as PyTorch's: dx = dy where x > 0 and
// a·dy elsewhere; da = Σ dy·x over the entries with x <= 0 (of its column
// for per-channel slopes), summed in float64 in row order.
func PReLU(x, a *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil || a == nil {
		return nil, fmt.Errorf("ops: PReLU: nil input")
	}
	n, err := applyOp(newPReLUOp(), x, a)
	if err != nil {
		return nil, fmt.Errorf("ops: PReLU: %w", err)
	}
	return n, nil
}

// preluArgs are the inputs of PReLU; its gradient ops also take dy.
var (
	preluArgs     = []arg{{"x", 2}, {"a", 1}}
	preluGradArgs = []arg{{"x", 2}, {"a", 1}, {"dy", 2}}
)

// preluSlopes checks that a slope vector of length l fits x's c columns.
func preluSlopes(op string, l, c int) error {
	if l != 1 && l != c {
		return fmt.Errorf("ops: %s: slope has length %d, want 1 or the %d columns of x", op, l, c)
	}
	return nil
}

// preluOp is the op of PReLU (Matrix a → Vector a → Matrix a).
type preluOp struct {
	gop.Base
	out outBuf
}

func newPReLUOp() *preluOp { return &preluOp{Base: gop.New("PReLU", "", 2, 1, 2)} }

func (op *preluOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("PReLU", ds, preluArgs...)
	if err != nil {
		return nil, err
	}
	if err := preluSlopes("PReLU", s[1][0], s[0][1]); err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}

func (op *preluOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *preluOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("PReLU", vals, preluArgs...)
	if err != nil {
		return nil, err
	}
	x, a := in[0], in[1]
	c := x.Shape()[1]
	if err := preluSlopes("PReLU", a.Shape()[0], c); err != nil {
		return nil, err
	}
	out, err := outputTensor(&op.out, "PReLU", prealloc, x.Dtype(), x.Shape(), x, a)
	if err != nil {
		return nil, err
	}
	switch x.Dtype() {
	case tensor.Float32:
		preluForward(out.Float32s(), x.Float32s(), a.Float32s(), c)
	case tensor.Float64:
		preluForward(out.Float64s(), x.Float64s(), a.Float64s(), c)
	}
	return out, nil
}

// slopeAt returns the slope of column j.
func slopeAt[T float32 | float64](a []T, j int) T {
	if len(a) == 1 {
		return a[0]
	}
	return a[j]
}

// preluForward writes out = x where x > 0 and a·x elsewhere, rows split
// between goroutines.
func preluForward[T float32 | float64](out, x, a []T, c int) {
	if c == 0 {
		return
	}
	rows := len(x) / c
	if o, ok := any(out).([]float32); ok && haveKernels && len(a) == 1 && rows > 0 {
		x32 := any(x).([]float32)[:rows*c]
		o = o[:rows*c]
		parallelFor(rows, len(x), func(lo, hi int) {
			preluShared32(&o[lo*c], &x32[lo*c], &x32[lo*c], (hi-lo)*c, any(a).([]float32)[0])
		})
		return
	}
	parallelFor(rows, len(x), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			src, dst := x[r*c:(r+1)*c], out[r*c:(r+1)*c]
			for j, v := range src {
				if v > 0 {
					dst[j] = v
				} else {
					dst[j] = slopeAt(a, j) * v
				}
			}
		}
	})
}

func (op *preluOp) DiffWRT(inputs int) []bool { return []bool{true, true} }

// SymDiff returns dx and da from two gradient ops on (x, a, grad).
func (op *preluOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("ops: PReLU.SymDiff: got %d inputs, want 2", len(inputs))
	}
	dx, err := applyOp(newPReLUGradOp(false), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("ops: PReLU.SymDiff dx: %w", err)
	}
	da, err := applyOp(newPReLUGradOp(true), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("ops: PReLU.SymDiff da: %w", err)
	}
	return gorgonia.Nodes{dx, da}, nil
}

// preluGradOp computes PReLU's gradient with respect to x (Matrix a →
// Vector a → Matrix a → Matrix a) or to the slope (… → Vector a). It is
// not itself differentiated.
type preluGradOp struct {
	gop.Base
	slope bool
	out   outBuf
}

func newPReLUGradOp(slope bool) *preluGradOp {
	if slope {
		return &preluGradOp{Base: gop.New("PReLUGradSlope", "", 2, 1, 2, 1), slope: true}
	}
	return &preluGradOp{Base: gop.New("PReLUGradX", "", 2, 1, 2, 2)}
}

func (op *preluGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, preluGradArgs...)
	if err != nil {
		return nil, err
	}
	if err := preluSlopes(op.String(), s[1][0], s[0][1]); err != nil {
		return nil, err
	}
	if op.slope {
		return s[1].Clone(), nil
	}
	return s[0].Clone(), nil
}

func (op *preluGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *preluGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, preluGradArgs...)
	if err != nil {
		return nil, err
	}
	x, a, dy := in[0], in[1], in[2]
	c := x.Shape()[1]
	if err := preluSlopes(op.String(), a.Shape()[0], c); err != nil {
		return nil, err
	}
	if !dy.Shape().Eq(x.Shape()) {
		return nil, fmt.Errorf("ops: %s: dy has shape %v, x has %v", op, dy.Shape(), x.Shape())
	}
	shape := x.Shape()
	if op.slope {
		shape = a.Shape()
	}
	out, err := outputTensor(&op.out, op.String(), prealloc, x.Dtype(), shape, x, a, dy)
	if err != nil {
		return nil, err
	}
	switch x.Dtype() {
	case tensor.Float32:
		op.compute32(out.Float32s(), x.Float32s(), a.Float32s(), dy.Float32s(), c)
	case tensor.Float64:
		op.compute64(out.Float64s(), x.Float64s(), a.Float64s(), dy.Float64s(), c)
	}
	return out, nil
}

func (op *preluGradOp) compute32(out, x, a, dy []float32, c int) {
	if op.slope {
		preluGradSlope(out, x, dy, c)
	} else {
		preluGradX(out, x, a, dy, c)
	}
}

func (op *preluGradOp) compute64(out, x, a, dy []float64, c int) {
	if op.slope {
		preluGradSlope(out, x, dy, c)
	} else {
		preluGradX(out, x, a, dy, c)
	}
}

// preluGradX writes out = dy where x > 0 and a·dy elsewhere.
func preluGradX[T float32 | float64](out, x, a, dy []T, c int) {
	if c == 0 {
		return
	}
	rows := len(x) / c
	if o, ok := any(out).([]float32); ok && haveKernels && len(a) == 1 && rows > 0 {
		x32, g32 := any(x).([]float32)[:rows*c], any(dy).([]float32)[:rows*c]
		o = o[:rows*c]
		parallelFor(rows, len(x), func(lo, hi int) {
			preluShared32(&o[lo*c], &x32[lo*c], &g32[lo*c], (hi-lo)*c, any(a).([]float32)[0])
		})
		return
	}
	parallelFor(rows, len(x), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xs, g, dst := x[r*c:(r+1)*c], dy[r*c:(r+1)*c], out[r*c:(r+1)*c]
			for j, v := range xs {
				if v > 0 {
					dst[j] = g[j]
				} else {
					dst[j] = slopeAt(a, j) * g[j]
				}
			}
		}
	})
}

// preluGradSlope writes out[s] = Σ dy·x over the entries with x <= 0 of
// slope s (every entry for one shared slope), in float64, in row order.
//
// The sums are chains of float64 additions in index order, so their bits
// are fixed by that order; what the loops avoid is a branch on the sign of
// x, which a processor mispredicts about every other entry on a layer's
// pre-activations: an entry with x > 0 (or NaN) contributes +0, which
// leaves a sum's bits as they are (a sum is never -0: it starts at +0,
// and +0 + -0 and x + (-x) are +0 in round-to-nearest), and the +0 is made
// by masking the product's bits (slopeTerm), which compiles to a
// conditional move. The per-slope sums walk the rows with their columns
// (no division per entry).
func preluGradSlope[T float32 | float64](out, x, dy []T, c int) {
	acc := make([]float64, len(out))
	switch {
	case c <= 0:
	case len(out) == 1:
		var s float64
		dy = dy[:len(x)]
		for i, v := range x {
			s += slopeTerm(v, dy[i])
		}
		acc[0] = s
	default:
		a := acc[:c]
		dy = dy[:len(x)]
		for r0 := 0; r0 < len(x); r0 += c {
			xs := x[r0:min(r0+c, len(x))]
			g := dy[r0 : r0+len(xs)]
			for j, v := range xs {
				a[j] += slopeTerm(v, g[j])
			}
		}
	}
	for s, v := range acc {
		out[s] = T(v)
	}
}

// slopeTerm is entry x's term of its slope's gradient: dy·x in float64
// where x <= 0, else +0 (NaN included), without a branch: the product's
// bits are masked by a mask set with a conditional move.
func slopeTerm[T float32 | float64](x, dy T) float64 {
	var m uint64
	if x <= 0 {
		m = ^uint64(0)
	}
	return math.Float64frombits(math.Float64bits(float64(dy)*float64(x)) & m)
}

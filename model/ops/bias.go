package ops

import (
	"fmt"
	"math"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BiasActOp computes y = act(x + b) for an n×C matrix x and a length-C
// vector b added to every row, where act is the identity or ReLU. Its
// gradients are dx = dy ⊙ act'(y) and db = Σ_rows dx.
type BiasActOp struct {
	gop.Base
	relu bool
	out  outBuf
}

// BiasAct returns the node act(x + b), with act = ReLU when relu is true
// and the identity otherwise.
func BiasAct(x, b *gorgonia.Node, relu bool) (*gorgonia.Node, error) {
	if x == nil || b == nil {
		return nil, fmt.Errorf("ops: BiasAct: nil input")
	}
	n, err := applyOp(newBiasActOp(relu), x, b)
	if err != nil {
		return nil, fmt.Errorf("ops: BiasAct: %w", err)
	}
	return n, nil
}

// newBiasActOp returns the op of BiasAct (Matrix a → Vector a → Matrix a),
// named, and hashed, after its activation.
func newBiasActOp(relu bool) *BiasActOp {
	name := "BiasAdd"
	if relu {
		name = "BiasReLU"
	}
	return &BiasActOp{Base: gop.New(name, "", 2, 1, 2), relu: relu}
}

var biasActArgs = []arg{{"x", 2}, {"b", 1}}

// InferShape returns the shape of x after checking b's length.
func (op *BiasActOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, biasActArgs...)
	if err != nil {
		return nil, err
	}
	if c := s[1][0]; c != s[0][1] {
		return nil, fmt.Errorf("ops: %s: bias has length %d, x has %d columns", op, c, s[0][1])
	}
	return s[0].Clone(), nil
}

// Do computes act(x + b) into a new tensor (or the one the op keeps, see
// SetOutputReuse).
func (op *BiasActOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo computes act(x + b) into prealloc (nil: as Do).
func (op *BiasActOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, biasActArgs...)
	if err != nil {
		return nil, err
	}
	x, b := in[0], in[1]
	if b.Shape()[0] != x.Shape()[1] {
		return nil, fmt.Errorf("ops: %s: bias has length %d, x has %d columns", op, b.Shape()[0], x.Shape()[1])
	}
	out, err := outputTensor(&op.out, op.String(), prealloc, x.Dtype(), x.Shape(), x, b)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, b), nil
}

func (op *BiasActOp) compute(out, x, b *tensor.Dense) *tensor.Dense {
	c := x.Shape()[1]
	switch x.Dtype() {
	case tensor.Float32:
		biasAct(out.Float32s(), x.Float32s(), b.Float32s(), c, op.relu)
	case tensor.Float64:
		biasAct(out.Float64s(), x.Float64s(), b.Float64s(), c, op.relu)
	}
	return out
}

func biasAct[T float32 | float64](out, x, b []T, c int, relu bool) {
	if c == 0 {
		return
	}
	for i := 0; i+c <= len(x); i += c {
		dst, src := out[i:i+c], x[i:i+c]
		for j := range dst {
			dst[j] = src[j] + b[j]
		}
	}
	if relu {
		reluInPlace(out[:len(x)])
	}
}

// reluInPlace sets negative entries to +0 without a branch (ReLU signs are
// unpredictable, and a mispredicted branch per element costs more than the
// arithmetic). Values with the sign bit set, including −0, give +0; a NaN
// with the sign bit clear passes through.
func reluInPlace[T float32 | float64](v []T) {
	switch s := any(v).(type) {
	case []float32:
		if haveKernels && len(s) > 0 {
			reluInPlace32(&s[0], len(s))
			return
		}
		for i, x := range s {
			u := math.Float32bits(x)
			s[i] = math.Float32frombits(u &^ uint32(int32(u)>>31))
		}
	case []float64:
		for i, x := range s {
			u := math.Float64bits(x)
			s[i] = math.Float64frombits(u &^ uint64(int64(u)>>63))
		}
	}
}

// positiveMask32 returns all ones when v > 0 (sign clear and not zero) and
// zero otherwise, without a branch.
func positiveMask32(v float32) uint32 {
	s := int32(math.Float32bits(v))
	return uint32((-s)>>31) &^ uint32(s>>31)
}

// positiveMask64 is positiveMask32 for float64.
func positiveMask64(v float64) uint64 {
	s := int64(math.Float64bits(v))
	return uint64((-s)>>63) &^ uint64(s>>63)
}

// DiffWRT reports that the op is differentiable with respect to x and b.
func (op *BiasActOp) DiffWRT(inputs int) []bool { return []bool{true, true} }

// SymDiff returns dx = grad ⊙ act'(output) and db = ColSum(dx).
func (op *BiasActOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("ops: %s.SymDiff: got %d inputs, want 2", op, len(inputs))
	}
	dx := grad
	if op.relu {
		var err error
		if dx, err = applyOp(newReluGradOp(), output, grad); err != nil {
			return nil, fmt.Errorf("ops: %s.SymDiff: %w", op, err)
		}
	}
	db, err := ColSum(dx)
	if err != nil {
		return nil, fmt.Errorf("ops: %s.SymDiff: %w", op, err)
	}
	return gorgonia.Nodes{dx, db}, nil
}

// reluGradOp computes dy ⊙ [y > 0] from the ReLU output y and the upstream
// gradient dy, for tensors of any (equal) shape, in one branch-free pass.
// It is not itself differentiated.
type reluGradOp struct {
	gop.Base
	out outBuf
}

// newReluGradOp returns a reluGradOp (a → a → a, any equal shapes).
func newReluGradOp() *reluGradOp { return &reluGradOp{Base: gop.New("ReLUGrad", "", 0, 0, 0)} }

func (*reluGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return reluGradKind.inferShape(ds)
}

// reluGradKind describes ReLUGrad for the shared binary-op machinery.
var reluGradKind = sameShapeKind{name: "ReLUGrad", a: "y", b: "dy", k32: reluGrad[float32], k64: reluGrad[float64]}

func (op *reluGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return reluGradKind.do(&op.out, nil, vals)
}

func (op *reluGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return reluGradKind.do(&op.out, prealloc, vals)
}

// reluGrad writes out = dy ⊙ [y > 0], split between goroutines for large
// inputs (each element is written by one goroutine).
func reluGrad[T float32 | float64](out, y, dy []T) {
	n := len(y)
	blocks := (n + elemBlock - 1) / elemBlock
	parallelFor(blocks, n, func(lo, hi int) {
		a, b := lo*elemBlock, min(hi*elemBlock, n)
		reluMask(out[a:b], y[a:b], dy[a:b])
	})
}

// ColSumOp computes the column sums of an n×C matrix, a length-C vector.
// Its gradient broadcasts the upstream gradient to every row.
type ColSumOp struct{ gop.Base }

// newColSumOp returns the op of ColSum (Matrix a → Vector a).
func newColSumOp() ColSumOp { return ColSumOp{Base: gop.New("ColSum", "", 2, 1)} }

// ColSum returns the node Σ_rows x.
func ColSum(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("ops: ColSum: nil input")
	}
	n, err := applyOp(newColSumOp(), x)
	if err != nil {
		return nil, fmt.Errorf("ops: ColSum: %w", err)
	}
	return n, nil
}

// InferShape returns (C).
func (ColSumOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("ColSum", ds, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[0][1]}, nil
}

// Do computes the column sums into a new tensor.
func (op ColSumOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo computes the column sums into prealloc (nil: as Do).
func (op ColSumOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("ColSum", vals, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	x := in[0]
	out, err := outputTensor(nil, "ColSum", prealloc, x.Dtype(), tensor.Shape{x.Shape()[1]}, x)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x), nil
}

func (ColSumOp) compute(out, x *tensor.Dense) *tensor.Dense {
	c := x.Shape()[1]
	switch x.Dtype() {
	case tensor.Float32:
		colSum(out.Float32s(), x.Float32s(), c)
	case tensor.Float64:
		colSum(out.Float64s(), x.Float64s(), c)
	}
	return out
}

func colSum[T float32 | float64](out, x []T, c int) {
	clear(out)
	if c == 0 {
		return
	}
	if o, ok := any(out).([]float32); ok && haveKernels && len(x) >= c && len(o) >= c {
		colSum32(&o[0], &any(x).([]float32)[0], len(x)/c, c)
		return
	}
	for i := 0; i+c <= len(x); i += c {
		row := x[i : i+c]
		for j, v := range row {
			out[j] += v
		}
	}
}

// DiffWRT reports that the op is differentiable with respect to x.
func (ColSumOp) DiffWRT(inputs int) []bool { return []bool{true} }

// SymDiff broadcasts the (C) gradient to the n×C shape of the input.
func (ColSumOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("ops: ColSum.SymDiff: got %d inputs, want 1", len(inputs))
	}
	dx, err := applyOp(newRowBroadcastOp(inputs[0].Shape()[0]), grad)
	if err != nil {
		return nil, fmt.Errorf("ops: ColSum.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// rowBroadcastOp repeats a length-C vector into rows×C. It is only used as
// ColSum's gradient and is not itself differentiated.
type rowBroadcastOp struct {
	gop.Base
	rows int
}

// newRowBroadcastOp returns a rowBroadcastOp to rows rows (Vector a →
// Matrix a), whose hash includes rows.
func newRowBroadcastOp(rows int) *rowBroadcastOp {
	return &rowBroadcastOp{Base: gop.New(fmt.Sprintf("RowBroadcast{%d}", rows), "", 1, 2), rows: rows}
}

func (op *rowBroadcastOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("RowBroadcast", ds, arg{"v", 1})
	if err != nil {
		return nil, err
	}
	return tensor.Shape{op.rows, s[0][0]}, nil
}

func (op *rowBroadcastOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *rowBroadcastOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("RowBroadcast", vals, arg{"v", 1})
	if err != nil {
		return nil, err
	}
	v := in[0]
	out, err := outputTensor(nil, "RowBroadcast", prealloc, v.Dtype(), tensor.Shape{op.rows, v.Shape()[0]}, v)
	if err != nil {
		return nil, err
	}
	return op.compute(out, v), nil
}

func (op *rowBroadcastOp) compute(out, v *tensor.Dense) *tensor.Dense {
	switch v.Dtype() {
	case tensor.Float32:
		rowBroadcast(out.Float32s(), v.Float32s())
	case tensor.Float64:
		rowBroadcast(out.Float64s(), v.Float64s())
	}
	return out
}

func rowBroadcast[T float32 | float64](out, v []T) {
	c := len(v)
	if c == 0 {
		return
	}
	for i := 0; i+c <= len(out); i += c {
		copy(out[i:i+c], v)
	}
}

package ops

import (
	"fmt"
	"hash"
	"math"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BiasActOp computes y = act(x + b) for an n×C matrix x and a length-C
// vector b added to every row, where act is the identity or ReLU. Its
// gradients are dx = dy ⊙ act'(y) and db = Σ_rows dx.
type BiasActOp struct {
	relu bool
	out  outBuf
}

// BiasAct returns the node act(x + b), with act = ReLU when relu is true
// and the identity otherwise.
func BiasAct(x, b *gorgonia.Node, relu bool) (*gorgonia.Node, error) {
	if x == nil || b == nil {
		return nil, fmt.Errorf("ops: BiasAct: nil input")
	}
	n, err := gorgonia.ApplyOp(&BiasActOp{relu: relu}, x, b)
	if err != nil {
		return nil, fmt.Errorf("ops: BiasAct: %w", err)
	}
	return n, nil
}

func (op *BiasActOp) name() string {
	if op.relu {
		return "BiasReLU"
	}
	return "BiasAdd"
}

// Arity is 2: x and b.
func (op *BiasActOp) Arity() int { return 2 }

// Type is Matrix a → Vector a → Matrix a.
func (op *BiasActOp) Type() hm.Type { return hm.NewFnType(matType, vecType, matType) }

// InferShape returns the shape of x after checking b's length.
func (op *BiasActOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 2 {
		return nil, fmt.Errorf("ops: %s: got %d inputs, want 2", op.name(), len(ds))
	}
	s, err := matShape(op.name(), ds[0], "x")
	if err != nil {
		return nil, err
	}
	c, err := vecLen(op.name(), ds[1], "b")
	if err != nil {
		return nil, err
	}
	if c != s[1] {
		return nil, fmt.Errorf("ops: %s: bias has length %d, x has %d columns", op.name(), c, s[1])
	}
	return s.Clone(), nil
}

// ReturnsPtr is false.
func (op *BiasActOp) ReturnsPtr() bool { return false }

// CallsExtern is false.
func (op *BiasActOp) CallsExtern() bool { return false }

// OverwritesInput is -1.
func (op *BiasActOp) OverwritesInput() int { return -1 }

// WriteHash writes the op's name, which encodes the activation.
func (op *BiasActOp) WriteHash(h hash.Hash) { fmt.Fprint(h, op.name()) }

// Hashcode returns the FNV-1a hash of WriteHash.
func (op *BiasActOp) Hashcode() uint32 { return hashOf(op.WriteHash) }

// String describes the op.
func (op *BiasActOp) String() string { return op.name() }

func (op *BiasActOp) inputs(vals []gorgonia.Value) (x, b *tensor.Dense, err error) {
	if len(vals) != 2 {
		return nil, nil, fmt.Errorf("ops: %s: got %d inputs, want 2", op.name(), len(vals))
	}
	if x, err = asDense(vals[0], 2, op.name(), "x"); err != nil {
		return nil, nil, err
	}
	if b, err = asDense(vals[1], 1, op.name(), "b"); err != nil {
		return nil, nil, err
	}
	if err = sameDtype(op.name(), x, b); err != nil {
		return nil, nil, err
	}
	if b.Shape()[0] != x.Shape()[1] {
		return nil, nil, fmt.Errorf("ops: %s: bias has length %d, x has %d columns", op.name(), b.Shape()[0], x.Shape()[1])
	}
	return x, b, nil
}

// Do allocates the output and computes act(x + b).
func (op *BiasActOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, b, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	return op.compute(op.out.get(x.Dtype(), x.Shape()...), x, b), nil
}

// UsePreallocDo computes act(x + b) into prealloc.
func (op *BiasActOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, b, err := op.inputs(vals)
	if err != nil {
		return nil, err
	}
	out, err := checkOut(op.name(), prealloc, x.Dtype(), x.Shape(), x, b)
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
		return nil, fmt.Errorf("ops: %s.SymDiff: got %d inputs, want 2", op.name(), len(inputs))
	}
	dx := grad
	if op.relu {
		var err error
		if dx, err = gorgonia.ApplyOp(&reluGradOp{}, output, grad); err != nil {
			return nil, fmt.Errorf("ops: %s.SymDiff: %w", op.name(), err)
		}
	}
	db, err := ColSum(dx)
	if err != nil {
		return nil, fmt.Errorf("ops: %s.SymDiff: %w", op.name(), err)
	}
	return gorgonia.Nodes{dx, db}, nil
}

// reluGradOp computes dy ⊙ [y > 0] from the ReLU output y and the upstream
// gradient dy, for tensors of any (equal) shape, in one branch-free pass.
// It is not itself differentiated.
type reluGradOp struct{ out outBuf }

func (*reluGradOp) Arity() int           { return 2 }
func (*reluGradOp) Type() hm.Type        { return hm.NewFnType(anyType, anyType, anyType) }
func (*reluGradOp) ReturnsPtr() bool     { return false }
func (*reluGradOp) CallsExtern() bool    { return false }
func (*reluGradOp) OverwritesInput() int { return -1 }
func (*reluGradOp) WriteHash(h hash.Hash) {
	fmt.Fprint(h, "ReLUGrad")
}
func (op *reluGradOp) Hashcode() uint32 { return hashOf(op.WriteHash) }
func (*reluGradOp) String() string      { return "ReLUGrad" }

func (*reluGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	return reluGradKind.inferShape(ds)
}

// reluGradKind describes ReLUGrad for the shared binary-op machinery.
var reluGradKind = sameShapeKind{name: "ReLUGrad", a: "y", b: "dy", k32: reluGrad[float32], k64: reluGrad[float64]}

func (op *reluGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return reluGradKind.do(&op.out, false, nil, vals)
}

func (op *reluGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	return reluGradKind.do(&op.out, true, prealloc, vals)
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
type ColSumOp struct{}

// ColSum returns the node Σ_rows x.
func ColSum(x *gorgonia.Node) (*gorgonia.Node, error) {
	if x == nil {
		return nil, fmt.Errorf("ops: ColSum: nil input")
	}
	n, err := gorgonia.ApplyOp(ColSumOp{}, x)
	if err != nil {
		return nil, fmt.Errorf("ops: ColSum: %w", err)
	}
	return n, nil
}

// Arity is 1.
func (ColSumOp) Arity() int { return 1 }

// Type is Matrix a → Vector a.
func (ColSumOp) Type() hm.Type { return hm.NewFnType(matType, vecType) }

// ReturnsPtr is false.
func (ColSumOp) ReturnsPtr() bool { return false }

// CallsExtern is false.
func (ColSumOp) CallsExtern() bool { return false }

// OverwritesInput is -1.
func (ColSumOp) OverwritesInput() int { return -1 }

// WriteHash writes the op's name.
func (ColSumOp) WriteHash(h hash.Hash) { fmt.Fprint(h, "ColSum") }

// Hashcode returns the FNV-1a hash of WriteHash.
func (op ColSumOp) Hashcode() uint32 { return hashOf(op.WriteHash) }

// String describes the op.
func (ColSumOp) String() string { return "ColSum" }

// InferShape returns (C).
func (ColSumOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 1 {
		return nil, fmt.Errorf("ops: ColSum: got %d inputs, want 1", len(ds))
	}
	s, err := matShape("ColSum", ds[0], "x")
	if err != nil {
		return nil, err
	}
	return tensor.Shape{s[1]}, nil
}

func (ColSumOp) input(vals []gorgonia.Value) (*tensor.Dense, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("ops: ColSum: got %d inputs, want 1", len(vals))
	}
	return asDense(vals[0], 2, "ColSum", "x")
}

// Do allocates the output and computes the column sums.
func (op ColSumOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := op.input(vals)
	if err != nil {
		return nil, err
	}
	return op.compute(newDense(x.Dtype(), x.Shape()[1]), x), nil
}

// UsePreallocDo computes the column sums into prealloc.
func (op ColSumOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := op.input(vals)
	if err != nil {
		return nil, err
	}
	out, err := checkOut("ColSum", prealloc, x.Dtype(), tensor.Shape{x.Shape()[1]}, x)
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
	dx, err := gorgonia.ApplyOp(&rowBroadcastOp{rows: inputs[0].Shape()[0]}, grad)
	if err != nil {
		return nil, fmt.Errorf("ops: ColSum.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// rowBroadcastOp repeats a length-C vector into rows×C. It is only used as
// ColSum's gradient and is not itself differentiated.
type rowBroadcastOp struct{ rows int }

func (op *rowBroadcastOp) Arity() int           { return 1 }
func (op *rowBroadcastOp) Type() hm.Type        { return hm.NewFnType(vecType, matType) }
func (op *rowBroadcastOp) ReturnsPtr() bool     { return false }
func (op *rowBroadcastOp) CallsExtern() bool    { return false }
func (op *rowBroadcastOp) OverwritesInput() int { return -1 }
func (op *rowBroadcastOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "RowBroadcast{%d}", op.rows)
}
func (op *rowBroadcastOp) Hashcode() uint32 { return hashOf(op.WriteHash) }
func (op *rowBroadcastOp) String() string   { return fmt.Sprintf("RowBroadcast{%d}", op.rows) }

func (op *rowBroadcastOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 1 {
		return nil, fmt.Errorf("ops: RowBroadcast: got %d inputs, want 1", len(ds))
	}
	c, err := vecLen("RowBroadcast", ds[0], "v")
	if err != nil {
		return nil, err
	}
	return tensor.Shape{op.rows, c}, nil
}

func (op *rowBroadcastOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("ops: RowBroadcast: got %d inputs, want 1", len(vals))
	}
	v, err := asDense(vals[0], 1, "RowBroadcast", "v")
	if err != nil {
		return nil, err
	}
	return op.compute(newDense(v.Dtype(), op.rows, v.Shape()[0]), v), nil
}

func (op *rowBroadcastOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("ops: RowBroadcast: got %d inputs, want 1", len(vals))
	}
	v, err := asDense(vals[0], 1, "RowBroadcast", "v")
	if err != nil {
		return nil, err
	}
	out, err := checkOut("RowBroadcast", prealloc, v.Dtype(), tensor.Shape{op.rows, v.Shape()[0]}, v)
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

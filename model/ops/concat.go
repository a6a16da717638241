package ops

import (
	"errors"
	"fmt"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ConcatCols returns the matrices xs (n×d_i each, one dtype, float32 or
// float64) side by side: n × Σd_i, as gorgonia.Concat(1, xs...) (a GIN's or
// GCN's per-layer readouts joined into one graph vector), with plain row
// copies instead of Gorgonia's strided iterators. The gradient of xs[i] is
// the columns of the upstream gradient it filled, copied into a contiguous
// matrix.
func ConcatCols(xs ...*gorgonia.Node) (*gorgonia.Node, error) {
	if len(xs) == 0 {
		return nil, errors.New("ops: ConcatCols: no inputs")
	}
	widths := make([]int, len(xs))
	for i, x := range xs {
		if x == nil {
			return nil, fmt.Errorf("ops: ConcatCols: input %d is nil", i)
		}
		if x.Shape().Dims() != 2 {
			return nil, fmt.Errorf("ops: ConcatCols: input %d has shape %v, want a matrix", i, x.Shape())
		}
		if x.Shape()[0] != xs[0].Shape()[0] {
			return nil, fmt.Errorf("ops: ConcatCols: input %d has %d rows, input 0 has %d", i, x.Shape()[0], xs[0].Shape()[0])
		}
		widths[i] = x.Shape()[1]
	}
	if len(xs) == 1 {
		return xs[0], nil
	}
	n, err := applyOp(newConcatColsOp(widths), xs...)
	if err != nil {
		return nil, fmt.Errorf("ops: ConcatCols: %w", err)
	}
	return n, nil
}

// concatColsOp is the op of ConcatCols (Matrix a → … → Matrix a).
type concatColsOp struct {
	gop.Base
	widths []int
	out    outBuf
}

func newConcatColsOp(widths []int) *concatColsOp {
	ranks := make([]int, len(widths)+1)
	for i := range ranks {
		ranks[i] = 2
	}
	return &concatColsOp{Base: gop.New(fmt.Sprintf("ConcatCols%v", widths), "", ranks...), widths: widths}
}

// total returns the output's width.
func (op *concatColsOp) total() int {
	t := 0
	for _, w := range op.widths {
		t += w
	}
	return t
}

func (op *concatColsOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != len(op.widths) {
		return nil, fmt.Errorf("ops: ConcatCols: got %d input shapes, want %d", len(ds), len(op.widths))
	}
	var rows int
	for i, d := range ds {
		s, err := shapeOf("ConcatCols", d, fmt.Sprintf("input %d", i), 2)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			rows = s[0]
		}
		if s[0] != rows || s[1] != op.widths[i] {
			return nil, fmt.Errorf("ops: ConcatCols: input %d has shape %v, want (%d, %d)", i, s, rows, op.widths[i])
		}
	}
	return tensor.Shape{rows, op.total()}, nil
}

func (op *concatColsOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *concatColsOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != len(op.widths) {
		return nil, fmt.Errorf("ops: ConcatCols: got %d inputs, want %d", len(vals), len(op.widths))
	}
	in := make([]*tensor.Dense, len(vals))
	for i, v := range vals {
		d, err := asDense(v, 2, "ConcatCols", fmt.Sprintf("input %d", i))
		if err != nil {
			return nil, err
		}
		if d.Shape()[1] != op.widths[i] || d.Shape()[0] != vals[0].Shape()[0] || d.Dtype() != vals[0].Dtype() {
			return nil, fmt.Errorf("ops: ConcatCols: input %d is %v %v, want %d columns, the rows and dtype of input 0", i, d.Shape(), d.Dtype(), op.widths[i])
		}
		in[i] = d
	}
	rows, total := in[0].Shape()[0], op.total()
	out, err := outputTensor(&op.out, "ConcatCols", prealloc, in[0].Dtype(), tensor.Shape{rows, total}, in...)
	if err != nil {
		return nil, err
	}
	lo := 0
	for i, x := range in {
		w := op.widths[i]
		switch x.Dtype() {
		case tensor.Float32:
			copyCols(out.Float32s(), x.Float32s(), rows, total, w, lo, true)
		case tensor.Float64:
			copyCols(out.Float64s(), x.Float64s(), rows, total, w, lo, true)
		}
		lo += w
	}
	return out, nil
}

// copyCols copies, for every one of rows rows, the w columns of part into
// columns lo..lo+w−1 of whole (total columns) when in is true, or those
// columns of whole into part when it is false.
func copyCols[T float32 | float64](whole, part []T, rows, total, w, lo int, in bool) {
	for r := range rows {
		wr, pr := whole[r*total+lo:r*total+lo+w], part[r*w:(r+1)*w]
		if in {
			copy(wr, pr)
		} else {
			copy(pr, wr)
		}
	}
}

func (op *concatColsOp) DiffWRT(inputs int) []bool {
	d := make([]bool, inputs)
	for i := range d {
		d[i] = true
	}
	return d
}

func (op *concatColsOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != len(op.widths) {
		return nil, fmt.Errorf("ops: ConcatCols.SymDiff: got %d inputs, want %d", len(inputs), len(op.widths))
	}
	out := make(gorgonia.Nodes, len(inputs))
	lo := 0
	for i, w := range op.widths {
		var err error
		if out[i], err = applyOp(newColsOp(lo, w, op.total()), grad); err != nil {
			return nil, fmt.Errorf("ops: ConcatCols.SymDiff: %w", err)
		}
		lo += w
	}
	return out, nil
}

// colsOp copies columns lo..lo+w−1 of an n×total matrix into an n×w one:
// the gradient of one input of ConcatCols. It is not differentiated.
type colsOp struct {
	gop.Base
	lo, w, total int
	out          outBuf
}

func newColsOp(lo, w, total int) *colsOp {
	return &colsOp{Base: gop.New(fmt.Sprintf("Cols{%d:%d of %d}", lo, lo+w, total), "", 2, 2), lo: lo, w: w, total: total}
}

func (op *colsOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("Cols", ds, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	if s[0][1] != op.total {
		return nil, fmt.Errorf("ops: Cols: input has shape %v, want %d columns", s[0], op.total)
	}
	return tensor.Shape{s[0][0], op.w}, nil
}

func (op *colsOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *colsOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("Cols", vals, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Shape()[1] != op.total {
		return nil, fmt.Errorf("ops: Cols: input has shape %v, want %d columns", x.Shape(), op.total)
	}
	rows := x.Shape()[0]
	out, err := outputTensor(&op.out, "Cols", prealloc, x.Dtype(), tensor.Shape{rows, op.w}, x)
	if err != nil {
		return nil, err
	}
	switch x.Dtype() {
	case tensor.Float32:
		copyCols(x.Float32s(), out.Float32s(), rows, op.total, op.w, op.lo, false)
	case tensor.Float64:
		copyCols(x.Float64s(), out.Float64s(), rows, op.total, op.w, op.lo, false)
	}
	return out, nil
}

func (*colsOp) DiffWRT(inputs int) []bool { return make([]bool, inputs) }

func (*colsOp) SymDiff(gorgonia.Nodes, *gorgonia.Node, *gorgonia.Node) (gorgonia.Nodes, error) {
	return nil, errors.New("ops: Cols is a gradient op and has no gradient")
}

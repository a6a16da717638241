package ops

import (
	"fmt"
	"unsafe"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SpMMOp computes Y = M·X for a fixed sparse pattern matrix M (R×C, see
// [CSR]) and a dense node X (C×F). It is differentiable with respect to X
// only: dX = Mᵀ·dY, computed by a second SpMMOp on the cached transpose.
type SpMMOp struct {
	gop.Base
	m   *CSR
	out outBuf
}

// SpMM returns the node M·x. x must be a float32 or float64 matrix with
// m.Cols rows.
func SpMM(m *CSR, x *gorgonia.Node) (*gorgonia.Node, error) {
	if m == nil {
		return nil, fmt.Errorf("ops: SpMM: nil matrix")
	}
	if x == nil || x.Shape().Dims() != 2 {
		return nil, fmt.Errorf("ops: SpMM: x must be a matrix node")
	}
	if x.Shape()[0] != m.Cols {
		return nil, fmt.Errorf("ops: SpMM: x has %d rows, the sparse matrix has %d columns", x.Shape()[0], m.Cols)
	}
	n, err := applyOp(newSpMMOp(m), x)
	if err != nil {
		return nil, fmt.Errorf("ops: SpMM: %w", err)
	}
	return n, nil
}

// newSpMMOp returns the op of SpMM (Matrix a → Matrix a), whose hash
// includes the size and the hash of the matrix.
func newSpMMOp(m *CSR) *SpMMOp {
	key := fmt.Sprintf("SpMM{%d×%d,nnz=%d,h=%x}", m.Rows, m.Cols, m.NNZ(), m.Hash())
	desc := fmt.Sprintf("SpMM{%d×%d,nnz=%d}", m.Rows, m.Cols, m.NNZ())
	return &SpMMOp{Base: gop.New(key, desc, 2, 2), m: m}
}

// Matrix returns the sparse operand.
func (op *SpMMOp) Matrix() *CSR { return op.m }

// InferShape returns (M.Rows, F).
func (op *SpMMOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("SpMM", ds, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	if s[0][0] != op.m.Cols {
		return nil, fmt.Errorf("ops: SpMM: x has %d rows, the sparse matrix has %d columns", s[0][0], op.m.Cols)
	}
	return tensor.Shape{op.m.Rows, s[0][1]}, nil
}

// Do computes M·x into a new tensor (or the one the op keeps, see
// SetOutputReuse).
func (op *SpMMOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo computes M·x into prealloc (nil: as Do), overwriting all
// of it.
func (op *SpMMOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("SpMM", vals, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Shape()[0] != op.m.Cols {
		return nil, fmt.Errorf("ops: SpMM: x has %d rows, the sparse matrix has %d columns", x.Shape()[0], op.m.Cols)
	}
	out, err := outputTensor(&op.out, "SpMM", prealloc, x.Dtype(), tensor.Shape{op.m.Rows, x.Shape()[1]}, x)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x)
}

func (op *SpMMOp) compute(out, x *tensor.Dense) (gorgonia.Value, error) {
	f := x.Shape()[1]
	switch x.Dtype() {
	case tensor.Float32:
		SpMMFloat32(op.m, x.Float32s(), f, out.Float32s())
	case tensor.Float64:
		SpMMFloat64(op.m, x.Float64s(), f, out.Float64s())
	}
	return out, nil
}

// DiffWRT reports that the op is differentiable with respect to x.
func (op *SpMMOp) DiffWRT(inputs int) []bool { return []bool{true} }

// SymDiff returns Mᵀ·grad.
func (op *SpMMOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("ops: SpMM.SymDiff: got %d inputs, want 1", len(inputs))
	}
	dx, err := applyOp(newSpMMOp(op.m.T()), grad)
	if err != nil {
		return nil, fmt.Errorf("ops: SpMM.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// SpMMFloat32 computes out = M·x for row-major x (M.Cols×f) and out
// (M.Rows×f), overwriting out. Rows are split between goroutines.
func SpMMFloat32(m *CSR, x []float32, f int, out []float32) { spmm(m, x, f, out) }

// SpMMFloat64 is SpMMFloat32 for float64.
func SpMMFloat64(m *CSR, x []float64, f int, out []float64) { spmm(m, x, f, out) }

func spmm[T float32 | float64](m *CSR, x []T, f int, out []T) {
	if o, ok := any(out).([]float32); ok && haveKernels && sizesFit(m.Rows, m.Cols, len(x), len(o), f) && m.inRange() {
		x32 := any(x).([]float32)
		parallelFor(m.Rows, m.NNZ()*f, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				k0, k1 := m.RowPtr[r], m.RowPtr[r+1]
				spmmRow32(&o[r*f], &x32[0], unsafe.SliceData(m.Col[k0:]), nil, int(k1-k0), f)
			}
		})
		return
	}
	parallelFor(m.Rows, m.NNZ()*f, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst := out[r*f : r*f+f]
			clear(dst)
			for _, c := range m.Col[m.RowPtr[r]:m.RowPtr[r+1]] {
				src := x[int(c)*f : int(c)*f+f]
				src = src[:len(dst)]
				for j := range dst {
					dst[j] += src[j]
				}
			}
		}
	})
}

// sizesFit: x holds cols×f values and out rows×f, none of them empty.
func sizesFit(rows, cols, xLen, outLen, f int) bool {
	return f > 0 && rows > 0 && cols > 0 && xLen >= cols*f && outLen >= rows*f
}

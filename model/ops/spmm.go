package ops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// SpMMOp computes Y = M·X for a fixed sparse pattern matrix M (R×C, see
// [CSR]) and a dense node X (C×F). It is differentiable with respect to X
// only: dX = Mᵀ·dY, computed by a second SpMMOp on the cached transpose.
type SpMMOp struct {
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
	n, err := gorgonia.ApplyOp(&SpMMOp{m: m}, x)
	if err != nil {
		return nil, fmt.Errorf("ops: SpMM: %w", err)
	}
	return n, nil
}

// Matrix returns the sparse operand.
func (op *SpMMOp) Matrix() *CSR { return op.m }

// Arity is 1: the dense operand.
func (op *SpMMOp) Arity() int { return 1 }

// Type is Matrix a → Matrix a.
func (op *SpMMOp) Type() hm.Type { return hm.NewFnType(matType, matType) }

// InferShape returns (M.Rows, F).
func (op *SpMMOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 1 {
		return nil, fmt.Errorf("ops: SpMM: got %d inputs, want 1", len(ds))
	}
	s, err := matShape("SpMM", ds[0], "x")
	if err != nil {
		return nil, err
	}
	if s[0] != op.m.Cols {
		return nil, fmt.Errorf("ops: SpMM: x has %d rows, the sparse matrix has %d columns", s[0], op.m.Cols)
	}
	return tensor.Shape{op.m.Rows, s[1]}, nil
}

// ReturnsPtr is false: the output is a new value.
func (op *SpMMOp) ReturnsPtr() bool { return false }

// CallsExtern is false: pure Go.
func (op *SpMMOp) CallsExtern() bool { return false }

// OverwritesInput is -1: the input is never overwritten.
func (op *SpMMOp) OverwritesInput() int { return -1 }

// WriteHash writes the op's name, the matrix size and the matrix hash.
func (op *SpMMOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "SpMM{%d×%d,nnz=%d,h=%x}", op.m.Rows, op.m.Cols, op.m.NNZ(), op.m.Hash())
}

// Hashcode returns the FNV-1a hash of WriteHash.
func (op *SpMMOp) Hashcode() uint32 { return hashOf(op.WriteHash) }

// String describes the op.
func (op *SpMMOp) String() string {
	return fmt.Sprintf("SpMM{%d×%d,nnz=%d}", op.m.Rows, op.m.Cols, op.m.NNZ())
}

// Do allocates the output and computes M·x.
func (op *SpMMOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := op.input(vals)
	if err != nil {
		return nil, err
	}
	out := op.out.get(x.Dtype(), op.m.Rows, x.Shape()[1])
	return op.compute(out, x)
}

// UsePreallocDo computes M·x into prealloc, overwriting all of it.
func (op *SpMMOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	x, err := op.input(vals)
	if err != nil {
		return nil, err
	}
	out, err := checkOut("SpMM", prealloc, x.Dtype(), tensor.Shape{op.m.Rows, x.Shape()[1]}, x)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x)
}

func (op *SpMMOp) input(vals []gorgonia.Value) (*tensor.Dense, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("ops: SpMM: got %d inputs, want 1", len(vals))
	}
	x, err := asDense(vals[0], 2, "SpMM", "x")
	if err != nil {
		return nil, err
	}
	if x.Shape()[0] != op.m.Cols {
		return nil, fmt.Errorf("ops: SpMM: x has %d rows, the sparse matrix has %d columns", x.Shape()[0], op.m.Cols)
	}
	return x, nil
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
	dx, err := gorgonia.ApplyOp(&SpMMOp{m: op.m.T()}, grad)
	if err != nil {
		return nil, fmt.Errorf("ops: SpMM.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// SpMMFloat32 computes out = M·x for row-major x (M.Cols×f) and out
// (M.Rows×f), overwriting out. Rows are split between goroutines.
func SpMMFloat32(m *CSR, x []float32, f int, out []float32) {
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

// SpMMFloat64 is SpMMFloat32 for float64.
func SpMMFloat64(m *CSR, x []float64, f int, out []float64) {
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

package ops

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// WeightedCSR is a fixed sparse matrix with values in compressed sparse
// row form (a propagation matrix such as D^-½(A+I)D^-½ or a graph
// diffusion): row r holds the columns Col[RowPtr[r]:RowPtr[r+1]] with the
// values Val at the same positions; an index listed twice in a row adds
// its values. Products in float32 use the values rounded to float32.
//
// A WeightedCSR must not be modified after it has been passed to
// NewWeightedCSR: it caches its transpose, its float32 values and a hash
// of its contents.
type WeightedCSR struct {
	Rows, Cols int
	RowPtr     []int32
	Col        []int32
	Val        []float64

	v32Once sync.Once
	v32     []float32
	tOnce   sync.Once
	t       *WeightedCSR
	hOnce   sync.Once
	h       uint64
	rOnce   sync.Once
	rOK     bool
}

// inRange reports (once) whether the pattern's indices are in range, so
// that the row kernels may use raw pointers.
func (m *WeightedCSR) inRange() bool {
	m.rOnce.Do(func() { m.rOK = checkPattern(m.Rows, m.Cols, m.RowPtr, m.Col) == nil })
	return m.rOK
}

// NewWeightedCSR validates the arrays (as NewCSR, plus one finite value
// per entry) and returns the matrix. The slices are used, not copied.
func NewWeightedCSR(rows, cols int, rowPtr, col []int32, val []float64) (*WeightedCSR, error) {
	if _, err := NewCSR(rows, cols, rowPtr, col); err != nil {
		return nil, fmt.Errorf("ops: NewWeightedCSR: %w", err)
	}
	if len(val) != len(col) {
		return nil, fmt.Errorf("ops: NewWeightedCSR: %d values for %d entries", len(val), len(col))
	}
	for k, v := range val {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("ops: NewWeightedCSR: Val[%d] is %v", k, v)
		}
	}
	return &WeightedCSR{Rows: rows, Cols: cols, RowPtr: rowPtr, Col: col, Val: val}, nil
}

// NNZ returns the number of stored entries.
func (m *WeightedCSR) NNZ() int { return len(m.Col) }

// val32 returns the values rounded to float32 (computed once).
func (m *WeightedCSR) val32() []float32 {
	m.v32Once.Do(func() {
		m.v32 = make([]float32, len(m.Val))
		for k, v := range m.Val {
			m.v32[k] = float32(v)
		}
	})
	return m.v32
}

// T returns the transpose (computed once and cached). Within each row of
// the transpose the entries are in increasing order of the original row,
// so products with it are deterministic.
func (m *WeightedCSR) T() *WeightedCSR {
	m.tOnce.Do(func() {
		val := make([]float64, len(m.Val))
		rowPtr, col := transposePattern(m.Rows, m.Cols, m.RowPtr, m.Col, func(dst, src int32) { val[dst] = m.Val[src] })
		m.t = &WeightedCSR{Rows: m.Cols, Cols: m.Rows, RowPtr: rowPtr, Col: col, Val: val}
		m.t.tOnce.Do(func() {}) // the transpose of the transpose is m itself
		m.t.t = m
	})
	return m.t
}

// Prepare computes now what m and its transpose otherwise compute on first
// use (the transpose, the float32 values, the hashes), so that a caller
// can have it done on a goroutine of its own, off the path of the ops that
// use m. The results are the same.
func (m *WeightedCSR) Prepare() {
	t := m.T()
	for _, a := range []*WeightedCSR{m, t} {
		a.val32()
		a.Hash()
	}
}

// Hash returns a 64-bit hash of the size, the pattern and the values
// (hashWords), computed once.
func (m *WeightedCSR) Hash() uint64 {
	m.hOnce.Do(func() {
		h := hashWords(hashSeed, uint64(m.Rows), uint64(m.Cols))
		h = hashInt32s(h, m.RowPtr)
		h = hashInt32s(h, m.Col)
		for _, v := range m.Val {
			h = hashWords(h, math.Float64bits(v))
		}
		m.h = h
	})
	return m.h
}

// WSpMMOp computes Y = M·X for a fixed weighted sparse matrix M (R×C, see
// [WeightedCSR]) and a dense node X (C×F). It is differentiable with
// respect to X only (M is data): dX = Mᵀ·dY, computed by a second WSpMMOp
// on the cached transpose.
type WSpMMOp struct {
	gop.Base
	m   *WeightedCSR
	out outBuf
}

// WSpMM returns the node M·x. x must be a float32 or float64 matrix with
// m.Cols rows.
func WSpMM(m *WeightedCSR, x *gorgonia.Node) (*gorgonia.Node, error) {
	if m == nil {
		return nil, fmt.Errorf("ops: WSpMM: nil matrix")
	}
	if x == nil || x.Shape().Dims() != 2 {
		return nil, fmt.Errorf("ops: WSpMM: x must be a matrix node")
	}
	if x.Shape()[0] != m.Cols {
		return nil, fmt.Errorf("ops: WSpMM: x has %d rows, the sparse matrix has %d columns", x.Shape()[0], m.Cols)
	}
	n, err := applyOp(newWSpMMOp(m), x)
	if err != nil {
		return nil, fmt.Errorf("ops: WSpMM: %w", err)
	}
	return n, nil
}

// newWSpMMOp returns the op of WSpMM (Matrix a → Matrix a), whose hash
// includes the size and the hash of the matrix.
func newWSpMMOp(m *WeightedCSR) *WSpMMOp {
	key := fmt.Sprintf("WSpMM{%d×%d,nnz=%d,h=%x}", m.Rows, m.Cols, m.NNZ(), m.Hash())
	desc := fmt.Sprintf("WSpMM{%d×%d,nnz=%d}", m.Rows, m.Cols, m.NNZ())
	return &WSpMMOp{Base: gop.New(key, desc, 2, 2), m: m}
}

// Matrix returns the sparse operand.
func (op *WSpMMOp) Matrix() *WeightedCSR { return op.m }

// InferShape returns (M.Rows, F).
func (op *WSpMMOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("WSpMM", ds, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	if s[0][0] != op.m.Cols {
		return nil, fmt.Errorf("ops: WSpMM: x has %d rows, the sparse matrix has %d columns", s[0][0], op.m.Cols)
	}
	return tensor.Shape{op.m.Rows, s[0][1]}, nil
}

// Do computes M·x into a new tensor (or the one the op keeps, see
// SetOutputReuse).
func (op *WSpMMOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo computes M·x into prealloc (nil: as Do), overwriting all
// of it.
func (op *WSpMMOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("WSpMM", vals, arg{"x", 2})
	if err != nil {
		return nil, err
	}
	x := in[0]
	if x.Shape()[0] != op.m.Cols {
		return nil, fmt.Errorf("ops: WSpMM: x has %d rows, the sparse matrix has %d columns", x.Shape()[0], op.m.Cols)
	}
	out, err := outputTensor(&op.out, "WSpMM", prealloc, x.Dtype(), tensor.Shape{op.m.Rows, x.Shape()[1]}, x)
	if err != nil {
		return nil, err
	}
	f := x.Shape()[1]
	switch x.Dtype() {
	case tensor.Float32:
		WSpMMFloat32(op.m, x.Float32s(), f, out.Float32s())
	case tensor.Float64:
		WSpMMFloat64(op.m, x.Float64s(), f, out.Float64s())
	}
	return out, nil
}

// DiffWRT reports that the op is differentiable with respect to x.
func (op *WSpMMOp) DiffWRT(inputs int) []bool { return []bool{true} }

// SymDiff returns Mᵀ·grad.
func (op *WSpMMOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("ops: WSpMM.SymDiff: got %d inputs, want 1", len(inputs))
	}
	dx, err := applyOp(newWSpMMOp(op.m.T()), grad)
	if err != nil {
		return nil, fmt.Errorf("ops: WSpMM.SymDiff: %w", err)
	}
	return gorgonia.Nodes{dx}, nil
}

// WSpMMFloat32 computes out = M·x for row-major x (M.Cols×f) and out
// (M.Rows×f), overwriting out, with M's values rounded to float32. Rows are
// split between goroutines; each output row is summed in entry order.
func WSpMMFloat32(m *WeightedCSR, x []float32, f int, out []float32) { wspmm(m, m.val32(), x, f, out) }

// WSpMMFloat64 is WSpMMFloat32 for float64.
func WSpMMFloat64(m *WeightedCSR, x []float64, f int, out []float64) { wspmm(m, m.Val, x, f, out) }

func wspmm[T float32 | float64](m *WeightedCSR, val, x []T, f int, out []T) {
	if o, ok := any(out).([]float32); ok && haveKernels && sizesFit(m.Rows, m.Cols, len(x), len(o), f) && m.inRange() && len(val) >= len(m.Col) {
		v, x32 := any(val).([]float32), any(x).([]float32)
		parallelFor(m.Rows, m.NNZ()*f, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				k0, k1 := m.RowPtr[r], m.RowPtr[r+1]
				wspmmRow32(&o[r*f], &x32[0], unsafe.SliceData(m.Col[k0:]), unsafe.SliceData(v[k0:]), int(k1-k0), f)
			}
		})
		return
	}
	parallelFor(m.Rows, m.NNZ()*f, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			dst := out[r*f : r*f+f]
			clear(dst)
			for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
				w := val[k]
				src := x[int(m.Col[k])*f : int(m.Col[k])*f+f]
				src = src[:len(dst)]
				for j := range dst {
					dst[j] += w * src[j]
				}
			}
		}
	})
}

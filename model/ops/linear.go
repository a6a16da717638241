package ops

import (
	"fmt"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gemmRowChunk is the number of rows per GEMM call when rows are split
// between goroutines (for float64, 64 rows also keep gonum's own GEMM serial
// inside a chunk for outputs up to 192 wide).
const gemmRowChunk = 64

// gemmReduceChunk is the number of rows per partial product when a GEMM
// reduces over rows (xᵀ·dz). The chunking is fixed, and the partials are
// added in chunk order, so the result does not depend on the core count.
const gemmReduceChunk = 256

// LinearOpts configures a Linear node.
type LinearOpts struct {
	// ReLU applies max(·, 0) to the output.
	ReLU bool
	// NoInputGrad declares that x needs no gradient (it depends on no
	// learnable), so the backward pass skips dx = dz·Wᵀ. Differentiating
	// with respect to x is then an error.
	NoInputGrad bool
}

// LinearOp computes y = act(x·W + b) for x (n×k), W (k×m), b (m), with
// act the identity or ReLU. The float32 GEMMs run on the shared kernel
// internal/gemm.Sgemm, the float64 ones on gonum's registered blas64
// implementation, with rows split between goroutines. Gradients: dz = dy ⊙ act'(y), dx = dz·Wᵀ, dW = xᵀ·dz,
// db = Σ_rows dz.
type LinearOp struct {
	gop.Base
	opts LinearOpts
	out  outBuf
}

// Linear returns the node act(x·W + b).
func Linear(x, w, b *gorgonia.Node, opts LinearOpts) (*gorgonia.Node, error) {
	if x == nil || w == nil || b == nil {
		return nil, fmt.Errorf("ops: Linear: nil input")
	}
	n, err := applyOp(newLinearOp(opts), x, w, b)
	if err != nil {
		return nil, fmt.Errorf("ops: Linear: %w", err)
	}
	return n, nil
}

// newLinearOp returns the op of Linear (Matrix a → Matrix a → Vector a →
// Matrix a), whose hash names both options.
func newLinearOp(opts LinearOpts) *LinearOp {
	key := fmt.Sprintf("Linear{relu=%t,nogradx=%t}", opts.ReLU, opts.NoInputGrad)
	return &LinearOp{Base: gop.New(key, "", 2, 2, 1, 2), opts: opts}
}

// linearArgs are the inputs of Linear.
var linearArgs = []arg{{"x", 2}, {"W", 2}, {"b", 1}}

// InferShape returns (n, m) after checking the inner and bias sizes.
func (op *LinearOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("Linear", ds, linearArgs...)
	if err != nil {
		return nil, err
	}
	xs, ws, bl := s[0], s[1], s[2][0]
	if xs[1] != ws[0] || bl != ws[1] {
		return nil, fmt.Errorf("ops: Linear: x %v, W %v, b (%d) do not chain", xs, ws, bl)
	}
	return tensor.Shape{xs[0], ws[1]}, nil
}

// Do computes act(x·W + b) into a new tensor (or the one the op keeps, see
// SetOutputReuse).
func (op *LinearOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo computes act(x·W + b) into prealloc (nil: as Do).
func (op *LinearOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("Linear", vals, linearArgs...)
	if err != nil {
		return nil, err
	}
	x, w, b := in[0], in[1], in[2]
	if x.Shape()[1] != w.Shape()[0] || b.Shape()[0] != w.Shape()[1] {
		return nil, fmt.Errorf("ops: Linear: x %v, W %v, b %v do not chain", x.Shape(), w.Shape(), b.Shape())
	}
	out, err := outputTensor(&op.out, "Linear", prealloc, x.Dtype(), tensor.Shape{x.Shape()[0], w.Shape()[1]}, x, w, b)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, w, b), nil
}

func (op *LinearOp) compute(out, x, w, b *tensor.Dense) *tensor.Dense {
	n, k, m := x.Shape()[0], x.Shape()[1], w.Shape()[1]
	switch x.Dtype() {
	case tensor.Float32:
		linearForward(out.Float32s(), x.Float32s(), w.Float32s(), b.Float32s(), n, k, m, op.opts.ReLU)
	case tensor.Float64:
		linearForward(out.Float64s(), x.Float64s(), w.Float64s(), b.Float64s(), n, k, m, op.opts.ReLU)
	}
	return out
}

// linearForward computes out = act(x·W + b), rows split between goroutines.
func linearForward[T float32 | float64](out, x, w, b []T, n, k, m int, relu bool) {
	chunks := (n + gemmRowChunk - 1) / gemmRowChunk
	parallelFor(chunks, n*k*m, func(lo, hi int) {
		r0, r1 := lo*gemmRowChunk, min(hi*gemmRowChunk, n)
		o := out[r0*m : r1*m]
		for i := 0; i < r1-r0; i++ {
			copy(o[i*m:(i+1)*m], b)
		}
		gemm(false, false, r1-r0, m, k, x[r0*k:r1*k], k, w, m, o, m)
		if relu {
			reluInPlace(o)
		}
	})
}

// gemm computes c += op(a)·op(b) (c is r×m, the inner size is k), where
// op transposes when the flag is set; lda and ldb are the row strides of a
// and b as stored. See gemmBeta for the kernels used.
func gemm[T float32 | float64](transA, transB bool, r, m, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if k == 0 {
		return
	}
	gemmBeta(transA, transB, r, m, k, a, lda, b, ldb, 1, c, ldc)
}

// gemmBeta computes c = op(a)·op(b) + beta·c on the calling goroutine
// (BLAS semantics, row-major; c is m×n, the inner size is k). float32 runs
// on the shared kernel internal/gemm.Sgemm; float64 on gonum's registered
// blas64 implementation. With k = 0, c is scaled by beta.
func gemmBeta[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			if beta == 0 {
				clear(row)
				continue
			}
			for j := range row {
				row[j] *= beta
			}
		}
		return
	}
	switch a := any(a).(type) {
	case []float32:
		igemm.Sgemm(transA, transB, m, n, k, 1, a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		igemm.Dgemm(transA, transB, m, n, k, 1, a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}

// DiffWRT reports differentiability with respect to x (unless
// NoInputGrad), W and b.
func (op *LinearOp) DiffWRT(inputs int) []bool { return []bool{!op.opts.NoInputGrad, true, true} }

// SymDiff returns dx = dz·Wᵀ (nil with NoInputGrad), dW = xᵀ·dz and
// db = Σ_rows dz, with dz = grad ⊙ act'(output).
func (op *LinearOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("ops: Linear.SymDiff: got %d inputs, want 3", len(inputs))
	}
	dz := grad
	var err error
	if op.opts.ReLU {
		if dz, err = applyOp(newReluGradOp(), output, grad); err != nil {
			return nil, fmt.Errorf("ops: Linear.SymDiff: %w", err)
		}
	}
	var dx *gorgonia.Node
	if !op.opts.NoInputGrad {
		if dx, err = applyOp(newMatMulOp(false, true), dz, inputs[1]); err != nil {
			return nil, fmt.Errorf("ops: Linear.SymDiff dx: %w", err)
		}
	}
	dw, err := applyOp(newMatMulOp(true, false), inputs[0], dz)
	if err != nil {
		return nil, fmt.Errorf("ops: Linear.SymDiff dW: %w", err)
	}
	db, err := ColSum(dz)
	if err != nil {
		return nil, fmt.Errorf("ops: Linear.SymDiff db: %w", err)
	}
	return gorgonia.Nodes{dx, dw, db}, nil
}

// matMulOp computes a·bᵀ (transB: a n×m, b k×m → n×k) or aᵀ·b (transA:
// a n×k, b n×m → k×m), in parallel and deterministically. It is only used
// in Linear's gradient and is not itself differentiated.
type matMulOp struct {
	gop.Base
	transA, transB bool
	out            outBuf
}

// newMatMulOp returns a matMulOp (Matrix a → Matrix a → Matrix a), whose
// hash names both transposes.
func newMatMulOp(transA, transB bool) *matMulOp {
	key := fmt.Sprintf("MatMul{transA=%t,transB=%t}", transA, transB)
	return &matMulOp{Base: gop.New(key, "", 2, 2, 2), transA: transA, transB: transB}
}

var matMulArgs = []arg{{"a", 2}, {"b", 2}}

func (op *matMulOp) outShape(a, b tensor.Shape) (tensor.Shape, error) {
	switch {
	case op.transA && !op.transB && a[0] == b[0]:
		return tensor.Shape{a[1], b[1]}, nil
	case op.transB && !op.transA && a[1] == b[1]:
		return tensor.Shape{a[0], b[0]}, nil
	}
	return nil, fmt.Errorf("ops: %s: shapes %v and %v do not chain (or unsupported transposes)", op, a, b)
}

func (op *matMulOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, matMulArgs...)
	if err != nil {
		return nil, err
	}
	return op.outShape(s[0], s[1])
}

func (op *matMulOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *matMulOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, matMulArgs...)
	if err != nil {
		return nil, err
	}
	s, err := op.outShape(in[0].Shape(), in[1].Shape())
	if err != nil {
		return nil, err
	}
	out, err := outputTensor(&op.out, op.String(), prealloc, in[0].Dtype(), s, in[0], in[1])
	if err != nil {
		return nil, err
	}
	return op.compute(out, in[0], in[1]), nil
}

func (op *matMulOp) compute(out, a, b *tensor.Dense) *tensor.Dense {
	as, bs := a.Shape(), b.Shape()
	switch a.Dtype() {
	case tensor.Float32:
		if op.transA {
			gemmTransA(out.Float32s(), a.Float32s(), b.Float32s(), as[0], as[1], bs[1])
		} else {
			gemmTransB(out.Float32s(), a.Float32s(), b.Float32s(), as[0], as[1], bs[0])
		}
	case tensor.Float64:
		if op.transA {
			gemmTransA(out.Float64s(), a.Float64s(), b.Float64s(), as[0], as[1], bs[1])
		} else {
			gemmTransB(out.Float64s(), a.Float64s(), b.Float64s(), as[0], as[1], bs[0])
		}
	}
	return out
}

// gemmTransB computes out (n×k) = a (n×m) · bᵀ (b is k×m), rows split
// between goroutines. The split is parallelForFixed's: internal/gemm takes
// its dot path for a product of at most 64 rows and its packed path above,
// which add in different orders, so a split by GOMAXPROCS would make the
// bits depend on the core count.
func gemmTransB[T float32 | float64](out, a, b []T, n, m, k int) {
	chunks := (n + gemmRowChunk - 1) / gemmRowChunk
	parallelForFixed(chunks, n*m*k, func(lo, hi int) {
		r0, r1 := lo*gemmRowChunk, min(hi*gemmRowChunk, n)
		o := out[r0*k : r1*k]
		clear(o)
		gemm(false, true, r1-r0, k, m, a[r0*m:r1*m], m, b, m, o, k)
	})
}

// gemmTransA computes out (k×m) = aᵀ·b for a (n×k) and b (n×m): fixed
// chunks of rows give partial products (in parallel), added in chunk order.
func gemmTransA[T float32 | float64](out, a, b []T, n, k, m int) {
	chunks := (n + gemmReduceChunk - 1) / gemmReduceChunk
	clear(out)
	if chunks <= 1 {
		gemm(true, false, k, m, n, a, k, b, m, out, m)
		return
	}
	partial := getScratch[T](chunks * k * m)
	defer putScratch(partial)
	clear(partial)
	parallelFor(chunks, n*k*m, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			r0, r1 := c*gemmReduceChunk, min((c+1)*gemmReduceChunk, n)
			gemm(true, false, k, m, r1-r0, a[r0*k:r1*k], k, b[r0*m:r1*m], m, partial[c*k*m:(c+1)*k*m], m)
		}
	})
	for c := 0; c < chunks; c++ {
		p := partial[c*k*m : (c+1)*k*m]
		for i, v := range p {
			out[i] += v
		}
	}
}

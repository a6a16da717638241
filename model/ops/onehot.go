package ops

import (
	"fmt"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// OneHotLinearOp computes Linear's x·W + b for an input x (n×k) whose row
// i is the one-hot vector of column Hot[i] (one-hot node labels or
// degrees, as graph datasets without attributes have), without the
// product: row i of the output is row Hot[i] of W plus b. It is
// differentiable with respect to W and b (x is data).
//
// With internal/gemm's FMA kernels (OneHotMatchesLinear) both directions
// give the bits Linear gives (float32, see TestOneHotLinearMatchesLinear): Linear's GEMM sums the FMA chain
// fma(x_il, w_lj, acc) over l from +0, in which every term with x_il = 0
// leaves acc as it is (acc is never −0 there, and a product with 0 is ±0),
// and the one term with x_il = 1 adds w_lj; so an output element is
// (w_{Hot[i]j} + 0) + b_j, the + 0 making a −0 weight +0 as the chain does.
// Likewise its weight gradient xᵀ·dz (gemmTransA: fixed chunks of
// gemmReduceChunk rows, each a chain over its rows in order, the chunks
// then added in order) is, for row l of W, the rows i with Hot[i] = l of
// dz added in order within each chunk, the chunks' sums then added in
// chunk order: what oneHotGrad computes. The sole differences are for
// non-finite weights or gradients (an Inf times a 0 of x is NaN in the
// GEMM and absent here), after which training has diverged anyway.
//
// Costs: n·m additions each way, instead of 2·n·k·m floating-point
// operations each way (COLLAB's one-hot degrees, k = 492: 1.2 GFLOP a
// view and direction at a batch of 128 graphs).
type OneHotLinearOp struct {
	gop.Base
	hot []int32
	k   int
	out outBuf
}

// OneHotMatchesLinear reports whether OneHotLinear gives the bits of
// Linear here: with the FMA kernels of internal/gemm (AVX-512 or AVX2),
// whose chains it reproduces. gonum's and OpenBLAS's GEMMs treat signed
// zeros otherwise (a −0 where OneHotLinear gives +0), so a model that must
// match Linear's bits uses Linear where this is false.
func OneHotMatchesLinear() bool {
	b := igemm.Backend()
	return b == "avx512" || b == "avx2"
}

// OneHotLinear returns the node x·W + b for the n×k input whose row i is
// one-hot at column hot[i] (0 ≤ hot[i] < k = W's rows), W (k×m) and b (m).
// hot must not change while the node is in use.
func OneHotLinear(hot []int32, w, b *gorgonia.Node) (*gorgonia.Node, error) {
	if w == nil || b == nil {
		return nil, fmt.Errorf("ops: OneHotLinear: nil input")
	}
	if w.Shape().Dims() != 2 {
		return nil, fmt.Errorf("ops: OneHotLinear: W must be a matrix, got shape %v", w.Shape())
	}
	k := w.Shape()[0]
	for i, c := range hot {
		if c < 0 || int(c) >= k {
			return nil, fmt.Errorf("ops: OneHotLinear: row %d is one-hot at column %d, W has %d rows", i, c, k)
		}
	}
	if len(hot) == 0 {
		return nil, fmt.Errorf("ops: OneHotLinear: no rows")
	}
	n, err := applyOp(newOneHotLinearOp(hot, k), w, b)
	if err != nil {
		return nil, fmt.Errorf("ops: OneHotLinear: %w", err)
	}
	return n, nil
}

// newOneHotLinearOp returns the op (Matrix a → Vector a → Matrix a), whose
// hash names the rows' columns.
func newOneHotLinearOp(hot []int32, k int) *OneHotLinearOp {
	h := hashInt32s(hashWords(hashSeed, uint64(len(hot)), uint64(k)), hot)
	key := fmt.Sprintf("OneHotLinear{n=%d,k=%d,h=%x}", len(hot), k, h)
	desc := fmt.Sprintf("OneHotLinear{n=%d,k=%d}", len(hot), k)
	return &OneHotLinearOp{Base: gop.New(key, desc, 2, 1, 2), hot: hot, k: k}
}

var oneHotLinearArgs = []arg{{"W", 2}, {"b", 1}}

// InferShape returns (n, m) after checking W's rows and the bias size.
func (op *OneHotLinearOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("OneHotLinear", ds, oneHotLinearArgs...)
	if err != nil {
		return nil, err
	}
	if s[0][0] != op.k || s[1][0] != s[0][1] {
		return nil, fmt.Errorf("ops: OneHotLinear: W %v, b %v for one-hot rows of width %d", s[0], s[1], op.k)
	}
	return tensor.Shape{len(op.hot), s[0][1]}, nil
}

// Do computes the output into a new tensor (or the one the op keeps).
func (op *OneHotLinearOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

// UsePreallocDo computes the output into prealloc (nil: as Do).
func (op *OneHotLinearOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("OneHotLinear", vals, oneHotLinearArgs...)
	if err != nil {
		return nil, err
	}
	w, b := in[0], in[1]
	m := w.Shape()[1]
	if w.Shape()[0] != op.k || b.Shape()[0] != m {
		return nil, fmt.Errorf("ops: OneHotLinear: W %v, b %v for one-hot rows of width %d", w.Shape(), b.Shape(), op.k)
	}
	out, err := outputTensor(&op.out, "OneHotLinear", prealloc, w.Dtype(), tensor.Shape{len(op.hot), m}, w, b)
	if err != nil {
		return nil, err
	}
	switch w.Dtype() {
	case tensor.Float32:
		oneHotForward(out.Float32s(), w.Float32s(), b.Float32s(), op.hot, m)
	case tensor.Float64:
		oneHotForward(out.Float64s(), w.Float64s(), b.Float64s(), op.hot, m)
	}
	return out, nil
}

// oneHotForward writes out[i][j] = (w[hot[i]][j] + 0) + b[j].
func oneHotForward[T float32 | float64](out, w, b []T, hot []int32, m int) {
	parallelFor(len(hot), len(hot)*m, func(lo, hi int) {
		var zero T
		for i := lo; i < hi; i++ {
			src := w[int(hot[i])*m : int(hot[i])*m+m]
			dst := out[i*m : i*m+m]
			dst = dst[:len(src)]
			b := b[:len(src)]
			for j, v := range src {
				dst[j] = (v + zero) + b[j]
			}
		}
	})
}

// DiffWRT reports that the op is differentiable with respect to W and b.
func (op *OneHotLinearOp) DiffWRT(inputs int) []bool { return []bool{true, true} }

// SymDiff returns dW (oneHotGradOp) and db = Σ_rows grad (ColSum, as
// Linear's).
func (op *OneHotLinearOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("ops: OneHotLinear.SymDiff: got %d inputs, want 2", len(inputs))
	}
	dw, err := applyOp(&oneHotGradOp{Base: gop.New("OneHotGrad"+op.key(), "", 2, 2), hot: op.hot, k: op.k}, grad)
	if err != nil {
		return nil, fmt.Errorf("ops: OneHotLinear.SymDiff dW: %w", err)
	}
	db, err := ColSum(grad)
	if err != nil {
		return nil, fmt.Errorf("ops: OneHotLinear.SymDiff db: %w", err)
	}
	return gorgonia.Nodes{dw, db}, nil
}

// key is the part of the op's hash key after its name.
func (op *OneHotLinearOp) key() string {
	h := hashInt32s(hashWords(hashSeed, uint64(len(op.hot)), uint64(op.k)), op.hot)
	return fmt.Sprintf("{n=%d,k=%d,h=%x}", len(op.hot), op.k, h)
}

// oneHotGradOp computes dW = xᵀ·dz (k×m) for the one-hot x of a
// OneHotLinearOp from dz (n×m), as gemmTransA sums it (see
// OneHotLinearOp).
type oneHotGradOp struct {
	gop.Base
	hot []int32
	k   int
	out outBuf
}

func (op *oneHotGradOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("OneHotGrad", ds, arg{"dz", 2})
	if err != nil {
		return nil, err
	}
	if s[0][0] != len(op.hot) {
		return nil, fmt.Errorf("ops: OneHotGrad: dz has %d rows, want %d", s[0][0], len(op.hot))
	}
	return tensor.Shape{op.k, s[0][1]}, nil
}

func (op *oneHotGradOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *oneHotGradOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("OneHotGrad", vals, arg{"dz", 2})
	if err != nil {
		return nil, err
	}
	dz := in[0]
	if dz.Shape()[0] != len(op.hot) {
		return nil, fmt.Errorf("ops: OneHotGrad: dz has %d rows, want %d", dz.Shape()[0], len(op.hot))
	}
	m := dz.Shape()[1]
	out, err := outputTensor(&op.out, "OneHotGrad", prealloc, dz.Dtype(), tensor.Shape{op.k, m}, dz)
	if err != nil {
		return nil, err
	}
	switch dz.Dtype() {
	case tensor.Float32:
		oneHotGrad(out.Float32s(), dz.Float32s(), op.hot, op.k, m)
	case tensor.Float64:
		oneHotGrad(out.Float64s(), dz.Float64s(), op.hot, op.k, m)
	}
	return out, nil
}

// oneHotGrad writes out (k×m) = xᵀ·dz for the one-hot rows hot, summed as
// gemmTransA sums it: within each chunk of gemmReduceChunk rows the rows of
// dz in order, from +0, into a partial for every column of x the chunk
// touches; the partials then added to out (cleared) in chunk order. A
// column a chunk does not touch has a partial of +0, whose addition
// changes nothing, so it is skipped.
func oneHotGrad[T float32 | float64](out, dz []T, hot []int32, k, m int) {
	clear(out)
	seen := make([]int32, k) // seen[l] == chunk+1: row l of part is in use for this chunk
	part := getScratch[T](k * m)
	defer putScratch(part)
	touched := make([]int32, 0, min(k, gemmReduceChunk))
	n := len(hot)
	for c := 0; c*gemmReduceChunk < n; c++ {
		touched = touched[:0]
		for i := c * gemmReduceChunk; i < min((c+1)*gemmReduceChunk, n); i++ {
			l := hot[i]
			p := part[int(l)*m : int(l)*m+m]
			if seen[l] != int32(c+1) {
				seen[l] = int32(c + 1)
				touched = append(touched, l)
				clear(p)
			}
			src := dz[i*m : i*m+m]
			src = src[:len(p)]
			for j, v := range src {
				p[j] += v
			}
		}
		for _, l := range touched {
			dst := out[int(l)*m : int(l)*m+m]
			p := part[int(l)*m : int(l)*m+m]
			p = p[:len(dst)]
			for j, v := range p {
				dst[j] += v
			}
		}
	}
}

package loss

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Build adds the scalar loss of two B×d views to their graph: row i of z1
// and row i of z2 are a positive pair; both are raw (un-normalised)
// projections of dtype Float32 or Float64, with B ≥ 2. The result is one
// fused op whose gradient (an analytic second op) flows to z1 and z2
// through G.Grad and a TapeMachine. When G.Grad has been called, the
// forward pass also computes the gradient and the backward op reuses it
// (checked against the exact inputs), so a training step pays for one
// pass. The LispMachine (DoDiff) is not supported.
func Build(c Config, z1, z2 *G.Node) (*G.Node, error) {
	if err := c.validateContrastive(); err != nil {
		return nil, err
	}
	if z1 == nil || z2 == nil {
		return nil, fmt.Errorf("loss: Build needs two view nodes, got z1=%v z2=%v", z1, z2)
	}
	s1, s2 := z1.Shape(), z2.Shape()
	if s1.Dims() != 2 || s2.Dims() != 2 {
		return nil, fmt.Errorf("loss: views must be B×d matrices, got shapes %v and %v", s1, s2)
	}
	if !s1.Eq(s2) {
		return nil, fmt.Errorf("loss: views have different shapes %v and %v; expected equal B×d", s1, s2)
	}
	if err := checkDims(s1[0], s1[1], s1[0]*s1[1], s2[0]*s2[1]); err != nil {
		return nil, err
	}
	if z1.Dtype() != z2.Dtype() || (z1.Dtype() != tensor.Float32 && z1.Dtype() != tensor.Float64) {
		return nil, fmt.Errorf("loss: view dtypes %v and %v; expected both float32 or both float64", z1.Dtype(), z2.Dtype())
	}
	if z1.Graph() != z2.Graph() {
		return nil, fmt.Errorf("loss: views belong to different expression graphs")
	}
	out, err := G.ApplyOp(newLossOp(c, new(gradCache)), z1, z2)
	if err != nil {
		return nil, fmt.Errorf("loss: apply %v: %w", c, err)
	}
	return out, nil
}

// configKey names an op and every parameter of c, exactly, for op hashes.
func configKey(name string, c Config) string {
	return fmt.Sprintf("%s{kind=%s,form=%s,tau=%s,tauplus=%s,beta=%s}", name, c.Kind, c.Form,
		strconv.FormatFloat(c.Temperature, 'g', -1, 64),
		strconv.FormatFloat(c.TauPlus, 'g', -1, 64),
		strconv.FormatFloat(c.Beta, 'g', -1, 64))
}

// matrices extracts the two B×d inputs of the loss ops as contiguous
// tensors with matching shapes and dtype.
func matrices(v1, v2 G.Value) (*tensor.Dense, *tensor.Dense, error) {
	var out [2]*tensor.Dense
	for i, v := range []G.Value{v1, v2} {
		t, ok := v.(*tensor.Dense)
		if !ok {
			return nil, nil, fmt.Errorf("loss op: input %d is %T; expected a *tensor.Dense", i+1, v)
		}
		if t.RequiresIterator() {
			t = t.Materialize().(*tensor.Dense)
		}
		if t.Dims() != 2 {
			return nil, nil, fmt.Errorf("loss op: input %d has shape %v; expected B×d", i+1, t.Shape())
		}
		out[i] = t
	}
	if !out[0].Shape().Eq(out[1].Shape()) || out[0].Dtype() != out[1].Dtype() {
		return nil, nil, fmt.Errorf("loss op: inputs %v %v and %v %v; expected equal shapes and dtypes",
			out[0].Shape(), out[0].Dtype(), out[1].Shape(), out[1].Dtype())
	}
	s := out[0].Shape()
	if err := checkDims(s[0], s[1], s[0]*s[1], s[0]*s[1]); err != nil {
		return nil, nil, err
	}
	return out[0], out[1], nil
}

// scalarValue reads a float from a scalar Value (the upstream gradient).
func scalarValue(v G.Value) (float64, error) {
	switch x := v.Data().(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case []float64:
		if len(x) == 1 {
			return x[0], nil
		}
	case []float32:
		if len(x) == 1 {
			return float64(x[0]), nil
		}
	}
	return 0, fmt.Errorf("loss op: upstream gradient %v (%T) is not a scalar", v, v)
}

// gradCache lets the backward op reuse the gradient that the forward op
// computed together with the loss, saving a second pass over the
// similarity matrix. SymDiff enables it; the backward op uses it only when
// its inputs are bit-identical to those of the forward pass (else it
// recomputes), so a stale entry can never be returned.
type gradCache struct {
	mu      sync.Mutex
	enabled bool      // set by SymDiff: the forward also computes the gradient
	valid   bool      // in and g hold a pair
	b, d    int       // geometry of in and g
	in      []float64 // z1 then z2 of the forward pass (float32 converts exactly)
	g       []float64 // ∂L/∂z1 then ∂L/∂z2 for an upstream gradient of 1
	hits    int       // backward passes served from the cache (for tests)
}

func (gc *gradCache) enable() {
	if gc == nil {
		return
	}
	gc.mu.Lock()
	gc.enabled = true
	gc.mu.Unlock()
}

// forwardCached evaluates the loss; when the cache is enabled it also
// stores the gradient and the inputs it belongs to.
func forwardCached[T float32 | float64](gc *gradCache, c Config, z1, z2 []T, b, d int) float64 {
	if gc == nil {
		return evaluate[T, T](c, z1, z2, b, d, false, 0, nil, nil)
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if !gc.enabled {
		return evaluate[T, T](c, z1, z2, b, d, false, 0, nil, nil)
	}
	n := b * d
	gc.in = grow(gc.in, 2*n)
	for i, v := range z1 {
		gc.in[i] = float64(v)
	}
	for i, v := range z2 {
		gc.in[n+i] = float64(v)
	}
	gc.g = grow(gc.g, 2*n)
	l := evaluate(c, z1, z2, b, d, true, 1, gc.g[:n], gc.g[n:])
	gc.b, gc.d, gc.valid = b, d, true
	return l
}

// backwardCached writes scale·∂L/∂(z1,z2) into out1, out2 from the cache
// and reports true, if the cache holds the gradient of exactly z1, z2.
func backwardCached[T float32 | float64](gc *gradCache, z1, z2 []T, b, d int, scale float64, out1, out2 []T) bool {
	if gc == nil {
		return false
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if !gc.valid || gc.b != b || gc.d != d {
		return false
	}
	n := b * d
	for i, v := range z1 {
		if float64(v) != gc.in[i] {
			return false
		}
	}
	for i, v := range z2 {
		if float64(v) != gc.in[n+i] {
			return false
		}
	}
	for i := range out1 {
		out1[i] = T(scale * gc.g[i])
		out2[i] = T(scale * gc.g[n+i])
	}
	gc.hits++
	return true
}

// lossOp is the fused forward op: (B×d, B×d) → scalar.
type lossOp struct {
	gop.Base
	c     Config
	cache *gradCache // shared with the gradOp of SymDiff; not part of the hash
}

// newLossOp returns the loss op of c (Matrix a → Matrix a → a), whose hash
// includes every parameter of c.
func newLossOp(c Config, cache *gradCache) lossOp {
	return lossOp{Base: gop.New(configKey("ContrastiveLoss", c), "ContrastiveLoss "+c.String(), 2, 2, 0), c: c, cache: cache}
}

// InferShape returns the scalar shape.
func (op lossOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

// Do computes the loss into a new scalar.
func (op lossOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

// UsePreallocDo computes the loss into prealloc (a *F32/*F64 scalar) when
// it has the right type, else into a new scalar.
func (op lossOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("loss op: got %d inputs; expected 2", len(inputs))
	}
	t1, t2, err := matrices(inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	b, d := t1.Shape()[0], t1.Shape()[1]
	switch t1.Dtype() {
	case tensor.Float64:
		l := forwardCached(op.cache, op.c, t1.Float64s(), t2.Float64s(), b, d)
		if p, ok := prealloc.(*G.F64); ok {
			*p = G.F64(l)
			return p, nil
		}
		return G.NewF64(l), nil
	case tensor.Float32:
		l := forwardCached(op.cache, op.c, t1.Float32s(), t2.Float32s(), b, d)
		if p, ok := prealloc.(*G.F32); ok {
			*p = G.F32(l)
			return p, nil
		}
		return G.NewF32(float32(l)), nil
	}
	return nil, fmt.Errorf("loss op: dtype %v; expected float32 or float64", t1.Dtype())
}

// DiffWRT: the loss is differentiable with respect to both views.
func (op lossOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff adds the analytic gradient: one op computing the stacked
// (2B×d) gradient scaled by the upstream gradient, and two row-block
// selections of it.
func (op lossOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("loss op SymDiff: got %d inputs; expected 2", len(inputs))
	}
	op.cache.enable()
	both, err := G.ApplyOp(newGradOp(op.c, op.cache), inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("loss op SymDiff: %w", err)
	}
	out := make(G.Nodes, 2)
	for i := range out {
		if out[i], err = G.ApplyOp(newHalfOp(i), both); err != nil {
			return nil, fmt.Errorf("loss op SymDiff: %w", err)
		}
	}
	return out, nil
}

// gradOp computes g·[∂L/∂z1; ∂L/∂z2] (2B×d) from z1, z2 and the upstream
// scalar gradient g, from its forward op's cache when it matches.
type gradOp struct {
	gop.Base
	c     Config
	cache *gradCache
}

// newGradOp returns the gradient op of c (Matrix a → Matrix a → a →
// Matrix a), whose hash includes every parameter of c.
func newGradOp(c Config, cache *gradCache) gradOp {
	return gradOp{Base: gop.New(configKey("ContrastiveLossGrad", c), "ContrastiveLossGrad "+c.String(), 2, 2, 0, 2), c: c, cache: cache}
}

// InferShape returns (2B, d).
func (op gradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) < 1 {
		return nil, fmt.Errorf("loss grad op: no input shapes")
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || s.Dims() != 2 {
		return nil, fmt.Errorf("loss grad op: input shape %v; expected B×d", in[0])
	}
	return tensor.Shape{2 * s[0], s[1]}, nil
}

// Do computes the gradient into a new tensor.
func (op gradOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

// UsePreallocDo overwrites prealloc (2B×d, the inputs' dtype) with the
// gradient, allocating when prealloc does not fit.
func (op gradOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("loss grad op: got %d inputs; expected 3", len(inputs))
	}
	t1, t2, err := matrices(inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	g, err := scalarValue(inputs[2])
	if err != nil {
		return nil, err
	}
	b, d := t1.Shape()[0], t1.Shape()[1]
	out, ok := prealloc.(*tensor.Dense)
	if !ok || out.Dtype() != t1.Dtype() || out.Shape().TotalSize() != 2*b*d || out.RequiresIterator() {
		out = tensor.New(tensor.Of(t1.Dtype()), tensor.WithShape(2*b, d))
	}
	switch t1.Dtype() {
	case tensor.Float64:
		o, z1, z2 := out.Float64s(), t1.Float64s(), t2.Float64s()
		if !backwardCached(op.cache, z1, z2, b, d, g, o[:b*d], o[b*d:]) {
			evaluate(op.c, z1, z2, b, d, true, g, o[:b*d], o[b*d:])
		}
	case tensor.Float32:
		o, z1, z2 := out.Float32s(), t1.Float32s(), t2.Float32s()
		if !backwardCached(op.cache, z1, z2, b, d, g, o[:b*d], o[b*d:]) {
			evaluate(op.c, z1, z2, b, d, true, g, o[:b*d], o[b*d:])
		}
	default:
		return nil, fmt.Errorf("loss grad op: dtype %v; expected float32 or float64", t1.Dtype())
	}
	return out, nil
}

// halfOp selects row block which (0 or 1) of a 2B×d matrix, copying it.
type halfOp struct {
	gop.Base
	which int
}

// newHalfOp returns the op selecting block which (Matrix a → Matrix a),
// whose hash includes which.
func newHalfOp(which int) halfOp {
	return halfOp{Base: gop.New(fmt.Sprintf("ContrastiveLossGradHalf{%d}", which), "", 2, 2), which: which}
}

// InferShape halves the rows.
func (op halfOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) < 1 {
		return nil, fmt.Errorf("loss half op: no input shape")
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || s.Dims() != 2 || s[0]%2 != 0 {
		return nil, fmt.Errorf("loss half op: input shape %v; expected 2B×d", in[0])
	}
	return tensor.Shape{s[0] / 2, s[1]}, nil
}

// Do copies the block into a new tensor.
func (op halfOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

// UsePreallocDo overwrites prealloc with the block, allocating when
// prealloc does not fit.
func (op halfOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("loss half op: got %d inputs; expected 1", len(inputs))
	}
	in, ok := inputs[0].(*tensor.Dense)
	if !ok || in.Dims() != 2 || in.Shape()[0]%2 != 0 {
		return nil, fmt.Errorf("loss half op: input %v; expected a 2B×d *tensor.Dense", inputs[0])
	}
	if in.RequiresIterator() {
		in = in.Materialize().(*tensor.Dense)
	}
	rows, d := in.Shape()[0]/2, in.Shape()[1]
	out, ok := prealloc.(*tensor.Dense)
	if !ok || out.Dtype() != in.Dtype() || out.Shape().TotalSize() != rows*d || out.RequiresIterator() {
		out = tensor.New(tensor.Of(in.Dtype()), tensor.WithShape(rows, d))
	}
	lo, hi := op.which*rows*d, (op.which+1)*rows*d
	switch in.Dtype() {
	case tensor.Float64:
		copy(out.Float64s(), in.Float64s()[lo:hi])
	case tensor.Float32:
		copy(out.Float32s(), in.Float32s()[lo:hi])
	default:
		return nil, fmt.Errorf("loss half op: dtype %v; expected float32 or float64", in.Dtype())
	}
	return out, nil
}

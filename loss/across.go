package loss

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/internal/gop"
)

// Across is a contrastive loss of two views whose nodes live in two
// expression graphs, one per view, so that each view's forward and
// backward pass can run on its own tape machine, both at once. Side adds
// the loss to a view's graph as a scalar node; differentiating that node
// gives the view's share of the gradients. When a machine reaches its side,
// it waits for the other view, the loss and both views' gradients are
// computed once (by the second to arrive), and each backward pass takes its
// view's part.
//
// The values are those of Build on one graph holding both views, bit for
// bit: the same kernel computes the loss and the gradients, and the
// gradients reach each view as Build's backward pass hands them on (an
// upstream gradient of 1). A parameter that both views use gets one
// gradient from each graph; their sum is the gradient Build's graph
// accumulates (one float addition, which does not depend on the order).
//
// An Across serves one step: make a new one for every step. If a machine
// fails before its side, call Abort, or the other machine waits forever.
type Across struct {
	c  Config
	id uint64

	mu      sync.Mutex
	cond    *sync.Cond
	cause   error // of the first Abort
	z       [2]G.Value
	arrived [2]bool
	done    bool
	err     error
	loss    float64
	b, d    int
	g       []float64 // ∂L/∂z1 then ∂L/∂z2 for an upstream gradient of 1
}

var acrossCounter atomic.Uint64

// ErrOtherView is wrapped by the error of a side whose other view failed
// (Abort). Gorgonia's machines report an op's error as text, so test the
// Across (Cause) rather than the error a machine returns.
var ErrOtherView = errors.New("loss: the other view failed")

// NewAcross returns the exchange of one step's loss c between two graphs.
func NewAcross(c Config) (*Across, error) {
	if err := c.validateContrastive(); err != nil {
		return nil, err
	}
	a := &Across{c: c, id: acrossCounter.Add(1)}
	a.cond = sync.NewCond(&a.mu)
	return a, nil
}

// Side adds the loss to the graph of view (0 or 1) with that view's B×d
// projections z and returns it as a scalar node: pass it to gorgonia.Grad
// with the graph's learnables. Call it once for each view; the two views
// must have the same shape and dtype.
func (a *Across) Side(view int, z *G.Node) (*G.Node, error) {
	if view != 0 && view != 1 {
		return nil, fmt.Errorf("loss: Across.Side: view %d, want 0 or 1", view)
	}
	if z == nil {
		return nil, fmt.Errorf("loss: Across.Side: view %d has no node", view)
	}
	s := z.Shape()
	if s.Dims() != 2 {
		return nil, fmt.Errorf("loss: view %d must be a B×d matrix, got shape %v", view, s)
	}
	if err := checkDims(s[0], s[1], s[0]*s[1], s[0]*s[1]); err != nil {
		return nil, err
	}
	if z.Dtype() != tensor.Float32 && z.Dtype() != tensor.Float64 {
		return nil, fmt.Errorf("loss: view %d has dtype %v; expected float32 or float64", view, z.Dtype())
	}
	out, err := G.ApplyOp(acrossOp{Base: gop.New(fmt.Sprintf("%s{id=%d,view=%d}", configKey("ContrastiveLossAcross", a.c), a.id, view),
		"ContrastiveLossAcross "+a.c.String(), 2, 0), a: a, view: view}, z)
	if err != nil {
		return nil, fmt.Errorf("loss: apply %v to view %d: %w", a.c, view, err)
	}
	return out, nil
}

// Abort releases a side waiting for the other view with err (a machine
// that fails before reaching its side calls it). It does nothing once the
// loss is computed.
func (a *Across) Abort(err error) {
	if err == nil {
		err = errors.New("aborted")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cause == nil {
		a.cause = err
	}
	if !a.done {
		a.done, a.err = true, fmt.Errorf("%w: %w", ErrOtherView, err)
		a.cond.Broadcast()
	}
}

// Cause returns the error passed to the first Abort, or nil.
func (a *Across) Cause() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cause
}

// Loss returns the loss once both sides have run.
func (a *Across) Loss() (float64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		return 0, errors.New("loss: Across.Loss before both views ran")
	}
	return a.loss, a.err
}

// arrive records view's projections and waits for the other view; the
// second to arrive computes the loss and the gradients.
func (a *Across) arrive(view int, z G.Value) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.arrived[view] {
		return fmt.Errorf("loss: Across: view %d ran twice (an Across serves one step)", view)
	}
	a.arrived[view], a.z[view] = true, z
	if a.done {
		return a.err
	}
	if !a.arrived[1-view] {
		for !a.done {
			a.cond.Wait()
		}
		return a.err
	}
	a.loss, a.err = a.compute()
	a.done = true
	a.cond.Broadcast()
	return a.err
}

// compute evaluates the loss and both gradients as lossOp's forward pass
// does (forwardCached), with a.mu held.
func (a *Across) compute() (float64, error) {
	t1, t2, err := matrices(a.z[0], a.z[1])
	if err != nil {
		return 0, err
	}
	b, d := t1.Shape()[0], t1.Shape()[1]
	n := b * d
	a.b, a.d = b, d
	a.g = grow(a.g, 2*n)
	switch t1.Dtype() {
	case tensor.Float64:
		return evaluate(a.c, t1.Float64s(), t2.Float64s(), b, d, true, 1, a.g[:n], a.g[n:]), nil
	case tensor.Float32:
		return evaluate(a.c, t1.Float32s(), t2.Float32s(), b, d, true, 1, a.g[:n], a.g[n:]), nil
	}
	return 0, fmt.Errorf("loss: Across: dtype %v; expected float32 or float64", t1.Dtype())
}

// acrossOp is one view's side of an Across: a scalar, the loss.
type acrossOp struct {
	gop.Base
	a    *Across
	view int
}

func (op acrossOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

func (op acrossOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("loss across op: got %d inputs; expected 1", len(inputs))
	}
	if err := op.a.arrive(op.view, inputs[0]); err != nil {
		return nil, err
	}
	l, _ := op.a.Loss()
	if inputs[0].Dtype() == tensor.Float64 {
		return G.NewF64(l), nil
	}
	return G.NewF32(float32(l)), nil
}

func (op acrossOp) DiffWRT(int) []bool { return []bool{true} }

func (op acrossOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("loss across op SymDiff: got %d inputs; expected 1", len(inputs))
	}
	g, err := G.ApplyOp(acrossGradOp{Base: gop.New(fmt.Sprintf("ContrastiveLossAcrossGrad{id=%d,view=%d}", op.a.id, op.view), "", 2, 0, 2), a: op.a, view: op.view}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("loss across op SymDiff: %w", err)
	}
	return G.Nodes{g}, nil
}

// acrossGradOp hands a view its part of the gradients, scaled by the
// upstream gradient as gradOp does.
type acrossGradOp struct {
	gop.Base
	a    *Across
	view int
}

func (op acrossGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) < 1 {
		return nil, fmt.Errorf("loss across grad op: no input shapes")
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || s.Dims() != 2 {
		return nil, fmt.Errorf("loss across grad op: input shape %v; expected B×d", in[0])
	}
	return s.Clone(), nil
}

func (op acrossGradOp) Do(inputs ...G.Value) (G.Value, error) {
	return op.UsePreallocDo(nil, inputs...)
}

// UsePreallocDo overwrites prealloc (B×d, the input's dtype) with the
// view's gradient, allocating when prealloc does not fit (as gradOp).
func (op acrossGradOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("loss across grad op: got %d inputs; expected 2", len(inputs))
	}
	scale, err := scalarValue(inputs[1])
	if err != nil {
		return nil, err
	}
	a := op.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done || a.err != nil {
		return nil, fmt.Errorf("loss across grad op: the loss was not computed (%v)", a.err)
	}
	n := a.b * a.d
	g := a.g[op.view*n : (op.view+1)*n]
	z := inputs[0]
	out, ok := prealloc.(*tensor.Dense)
	if !ok || out.Dtype() != z.Dtype() || !out.Shape().Eq(tensor.Shape{a.b, a.d}) || out.RequiresIterator() {
		out = tensor.New(tensor.Of(z.Dtype()), tensor.WithShape(a.b, a.d))
	}
	switch z.Dtype() {
	case tensor.Float64:
		o := out.Float64s()
		for i, v := range g {
			o[i] = scale * v
		}
	case tensor.Float32:
		o := out.Float32s()
		for i, v := range g {
			o[i] = float32(scale * v)
		}
	default:
		return nil, fmt.Errorf("loss across grad op: dtype %v; expected float32 or float64", z.Dtype())
	}
	return out, nil
}

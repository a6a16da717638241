package ops

import (
	"errors"
	"fmt"
	"sync"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Exchange lets two expression graphs, run at the same time by two tape
// machines on two goroutines, swap one tensor each in the middle of their
// runs. A SimCLR step builds each view's network in a graph of its own, so
// that the two views run on the two cores at once; their loss needs both
// views' projections, which Swap hands across: each graph computes the loss
// of its own projections and a copy of the other's, and differentiates it
// with respect to its own only.
//
// Each side's Swap node waits, when its machine reaches it, until the other
// side's has been reached in the same round, and then outputs a copy of the
// other side's input. A machine that fails before its Swap would leave the
// other waiting: the caller runs both machines and calls Abort when either
// fails (train.bothViews does). The Swap node is not differentiable: no gradient
// flows from one graph into the other; SwapGrad's is, through a second
// Exchange that swaps the two sides' gradients in the backward pass.
type Exchange struct {
	mu      sync.Mutex
	cond    *sync.Cond
	val     [2]*tensor.Dense // each side's copy of its input in its latest round
	round   [2]uint64        // rounds each side has reached
	aborted error
}

// NewExchange returns an Exchange between two sides, 0 and 1.
func NewExchange() *Exchange {
	e := &Exchange{}
	e.cond = sync.NewCond(&e.mu)
	return e
}

// Swap adds to x's graph the node of side (0 or 1): its value is a copy of
// the input of the other side's Swap node in the same round. Both inputs
// must have one shape and dtype (float32 or float64); each side is added
// once.
func (e *Exchange) Swap(side int, x *gorgonia.Node) (*gorgonia.Node, error) {
	return e.swapNode(side, x, nil)
}

// SwapGrad is Swap with a gradient: the node of side has as its value a
// copy of the other side's input, and its gradient with respect to its
// own input x is a copy of the gradient of the other side's Swap node,
// which back hands across in the backward pass (a swap is its own
// adjoint). Two graphs, each differentiating a loss of its own input and
// of a copy of the other's, thus hand each other's input the gradient
// that one graph holding both would give it, bit for bit: the same
// values, added nowhere. back is another Exchange than e, used by this
// pair of nodes only (each side's backward Swap is reached after its
// forward one, but a side may reach it before the other has copied the
// forward value). Both machines must run their backward passes, or the
// one that does waits for the other at back.
func (e *Exchange) SwapGrad(side int, x *gorgonia.Node, back *Exchange) (*gorgonia.Node, error) {
	if back == nil || back == e {
		return nil, errors.New("ops: Exchange.SwapGrad: the backward pass needs an Exchange of its own")
	}
	return e.swapNode(side, x, back)
}

// swapNode checks the input and adds the swap node (with a gradient
// through back when back is not nil).
func (e *Exchange) swapNode(side int, x *gorgonia.Node, back *Exchange) (*gorgonia.Node, error) {
	if side != 0 && side != 1 {
		return nil, fmt.Errorf("ops: Exchange.Swap: side %d, want 0 or 1", side)
	}
	if x == nil {
		return nil, errors.New("ops: Exchange.Swap: nil input")
	}
	if dt := x.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("ops: Exchange.Swap: dtype %v, want float32 or float64", dt)
	}
	name := fmt.Sprintf("ExchangeSwap{side=%d,ex=%p}", side, e)
	if back != nil {
		name = fmt.Sprintf("ExchangeSwap{side=%d,ex=%p,back=%p}", side, e, back)
	}
	n, err := applyOp(&swapOp{Base: gop.New(name, "", x.Dims(), x.Dims()), ex: e, side: side, back: back}, x)
	if err != nil {
		return nil, fmt.Errorf("ops: Exchange.Swap: %w", err)
	}
	return n, nil
}

// Abort makes a side that waits, or will wait, for the other fail with
// err instead (the other side's machine failed). Reset clears it.
func (e *Exchange) Abort(err error) {
	e.mu.Lock()
	if e.aborted == nil {
		e.aborted = err
	}
	e.mu.Unlock()
	e.cond.Broadcast()
}

// Reset starts afresh after an aborted run: rounds and the abort are
// cleared.
func (e *Exchange) Reset() {
	e.mu.Lock()
	e.round = [2]uint64{}
	e.aborted = nil
	e.mu.Unlock()
}

// swap is the work of side's node: publish x, wait for the other side's
// input of this round, and copy it into out.
func (e *Exchange) swap(side int, x *tensor.Dense, out *outBuf) (*tensor.Dense, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.aborted != nil {
		return nil, fmt.Errorf("exchange aborted: %w", e.aborted)
	}
	v := e.val[side]
	if v == nil || v.Dtype() != x.Dtype() || !v.Shape().Eq(x.Shape()) {
		v = newDense(x.Dtype(), x.Shape()...)
		e.val[side] = v
	}
	copyDense(v, x)
	e.round[side]++
	e.cond.Broadcast()
	other := 1 - side
	for e.round[other] < e.round[side] && e.aborted == nil {
		e.cond.Wait()
	}
	if e.aborted != nil {
		return nil, fmt.Errorf("exchange aborted: %w", e.aborted)
	}
	p := e.val[other]
	if p.Dtype() != x.Dtype() || !p.Shape().Eq(x.Shape()) {
		return nil, fmt.Errorf("exchange: side %d sent %v %v, side %d %v %v: want one shape and dtype",
			side, x.Shape(), x.Dtype(), other, p.Shape(), p.Dtype())
	}
	o := out.get(x.Dtype(), x.Shape()...)
	copyDense(o, p)
	return o, nil
}

// copyDense copies src's data into dst (same dtype and size).
func copyDense(dst, src *tensor.Dense) {
	switch src.Dtype() {
	case tensor.Float32:
		copy(dst.Float32s(), src.Float32s())
	default:
		copy(dst.Float64s(), src.Float64s())
	}
}

// swapOp is the op of Exchange.Swap and SwapGrad (Tensor a → Tensor a).
type swapOp struct {
	gop.Base
	ex   *Exchange
	side int
	back *Exchange // SwapGrad's exchange of the gradients; nil for Swap
	out  outBuf
}

func (*swapOp) fillsOutput() {}

func (op *swapOp) keep() *outBuf { return &op.out }

func (op *swapOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	if len(ds) != 1 {
		return nil, fmt.Errorf("ops: Exchange.Swap: got %d input shapes, want 1", len(ds))
	}
	s, err := shapeOf("Exchange.Swap", ds[0], "input", -1)
	if err != nil {
		return nil, err
	}
	return s.Clone(), nil
}

func (op *swapOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	if len(vals) != 1 {
		return nil, fmt.Errorf("ops: Exchange.Swap: got %d inputs, want 1", len(vals))
	}
	x, err := asDense(vals[0], -1, "Exchange.Swap", "input")
	if err != nil {
		return nil, fmt.Errorf("ops: Exchange.Swap side %d: %w", op.side, err)
	}
	o, err := op.ex.swap(op.side, x, &op.out)
	if err != nil {
		return nil, fmt.Errorf("ops: Exchange.Swap side %d: %w", op.side, err)
	}
	return o, nil
}

// DiffWRT: Swap's value is a constant to its graph (the other side's
// value does not depend on this side's input); SwapGrad's is
// differentiated through the other graph.
func (op *swapOp) DiffWRT(int) []bool { return []bool{op.back != nil} }

// SymDiff of SwapGrad: the gradient with respect to the input is the other
// side's gradient with respect to its output, swapped through back.
func (op *swapOp) SymDiff(inputs gorgonia.Nodes, _, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if op.back == nil {
		return nil, errors.New("ops: Exchange.Swap is not differentiable (SwapGrad is)")
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("ops: Exchange.SwapGrad: got %d inputs, want 1", len(inputs))
	}
	if !grad.Shape().Eq(inputs[0].Shape()) {
		return nil, fmt.Errorf("ops: Exchange.SwapGrad: gradient of shape %v for an input of shape %v", grad.Shape(), inputs[0].Shape())
	}
	g, err := op.back.Swap(op.side, grad)
	if err != nil {
		return nil, fmt.Errorf("ops: Exchange.SwapGrad: %w", err)
	}
	return gorgonia.Nodes{g}, nil
}

package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// This file holds what the models share: building their parameters
// (paramBuilder) and binding them into an expression graph (binding), with
// the BatchNorm calls and projection heads built on those.

// bnIdx holds the indices in a model's parameters of one BatchNorm: γ, β
// and the running mean and variance.
type bnIdx struct{ gamma, beta, runMean, runVar int }

// headIdx holds the indices in a model's parameters of a projection head
// Linear(w1, b1) → ReLU → Linear(w2, b2).
type headIdx struct{ w1, b1, w2, b2 int }

// paramBuilder appends the parameters of a model under construction, all
// of dtype dt; the random initialisations draw from rng in call order.
type paramBuilder struct {
	params []*Param
	dt     tensor.Dtype
	rng    *rand.Rand
}

// add appends a zero parameter and returns its index.
func (p *paramBuilder) add(name string, trainable bool, shape ...int) int {
	p.params = append(p.params, &Param{Name: name, Value: tensor.New(tensor.Of(p.dt), tensor.WithShape(shape...)), Trainable: trainable})
	return len(p.params) - 1
}

// value returns the value of parameter i.
func (p *paramBuilder) value(i int) *tensor.Dense { return p.params[i].Value }

// uniform draws parameter i from U(−1/√fanIn, 1/√fanIn), as PyTorch
// initialises Linear weights and biases.
func (p *paramBuilder) uniform(i, fanIn int) {
	bound := 1 / math.Sqrt(float64(fanIn))
	fill(p.value(i), func() float64 { return (2*p.rng.Float64() - 1) * bound })
}

// constant sets every value of parameter i to c.
func (p *paramBuilder) constant(i int, c float64) { fill(p.value(i), func() float64 { return c }) }

// batchNorm appends the parameters of a BatchNorm over c channels,
// prefix{weight,bias} (trainable) and prefix{running_mean,running_var}
// (buffers), initialised as PyTorch does: γ = 1, β = 0, running mean 0,
// running variance 1.
func (p *paramBuilder) batchNorm(prefix string, c int) bnIdx {
	bn := bnIdx{
		gamma:   p.add(prefix+"weight", true, c),
		beta:    p.add(prefix+"bias", true, c),
		runMean: p.add(prefix+"running_mean", false, c),
		runVar:  p.add(prefix+"running_var", false, c),
	}
	p.constant(bn.gamma, 1)
	p.constant(bn.beta, 0)
	p.constant(bn.runMean, 0)
	p.constant(bn.runVar, 1)
	return bn
}

// head appends a projection head proj.0 (in×hidden) → ReLU → proj.2
// (hidden×out), weights and biases drawn by uniform.
func (p *paramBuilder) head(in, hidden, out int) headIdx {
	h := headIdx{
		w1: p.add("proj.0.weight", true, in, hidden),
		b1: p.add("proj.0.bias", true, hidden),
		w2: p.add("proj.2.weight", true, hidden, out),
		b2: p.add("proj.2.bias", true, out),
	}
	p.uniform(h.w1, in)
	p.uniform(h.b1, in)
	p.uniform(h.w2, hidden)
	p.uniform(h.b2, hidden)
	return h
}

func fill(d *tensor.Dense, f func() float64) {
	switch d.Dtype() {
	case tensor.Float32:
		for i, s := 0, d.Float32s(); i < len(s); i++ {
			s[i] = float32(f())
		}
	case tensor.Float64:
		for i, s := 0, d.Float64s(); i < len(s); i++ {
			s[i] = f()
		}
	}
}

// binding is a model's parameters bound into one expression graph: their
// nodes share the parameters' values, so an optimiser step on the Params is
// seen by the next run, and are created on first use, so that learnables
// holds only the parameters the graph uses. It also records the
// training-mode BatchNorm calls whose statistics commitStats folds in.
type binding struct {
	g      *gorgonia.ExprGraph
	params []*Param
	nodes  []*gorgonia.Node // per parameter; nil until first used
	calls  []bnCall
}

// bnCall is one training-mode BatchNorm call.
type bnCall struct {
	bn bnIdx
	op *ops.BatchNormOp
}

func newBinding(g *gorgonia.ExprGraph, params []*Param) binding {
	return binding{g: g, params: params, nodes: make([]*gorgonia.Node, len(params))}
}

// node returns the graph node of parameter i, creating it if needed.
func (b *binding) node(i int) *gorgonia.Node {
	if b.nodes[i] == nil {
		b.nodes[i] = paramNode(b.g, b.params[i])
	}
	return b.nodes[i]
}

// paramNode makes the graph node of p, named after it and bound to its value
// (so an optimiser step on p.Value is seen by the next graph).
func paramNode(g *gorgonia.ExprGraph, p *Param) *gorgonia.Node {
	opts := []gorgonia.NodeConsOpt{gorgonia.WithShape(p.Value.Shape()...), gorgonia.WithName(p.Name), gorgonia.WithValue(p.Value)}
	switch p.Value.Dims() {
	case 1:
		return gorgonia.NewVector(g, p.Value.Dtype(), opts...)
	case 2:
		return gorgonia.NewMatrix(g, p.Value.Dtype(), opts...)
	}
	return gorgonia.NewTensor(g, p.Value.Dtype(), p.Value.Dims(), opts...)
}

// learnables returns the nodes of the trainable parameters used so far,
// in Params order.
func (b *binding) learnables() gorgonia.Nodes {
	var ns gorgonia.Nodes
	for i, p := range b.params {
		if p.Trainable && b.nodes[i] != nil {
			ns = append(ns, b.nodes[i])
		}
	}
	return ns
}

// grads copies, after a run, the gradient of every trainable parameter in
// Params order into dst (grown as needed; its slices are reused when they
// have the right size) and returns it; a parameter without a node gets nil.
func (b *binding) grads(dst [][]float32) ([][]float32, error) {
	k := 0
	for i, p := range b.params {
		if !p.Trainable {
			continue
		}
		if k == len(dst) {
			dst = append(dst, nil)
		}
		if b.nodes[i] == nil {
			dst[k] = nil
		} else {
			g, err := readGrad(b.nodes[i], p, dst[k])
			if err != nil {
				return nil, err
			}
			dst[k] = g
		}
		k++
	}
	return dst[:k], nil
}

// readGrad copies the gradient of parameter p's node n, after the machine
// ran, into dst (reallocated unless it has the parameter's size) as float32.
func readGrad(n *gorgonia.Node, p *Param, dst []float32) ([]float32, error) {
	v, err := n.Grad()
	if err != nil {
		return nil, fmt.Errorf("grads: %s: %w (did gorgonia.Grad include Learnables() and the machine run?)", p.Name, err)
	}
	d, ok := v.(*tensor.Dense)
	if !ok || d.DataSize() != p.Value.DataSize() {
		return nil, fmt.Errorf("grads: %s: gradient is %v, want %d values", p.Name, v, p.Value.DataSize())
	}
	if len(dst) != d.DataSize() {
		dst = make([]float32, d.DataSize())
	}
	switch d.Dtype() {
	case tensor.Float32:
		copy(dst, d.Float32s())
	case tensor.Float64:
		for k, x := range d.Float64s() {
			dst[k] = float32(x)
		}
	default:
		return nil, fmt.Errorf("grads: %s: gradient dtype %v", p.Name, d.Dtype())
	}
	return dst, nil
}

// linear returns act(x·W + bias) in one ops.Linear for the parameters w
// and bias; noGradX says that x depends on no learnable.
func (b *binding) linear(x *gorgonia.Node, w, bias int, relu, noGradX bool) (*gorgonia.Node, error) {
	y, err := ops.Linear(x, b.node(w), b.node(bias), ops.LinearOpts{ReLU: relu, NoInputGrad: noGradX})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.params[w].Name, err)
	}
	return y, nil
}

// project adds the projection head h applied to emb, which must be an
// (n, in) matrix, with its layers built by linear.
func (b *binding) project(emb *gorgonia.Node, in int, h headIdx, linear func(x *gorgonia.Node, w, bias int, relu, noGradX bool) (*gorgonia.Node, error)) (*gorgonia.Node, error) {
	if emb == nil || emb.Shape().Dims() != 2 || emb.Shape()[1] != in {
		var s tensor.Shape
		if emb != nil {
			s = emb.Shape()
		}
		return nil, fmt.Errorf("project: input shape %v, want (n, %d)", s, in)
	}
	x, err := linear(emb, h.w1, h.b1, true, false)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	out, err := linear(x, h.w2, h.b2, false, false)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	return out, nil
}

// batchNorm applies norm (ops.BatchNorm or ops.BatchNorm2D) to x with the
// parameters bn and cfg (Eps, Training, ReLU): in training mode with the
// batch statistics, recording the call for commitStats; in evaluation mode
// with the running statistics as they are now (copied into the op).
func (b *binding) batchNorm(norm func(x, gamma, beta *gorgonia.Node, cfg ops.BNConfig) (*gorgonia.Node, *ops.BatchNormOp, error),
	x *gorgonia.Node, bn bnIdx, cfg ops.BNConfig) (*gorgonia.Node, error) {
	if !cfg.Training {
		cfg.RunningMean = floats64(b.params[bn.runMean].Value)
		cfg.RunningVar = floats64(b.params[bn.runVar].Value)
	}
	y, op, err := norm(x, b.node(bn.gamma), b.node(bn.beta), cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.params[bn.gamma].Name, err)
	}
	if cfg.Training {
		b.calls = append(b.calls, bnCall{bn: bn, op: op})
	}
	return y, nil
}

// StatsCommitter is a bound network with training-mode BatchNorm calls
// (Bound, MLPBound, ResNetBound): CommitStats folds the batch statistics
// of the calls since the last CommitStats into the running buffers, in
// call order, once the machine has run; on error no buffer is changed.
// A method that binds several networks commits each of them.
type StatsCommitter interface {
	CommitStats() error
}

var (
	_ StatsCommitter = (*Bound)(nil)
	_ StatsCommitter = (*MLPBound)(nil)
	_ StatsCommitter = (*ResNetBound)(nil)
)

// commitStats folds the batch statistics of the latest run of every
// recorded BatchNorm call into the running buffers, in call order (two
// views = two updates, as two forward calls in PyTorch), with momentum mom
// (see foldStats). On error no buffer is changed.
func (b *binding) commitStats(mom float64) error {
	type upd struct {
		bn      bnIdx
		mean, v []float64
		n       int
	}
	ups := make([]upd, 0, len(b.calls))
	for k, c := range b.calls {
		name := b.params[c.bn.runMean].Name // γ may be absent (BatchNorm without affine)
		mean, v, n, err := c.op.BatchStats()
		if err != nil {
			return fmt.Errorf("commit stats: %s (call %d): %w", name, k, err)
		}
		if n < 2 {
			return fmt.Errorf("commit stats: %s (call %d): %d values per channel, need 2 for the unbiased variance", name, k, n)
		}
		ups = append(ups, upd{c.bn, mean, v, n})
	}
	for _, u := range ups {
		foldStats(b.params[u.bn.runMean].Value, b.params[u.bn.runVar].Value, u.mean, u.v, u.n, mom)
	}
	return nil
}

// foldStats updates BatchNorm running buffers with one call's batch mean,
// biased variance v and count n (PyTorch's rule, momentum mom):
// rm ← (1−mom)·rm + mom·mean, rv ← (1−mom)·rv + mom·v·n/(n−1).
func foldStats(rm, rv *tensor.Dense, mean, v []float64, n int, mom float64) {
	unbias := float64(n) / float64(n-1)
	for j := range mean {
		setAt(rm, j, (1-mom)*at(rm, j)+mom*mean[j])
		setAt(rv, j, (1-mom)*at(rv, j)+mom*v[j]*unbias)
	}
}

// nodeFeatures adds to g the rows×cols input matrix x, named name, of
// dtype dt: a float32 matrix uses x in place as its value (leave x
// unchanged until the machine has run), a float64 one a widened copy.
func nodeFeatures(g *gorgonia.ExprGraph, dt tensor.Dtype, name string, rows, cols int, x []float32) *gorgonia.Node {
	return constMatrix(g, dt, name, rows, cols, x)
}

// constMatrix returns a rows×cols matrix node of g named name, of dtype dt
// (Float32 or Float64), holding x: x itself when its element type is dt's,
// else a converted copy.
func constMatrix[T float32 | float64](g *gorgonia.ExprGraph, dt tensor.Dtype, name string, rows, cols int, x []T) *gorgonia.Node {
	var backing any
	if dt == tensor.Float32 {
		backing = convertSlice[float32](x)
	} else {
		backing = convertSlice[float64](x)
	}
	xv := tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(backing))
	return gorgonia.NewMatrix(g, dt, gorgonia.WithShape(rows, cols), gorgonia.WithName(name), gorgonia.WithValue(xv))
}

// convertSlice returns x as a []D: x itself when it is one, else a copy
// with every element converted.
func convertSlice[D, S float32 | float64](x []S) []D {
	if d, ok := any(x).([]D); ok {
		return d
	}
	out := make([]D, len(x))
	for i, v := range x {
		out[i] = D(v)
	}
	return out
}

func floats64(d *tensor.Dense) []float64 {
	out := make([]float64, d.DataSize())
	for i := range out {
		out[i] = at(d, i)
	}
	return out
}

func at(d *tensor.Dense, i int) float64 {
	if d.Dtype() == tensor.Float32 {
		return float64(d.Float32s()[i])
	}
	return d.Float64s()[i]
}

func setAt(d *tensor.Dense, i int, v float64) {
	if d.Dtype() == tensor.Float32 {
		d.Float32s()[i] = float32(v)
	} else {
		d.Float64s()[i] = v
	}
}

var errNotFloat32 = errors.New("the model must be float32 (GINConfig.Float64 false)")

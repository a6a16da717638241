package model

import (
	"errors"
	"fmt"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// bnCall records one training-mode BatchNorm call for CommitStats.
type bnCall struct {
	layer int
	op    *ops.BatchNormOp
}

// Bound is a GIN bound into one Gorgonia expression graph. Its parameter
// nodes share their values with the model's Params, so an optimiser step
// on the Params is seen by every later Bind. Encode both views of a batch
// through the same Bound: gradients with respect to the shared parameter
// nodes then accumulate, as in PyTorch.
//
// A Bound is used by one goroutine at a time.
type Bound struct {
	m     *GIN
	g     *gorgonia.ExprGraph
	nodes []*gorgonia.Node // per entry of m.params; nil until first used
	calls []bnCall
	n     int // number of Encode calls, for unique input names

	// mode selects how a Linear layer is built (for the benchmark only).
	mode linearMode
}

// linearMode selects the implementation of a Linear layer.
type linearMode int

const (
	linearFused    linearMode = iota // ops.Linear: GEMM + bias + ReLU in one op
	linearBiasAct                    // gorgonia.Mul, then ops.BiasAct
	linearGorgonia                   // gorgonia.Mul, BroadcastAdd, Rectify
)

// Bind prepares m for the expression graph g. Parameter nodes are created
// in g on first use (encoder parameters by Encode, head parameters by
// Project), so Learnables holds only the parameters the graph uses. Call
// Bind once per graph.
func (m *GIN) Bind(g *gorgonia.ExprGraph) *Bound {
	return &Bound{m: m, g: g, nodes: make([]*gorgonia.Node, len(m.params))}
}

// node returns the graph node of parameter i, creating it if needed.
func (b *Bound) node(i int) *gorgonia.Node {
	if b.nodes[i] != nil {
		return b.nodes[i]
	}
	b.nodes[i] = paramNode(b.g, b.m.params[i])
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

// linear returns act(x·W + bias) for parameter indices w and bias; noGradX
// says that x depends on no learnable (the first layer's input).
func (b *Bound) linear(x *gorgonia.Node, w, bias int, relu, noGradX bool) (*gorgonia.Node, error) {
	switch b.mode {
	case linearFused:
		y, err := ops.Linear(x, b.node(w), b.node(bias), ops.LinearOpts{ReLU: relu, NoInputGrad: noGradX})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.m.params[w].Name, err)
		}
		return y, nil
	}
	xw, err := gorgonia.Mul(x, b.node(w))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.m.params[w].Name, err)
	}
	if b.mode == linearBiasAct {
		y, err := ops.BiasAct(xw, b.node(bias), relu)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.m.params[bias].Name, err)
		}
		return y, nil
	}
	y, err := gorgonia.BroadcastAdd(xw, b.node(bias), nil, []byte{0})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.m.params[bias].Name, err)
	}
	if relu {
		if y, err = gorgonia.Rectify(y); err != nil {
			return nil, fmt.Errorf("%s: relu: %w", b.m.params[bias].Name, err)
		}
	}
	return y, nil
}

// Encode adds the encoder applied to batch to the graph and returns the
// graph embeddings (NumGraphs × EmbedDim). With train true, BatchNorm uses
// the batch statistics and records them for CommitStats (training needs at
// least 2 nodes); with train false it uses the running statistics as they
// are now (they are copied into the graph). A float32 model uses batch.X
// in place as the input node's value: leave it unchanged until the machine
// has run.
func (b *Bound) Encode(batch *GraphBatch, train bool) (*gorgonia.Node, error) {
	if err := batch.Validate(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	cfg := b.m.cfg
	if batch.FeatDim != cfg.InDim {
		return nil, fmt.Errorf("encode: batch has FeatDim %d, model InDim is %d", batch.FeatDim, cfg.InDim)
	}
	if train && batch.NumNodes < 2 {
		return nil, fmt.Errorf("encode: training-mode BatchNorm needs at least 2 nodes, batch has %d", batch.NumNodes)
	}
	if batch.NumNodes == 0 || batch.NumGraphs == 0 {
		return nil, fmt.Errorf("encode: empty batch (%d graphs, %d nodes)", batch.NumGraphs, batch.NumNodes)
	}
	adj, err := batch.adjacencyPlusSelf()
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	pool, err := batch.pooling()
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	dt := b.m.dtype()
	var xv *tensor.Dense
	if dt == tensor.Float32 {
		xv = tensor.New(tensor.WithShape(batch.NumNodes, batch.FeatDim), tensor.WithBacking(batch.X))
	} else {
		x64 := make([]float64, len(batch.X))
		for i, v := range batch.X {
			x64[i] = float64(v)
		}
		xv = tensor.New(tensor.WithShape(batch.NumNodes, batch.FeatDim), tensor.WithBacking(x64))
	}
	h := gorgonia.NewMatrix(b.g, dt, gorgonia.WithShape(batch.NumNodes, batch.FeatDim),
		gorgonia.WithName(fmt.Sprintf("encode.%d.x", b.n)), gorgonia.WithValue(xv))
	b.n++

	pooled := make([]*gorgonia.Node, 0, cfg.Layers)
	var calls []bnCall
	for l, li := range b.m.layers {
		agg, err := ops.SpMM(adj, h)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d aggregation: %w", l, err)
		}
		t, err := b.linear(agg, li.w1, li.b1, true, l == 0)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d: %w", l, err)
		}
		// The ReLU after GINConv is fused into the second Linear.
		u, err := b.linear(t, li.w2, li.b2, true, false)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d: %w", l, err)
		}
		bn := ops.BNConfig{Eps: cfg.BNEps, Training: train}
		if !train {
			bn.RunningMean = floats64(b.m.params[li.runMean].Value)
			bn.RunningVar = floats64(b.m.params[li.runVar].Value)
		}
		hn, op, err := ops.BatchNorm(u, b.node(li.gamma), b.node(li.beta), bn)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d batch norm: %w", l, err)
		}
		if train {
			calls = append(calls, bnCall{layer: l, op: op})
		}
		p, err := ops.SpMM(pool, hn)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d pooling: %w", l, err)
		}
		pooled = append(pooled, p)
		h = hn
	}
	emb := pooled[0]
	if len(pooled) > 1 {
		if emb, err = gorgonia.Concat(1, pooled...); err != nil {
			return nil, fmt.Errorf("encode: concatenating layer outputs: %w", err)
		}
	}
	b.calls = append(b.calls, calls...)
	return emb, nil
}

// Project adds the projection head applied to emb (NumGraphs × EmbedDim)
// and returns NumGraphs × ProjDim.
func (b *Bound) Project(emb *gorgonia.Node) (*gorgonia.Node, error) {
	if emb == nil || emb.Shape().Dims() != 2 || emb.Shape()[1] != b.m.EmbedDim() {
		var s tensor.Shape
		if emb != nil {
			s = emb.Shape()
		}
		return nil, fmt.Errorf("project: input shape %v, want (n, %d)", s, b.m.EmbedDim())
	}
	h, err := b.linear(emb, b.m.pw1, b.m.pb1, true, false)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	out, err := b.linear(h, b.m.pw2, b.m.pb2, false, false)
	if err != nil {
		return nil, fmt.Errorf("project: %w", err)
	}
	return out, nil
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order: pass them to gorgonia.Grad.
func (b *Bound) Learnables() gorgonia.Nodes { return learnableNodes(b.m.params, b.nodes) }

// Grads returns, after the machine ran the gradients, one slice per
// trainable parameter in Params order (copied; float64 models are
// converted). A parameter the graph does not use gets nil, which Adam.Step
// skips, as PyTorch skips parameters without a gradient.
func (b *Bound) Grads() ([][]float32, error) { return readGrads(b.m.params, b.nodes, nil) }

// learnableNodes returns nodes[i] for every trainable params[i] that has a
// node (nil: not used by the graph), in Params order.
func learnableNodes(params []*Param, nodes []*gorgonia.Node) gorgonia.Nodes {
	var ns gorgonia.Nodes
	for i, p := range params {
		if p.Trainable && nodes[i] != nil {
			ns = append(ns, nodes[i])
		}
	}
	return ns
}

// readGrads copies, after a run, the gradient of every trainable parameter
// in Params order into dst (grown as needed; its slices are reused when
// they have the right size) and returns it; a parameter without a node gets
// nil.
func readGrads(params []*Param, nodes []*gorgonia.Node, dst [][]float32) ([][]float32, error) {
	k := 0
	for i, p := range params {
		if !p.Trainable {
			continue
		}
		if k == len(dst) {
			dst = append(dst, nil)
		}
		if nodes[i] == nil {
			dst[k] = nil
		} else {
			g, err := readGrad(nodes[i], p, dst[k])
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

// CommitStats folds the batch statistics of every training-mode BatchNorm
// call since the last CommitStats into the running buffers, in call order
// (two views = two updates, as two forward calls in PyTorch):
// running_mean ← (1−m)·running_mean + m·μ_B and
// running_var ← (1−m)·running_var + m·σ²_B·n/(n−1), m = BNMomentum.
// Call it after the machine ran. On error no buffer is changed.
func (b *Bound) CommitStats() error {
	type upd struct {
		li      layerIdx
		mean, v []float64
		n       int
	}
	ups := make([]upd, 0, len(b.calls))
	for k, c := range b.calls {
		mean, v, n, err := c.op.BatchStats()
		if err != nil {
			return fmt.Errorf("commit stats: call %d (layer %d): %w", k, c.layer, err)
		}
		if n < 2 {
			return fmt.Errorf("commit stats: call %d (layer %d): %d rows, need 2 for the unbiased variance", k, c.layer, n)
		}
		ups = append(ups, upd{b.m.layers[c.layer], mean, v, n})
	}
	for _, u := range ups {
		foldStats(b.m.params[u.li.runMean].Value, b.m.params[u.li.runVar].Value, u.mean, u.v, u.n, b.m.cfg.BNMomentum)
	}
	b.calls = b.calls[:0]
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

// PendingStats returns the number of training-mode BatchNorm calls whose
// statistics CommitStats has not folded in yet.
func (b *Bound) PendingStats() int { return len(b.calls) }

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

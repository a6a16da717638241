package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// This file holds MVGRL's building blocks (kavehhassani/mvgrl,
// graph/train.py): the GCN encoder of one view and the projection head with
// a linear shortcut. mvgrl.go puts two encoders and two heads together.

// GCNConfig sizes a GCN encoder.
type GCNConfig struct {
	InDim  int // node feature dimension; required
	Hidden int // width of every layer; required
	Layers int // number of layers; required
	// Float64 makes parameters and activations float64 (gradient checks).
	Float64 bool
}

func (c GCNConfig) validate() error {
	if c.InDim <= 0 || c.Hidden <= 0 || c.Layers <= 0 {
		return fmt.Errorf("gcn config: InDim %d, Hidden %d, Layers %d: want all > 0", c.InDim, c.Hidden, c.Layers)
	}
	return nil
}

func dtypeOf(float64s bool) tensor.Dtype {
	if float64s {
		return tensor.Float64
	}
	return tensor.Float32
}

// gcnLayer holds the indices of one layer's parameters: the weight of the
// bias-free Linear, the bias added after propagation and the PReLU slope.
type gcnLayer struct{ w, b, a int }

// GCN is the encoder of one MVGRL view: Layers layers, layer ℓ computing
// H' = PReLU(P·(H·W_ℓ) + b_ℓ) for the view's propagation matrix P (the
// normalised adjacency or the diffusion), with one PReLU slope per layer.
// Its outputs are the last layer's node representations and the graph
// readout: the sum-pooled node outputs of every layer, concatenated
// (Layers×Hidden values). Weights are stored in×out (x·W).
type GCN struct {
	cfg    GCNConfig
	params []*Param
	layers []gcnLayer
}

// NewGCN builds a GCN whose parameter names start with prefix
// (prefix+"layers.ℓ.fc.weight", "layers.ℓ.bias", "layers.ℓ.act.weight"),
// initialised as MVGRL's GCNLayer: Xavier-uniform weights, zero biases and
// PReLU slopes of 0.25 (torch.nn.PReLU's default). The draws come from a PCG
// source seeded with seed, in the order of Params.
func NewGCN(prefix string, cfg GCNConfig, seed uint64) (*GCN, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &GCN{cfg: cfg}
	p := &paramBuilder{dt: dtypeOf(cfg.Float64), rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	in := cfg.InDim
	for l := 0; l < cfg.Layers; l++ {
		pre := fmt.Sprintf("%slayers.%d.", prefix, l)
		ly := gcnLayer{
			w: p.add(pre+"fc.weight", true, in, cfg.Hidden),
			b: p.add(pre+"bias", true, cfg.Hidden),
			a: p.add(pre+"act.weight", true, 1),
		}
		p.xavier(ly.w, in, cfg.Hidden)
		p.constant(ly.a, 0.25)
		m.layers = append(m.layers, ly)
		in = cfg.Hidden
	}
	m.params = p.params
	return m, nil
}

// xavier draws parameter i from U(−a, a) with a = √(6/(fanIn+fanOut)),
// torch.nn.init.xavier_uniform_.
func (p *paramBuilder) xavier(i, fanIn, fanOut int) {
	bound := math.Sqrt(6 / float64(fanIn+fanOut))
	fill(p.value(i), func() float64 { return (2*p.rng.Float64() - 1) * bound })
}

// Config returns the configuration.
func (m *GCN) Config() GCNConfig { return m.cfg }

// Params returns the parameters in a stable order (per layer: weight,
// bias, slope). The slice is shared with the model.
func (m *GCN) Params() []*Param { return m.params }

// ReadoutDim returns the size of the graph readout, Layers×Hidden.
func (m *GCN) ReadoutDim() int { return m.cfg.Layers * m.cfg.Hidden }

// GCNBound is a GCN bound into one expression graph (see Bound).
type GCNBound struct {
	binding
	m *GCN
}

// Bind prepares m for the expression graph g. Call it once per graph.
func (m *GCN) Bind(g *gorgonia.ExprGraph) *GCNBound {
	return &GCNBound{binding: newBinding(g, m.params), m: m}
}

// Encode adds the encoder applied to the node features x (NumNodes ×
// InDim) with the propagation matrix prop (NumNodes × NumNodes) and the
// sum-pooling matrix pool (NumGraphs × NumNodes), and returns the last
// layer's node outputs (NumNodes × Hidden) and the graph readouts
// (NumGraphs × Layers·Hidden). x is taken to depend on no learnable.
func (b *GCNBound) Encode(x *gorgonia.Node, prop *ops.WeightedCSR, pool *ops.CSR) (nodes, graphs *gorgonia.Node, err error) {
	return b.EncodeOneHot(x, nil, prop, pool)
}

// EncodeOneHot is Encode for an x whose row i is the one-hot vector of
// column hot[i] (nil: no such knowledge): the first layer then takes rows
// of its weights (ops.OneHotLinear) instead of multiplying x by them, the
// same values (see ops.OneHotMatchesLinear) for a fraction of the work
// when InDim is large (one-hot degrees).
func (b *GCNBound) EncodeOneHot(x *gorgonia.Node, hot []int32, prop *ops.WeightedCSR, pool *ops.CSR) (nodes, graphs *gorgonia.Node, err error) {
	cfg := b.m.cfg
	if hot != nil && (x == nil || len(hot) != x.Shape()[0]) {
		return nil, nil, fmt.Errorf("gcn: %d one-hot rows for node features %v", len(hot), shapeOfNode(x))
	}
	switch {
	case x == nil || x.Shape().Dims() != 2 || x.Shape()[1] != cfg.InDim:
		return nil, nil, fmt.Errorf("gcn: node features must be (n, %d), got %v", cfg.InDim, shapeOfNode(x))
	case prop == nil || pool == nil:
		return nil, nil, fmt.Errorf("gcn: nil propagation or pooling matrix")
	case prop.Rows != x.Shape()[0] || prop.Cols != x.Shape()[0] || pool.Cols != x.Shape()[0]:
		return nil, nil, fmt.Errorf("gcn: %d nodes, propagation %d×%d, pooling %d×%d", x.Shape()[0], prop.Rows, prop.Cols, pool.Rows, pool.Cols)
	}
	h := x
	pooled := make([]*gorgonia.Node, 0, cfg.Layers)
	for l, ly := range b.m.layers {
		w := b.params[ly.w]
		zb := zeroVector(b.g, w.Name+".zero_bias", x.Dtype(), cfg.Hidden)
		var xw *gorgonia.Node
		if l == 0 && hot != nil {
			xw, err = ops.OneHotLinear(hot, b.node(ly.w), zb)
		} else {
			xw, err = ops.Linear(h, b.node(ly.w), zb, ops.LinearOpts{NoInputGrad: l == 0})
		}
		if err != nil {
			return nil, nil, fmt.Errorf("gcn: layer %d: %w", l, err)
		}
		p, err := ops.WSpMM(prop, xw)
		if err != nil {
			return nil, nil, fmt.Errorf("gcn: layer %d propagation: %w", l, err)
		}
		z, err := ops.BiasAct(p, b.node(ly.b), false)
		if err != nil {
			return nil, nil, fmt.Errorf("gcn: layer %d bias: %w", l, err)
		}
		if h, err = ops.PReLU(z, b.node(ly.a)); err != nil {
			return nil, nil, fmt.Errorf("gcn: layer %d activation: %w", l, err)
		}
		sum, err := ops.SpMM(pool, h)
		if err != nil {
			return nil, nil, fmt.Errorf("gcn: layer %d pooling: %w", l, err)
		}
		pooled = append(pooled, sum)
	}
	graphs = pooled[0]
	if len(pooled) > 1 {
		if graphs, err = gorgonia.Concat(1, pooled...); err != nil {
			return nil, nil, fmt.Errorf("gcn: concatenating layer readouts: %w", err)
		}
	}
	return h, graphs, nil
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order.
func (b *GCNBound) Learnables() gorgonia.Nodes { return b.learnables() }

// Grads copies, after a run, the gradient of every trainable parameter in
// Params order into dst and returns it (see Bound.Grads).
func (b *GCNBound) Grads(dst [][]float32) ([][]float32, error) { return b.grads(dst) }

// zeroVector returns a new constant vector node of n zeros.
func zeroVector(g *gorgonia.ExprGraph, name string, dt tensor.Dtype, n int) *gorgonia.Node {
	t := tensor.New(tensor.Of(dt), tensor.WithShape(n))
	return gorgonia.NewVector(g, dt, gorgonia.WithShape(n), gorgonia.WithName(name), gorgonia.WithValue(t))
}

func shapeOfNode(n *gorgonia.Node) tensor.Shape {
	if n == nil {
		return nil
	}
	return n.Shape()
}

// ShortcutMLPConfig sizes MVGRL's projection head.
type ShortcutMLPConfig struct {
	In, Out int
	// Float64 makes parameters and activations float64 (gradient checks).
	Float64 bool
}

// shortcutLayer holds the indices of one Linear + PReLU of the head.
type shortcutLayer struct{ w, b, a int }

// ShortcutMLP is MVGRL's projection head (graph/train.py, MLP): three
// Linear + PReLU layers (In → Out → Out → Out, one slope per PReLU) plus a
// Linear shortcut In → Out, added: y = ffn(x) + shortcut(x).
type ShortcutMLP struct {
	cfg    ShortcutMLPConfig
	params []*Param
	ffn    [3]shortcutLayer
	sw, sb int
}

// NewShortcutMLP builds a head whose parameter names start with prefix and
// follow the reference's nn.Sequential (prefix+"ffn.0.weight",
// "ffn.0.bias", "ffn.1.weight" (the slope), …, "ffn.5.weight",
// "linear_shortcut.weight", "linear_shortcut.bias"), initialised as
// PyTorch does: Linear weights and biases from U(−1/√in, 1/√in), slopes
// 0.25. The draws come from a PCG source seeded with seed, in the order of
// Params.
func NewShortcutMLP(prefix string, cfg ShortcutMLPConfig, seed uint64) (*ShortcutMLP, error) {
	if cfg.In <= 0 || cfg.Out <= 0 {
		return nil, fmt.Errorf("shortcut mlp config: In %d, Out %d: want > 0", cfg.In, cfg.Out)
	}
	m := &ShortcutMLP{cfg: cfg}
	p := &paramBuilder{dt: dtypeOf(cfg.Float64), rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	in := cfg.In
	for l := range m.ffn {
		ly := shortcutLayer{
			w: p.add(fmt.Sprintf("%sffn.%d.weight", prefix, 2*l), true, in, cfg.Out),
			b: p.add(fmt.Sprintf("%sffn.%d.bias", prefix, 2*l), true, cfg.Out),
			a: p.add(fmt.Sprintf("%sffn.%d.weight", prefix, 2*l+1), true, 1),
		}
		p.uniform(ly.w, in)
		p.uniform(ly.b, in)
		p.constant(ly.a, 0.25)
		m.ffn[l] = ly
		in = cfg.Out
	}
	m.sw = p.add(prefix+"linear_shortcut.weight", true, cfg.In, cfg.Out)
	m.sb = p.add(prefix+"linear_shortcut.bias", true, cfg.Out)
	p.uniform(m.sw, cfg.In)
	p.uniform(m.sb, cfg.In)
	m.params = p.params
	return m, nil
}

// Config returns the configuration.
func (m *ShortcutMLP) Config() ShortcutMLPConfig { return m.cfg }

// Params returns the parameters in a stable order (the three layers'
// weight, bias and slope, then the shortcut's weight and bias). The slice
// is shared with the model.
func (m *ShortcutMLP) Params() []*Param { return m.params }

// ShortcutMLPBound is a ShortcutMLP bound into one expression graph.
type ShortcutMLPBound struct {
	binding
	m *ShortcutMLP
}

// Bind prepares m for the expression graph g. Call it once per graph.
func (m *ShortcutMLP) Bind(g *gorgonia.ExprGraph) *ShortcutMLPBound {
	return &ShortcutMLPBound{binding: newBinding(g, m.params), m: m}
}

// Forward adds the head applied to x (n × In) and returns n × Out.
func (b *ShortcutMLPBound) Forward(x *gorgonia.Node) (*gorgonia.Node, error) {
	c := b.m.cfg
	if x == nil || x.Shape().Dims() != 2 || x.Shape()[1] != c.In {
		return nil, fmt.Errorf("shortcut mlp: input shape %v, want (n, %d)", shapeOfNode(x), c.In)
	}
	h := x
	for _, ly := range b.m.ffn {
		z, err := ops.Linear(h, b.node(ly.w), b.node(ly.b), ops.LinearOpts{})
		if err != nil {
			return nil, fmt.Errorf("shortcut mlp: %s: %w", b.params[ly.w].Name, err)
		}
		if h, err = ops.PReLU(z, b.node(ly.a)); err != nil {
			return nil, fmt.Errorf("shortcut mlp: %s: %w", b.params[ly.a].Name, err)
		}
	}
	s, err := ops.Linear(x, b.node(b.m.sw), b.node(b.m.sb), ops.LinearOpts{})
	if err != nil {
		return nil, fmt.Errorf("shortcut mlp: %s: %w", b.params[b.m.sw].Name, err)
	}
	y, err := gorgonia.Add(h, s)
	if err != nil {
		return nil, fmt.Errorf("shortcut mlp: adding the shortcut: %w", err)
	}
	return y, nil
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order.
func (b *ShortcutMLPBound) Learnables() gorgonia.Nodes { return b.learnables() }

// Grads copies, after a run, the gradient of every trainable parameter in
// Params order into dst and returns it (see Bound.Grads).
func (b *ShortcutMLPBound) Grads(dst [][]float32) ([][]float32, error) { return b.grads(dst) }

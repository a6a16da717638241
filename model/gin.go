package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Param is one named parameter or buffer of a model. Value is updated in
// place by an optimizer (package optim; trainable parameters) or [Bound.CommitStats]
// (BatchNorm running statistics, which have Trainable = false).
type Param struct {
	Name      string
	Value     *tensor.Dense
	Trainable bool
}

// GINConfig sizes a GIN. Zero fields take their defaults.
type GINConfig struct {
	InDim   int // node feature dimension; required
	Hidden  int // width of every layer; default 32
	Layers  int // number of GIN layers; default 3
	ProjDim int // projection head output; default Layers×Hidden
	// BNEps and BNMomentum configure every BatchNorm (defaults 1e-5 and 0.1,
	// PyTorch's, used when the field is 0; momentum is the weight of the new
	// batch statistics, in (0, 1]).
	BNEps, BNMomentum float64
	// Float64 makes parameters and activations float64 (for gradient
	// checks). The default is float32; Embed, EmbedProjected and the optimizers need
	// float32.
	Float64 bool
}

// withDefaults returns c with defaults filled in, or an error.
func (c GINConfig) withDefaults() (GINConfig, error) {
	if c.Hidden == 0 {
		c.Hidden = 32
	}
	if c.Layers == 0 {
		c.Layers = 3
	}
	if c.ProjDim == 0 {
		c.ProjDim = c.Layers * c.Hidden
	}
	if c.BNEps == 0 {
		c.BNEps = 1e-5
	}
	if c.BNMomentum == 0 {
		c.BNMomentum = 0.1
	}
	switch {
	case c.InDim <= 0:
		return c, fmt.Errorf("gin config: InDim = %d, want > 0", c.InDim)
	case c.Hidden < 0 || c.Layers < 0 || c.ProjDim < 0:
		return c, fmt.Errorf("gin config: negative size (Hidden %d, Layers %d, ProjDim %d)", c.Hidden, c.Layers, c.ProjDim)
	case !(c.BNEps > 0) || math.IsInf(c.BNEps, 0):
		return c, fmt.Errorf("gin config: BNEps = %v, want a finite value > 0", c.BNEps)
	case !(c.BNMomentum > 0 && c.BNMomentum <= 1):
		return c, fmt.Errorf("gin config: BNMomentum = %v, want in (0, 1]", c.BNMomentum)
	}
	return c, nil
}

// layerIdx holds the indices in GIN.params of one layer's parameters.
type layerIdx struct {
	w1, b1, w2, b2 int
	bn             bnIdx
}

// GIN is GraphCL's GIN encoder with its projection head. Linear weights are
// stored in×out (the transpose of PyTorch's out×in), so that a layer is
// x·W + b.
type GIN struct {
	cfg    GINConfig
	params []*Param
	layers []layerIdx
	// head is Linear(EmbedDim, ProjDim) → ReLU → Linear(ProjDim, ProjDim).
	head headIdx
}

// NewGIN builds a GIN initialised as PyTorch does: every Linear weight and
// bias drawn from U(−1/√fan_in, 1/√fan_in), BatchNorm γ = 1, β = 0,
// running mean 0 and running variance 1. The draws come from a PCG source
// seeded with seed, in the order of Params.
func NewGIN(cfg GINConfig, seed uint64) (*GIN, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &GIN{cfg: cfg}
	p := &paramBuilder{dt: m.dtype(), rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	in := cfg.InDim
	for l := 0; l < cfg.Layers; l++ {
		pre := fmt.Sprintf("gin.%d.", l)
		var li layerIdx
		li.w1 = p.add(pre+"mlp.0.weight", true, in, cfg.Hidden)
		li.b1 = p.add(pre+"mlp.0.bias", true, cfg.Hidden)
		li.w2 = p.add(pre+"mlp.2.weight", true, cfg.Hidden, cfg.Hidden)
		li.b2 = p.add(pre+"mlp.2.bias", true, cfg.Hidden)
		li.bn = p.batchNorm(pre+"bn.", cfg.Hidden)
		p.uniform(li.w1, in)
		p.uniform(li.b1, in)
		p.uniform(li.w2, cfg.Hidden)
		p.uniform(li.b2, cfg.Hidden)
		m.layers = append(m.layers, li)
		in = cfg.Hidden
	}
	m.head = p.head(m.EmbedDim(), cfg.ProjDim, cfg.ProjDim)
	m.params = p.params
	return m, nil
}

func (m *GIN) dtype() tensor.Dtype {
	if m.cfg.Float64 {
		return tensor.Float64
	}
	return tensor.Float32
}

// Config returns the configuration with defaults filled in.
func (m *GIN) Config() GINConfig { return m.cfg }

// Params returns the parameters and buffers in a stable order with unique
// names: per layer ℓ, gin.ℓ.mlp.0.{weight,bias}, gin.ℓ.mlp.2.{weight,bias},
// gin.ℓ.bn.{weight,bias,running_mean,running_var}; then proj.0.{weight,bias},
// proj.2.{weight,bias}. The slice is shared with the model.
func (m *GIN) Params() []*Param { return m.params }

// EmbedDim returns the size of a graph embedding, Layers×Hidden.
func (m *GIN) EmbedDim() int { return m.cfg.Layers * m.cfg.Hidden }

// ProjDim returns the size of the projection head's output.
func (m *GIN) ProjDim() int { return m.cfg.ProjDim }

// NumTrainable returns the number of trainable parameters (tensors).
func (m *GIN) NumTrainable() int {
	n := 0
	for _, p := range m.params {
		if p.Trainable {
			n++
		}
	}
	return n
}

const ginMagic = "BSGIN\x00\x01\x00"

// MarshalBinary encodes every parameter and buffer (names, shapes, values)
// for checkpoints.
func (m *GIN) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(ginMagic)
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	w(uint32(len(m.params)))
	for _, p := range m.params {
		w(uint32(len(p.Name)))
		buf.WriteString(p.Name)
		w(uint8(p.Value.Dtype().Size()))
		s := p.Value.Shape()
		w(uint32(len(s)))
		for _, d := range s {
			w(uint32(d))
		}
		w(p.Value.Data())
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores the values written by MarshalBinary into m,
// which must have the same parameter names, shapes and dtype.
func (m *GIN) UnmarshalBinary(b []byte) error {
	if len(b) < len(ginMagic) || string(b[:len(ginMagic)]) != ginMagic {
		return errors.New("gin checkpoint: bad magic (not a GIN parameter file, or another version)")
	}
	r := bytes.NewReader(b[len(ginMagic):])
	rd := func(v any, what string) error {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("gin checkpoint: reading %s: %w", what, err)
		}
		return nil
	}
	var n uint32
	if err := rd(&n, "parameter count"); err != nil {
		return err
	}
	if int(n) != len(m.params) {
		return fmt.Errorf("gin checkpoint: %d parameters, model has %d", n, len(m.params))
	}
	vals := make([]any, len(m.params))
	for i, p := range m.params {
		var ln uint32
		if err := rd(&ln, fmt.Sprintf("name length of parameter %d", i)); err != nil {
			return err
		}
		if int(ln) != len(p.Name) {
			return fmt.Errorf("gin checkpoint: parameter %d has a name of %d bytes, want %q", i, ln, p.Name)
		}
		name := make([]byte, ln)
		if _, err := r.Read(name); err != nil || string(name) != p.Name {
			return fmt.Errorf("gin checkpoint: parameter %d is %q, want %q", i, name, p.Name)
		}
		var size uint8
		if err := rd(&size, p.Name+" dtype"); err != nil {
			return err
		}
		if uintptr(size) != p.Value.Dtype().Size() {
			return fmt.Errorf("gin checkpoint: %s has %d-byte elements, model has %d", p.Name, size, p.Value.Dtype().Size())
		}
		var dims uint32
		if err := rd(&dims, p.Name+" rank"); err != nil {
			return err
		}
		s := p.Value.Shape()
		if int(dims) != len(s) {
			return fmt.Errorf("gin checkpoint: %s has rank %d, model has shape %v", p.Name, dims, s)
		}
		for k := range s {
			var d uint32
			if err := rd(&d, p.Name+" shape"); err != nil {
				return err
			}
			if int(d) != s[k] {
				return fmt.Errorf("gin checkpoint: %s dimension %d is %d, model has shape %v", p.Name, k, d, s)
			}
		}
		switch p.Value.Dtype() {
		case tensor.Float32:
			v := make([]float32, p.Value.DataSize())
			if err := rd(v, p.Name+" values"); err != nil {
				return err
			}
			vals[i] = v
		default:
			v := make([]float64, p.Value.DataSize())
			if err := rd(v, p.Name+" values"); err != nil {
				return err
			}
			vals[i] = v
		}
	}
	if r.Len() != 0 {
		return fmt.Errorf("gin checkpoint: %d trailing bytes", r.Len())
	}
	for i, p := range m.params {
		switch v := vals[i].(type) {
		case []float32:
			copy(p.Value.Float32s(), v)
		case []float64:
			copy(p.Value.Float64s(), v)
		}
	}
	return nil
}

// Bound is a GIN bound into one Gorgonia expression graph. Its parameter
// nodes share their values with the model's Params, so an optimiser step
// on the Params is seen by every later Bind. Encode both views of a batch
// through the same Bound: gradients with respect to the shared parameter
// nodes then accumulate, as in PyTorch.
//
// A Bound is used by one goroutine at a time.
type Bound struct {
	binding
	m *GIN
	n int // number of Encode calls, for unique input names

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
	return &Bound{binding: newBinding(g, m.params), m: m}
}

// modeLinear returns act(x·W + bias) for parameter indices w and bias,
// built as b.mode selects; noGradX says that x depends on no learnable (the
// first layer's input).
func (b *Bound) modeLinear(x *gorgonia.Node, w, bias int, relu, noGradX bool) (*gorgonia.Node, error) {
	if b.mode == linearFused {
		return b.linear(x, w, bias, relu, noGradX)
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
func (b *Bound) Encode(batch *GraphBatch, train bool) (_ *gorgonia.Node, err error) {
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
	h := nodeFeatures(b.g, dt, fmt.Sprintf("encode.%d.x", b.n), batch.NumNodes, batch.FeatDim, batch.X)
	b.n++

	pooled := make([]*gorgonia.Node, 0, cfg.Layers)
	// A failed Encode records no BatchNorm call.
	defer func(calls int) {
		if err != nil {
			b.calls = b.calls[:calls]
		}
	}(len(b.calls))
	for l, li := range b.m.layers {
		agg, err := ops.SpMM(adj, h)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d aggregation: %w", l, err)
		}
		t, err := b.modeLinear(agg, li.w1, li.b1, true, l == 0)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d: %w", l, err)
		}
		// The ReLU after GINConv is fused into the second Linear.
		u, err := b.modeLinear(t, li.w2, li.b2, true, false)
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d: %w", l, err)
		}
		hn, err := b.batchNorm(ops.BatchNorm, u, li.bn, ops.BNConfig{Eps: cfg.BNEps, Training: train})
		if err != nil {
			return nil, fmt.Errorf("encode: layer %d batch norm: %w", l, err)
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
		if emb, err = ops.ConcatCols(pooled...); err != nil {
			return nil, fmt.Errorf("encode: concatenating layer outputs: %w", err)
		}
	}
	return emb, nil
}

// Project adds the projection head applied to emb (NumGraphs × EmbedDim)
// and returns NumGraphs × ProjDim.
func (b *Bound) Project(emb *gorgonia.Node) (*gorgonia.Node, error) {
	return b.project(emb, b.m.EmbedDim(), b.m.head, b.modeLinear)
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order: pass them to gorgonia.Grad.
func (b *Bound) Learnables() gorgonia.Nodes { return b.learnables() }

// Grads returns, after the machine ran the gradients, one slice per
// trainable parameter in Params order (copied; float64 models are
// converted). A parameter the graph does not use gets nil, which an optimizer's Step
// skips, as PyTorch skips parameters without a gradient.
func (b *Bound) Grads() ([][]float32, error) { return b.grads(nil) }

// CommitStats folds the batch statistics of every training-mode BatchNorm
// call since the last CommitStats into the running buffers, in call order
// (two views = two updates, as two forward calls in PyTorch):
// running_mean ← (1−m)·running_mean + m·μ_B and
// running_var ← (1−m)·running_var + m·σ²_B·n/(n−1), m = BNMomentum.
// Call it after the machine ran. On error no buffer is changed.
func (b *Bound) CommitStats() error {
	if err := b.commitStats(b.m.cfg.BNMomentum); err != nil {
		return err
	}
	b.calls = b.calls[:0]
	return nil
}

// PendingStats returns the number of training-mode BatchNorm calls whose
// statistics CommitStats has not folded in yet.
func (b *Bound) PendingStats() int { return len(b.calls) }

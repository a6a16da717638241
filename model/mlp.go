package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MLPConfig sizes an MLP head as MoCo v3 builds its projector and predictor
// (moco/builder.py, _build_mlp): Layers linear layers without bias; every
// layer but the last is followed by BatchNorm and ReLU; with LastBN the last
// is followed by a BatchNorm without affine parameters (the projector), else
// by nothing (the predictor).
type MLPConfig struct {
	In, Hidden, Out int
	// Layers is the number of linear layers; default 2.
	Layers int
	// LastBN adds a BatchNorm without γ and β after the last layer.
	LastBN bool
	// BNEps and BNMomentum configure every BatchNorm (defaults 1e-5 and
	// 0.1, PyTorch's).
	BNEps, BNMomentum float64
	// Float64 makes parameters and activations float64 (gradient checks).
	Float64 bool
}

func (c MLPConfig) withDefaults() (MLPConfig, error) {
	if c.Layers == 0 {
		c.Layers = 2
	}
	if c.BNEps == 0 {
		c.BNEps = 1e-5
	}
	if c.BNMomentum == 0 {
		c.BNMomentum = 0.1
	}
	switch {
	case c.In <= 0 || c.Out <= 0 || (c.Layers > 1 && c.Hidden <= 0):
		return c, fmt.Errorf("mlp config: sizes In %d, Hidden %d, Out %d: want > 0", c.In, c.Hidden, c.Out)
	case c.Layers < 1:
		return c, fmt.Errorf("mlp config: %d layers, want >= 1", c.Layers)
	case !(c.BNEps > 0) || math.IsInf(c.BNEps, 0):
		return c, fmt.Errorf("mlp config: BNEps = %v, want a finite value > 0", c.BNEps)
	case !(c.BNMomentum > 0 && c.BNMomentum <= 1):
		return c, fmt.Errorf("mlp config: BNMomentum = %v, want in (0, 1]", c.BNMomentum)
	}
	return c, nil
}

// mlpLayer is one linear layer (weight index) and the BatchNorm after it;
// bn.gamma < 0 marks a BatchNorm without affine parameters, hasBN false none.
type mlpLayer struct {
	w     int
	bn    bnIdx
	hasBN bool
}

// MLP is a stack of bias-free linear layers with BatchNorm (MoCo v3's
// projector and predictor heads). Weights are in×out (x·W).
type MLP struct {
	cfg    MLPConfig
	params []*Param
	layers []mlpLayer
}

// NewMLP builds an MLP whose parameter names start with prefix, numbered
// as PyTorch's nn.Sequential numbers them (prefix0.weight, prefix1.weight,
// prefix1.bias, prefix1.running_mean, ..., prefix3.weight,
// prefix4.running_mean): Linear weights from U(−1/√in, 1/√in) (PyTorch's
// default), BatchNorm γ = 1, β = 0, running mean 0 and variance 1. The
// draws come from a PCG source seeded with seed, in the order of Params.
func NewMLP(prefix string, cfg MLPConfig, seed uint64) (*MLP, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	dt := tensor.Float32
	if cfg.Float64 {
		dt = tensor.Float64
	}
	m := &MLP{cfg: cfg}
	p := &paramBuilder{dt: dt, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	k := 0 // module index in the nn.Sequential
	in := cfg.In
	for l := 0; l < cfg.Layers; l++ {
		last := l == cfg.Layers-1
		out := cfg.Hidden
		if last {
			out = cfg.Out
		}
		ly := mlpLayer{w: p.add(fmt.Sprintf("%s%d.weight", prefix, k), true, in, out)}
		p.uniform(ly.w, in)
		k++
		switch {
		case !last:
			ly.bn, ly.hasBN = p.batchNorm(fmt.Sprintf("%s%d.", prefix, k), out), true
			k += 2 // BatchNorm, ReLU
		case cfg.LastBN:
			ly.bn = bnIdx{gamma: -1, beta: -1,
				runMean: p.add(fmt.Sprintf("%s%d.running_mean", prefix, k), false, out),
				runVar:  p.add(fmt.Sprintf("%s%d.running_var", prefix, k), false, out)}
			ly.hasBN = true
			p.constant(ly.bn.runMean, 0)
			p.constant(ly.bn.runVar, 1)
		}
		m.layers = append(m.layers, ly)
		in = out
	}
	m.params = p.params
	return m, nil
}

// Config returns the configuration with defaults filled in.
func (m *MLP) Config() MLPConfig { return m.cfg }

// Params returns the weights, BatchNorm parameters and running buffers in
// a stable order. The slice is shared with the model.
func (m *MLP) Params() []*Param { return m.params }

// OutDim returns the width of the output.
func (m *MLP) OutDim() int { return m.cfg.Out }

// MLPBound is an MLP bound into one expression graph (see ResNetBound).
type MLPBound struct {
	binding
	m *MLP
}

// Bind prepares m for the expression graph g. Call it once per graph.
func (m *MLP) Bind(g *gorgonia.ExprGraph) *MLPBound {
	return &MLPBound{binding: newBinding(g, m.params), m: m}
}

// Forward adds the MLP applied to x (n × In). With train true, BatchNorm
// uses batch statistics, recorded for CommitStats; with train false the
// running statistics as they are now.
func (b *MLPBound) Forward(x *gorgonia.Node, train bool) (*gorgonia.Node, error) {
	c := b.m.cfg
	if x == nil || x.Shape().Dims() != 2 || x.Shape()[1] != c.In {
		var s tensor.Shape
		if x != nil {
			s = x.Shape()
		}
		return nil, fmt.Errorf("mlp: input shape %v, want (n, %d)", s, c.In)
	}
	if train && x.Shape()[0] < 2 {
		return nil, fmt.Errorf("mlp: training-mode BatchNorm needs at least 2 rows, got %d", x.Shape()[0])
	}
	dt := x.Dtype()
	h := x
	for _, ly := range b.m.layers {
		w := b.params[ly.w]
		out := w.Value.Shape()[1]
		y, err := ops.Linear(h, b.node(ly.w), b.constant(fmt.Sprintf("%s.zero_bias", w.Name), dt, out, 0), ops.LinearOpts{})
		if err != nil {
			return nil, fmt.Errorf("mlp: %s: %w", w.Name, err)
		}
		if ly.hasBN {
			if y, err = b.batchNorm1(y, ly.bn, dt, out, train); err != nil {
				return nil, fmt.Errorf("mlp: %w", err)
			}
			if ly.bn.gamma >= 0 { // hidden layer: BatchNorm then ReLU
				if y, err = ops.ReLU(y); err != nil {
					return nil, fmt.Errorf("mlp: %s: %w", w.Name, err)
				}
			}
		}
		h = y
	}
	return h, nil
}

// constant returns a new constant vector node of n values v.
func (b *MLPBound) constant(name string, dt tensor.Dtype, n int, v float64) *gorgonia.Node {
	t := tensor.New(tensor.Of(dt), tensor.WithShape(n))
	fill(t, func() float64 { return v })
	return gorgonia.NewVector(b.g, dt, gorgonia.WithShape(n), gorgonia.WithName(name), gorgonia.WithValue(t))
}

// batchNorm1 applies BatchNorm bn to the n×C matrix x; a BatchNorm without
// affine parameters gets constant γ = 1 and β = 0.
func (b *MLPBound) batchNorm1(x *gorgonia.Node, bn bnIdx, dt tensor.Dtype, c int, train bool) (*gorgonia.Node, error) {
	cfg := ops.BNConfig{Eps: b.m.cfg.BNEps, Training: train}
	if bn.gamma >= 0 {
		return b.batchNorm(ops.BatchNorm, x, bn, cfg)
	}
	name := b.params[bn.runMean].Name
	if !train {
		cfg.RunningMean = floats64(b.params[bn.runMean].Value)
		cfg.RunningVar = floats64(b.params[bn.runVar].Value)
	}
	y, op, err := ops.BatchNorm(x, b.constant(name+".one", dt, c, 1), b.constant(name+".zero", dt, c, 0), cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if train {
		b.calls = append(b.calls, bnCall{bn: bn, op: op})
	}
	return y, nil
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order: pass them to gorgonia.Grad.
func (b *MLPBound) Learnables() gorgonia.Nodes { return b.learnables() }

// Grads copies, after a run, the gradient of every trainable parameter in
// Params order into dst and returns it (see ResNetBound.Grads).
func (b *MLPBound) Grads(dst [][]float32) ([][]float32, error) { return b.grads(dst) }

// CommitStats folds the batch statistics of the latest run of every
// training-mode BatchNorm call into the running buffers (see
// ResNetBound.CommitStats).
func (b *MLPBound) CommitStats() error { return b.commitStats(b.m.cfg.BNMomentum) }

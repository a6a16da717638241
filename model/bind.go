package model

import (
	"errors"
	"fmt"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

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
// converted). A parameter the graph does not use gets nil, which Adam.Step
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

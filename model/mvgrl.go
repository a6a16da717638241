package model

import (
	"errors"
	"fmt"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// MVGRL (Hassani & Khasahmadi 2020, graph level; kavehhassani/mvgrl,
// graph/train.py): two GCN encoders, one per view, with the same node
// features and different propagation matrices (view 1 the normalised
// adjacency D^-½(A+I)D^-½, view 2 its personalised-PageRank diffusion), a
// node head shared by the views' last-layer node outputs and a graph head
// shared by their readouts. The representation that is evaluated is the
// sum of the two views' graph head outputs.
//
// The reference pads every graph to the dataset's largest node count and
// uses dense matrices; here a batch is packed without padding and the
// propagation matrices are sparse, so a graph's readout sums its own nodes
// only (the reference also sums PReLU(bias) over the padding rows).

// ViewBatch is a packed batch of graphs with both MVGRL views: the nodes
// of all graphs numbered consecutively, their features, and per view one
// block-diagonal propagation matrix over the packed ids.
type ViewBatch struct {
	NumGraphs, NumNodes, FeatDim int
	// X holds the node features, NumNodes×FeatDim row-major.
	X []float32
	// GraphPtr (len NumGraphs+1): the nodes of graph j are GraphPtr[j] ..
	// GraphPtr[j+1]-1.
	GraphPtr []int32
	// Views are the propagation matrices of view 1 and view 2.
	Views [2]*ops.WeightedCSR
	// Pool is the NumGraphs×NumNodes sum-pooling matrix.
	Pool *ops.CSR
	// OneHot, when not nil, says that row i of X is the one-hot vector of
	// column OneHot[i] (one-hot node labels or degrees): the first GCN
	// layers then take rows of their weights instead of multiplying
	// (ops.OneHotLinear).
	OneHot []int32
}

// MVGRLConfig sizes an MVGRL model.
type MVGRLConfig struct {
	InDim  int // node feature dimension; required
	Hidden int // width of every GCN layer and of the heads' outputs; required
	Layers int // GCN layers per encoder; required
	// Float64 makes parameters and activations float64 (gradient checks).
	// Embed needs float32.
	Float64 bool
}

// MVGRL is MVGRL's model: Encoders[v] encodes view v+1; NodeHead
// (Hidden → Hidden) maps both views' last-layer node outputs and GraphHead
// (Layers·Hidden → Hidden) both views' readouts (see the top of the file).
type MVGRL struct {
	cfg                 MVGRLConfig
	Encoders            [2]*GCN
	NodeHead, GraphHead *ShortcutMLP
	params              []*Param
}

// NewMVGRL builds the model with parameter names as the reference's
// state_dict (gnn1., gnn2., mlp1. for the node head, mlp2. for the graph
// head); each part draws from its own PCG source derived from seed.
func NewMVGRL(cfg MVGRLConfig, seed uint64) (*MVGRL, error) {
	gc := GCNConfig{InDim: cfg.InDim, Hidden: cfg.Hidden, Layers: cfg.Layers, Float64: cfg.Float64}
	m := &MVGRL{cfg: cfg}
	var err error
	for v := range m.Encoders {
		if m.Encoders[v], err = NewGCN(fmt.Sprintf("gnn%d.", v+1), gc, seed^uint64(0x676e6e31+v)); err != nil {
			return nil, fmt.Errorf("mvgrl: %w", err)
		}
	}
	if m.NodeHead, err = NewShortcutMLP("mlp1.", ShortcutMLPConfig{In: cfg.Hidden, Out: cfg.Hidden, Float64: cfg.Float64}, seed^0x6d6c7031); err != nil {
		return nil, fmt.Errorf("mvgrl: node head: %w", err)
	}
	if m.GraphHead, err = NewShortcutMLP("mlp2.", ShortcutMLPConfig{In: cfg.Layers * cfg.Hidden, Out: cfg.Hidden, Float64: cfg.Float64}, seed^0x6d6c7032); err != nil {
		return nil, fmt.Errorf("mvgrl: graph head: %w", err)
	}
	for _, ps := range [][]*Param{m.Encoders[0].Params(), m.Encoders[1].Params(), m.NodeHead.Params(), m.GraphHead.Params()} {
		m.params = append(m.params, ps...)
	}
	return m, nil
}

// Config returns the configuration.
func (m *MVGRL) Config() MVGRLConfig { return m.cfg }

// Params returns every parameter (all trainable): the view 1 encoder's,
// the view 2 encoder's, the node head's and the graph head's, in that
// order.
func (m *MVGRL) Params() []*Param { return m.params }

// EmbedDim is the size of the evaluation embedding, Hidden.
func (m *MVGRL) EmbedDim() int { return m.cfg.Hidden }

// MVGRLOutputs are the nodes of one forward pass: Local[v] the node head's
// output for view v+1's node representations (NumNodes × Hidden),
// Global[v] the graph head's output for its readouts (NumGraphs × Hidden).
type MVGRLOutputs struct {
	Local, Global [2]*gorgonia.Node
}

// MVGRLBound is an MVGRL bound into one expression graph.
type MVGRLBound struct {
	g          *gorgonia.ExprGraph
	m          *MVGRL
	enc        [2]*GCNBound
	node, grph *ShortcutMLPBound
	n          int // number of Forward calls, for unique input names
}

// Bind prepares m for the expression graph g. Call it once per graph.
func (m *MVGRL) Bind(g *gorgonia.ExprGraph) *MVGRLBound {
	return &MVGRLBound{g: g, m: m, enc: [2]*GCNBound{m.Encoders[0].Bind(g), m.Encoders[1].Bind(g)},
		node: m.NodeHead.Bind(g), grph: m.GraphHead.Bind(g)}
}

// Forward adds both views of batch, encoded and mapped by the heads. A
// float32 model uses batch.X in place as the input's value: leave it
// unchanged until the machine has run.
func (b *MVGRLBound) Forward(batch *ViewBatch) (MVGRLOutputs, error) {
	var out MVGRLOutputs
	x, hot, err := b.input(batch)
	if err != nil {
		return out, err
	}
	for v := range 2 {
		if out.Local[v], out.Global[v], err = b.view(v, x, hot, batch); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ForwardView adds view v (0 or 1) of batch alone, encoded by its encoder
// and mapped by the heads, and returns the node head's output local
// (NumNodes × Hidden) and the graph head's global (NumGraphs × Hidden):
// Forward's Local[v] and Global[v], computed by the same ops. A step may
// bind the model into two graphs, one per view, and run them at once; the
// other view's encoder is not used in this graph (its Grads are nil). A
// float32 model uses batch.X in place as the input's value.
func (b *MVGRLBound) ForwardView(batch *ViewBatch, v int) (local, global *gorgonia.Node, err error) {
	if v != 0 && v != 1 {
		return nil, nil, fmt.Errorf("mvgrl: view %d, want 0 or 1", v)
	}
	x, hot, err := b.input(batch)
	if err != nil {
		return nil, nil, err
	}
	return b.view(v, x, hot, batch)
}

// GlobalView adds view v (0 or 1) of batch encoded and its readouts mapped
// by the graph head, and returns the graph head's output (NumGraphs ×
// Hidden): Forward's Global[v], computed by the same ops, without the node
// head, which the evaluation embedding does not use. A float32 model uses
// batch.X in place as the input's value.
func (b *MVGRLBound) GlobalView(batch *ViewBatch, v int) (*gorgonia.Node, error) {
	if v != 0 && v != 1 {
		return nil, fmt.Errorf("mvgrl: view %d, want 0 or 1", v)
	}
	x, hot, err := b.input(batch)
	if err != nil {
		return nil, err
	}
	_, graphs, err := b.enc[v].EncodeOneHot(x, hot, batch.Views[v], batch.Pool)
	if err != nil {
		return nil, fmt.Errorf("mvgrl: view %d: %w", v+1, err)
	}
	global, err := b.grph.Forward(graphs)
	if err != nil {
		return nil, fmt.Errorf("mvgrl: view %d graph head: %w", v+1, err)
	}
	return global, nil
}

// input checks batch and adds its node features; hot is batch.OneHot when
// the first layers may take rows of their weights (OneHotLinear gives
// Linear's bits), else nil.
func (b *MVGRLBound) input(batch *ViewBatch) (x *gorgonia.Node, hot []int32, err error) {
	if batch == nil || batch.NumNodes == 0 || batch.Views[0] == nil || batch.Views[1] == nil || batch.Pool == nil {
		return nil, nil, errors.New("mvgrl: empty or incomplete batch (use PackViews)")
	}
	if batch.FeatDim != b.m.cfg.InDim || len(batch.X) != batch.NumNodes*batch.FeatDim {
		return nil, nil, fmt.Errorf("mvgrl: batch has %d features of dimension %d for %d nodes, model InDim is %d", len(batch.X), batch.FeatDim, batch.NumNodes, b.m.cfg.InDim)
	}
	dt := dtypeOf(b.m.cfg.Float64)
	x = nodeFeatures(b.g, dt, fmt.Sprintf("mvgrl.%d.x", b.n), batch.NumNodes, batch.FeatDim, batch.X)
	b.n++
	if dt == tensor.Float32 && ops.OneHotMatchesLinear() {
		hot = batch.OneHot
	}
	return x, hot, nil
}

// view adds view v of the batch whose features are x: its encoder, then
// the node head on the last layer's nodes and the graph head on the
// readouts.
func (b *MVGRLBound) view(v int, x *gorgonia.Node, hot []int32, batch *ViewBatch) (local, global *gorgonia.Node, err error) {
	nodes, graphs, err := b.enc[v].EncodeOneHot(x, hot, batch.Views[v], batch.Pool)
	if err != nil {
		return nil, nil, fmt.Errorf("mvgrl: view %d: %w", v+1, err)
	}
	if local, err = b.node.Forward(nodes); err != nil {
		return nil, nil, fmt.Errorf("mvgrl: view %d node head: %w", v+1, err)
	}
	if global, err = b.grph.Forward(graphs); err != nil {
		return nil, nil, fmt.Errorf("mvgrl: view %d graph head: %w", v+1, err)
	}
	return local, global, nil
}

// parts returns the bound parts in Params order.
func (b *MVGRLBound) parts() []*binding {
	return []*binding{&b.enc[0].binding, &b.enc[1].binding, &b.node.binding, &b.grph.binding}
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order: pass them to gorgonia.Grad.
func (b *MVGRLBound) Learnables() gorgonia.Nodes {
	var ns gorgonia.Nodes
	for _, p := range b.parts() {
		ns = append(ns, p.learnables()...)
	}
	return ns
}

// Grads returns, after the machine ran the gradients, one slice per
// parameter in Params order, reusing the slices of dst that have the right
// size (see Bound.Grads).
func (b *MVGRLBound) Grads(dst [][]float32) ([][]float32, error) {
	out := make([][]float32, 0, len(b.m.params))
	k := 0
	for _, p := range b.parts() {
		n := 0
		for _, q := range p.params {
			if q.Trainable {
				n++
			}
		}
		var seg [][]float32
		if k+n <= len(dst) {
			seg = dst[k : k+n : k+n]
		}
		g, err := p.grads(seg)
		if err != nil {
			return nil, err
		}
		out = append(out, g...)
		k += n
	}
	return out, nil
}

// Embed runs the model on batch without gradients and returns the
// evaluation embedding of every graph, Global[0] + Global[1] (MVGRL's
// embed: the sum of the two views' graph head outputs), NumGraphs × Hidden
// row-major. The model has no state that differs between training and
// evaluation, so this is the training forward pass. It needs a float32
// model.
func (m *MVGRL) Embed(batch *ViewBatch) ([]float32, error) {
	return m.EmbedIn(gorgonia.NewGraph(), batch)
}

// EmbedIn is Embed in the empty expression graph g, which the caller may
// have attached to an ops.Arena: the returned slice is a copy, so the
// arena may be released as soon as EmbedIn returns.
func (m *MVGRL) EmbedIn(g *gorgonia.ExprGraph, batch *ViewBatch) ([]float32, error) {
	if m.cfg.Float64 {
		return nil, fmt.Errorf("mvgrl embed: %w", errNotFloat32)
	}
	out, err := m.Bind(g).Forward(batch)
	if err != nil {
		return nil, fmt.Errorf("mvgrl embed: %w", err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer gop.CloseMachine(vm)
	if err := vm.RunAll(); err != nil {
		return nil, fmt.Errorf("mvgrl embed: run: %w", err)
	}
	return SumGlobals(out)
}

// SumGlobals returns Global[0] + Global[1] of a forward pass that has run,
// as a new float32 slice.
func SumGlobals(out MVGRLOutputs) ([]float32, error) {
	a, ok1 := out.Global[0].Value().Data().([]float32)
	b, ok2 := out.Global[1].Value().Data().([]float32)
	if !ok1 || !ok2 || len(a) != len(b) {
		return nil, errors.New("mvgrl: graph outputs are not float32 values of one shape (has the machine run?)")
	}
	s := make([]float32, len(a))
	for i := range s {
		s[i] = a[i] + b[i]
	}
	return s, nil
}

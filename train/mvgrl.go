package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"

	G "gorgonia.org/gorgonia"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// MVGRLModel holds the model keys of method mvgrl (config key model;
// inlined in ModelConfig).
type MVGRLModel struct {
	// Diffusion is the second view of method mvgrl.
	Diffusion DiffusionConfig `yaml:"diffusion"`
}

// DiffusionConfig is method mvgrl's diffusion view: the personalised
// PageRank S = α(I − (1−α)D^-½(A+I)D^-½)^-1 of every graph, computed once
// per dataset (data.PPRDiffusion) and kept sparse.
type DiffusionConfig struct {
	// Alpha is the teleport probability α in (0, 1) (MVGRL: 0.2).
	Alpha float64 `yaml:"alpha"`
	// Eps drops the entries of S below it (0 keeps every entry, MVGRL's
	// dense S).
	Eps float64 `yaml:"eps"`
	// TopK keeps at most the TopK largest entries of every row of S (0: no
	// cap; a bound on the cost for datasets of large graphs).
	TopK int `yaml:"top_k"`
}

// MVGRL (Hassani & Khasahmadi 2020, graph level; kavehhassani/mvgrl,
// graph/train.py) at CPU scale:
//
//   - two views of every graph, fixed (no random augmentation): view 1
//     propagates with the normalised adjacency D^-½(A+I)D^-½, view 2 with its
//     personalised-PageRank diffusion α(I − (1−α)D^-½(A+I)D^-½)^-1, α = 0.2,
//     computed once per dataset and kept sparse (model.diffusion: entries
//     below eps = 1e-4 dropped, optionally top_k per row; see
//     data.PPRDiffusion), on the dataset's node features (data.features);
//   - one GCN encoder per view (model.layers layers of width model.hidden,
//     Linear → propagation → bias → PReLU), a node head shared by both
//     views' last-layer node outputs and a graph head shared by both views'
//     readouts (per-layer sum pooling, concatenated); each head is
//     3 × (Linear + PReLU) plus a linear shortcut (model.MVGRL);
//   - loss (loss.kind jsd): InfoGraph's Jensen–Shannon local–global
//     estimator across views, LocalGlobal(nodes of view 1, graphs of view 2)
//     + LocalGlobal(nodes of view 2, graphs of view 1): a node's positive is
//     its own graph, its negatives are the batch's other graphs, so the
//     sampler decides every negative. loss.kind nce_local_global swaps
//     both terms for LocalGlobalNCE, the InfoNCE form of the same contrast
//     (cosine similarities over loss.temperature, softmax over the batch's
//     graphs), combined across the views the same way. DCL and HCL debias
//     the negatives of an InfoNCE loss of two views' projections and do
//     not apply;
//   - evaluation embedding (Embed "encoder" and "projection" alike, and the
//     step's projections): the sum of the two views' graph head outputs,
//     MVGRL's embed, scored by the graph SVM protocol.
//
// Defaults (mvgrlDefaults): hidden 128 (the reference's 512 is 16× the
// work of every Linear), 4 layers (the reference's default argument; its
// grid is {2, 8, 12}), Adam lr 1e-3, B = 128, 20 epochs (within its grid of
// {32, …, 256} and {20, 40, 100}). Not reproduced: the reference keeps the
// parameters of the epoch with the lowest training loss (early stopping
// with patience 20); here the final ones are evaluated, as for the other
// methods. It pads graphs to the dataset's largest one (and, issue #17,
// masks the padding by the unshuffled order); batches here are packed
// without padding.

func init() {
	RegisterMethod("mvgrl", MethodSpec{Modalities: []string{"graph"}, Validate: validateMVGRL, New: newMVGRL, Defaults: mvgrlDefaults,
		ModelKeys: []string{"kind", "hidden", "layers", "diffusion"}, AugmentKeys: []string{"mode"}, LossKinds: loss.LocalGlobalKinds})
}

// mvgrlDefaults is MVGRL's recipe at the scale of this machine (see the
// comment at the top of the file).
func mvgrlDefaults(c *Config) {
	c.Method = "mvgrl"
	c.Model = ModelConfig{Kind: "gcn", Hidden: 128, Layers: 4, MVGRLModel: MVGRLModel{Diffusion: DiffusionConfig{Alpha: data.DefaultPPRAlpha, Eps: data.DefaultDiffusionEps}}}
	c.Augment = AugmentConfig{Mode: "random_choice"}
	c.Loss.Kind = loss.KindJSD
	c.Train.LR = 1e-3
	c.Train.BatchSize, c.Train.Epochs = 128, 20
}

func validateMVGRL(c *Config) []string {
	var errs problems
	add := errs.add
	add(oneOf("model.kind", c.Model.Kind, "gcn"))
	add(positive("model.hidden", c.Model.Hidden))
	add(positive("model.layers", c.Model.Layers))
	d := c.Model.Diffusion
	if !(d.Alpha > 0 && d.Alpha < 1) {
		errs = append(errs, fmt.Sprintf("model.diffusion.alpha: the teleport probability must be in (0, 1), got %v", d.Alpha))
	}
	if !(d.Eps >= 0) || math.IsInf(d.Eps, 0) {
		errs = append(errs, fmt.Sprintf("model.diffusion.eps: must be a finite number >= 0 (0 keeps every entry), got %v", d.Eps))
	}
	if d.TopK < 0 {
		errs = append(errs, fmt.Sprintf("model.diffusion.top_k: must be >= 0 (0: no cap), got %d", d.TopK))
	}
	return errs
}

// diffusionOptions translates model.diffusion (eps 0: keep every entry).
func diffusionOptions(d DiffusionConfig) data.DiffusionOptions {
	o := data.DiffusionOptions{Alpha: d.Alpha, Eps: d.Eps, TopK: d.TopK}
	if o.Eps == 0 {
		o.Eps = -1
	}
	return o
}

// viewCache holds the MVGRL views of a graph dataset, computed on first
// use and shared by the runs of an experiment.
type viewCache struct {
	mu   sync.Mutex
	adj  []data.SparseMatrix
	diff map[data.DiffusionOptions][]data.SparseMatrix
}

// get returns the normalised adjacency and the diffusion of every graph of
// set, computing them (on every core, each graph on one goroutine) on first
// use.
func (c *viewCache) get(set *data.GraphSet, opt data.DiffusionOptions) (adj, diff []data.SparseMatrix, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.adj == nil {
		if c.adj, err = perGraph(set.Graphs, data.NormalizedAdjacency); err != nil {
			c.adj = nil
			return nil, nil, fmt.Errorf("normalized adjacency: %w", err)
		}
	}
	if d, ok := c.diff[opt]; ok {
		return c.adj, d, nil
	}
	d, err := perGraph(set.Graphs, func(g *data.Graph) (data.SparseMatrix, error) { return data.PPRDiffusion(g, opt) })
	if err != nil {
		return nil, nil, fmt.Errorf("model.diffusion: %w", err)
	}
	if c.diff == nil {
		c.diff = map[data.DiffusionOptions][]data.SparseMatrix{}
	}
	c.diff[opt] = d
	return c.adj, d, nil
}

// perGraph applies f to every graph on GOMAXPROCS goroutines, each taking
// the next graph not yet taken (graphs differ widely in cost: COLLAB's
// largest take hundreds of times its median). The result does not depend
// on the schedule: out[i] = f(graphs[i]).
func perGraph(graphs []*data.Graph, f func(*data.Graph) (data.SparseMatrix, error)) ([]data.SparseMatrix, error) {
	out := make([]data.SparseMatrix, len(graphs))
	errs := make([]error, len(graphs))
	eachIndex(len(graphs), runtime.GOMAXPROCS(0), func(i int) bool {
		out[i], errs[i] = f(graphs[i])
		return true
	})
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("graph %d: %w", i, err)
		}
	}
	return out, nil
}

// mvgrlMethod is MVGRL on a graph dataset; see the comment at the top of
// the file.
type mvgrlMethod struct {
	set   *data.GraphSet
	views [2][]data.SparseMatrix // per graph: normalised adjacency, diffusion
	// packer packs batches of set's graphs with their views (checked
	// once, in newMVGRL).
	packer *model.ViewPacker
	m      *model.MVGRL
	// term is the local–global objective of loss.kind (LocalGlobal or
	// LocalGlobalNCE) of one direction.
	term  func(local, global *G.Node, graphPtr []int32) (*G.Node, error)
	grads [][]float32
	// viewGrads are each view's graph's parameter gradients (stepViews),
	// whose sum is grads.
	viewGrads [2][][]float32
	// arena lends the step graphs' op outputs (see newStepGraph); arenas
	// those of the two views' graphs of stepViews.
	arena  *ops.Arena
	arenas [2]*ops.Arena
}

func newMVGRL(cfg *Config, ds Dataset, seed uint64) (Method, error) {
	gd, ok := ds.(graphDataset)
	if !ok || gd.views == nil {
		return nil, fmt.Errorf("mvgrl needs a graph dataset, got %T", ds)
	}
	adj, diff, err := gd.views.get(gd.set, diffusionOptions(cfg.Model.Diffusion))
	if err != nil {
		return nil, fmt.Errorf("mvgrl views of %s: %w", gd.set.Name, err)
	}
	m, err := model.NewMVGRL(model.MVGRLConfig{InDim: gd.set.FeatDim, Hidden: cfg.Model.Hidden, Layers: cfg.Model.Layers}, seed)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	term := loss.LocalGlobal
	switch cfg.Loss.Kind {
	case loss.KindJSD:
	case loss.KindNCELocalGlobal:
		tau := cfg.Loss.Temperature
		term = func(local, global *G.Node, graphPtr []int32) (*G.Node, error) {
			return loss.LocalGlobalNCE(local, global, graphPtr, tau)
		}
	default:
		return nil, fmt.Errorf("mvgrl: loss.kind %q; allowed: %s", cfg.Loss.Kind, strings.Join(loss.LocalGlobalKinds, ", "))
	}
	views := [2][]data.SparseMatrix{adj, diff}
	packer, err := model.NewViewPacker(gd.set.Graphs, views)
	if err != nil {
		return nil, fmt.Errorf("mvgrl: %s: %w", gd.set.Name, err)
	}
	return &mvgrlMethod{set: gd.set, views: views, packer: packer, m: m, term: term}, nil
}

func (g *mvgrlMethod) Params() []*model.Param { return g.m.Params() }

// batch packs the graphs idx with their two views.
func (g *mvgrlMethod) batch(idx []int) (*model.ViewBatch, error) {
	for _, j := range idx {
		if j < 0 || j >= len(g.set.Graphs) {
			return nil, fmt.Errorf("mvgrl: instance %d out of range [0, %d)", j, len(g.set.Graphs))
		}
	}
	return g.packer.Pack(idx)
}

// Step encodes both views of the graphs idx and returns the loss, the
// gradients and, as projections, the evaluation embeddings of the batch.
// MVGRL's views are fixed: rng is not used.
func (g *mvgrlMethod) Step(idx []int, _ *rand.Rand) (StepResult, error) {
	if len(idx) < 2 {
		return StepResult{}, fmt.Errorf("mvgrl step: batch of %d graphs; a node's negatives are the other graphs, so B >= 2", len(idx))
	}
	b, err := g.batch(idx)
	if err != nil {
		return StepResult{}, err
	}
	var res StepResult
	if viewsAtOnce {
		res, err = g.stepViews(b)
	} else {
		res, err = g.stepOneGraph(b)
	}
	if err != nil {
		return StepResult{}, err
	}
	res.Nodes = int(b.GraphPtr[len(b.GraphPtr)-1])
	return res, nil
}

// stepOneGraph is the step with both views on one expression graph, whose
// tape runs the views' ops one after the other (each op split over the
// cores). Tests compare stepViews with it.
func (g *mvgrlMethod) stepOneGraph(b *model.ViewBatch) (StepResult, error) {
	eg, release, err := newStepGraph(&g.arena)
	if err != nil {
		return StepResult{}, err
	}
	defer release()
	bound := g.m.Bind(eg)
	out, err := bound.Forward(b)
	if err != nil {
		return StepResult{}, err
	}
	var terms [2]*G.Node
	for v := range terms {
		// Nodes of one view against the graphs of the other.
		if terms[v], err = g.term(out.Local[v], out.Global[1-v], b.GraphPtr); err != nil {
			return StepResult{}, fmt.Errorf("loss (nodes of view %d): %w", v+1, err)
		}
	}
	l, err := G.Add(terms[0], terms[1])
	if err != nil {
		return StepResult{}, fmt.Errorf("loss: %w", err)
	}
	if _, err := G.Grad(l, bound.Learnables()...); err != nil {
		return StepResult{}, fmt.Errorf("gradient: %w", err)
	}
	vm := G.NewTapeMachine(eg)
	defer gop.CloseMachine(vm)
	if err := vm.RunAll(); err != nil {
		return StepResult{}, fmt.Errorf("run step: %w", err)
	}
	if g.grads, err = bound.Grads(g.grads); err != nil {
		return StepResult{}, err
	}
	lv, err := scalarOf(l.Value())
	if err != nil {
		return StepResult{}, err
	}
	proj, err := model.SumGlobals(out)
	if err != nil {
		return StepResult{}, err
	}
	return StepResult{Loss: lv, Grads: g.grads, Proj: proj, ProjDim: g.m.EmbedDim()}, nil
}

// stepViews is the step with each view on an expression graph and tape
// machine of its own, the two running at once (view 1 on the calling
// goroutine, view 2 on another; bothViews): graph v holds view v's
// encoder, both heads and the objective's term of view v's nodes against
// the other view's graphs. The views are independent up to that term,
// which crosses them: ops.Exchange.SwapGrad hands each graph a copy of the
// other's graph-head output, and in the backward pass hands each the
// gradient the other's term gives its own. On one graph (stepOneGraph) the
// tape runs the views' ops one after the other, and most of them are too
// small to keep two cores busy.
//
// The results are stepOneGraph's, bit for bit (TestMVGRLViewsMatchOneGraph):
// the same ops compute each view and each term with an upstream gradient
// of 1, a view's graph-head output gets its one gradient term from the
// other view's objective term in both, an encoder's parameters are used by
// one view only, and a head's parameter gradient is the sum of the two
// views' parts as the one graph sums them (one float addition, which does
// not depend on the order); the loss is the two terms' sum in the
// model's precision, as the one graph's Add.
func (g *mvgrlMethod) stepViews(b *model.ViewBatch) (StepResult, error) {
	fwd, back := ops.NewExchange(), ops.NewExchange()
	abort := func(err error) {
		fwd.Abort(err)
		back.Abort(err)
	}
	var (
		w                   viewGraphs
		bound               [2]*model.MVGRLBound
		local, global, term [2]*G.Node
	)
	defer w.close()
	build := func(v int, eg *G.ExprGraph) error {
		bound[v] = g.m.Bind(eg)
		var err error
		if local[v], global[v], err = bound[v].ForwardView(b, v); err != nil {
			return err
		}
		peer, err := fwd.SwapGrad(v, global[v], back)
		if err != nil {
			return fmt.Errorf("view %d: %w", v+1, err)
		}
		// Nodes of this view against the graphs of the other.
		if term[v], err = g.term(local[v], peer, b.GraphPtr); err != nil {
			return fmt.Errorf("loss (nodes of view %d): %w", v+1, err)
		}
		if _, err := G.Grad(term[v], bound[v].Learnables()...); err != nil {
			return fmt.Errorf("gradient of view %d: %w", v+1, err)
		}
		return nil
	}
	// The other view may be waiting at an exchange: a failure aborts it,
	// and the error is that of the view that failed first.
	if err := w.run(&g.arenas, build, abort); err != nil {
		return StepResult{}, err
	}
	for v := range bound {
		var err error
		if g.viewGrads[v], err = bound[v].Grads(g.viewGrads[v]); err != nil {
			return StepResult{}, err
		}
	}
	g.grads = sumGrads(g.grads, g.viewGrads[0], g.viewGrads[1])
	lv, err := addScalars(term[0].Value(), term[1].Value())
	if err != nil {
		return StepResult{}, fmt.Errorf("loss: %w", err)
	}
	proj, err := model.SumGlobals(model.MVGRLOutputs{Global: global})
	if err != nil {
		return StepResult{}, err
	}
	return StepResult{Loss: lv, Grads: g.grads, Proj: proj, ProjDim: g.m.EmbedDim()}, nil
}

// addScalars returns a + b of two scalar values of one dtype, added in
// that dtype (as gorgonia.Add of two scalar nodes).
func addScalars(a, b G.Value) (float64, error) {
	switch x := a.Data().(type) {
	case float32:
		if y, ok := b.Data().(float32); ok {
			return float64(x + y), nil
		}
	case float64:
		if y, ok := b.Data().(float64); ok {
			return x + y, nil
		}
	}
	return 0, fmt.Errorf("the two terms are not scalars of one float dtype: %v (%T), %v (%T)", a, a.Data(), b, b.Data())
}

// mvgrlEmbedChunkNodes is about the number of nodes Embed runs through the
// model at once (whole graphs, consecutive in the dataset's order).
const mvgrlEmbedChunkNodes = 4096

// Embed returns the evaluation embedding of every graph (the sum of the
// two views' graph head outputs) for "encoder" and "projection" alike.
func (g *mvgrlMethod) Embed(split, which string) (sampler.Embeddings, error) {
	if split != "train" {
		return sampler.Embeddings{}, fmt.Errorf("embed: graph data has no split %q (train)", split)
	}
	if which != "encoder" && which != "projection" {
		return sampler.Embeddings{}, fmt.Errorf("embed: unknown representation %q (encoder, projection)", which)
	}
	n := len(g.set.Graphs)
	d := g.m.EmbedDim()
	out := make([]float32, 0, n*d)
	// The chunks, of about the same node count, reuse the arenas' buffers
	// (see newStepGraph); they are not the steps' arenas, whose buffers are
	// sized for a batch and would idle out while the chunks run.
	var arenas [2]*ops.Arena
	for lo := 0; lo < n; {
		hi, nodes := lo, 0
		for hi < n && (hi == lo || nodes+g.set.Graphs[hi].NumNodes <= mvgrlEmbedChunkNodes) {
			nodes += g.set.Graphs[hi].NumNodes
			hi++
		}
		idx := make([]int, hi-lo)
		for i := range idx {
			idx[i] = lo + i
		}
		b, err := g.batch(idx)
		if err != nil {
			return sampler.Embeddings{}, fmt.Errorf("embed graphs %d..%d: %w", lo, hi-1, err)
		}
		if out, err = g.embedChunk(out, b, &arenas); err != nil {
			return sampler.Embeddings{}, fmt.Errorf("embed graphs %d..%d: %w", lo, hi-1, err)
		}
		lo = hi
	}
	return sampler.Embeddings{N: n, D: d, Data: out}, nil
}

// embedChunk appends the evaluation embedding of the graphs of b to out:
// each view's graph-head output on an expression graph and tape machine of
// its own (arenas[v]), the two at once (bothViews; they are independent,
// nothing is exchanged), then their sum, as model.SumGlobals. Without
// viewsAtOnce (tests), model.EmbedIn runs both views on one graph
// (arenas[0]); the bits are the same, by the same ops.
func (g *mvgrlMethod) embedChunk(out []float32, b *model.ViewBatch, arenas *[2]*ops.Arena) ([]float32, error) {
	if !viewsAtOnce {
		eg, release, err := newStepGraph(&arenas[0])
		if err != nil {
			return nil, err
		}
		e, err := g.m.EmbedIn(eg, b)
		release()
		return append(out, e...), err
	}
	var (
		w      viewGraphs
		global [2]*G.Node
	)
	defer w.close()
	err := w.run(arenas, func(v int, eg *G.ExprGraph) error {
		var err error
		global[v], err = g.m.Bind(eg).GlobalView(b, v)
		return err
	}, nil)
	if err != nil {
		return nil, err
	}
	var globals [2][]float32
	for v, n := range global {
		gv, ok := n.Value().Data().([]float32)
		if !ok {
			return nil, fmt.Errorf("view %d: graph outputs are %T, want float32", v+1, n.Value().Data())
		}
		globals[v] = gv
	}
	for i, x := range globals[0] {
		out = append(out, x+globals[1][i])
	}
	return out, nil
}

package train

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"github.com/batchsampler-go/batchsampler/sampler"
)

func init() {
	RegisterMethod("graphcl", MethodSpec{Modalities: []string{"graph"}, Validate: validateGIN, New: newGraphCL,
		ModelKeys: ginKeys, AugmentKeys: graphAugmentKeys, ViewProjections: true})
}

// ginKeys and graphAugmentKeys are the model and augment keys of a method
// with a GIN encoder and graph views.
var (
	ginKeys          = []string{"kind", "hidden", "layers", "proj_dim"}
	graphAugmentKeys = []string{"mode", "list", "drop_isolated"}
)

// validateGIN checks the model keys of a GIN encoder.
func validateGIN(c *Config) []string {
	var errs problems
	add := errs.add
	add(oneOf("model.kind", c.Model.Kind, "gin"))
	add(positive("model.hidden", c.Model.Hidden))
	add(positive("model.layers", c.Model.Layers))
	if c.Model.ProjDim < 0 {
		errs = append(errs, fmt.Sprintf("model.proj_dim: must be >= 0 (0 = layers*hidden), got %d", c.Model.ProjDim))
	}
	return errs
}

// graphAugmenter builds the augmentation of the second view from
// cfg.Augment.
func graphAugmenter(cfg *Config) (augment.GraphAugmenter, error) {
	specs := make([]augment.Spec, len(cfg.Augment.List))
	for i, a := range cfg.Augment.List {
		specs[i] = augment.Spec{Kind: a.Kind, Ratio: a.Ratio}
	}
	aug, err := augment.New(specs, cfg.Augment.Mode)
	if err != nil {
		return nil, fmt.Errorf("augment: %w", err)
	}
	if cfg.Augment.DropIsolated {
		aug = augment.WithoutIsolated{Aug: aug}
	}
	return aug, nil
}

func newGraphCL(cfg *Config, ds Dataset, seed uint64) (Method, error) {
	gd, ok := ds.(graphDataset)
	if !ok {
		return nil, fmt.Errorf("graphcl needs a graph dataset, got %T", ds)
	}
	aug, err := graphAugmenter(cfg)
	if err != nil {
		return nil, err
	}
	m, err := model.NewGIN(model.GINConfig{
		InDim: gd.set.FeatDim, Hidden: cfg.Model.Hidden, Layers: cfg.Model.Layers, ProjDim: cfg.Model.ProjDim,
	}, seed)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return &graphCL{cfg: cfg, set: gd.set, gin: m, aug: aug}, nil
}

// graphCL is GraphCL (You et al. 2020): a GIN encoder, view 1 the original
// graph, view 2 an augmented one, and an InfoNCE-family loss on the
// projections.
type graphCL struct {
	cfg *Config
	set *data.GraphSet
	gin *model.GIN
	aug augment.GraphAugmenter
	all *model.GraphBatch // the whole dataset packed once, for Embed
	// arena lends the step graphs' op outputs (see newStepGraph); arenas
	// those of the two views' graphs of stepAcross.
	arena  *ops.Arena
	arenas [2]*ops.Arena
}

func (g *graphCL) Params() []*model.Param { return g.gin.Params() }

func (g *graphCL) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	v1 := make([]*data.Graph, len(idx))
	v2 := make([]*data.Graph, len(idx))
	for i, j := range idx {
		v1[i] = g.set.Graphs[j]
		v2[i] = g.aug.Augment(g.set.Graphs[j], rng)
	}
	b1, err := model.PackGraphs(v1)
	if err != nil {
		return StepResult{}, err
	}
	b2, err := model.PackGraphs(v2)
	if err != nil {
		return StepResult{}, err
	}
	if viewsAtOnce {
		res, err := g.stepAcross([2]*model.GraphBatch{b1, b2})
		res.Nodes = b1.NumNodes // view 1 is the graphs as sampled
		return res, err
	}
	eg, release, err := newStepGraph(&g.arena)
	if err != nil {
		return StepResult{}, err
	}
	defer release()
	bound := g.gin.Bind(eg)
	var proj [2]*G.Node
	for i, b := range []*model.GraphBatch{b1, b2} {
		emb, err := bound.Encode(b, true)
		if err != nil {
			return StepResult{}, fmt.Errorf("encode view %d: %w", i+1, err)
		}
		if proj[i], err = bound.Project(emb); err != nil {
			return StepResult{}, fmt.Errorf("project view %d: %w", i+1, err)
		}
	}
	res, err := contrastiveStep(eg, g.cfg.Loss, proj, bound.Learnables(), func() ([][]float32, error) {
		grads, err := bound.Grads()
		if err != nil {
			return nil, err
		}
		return grads, bound.CommitStats()
	})
	res.Nodes = b1.NumNodes
	return res, err
}

// viewsAtOnce is false only in tests that compare the steps with the two
// views on two graphs run at once (GraphCL's stepAcross, MVGRL's
// stepViews) with the steps on one graph.
var viewsAtOnce = true

// stepAcross is Step with each view on its own expression graph and tape
// machine, the two running at once (view 1 on the calling goroutine, view
// 2 on another) and meeting at the loss (loss.Across). On one graph the
// tape runs the views' ops one after the other, each op split over the
// cores; most of a GIN step's ops are too small to keep two cores busy, so
// two views at once do more in the same time. The results are those of
// the step on one graph, bit for bit (TestStepAcrossMatchesOneGraph): the
// same ops compute each view, the loss and its gradients are computed by
// the same kernel, the gradient of a parameter is the sum of the two
// views' parts as the one graph sums them, and BatchNorm's running
// statistics take view 1's batch statistics and then view 2's.
func (g *graphCL) stepAcross(views [2]*model.GraphBatch) (StepResult, error) {
	across, err := loss.NewAcross(g.cfg.Loss)
	if err != nil {
		return StepResult{}, fmt.Errorf("loss: %w", err)
	}
	var (
		w     viewGraphs
		bound [2]*model.Bound
		proj  [2]*G.Node
		side  [2]*G.Node // each view's part of the loss (loss.Across)
	)
	defer w.close()
	build := func(v int, eg *G.ExprGraph) error {
		bound[v] = g.gin.Bind(eg)
		emb, err := bound[v].Encode(views[v], true)
		if err != nil {
			return fmt.Errorf("encode view %d: %w", v+1, err)
		}
		if proj[v], err = bound[v].Project(emb); err != nil {
			return fmt.Errorf("project view %d: %w", v+1, err)
		}
		if side[v], err = across.Side(v, proj[v]); err != nil {
			return fmt.Errorf("loss: %w", err)
		}
		if _, err := G.Grad(side[v], bound[v].Learnables()...); err != nil {
			return fmt.Errorf("gradient of view %d: %w", v+1, err)
		}
		return nil
	}
	// The other view may be waiting at the loss: a failure aborts it, and
	// the error is that of the view that failed first.
	if err := w.run(&g.arenas, build, across.Abort); err != nil {
		return StepResult{}, err
	}
	gs, err := bound[0].Grads()
	if err != nil {
		return StepResult{}, err
	}
	gs2, err := bound[1].Grads()
	if err != nil {
		return StepResult{}, err
	}
	gs = sumGrads(gs, gs, gs2)
	for _, b := range bound {
		if err := b.CommitStats(); err != nil {
			return StepResult{}, err
		}
	}
	return viewsResult(side[0], proj, gs)
}

func (g *graphCL) Embed(split, which string) (sampler.Embeddings, error) {
	if split != "train" {
		return sampler.Embeddings{}, fmt.Errorf("embed: graph data has no split %q (train)", split)
	}
	if g.all == nil {
		b, err := model.PackGraphs(g.set.Graphs)
		if err != nil {
			return sampler.Embeddings{}, err
		}
		g.all = b
	}
	b := g.all
	var (
		e   []float32
		err error
	)
	switch which {
	case "projection":
		e, err = g.gin.EmbedProjected(b)
	case "encoder":
		e, err = g.gin.Embed(b)
	default:
		return sampler.Embeddings{}, fmt.Errorf("embed: unknown representation %q (encoder, projection)", which)
	}
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d graphs: %w", b.NumGraphs, err)
	}
	n := len(g.set.Graphs)
	return sampler.Embeddings{N: n, D: len(e) / n, Data: e}, nil
}

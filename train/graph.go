package train

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"

	G "gorgonia.org/gorgonia"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
)

func init() { Register("graph", graphBuilder{}) }

// graphDataset adapts data.GraphSet to Dataset.
type graphDataset struct{ set *data.GraphSet }

func (d graphDataset) Name() string      { return d.set.Name }
func (d graphDataset) NumInstances() int { return len(d.set.Graphs) }
func (d graphDataset) Labels() []int     { return d.set.Labels() }
func (d graphDataset) NumClasses() int   { return d.set.NumClasses }

type graphBuilder struct{}

func (graphBuilder) Load(cfg *Config) (Dataset, error) {
	dc := cfg.Data
	var (
		set *data.GraphSet
		err error
	)
	switch dc.Source {
	case "tu":
		set, err = data.ReadTU(dc.ResolvedPath(), dc.Name)
	case "gin":
		set, err = data.ReadGIN(dc.ResolvedPath())
		if err == nil && dc.Name != "" {
			set.Name = dc.Name
		}
	case "synthetic":
		s := dc.Synthetic
		set, err = data.GenerateGraphs(data.SynthConfig{
			Graphs: s.Graphs, Classes: s.Classes, MinNodes: s.MinNodes, MaxNodes: s.MaxNodes,
			NodeLabels: s.NodeLabels, Noise: s.Noise,
		}, s.Seed)
		if err == nil && dc.Name != "" {
			set.Name = dc.Name
		}
	default:
		err = fmt.Errorf("data.source %q is not a graph source (tu, gin, synthetic)", dc.Source)
	}
	if err != nil {
		if dc.Source != "synthetic" && !filepath.IsAbs(dc.Path) && dc.Root == "" {
			return nil, fmt.Errorf("load dataset (data root %s; set data.root or $BATCHSAMPLER_DATA to change it): %w", dc.DataRoot(), err)
		}
		return nil, fmt.Errorf("load dataset: %w", err)
	}
	if err := set.SetFeatures(data.FeatureOptions{Kind: dc.Features, MaxDegree: dc.MaxDegree}); err != nil {
		return nil, fmt.Errorf("data.features: %w", err)
	}
	return graphDataset{set}, nil
}

func (graphBuilder) New(cfg *Config, ds Dataset, seed uint64) (Modality, error) {
	gd, ok := ds.(graphDataset)
	if !ok {
		return nil, fmt.Errorf("graph modality needs a graph dataset, got %T", ds)
	}
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
	m, err := model.NewGIN(model.GINConfig{
		InDim: gd.set.FeatDim, Hidden: cfg.Model.Hidden, Layers: cfg.Model.Layers, ProjDim: cfg.Model.ProjDim,
	}, seed)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return &graphModality{cfg: cfg, set: gd.set, gin: m, aug: aug}, nil
}

// graphModality is GraphCL: a GIN encoder, view 1 the original graph, view 2
// an augmented one, and an InfoNCE-family loss on the projections.
type graphModality struct {
	cfg *Config
	set *data.GraphSet
	gin *model.GIN
	aug augment.GraphAugmenter
	all *model.GraphBatch // the whole dataset packed once, for Embed
}

func (g *graphModality) NumInstances() int      { return len(g.set.Graphs) }
func (g *graphModality) Labels() []int          { return g.set.Labels() }
func (g *graphModality) Params() []*model.Param { return g.gin.Params() }

func (g *graphModality) Step(idx []int, rng *rand.Rand) (StepResult, error) {
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

	eg := G.NewGraph()
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
	return contrastiveStep(eg, g.cfg.Loss, proj, bound.Learnables(), func() ([][]float32, error) {
		grads, err := bound.Grads()
		if err != nil {
			return nil, err
		}
		return grads, bound.CommitStats()
	})
}

// contrastiveStep adds the loss of the two views' projections to eg, runs
// the forward and backward pass, and returns the loss, the gradients that
// grads reads after the run, and the first view's projections.
func contrastiveStep(eg *G.ExprGraph, lc loss.Config, proj [2]*G.Node, learnables G.Nodes, grads func() ([][]float32, error)) (StepResult, error) {
	l, err := loss.Build(lc, proj[0], proj[1])
	if err != nil {
		return StepResult{}, fmt.Errorf("loss: %w", err)
	}
	if _, err := G.Grad(l, learnables...); err != nil {
		return StepResult{}, fmt.Errorf("gradient: %w", err)
	}
	vm := G.NewTapeMachine(eg)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return StepResult{}, fmt.Errorf("run step: %w", err)
	}
	gs, err := grads()
	if err != nil {
		return StepResult{}, err
	}
	lv, err := scalarOf(l.Value())
	if err != nil {
		return StepResult{}, err
	}
	p := proj[0].Value().Data().([]float32)
	return StepResult{Loss: lv, Grads: gs, Proj: append([]float32(nil), p...), ProjDim: proj[0].Shape()[1]}, nil
}

func scalarOf(v G.Value) (float64, error) {
	switch x := v.Data().(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case []float32:
		if len(x) == 1 {
			return float64(x[0]), nil
		}
	case []float64:
		if len(x) == 1 {
			return x[0], nil
		}
	}
	return 0, fmt.Errorf("loss is not a scalar: %v", v)
}

func (g *graphModality) Embed(which string) (sampler.Embeddings, error) {
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
	if which == "projection" {
		e, err = g.gin.EmbedProjected(b)
	} else {
		e, err = g.gin.Embed(b)
	}
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d graphs: %w", b.NumGraphs, err)
	}
	n := len(g.set.Graphs)
	return sampler.Embeddings{N: n, D: len(e) / n, Data: e}, nil
}

func (g *graphModality) Evaluate(emb sampler.Embeddings, seed uint64) (Score, error) {
	ec := g.cfg.Eval
	res, err := eval.SVMCrossValidate(emb.Data, emb.N, emb.D, g.set.Labels(), eval.SVMOptions{
		Folds: ec.Folds, InnerFolds: ec.InnerFolds, Cs: ec.Cs, Seed: seed,
	})
	if err != nil {
		return Score{}, fmt.Errorf("svm evaluation: %w", err)
	}
	return Score{
		Metric: "svm_accuracy", Value: 100 * res.Mean, Std: 100 * res.Std,
		Detail: map[string]any{"fold_accuracy": res.FoldAcc, "chosen_c": res.ChosenC},
	}, nil
}

package train_test

import (
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/sampler"
	"github.com/batchsampler-go/batchsampler/train"
)

// tinyMomentum is a momentum-encoder method (MoCo v3's shape on a GIN,
// small enough for a test) written outside package train, as any user's
// method would be: this file and one RegisterMethod call, with no edit of
// package train. The online branch is GIN encoder + projection head +
// a linear predictor; the target branch is an EMA copy of the GIN (encoder
// and head), updated after every optimizer step with MoCo v3's cosine
// momentum schedule; the loss is symmetric, loss(q1, k2) + loss(q2, k1),
// with the keys as constants (no gradient through the target).
type tinyMomentum struct {
	cfg            *train.Config
	set            *data.GraphSet
	online, target *model.GIN
	pred           *model.Param // ProjDim × ProjDim
	aug            augment.GraphAugmenter
	params         []*model.Param
	m0             float64
	all            *model.GraphBatch
}

// tinyMomentumSpec registers the method as method test-momentum on the
// built-in graph modality; its keys are GIN's (the model's kind, hidden,
// layers and proj_dim) and the graph augmentations'.
var tinyMomentumSpec = train.MethodSpec{
	Modalities: []string{"graph"}, Validate: validateTinyMomentum, New: newTinyMomentum,
	ModelKeys: []string{"kind", "hidden", "layers", "proj_dim"}, AugmentKeys: []string{"mode", "list", "drop_isolated"},
}

// validateTinyMomentum checks the model keys the method reads.
func validateTinyMomentum(c *train.Config) []string {
	var errs []string
	if c.Model.Kind != "gin" {
		errs = append(errs, fmt.Sprintf("model.kind: method test-momentum has a GIN encoder: want gin, got %q", c.Model.Kind))
	}
	if c.Model.Hidden <= 0 || c.Model.Layers <= 0 || c.Model.ProjDim < 0 {
		errs = append(errs, fmt.Sprintf("model.hidden, model.layers, model.proj_dim: want > 0, > 0, >= 0, got %d, %d, %d", c.Model.Hidden, c.Model.Layers, c.Model.ProjDim))
	}
	return errs
}

func newTinyMomentum(cfg *train.Config, ds train.Dataset, seed uint64) (train.Method, error) {
	gd, ok := ds.(train.GraphData)
	if !ok {
		return nil, fmt.Errorf("test-momentum trains on graphs, got %T", ds)
	}
	set := gd.GraphSet()
	specs := make([]augment.Spec, len(cfg.Augment.List))
	for i, a := range cfg.Augment.List {
		specs[i] = augment.Spec{Kind: a.Kind, Ratio: a.Ratio}
	}
	aug, err := augment.New(specs, cfg.Augment.Mode)
	if err != nil {
		return nil, err
	}
	gc := model.GINConfig{InDim: set.FeatDim, Hidden: cfg.Model.Hidden, Layers: cfg.Model.Layers, ProjDim: cfg.Model.ProjDim}
	online, err := model.NewGIN(gc, seed)
	if err != nil {
		return nil, err
	}
	target, err := model.NewGIN(gc, seed) // same initialisation, as MoCo v3 copies it
	if err != nil {
		return nil, err
	}
	d := online.ProjDim()
	w := make([]float32, d*d)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.05)
	}
	for i := 0; i < d; i++ {
		w[i*d+i]++
	}
	t := &tinyMomentum{cfg: cfg, set: set, online: online, target: target, aug: aug, m0: 0.9,
		pred: &model.Param{Name: "predictor.w", Trainable: true, Value: tensor.New(tensor.WithShape(d, d), tensor.WithBacking(w))}}
	t.params = append(append(t.params, online.Params()...), t.pred)
	for _, p := range target.Params() { // the EMA copy: non-trainable, checkpointed
		t.params = append(t.params, &model.Param{Name: "target." + p.Name, Value: p.Value})
	}
	return t, nil
}

func (t *tinyMomentum) Params() []*model.Param { return t.params }

func (t *tinyMomentum) Step(idx []int, rng *rand.Rand) (train.StepResult, error) {
	views := [2][]*data.Graph{}
	for _, j := range idx {
		views[0] = append(views[0], t.set.Graphs[j])
		views[1] = append(views[1], t.aug.Augment(t.set.Graphs[j], rng))
	}
	eg := G.NewGraph()
	bound := t.online.Bind(eg)
	w := G.NewMatrix(eg, tensor.Float32, G.WithShape(t.pred.Value.Shape()...), G.WithName("predictor.w"), G.WithValue(t.pred.Value))
	var q, k [2]*G.Node
	var proj0 *G.Node
	for v := range 2 {
		b, err := model.PackGraphs(views[v])
		if err != nil {
			return train.StepResult{}, err
		}
		emb, err := bound.Encode(b, true)
		if err != nil {
			return train.StepResult{}, err
		}
		p, err := bound.Project(emb)
		if err != nil {
			return train.StepResult{}, err
		}
		if v == 0 {
			proj0 = p
		}
		if q[v], err = G.Mul(p, w); err != nil {
			return train.StepResult{}, err
		}
		kv, err := t.target.EmbedProjected(b)
		if err != nil {
			return train.StepResult{}, err
		}
		k[v] = G.NewMatrix(eg, tensor.Float32, G.WithShape(len(idx), t.target.ProjDim()), G.WithName(fmt.Sprintf("key%d", v)),
			G.WithValue(tensor.New(tensor.WithShape(len(idx), t.target.ProjDim()), tensor.WithBacking(kv))))
	}
	l1, err := loss.Build(t.cfg.Loss, q[0], k[1])
	if err != nil {
		return train.StepResult{}, err
	}
	l2, err := loss.Build(t.cfg.Loss, q[1], k[0])
	if err != nil {
		return train.StepResult{}, err
	}
	l := G.Must(G.Add(l1, l2))
	learn := append(bound.Learnables(), w)
	if _, err := G.Grad(l, learn...); err != nil {
		return train.StepResult{}, err
	}
	vm := G.NewTapeMachine(eg)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return train.StepResult{}, err
	}
	grads, err := bound.Grads()
	if err != nil {
		return train.StepResult{}, err
	}
	if err := bound.CommitStats(); err != nil {
		return train.StepResult{}, err
	}
	gw, err := w.Grad()
	if err != nil {
		return train.StepResult{}, err
	}
	grads = append(grads, append([]float32(nil), gw.Data().([]float32)...))
	lv, ok := l.Value().Data().(float32)
	if !ok {
		return train.StepResult{}, fmt.Errorf("loss is not a float32 scalar: %v", l.Value())
	}
	return train.StepResult{Loss: float64(lv), Grads: grads, Proj: append([]float32(nil), proj0.Value().Data().([]float32)...), ProjDim: proj0.Shape()[1]}, nil
}

// AfterStep is the momentum update of the target branch (after the
// optimizer's step, before the next keys are computed).
func (t *tinyMomentum) AfterStep(step, total int) ([]map[string]any, error) {
	m := optim.EMAMomentum(t.m0, step, total)
	on, tg := t.online.Params(), t.target.Params()
	for i := range on {
		if err := optim.EMA(tg[i].Value.Float32s(), on[i].Value.Float32s(), m); err != nil {
			return nil, err
		}
	}
	return []map[string]any{{"event": "ema", "step": step, "momentum": m}}, nil
}

func (t *tinyMomentum) Embed(split, which string) (sampler.Embeddings, error) {
	if t.all == nil {
		b, err := model.PackGraphs(t.set.Graphs)
		if err != nil {
			return sampler.Embeddings{}, err
		}
		t.all = b
	}
	var (
		e   []float32
		err error
	)
	if which == "projection" {
		e, err = t.online.EmbedProjected(t.all)
	} else {
		e, err = t.online.Embed(t.all)
	}
	n := len(t.set.Graphs)
	return sampler.Embeddings{N: n, D: len(e) / n, Data: e}, err
}

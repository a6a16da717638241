package train

import (
	"fmt"
	"math/rand/v2"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// MomentumModel holds the model keys of method mocov3 (config key model;
// inlined in ModelConfig).
type MomentumModel struct {
	// PredHidden is the predictor's hidden width (mocov3).
	PredHidden int `yaml:"pred_hidden"`
	// Momentum is the momentum encoder's EMA momentum at the first step
	// (mocov3; it rises to 1 on a cosine over training).
	Momentum float64 `yaml:"momentum"`
	// Projection says which output of a method with a momentum encoder is
	// its "projection", the embedding the sampler's graph reads (sampler
	// embedding projection or cached): "query" (the online branch after
	// the predictor, default) or "key" (the momentum encoder's).
	Projection string `yaml:"projection"`
}

// MoCo v3 (Chen, Xie and He, 2021; the ResNet variant of
// facebookresearch/moco-v3, with solo-learn's CIFAR recipe scaled to this
// machine):
//
//   - online branch: ResNet encoder → projector (Linear → BN → ReLU →
//     Linear → BN without affine) → predictor (Linear → BN → ReLU →
//     Linear), giving the queries q1, q2 of the two views;
//   - momentum branch: an EMA copy of encoder + projector, run in training
//     mode (batch statistics, as moco-v3's momentum encoder) without
//     gradient, giving the keys k1, k2;
//   - loss 2τ·(ctr(q1, k2) + ctr(q2, k1)), ctr the in-batch InfoNCE over
//     q·kᵀ/τ with the diagonal as positives (loss.BuildSymmetric's
//     objective, one term in each view's graph; DCL and HCL plug in through
//     loss.kind): the negatives are the batch's other keys only, so the
//     sampler decides every negative;
//   - after every optimizer step the momentum branch moves towards the
//     online one with m rising from model.momentum (0.99) to 1 on a cosine
//     over training (optim.EMAMomentum): the update moco-v3 makes before
//     the next step's keys;
//   - asymmetric views: the second view also solarizes (augment.MoCoV3CIFAR).
//
// Which output feeds BatchSampler's graph is model.projection: "query"
// (default) or "key". The paper's code builds the graph from the
// embeddings the training loss compares (SimCLR's projections); MoCo v3's
// loss compares queries with keys, and the query is the output the
// optimizer moves at every step and the one computed with the encoder
// being evaluated, so it is the default; "key" reads the smoother momentum
// encoder instead (identical at step 0, slower to follow the online
// network later).

func init() {
	RegisterMethod("mocov3", MethodSpec{Modalities: []string{"image"}, Validate: validateMoCoV3, New: newMoCoV3, Defaults: mocoV3Defaults,
		ModelKeys:   []string{"kind", "arch", "stem", "conv", "widths", "blocks", "proj_dim", "proj_hidden", "pred_hidden", "momentum", "projection"},
		AugmentKeys: []string{"mode", "image"}})
}

// mocoV3Defaults is MoCo v3 at CIFAR scale on this machine: solo-learn's
// recipe (τ = 0.2, LARS lr 0.3 at B = 256 with trust coefficient 0.02 and
// weight decay 1e-5, biases and norms excluded, warm-up then cosine,
// momentum 0.99 → 1, solarized second view) with heads sized for the
// 64-wide ResNet-14 (projector 1024 → 128, predictor 1024) instead of
// ResNet-18's 4096 → 256.
func mocoV3Defaults(c *Config) {
	c.Method = "mocov3"
	c.Model.ProjHidden, c.Model.ProjDim, c.Model.PredHidden = 1024, 128, 1024
	c.Model.Momentum, c.Model.Projection = 0.99, "query"
	c.Augment.Image = "mocov3"
	c.Loss.Form, c.Loss.Temperature = loss.FormSimCSE, 0.2
	c.Optim.Kind, c.Optim.WeightDecay, c.Optim.TrustCoefficient, c.Optim.Momentum = "lars", 1e-5, 0.02, 0.9
	c.Optim.Schedule = optim.ScheduleConfig{Kind: optim.WarmupCosine, WarmupEpochs: 1}
	c.Train.LR = 0.3
}

func validateMoCoV3(c *Config) []string {
	errs := problems(validateResNetEncoder(c))
	add := errs.add
	add(positive("model.proj_hidden", c.Model.ProjHidden))
	add(positive("model.proj_dim", c.Model.ProjDim))
	add(positive("model.pred_hidden", c.Model.PredHidden))
	if !(c.Model.Momentum >= 0 && c.Model.Momentum < 1) {
		errs = append(errs, fmt.Sprintf("model.momentum: the momentum encoder's EMA momentum at the first step must be in [0, 1), got %v", c.Model.Momentum))
	}
	add(oneOf("model.projection", c.Model.Projection, "query", "key"))
	add(oneOf("augment.image", c.Augment.Image, imageViewNames(false)...))
	if c.Loss.Form == loss.FormSimCLR {
		errs = append(errs, fmt.Sprintf("loss.form: method mocov3 contrasts queries with the other view's keys: use %q (MoCo v3's cross-entropy) or %q (positive left out of the denominator), not %q", loss.FormSimCSE, loss.FormGraphCL, c.Loss.Form))
	}
	return errs
}

// mocoV3 is MoCo v3 on an image dataset; see the comment at the top of
// the file.
type mocoV3 struct {
	cfg   *Config
	ds    *imageDataset
	aug   [2]augment.ImageAugmenter
	scale float64 // 2τ

	enc, mEnc          *model.ResNet
	proj, mProj, pred  *model.MLP
	params             []*model.Param
	online, momentum   []*model.Param // the EMA pairs: trainable online params and their momentum copies
	graphs             map[int]*mocoGraph
	grads              [][]float32
	encG, projG, predG [][]float32
}

// mocoGraph is a compiled training step for one batch size: for each view,
// the momentum branch's key graph and the online graph that takes the
// other view's keys as values. The two views' graphs of each branch run at
// the same time on two goroutines, keys first.
type mocoGraph struct {
	kg, og       [2]*G.ExprGraph
	kvm, ovm     [2]G.VM
	kEnc         [2]*model.ResNetBound
	kProj        [2]*model.MLPBound
	oEnc         [2]*model.ResNetBound
	oProj, oPred [2]*model.MLPBound
	kx, ox       [2]*tensor.Dense
	keys         [2]*G.Node       // key graph outputs
	keyIn        [2]*tensor.Dense // view v's keys, a value of view 1−v's online graph
	q            [2]*G.Node
	term         [2]*G.Node // L(q_v, keys of the other view)
	loss         [2]*G.Node // scale · term, what view v's graph differentiates
	encG, projG  [2][][]float32
	predG        [2][][]float32
}

func newMoCoV3(cfg *Config, ds Dataset, seed uint64) (Method, error) {
	d, ok := ds.(*imageDataset)
	if !ok {
		return nil, fmt.Errorf("mocov3 needs an image dataset, got %T", ds)
	}
	rc, err := resnetConfig(cfg, d.train.C)
	if err != nil {
		return nil, err
	}
	rc.NoHead = true
	m := &mocoV3{cfg: cfg, ds: d, scale: 2 * cfg.Loss.Temperature, graphs: map[int]*mocoGraph{}}
	// The momentum branch starts as a copy of the online one (moco-v3
	// copies the parameters): the same seeds give the same values.
	for _, enc := range []**model.ResNet{&m.enc, &m.mEnc} {
		if *enc, err = model.NewResNet(rc, seed); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	pc := model.MLPConfig{In: m.enc.EmbedDim(), Hidden: cfg.Model.ProjHidden, Out: cfg.Model.ProjDim, LastBN: true}
	for _, p := range []**model.MLP{&m.proj, &m.mProj} {
		if *p, err = model.NewMLP("projector.", pc, seed^0x70726f6a); err != nil {
			return nil, fmt.Errorf("model: projector: %w", err)
		}
	}
	if m.pred, err = model.NewMLP("predictor.", model.MLPConfig{In: cfg.Model.ProjDim, Hidden: cfg.Model.PredHidden, Out: cfg.Model.ProjDim}, seed^0x70726564); err != nil {
		return nil, fmt.Errorf("model: predictor: %w", err)
	}
	m.params = slices.Concat(m.enc.Params(), m.proj.Params(), m.pred.Params())
	onl, mom := slices.Concat(m.enc.Params(), m.proj.Params()), slices.Concat(m.mEnc.Params(), m.mProj.Params())
	for i, p := range mom {
		// The momentum copies are not stepped by the optimizer; their
		// BatchNorm running statistics follow their own forward passes.
		m.params = append(m.params, &model.Param{Name: "momentum." + p.Name, Value: p.Value})
		if onl[i].Trainable {
			m.online, m.momentum = append(m.online, onl[i]), append(m.momentum, p)
		}
	}
	if m.aug, err = imageViews(cfg.Augment.Image, d); err != nil {
		return nil, err
	}
	ops.SetOutputReuse(true) // see newSimCLR
	return m, nil
}

func (m *mocoV3) Params() []*model.Param { return m.params }

// Representations lists the outputs Embed gives besides encoder and
// projection.
func (m *mocoV3) Representations() []string { return []string{"query", "key"} }

// graphFor returns the compiled step for batches of b images.
func (m *mocoV3) graphFor(b int) (*mocoGraph, error) {
	if mg := m.graphs[b]; mg != nil {
		return mg, nil
	}
	tr := m.ds.train
	mg := &mocoGraph{}
	for v := range 2 {
		// Keys: momentum encoder + projector in training mode, no gradient.
		kg := G.NewGraph()
		mg.kg[v] = kg
		mg.kEnc[v], mg.kProj[v] = m.mEnc.Bind(kg), m.mProj.Bind(kg)
		x, xv := mg.kEnc[v].Input(b, tr.H, tr.W)
		mg.kx[v] = xv
		e, err := mg.kEnc[v].Encode(x, true)
		if err != nil {
			return nil, fmt.Errorf("momentum encoder, view %d: %w", v+1, err)
		}
		if mg.keys[v], err = mg.kProj[v].Forward(e, true); err != nil {
			return nil, fmt.Errorf("momentum projector, view %d: %w", v+1, err)
		}
		mg.keyIn[v] = tensor.New(tensor.WithShape(b, m.cfg.Model.ProjDim), tensor.Of(tensor.Float32))
	}
	for v := range 2 {
		// Queries and loss: online encoder + projector + predictor.
		og := G.NewGraph()
		mg.og[v] = og
		mg.oEnc[v], mg.oProj[v], mg.oPred[v] = m.enc.Bind(og), m.proj.Bind(og), m.pred.Bind(og)
		x, xv := mg.oEnc[v].Input(b, tr.H, tr.W)
		mg.ox[v] = xv
		e, err := mg.oEnc[v].Encode(x, true)
		if err != nil {
			return nil, fmt.Errorf("encoder, view %d: %w", v+1, err)
		}
		p, err := mg.oProj[v].Forward(e, true)
		if err != nil {
			return nil, fmt.Errorf("projector, view %d: %w", v+1, err)
		}
		if mg.q[v], err = mg.oPred[v].Forward(p, true); err != nil {
			return nil, fmt.Errorf("predictor, view %d: %w", v+1, err)
		}
		o := 1 - v
		keys := G.NewMatrix(og, tensor.Float32, G.WithShape(b, m.cfg.Model.ProjDim), G.WithName(fmt.Sprintf("keys.%d", o)), G.WithValue(mg.keyIn[o]))
		// loss.BuildSymmetric's scale · (L(q1, k2) + L(q2, k1)), one term
		// per graph: its gradient with respect to q_v is the same
		// scale·∂L/∂q_v, and Step adds the two losses as it did (form
		// simclr is refused by validateMoCoV3).
		if mg.term[v], err = loss.Build(m.cfg.Loss, mg.q[v], keys); err != nil {
			return nil, fmt.Errorf("loss(q%d, k%d): %w", v+1, o+1, err)
		}
		if mg.loss[v], err = G.Mul(mg.term[v], G.NewConstant(float32(m.scale))); err != nil {
			return nil, fmt.Errorf("loss: scale: %w", err)
		}
		learn := slices.Concat(mg.oEnc[v].Learnables(), mg.oProj[v].Learnables(), mg.oPred[v].Learnables())
		if _, err := G.Grad(mg.loss[v], learn...); err != nil {
			return nil, fmt.Errorf("gradient of view %d: %w", v+1, err)
		}
	}
	for v := range 2 {
		mg.kvm[v], mg.ovm[v] = G.NewTapeMachine(mg.kg[v]), G.NewTapeMachine(mg.og[v])
	}
	if len(m.graphs) >= 2 { // keep at most a full and a last partial batch size
		for k, old := range m.graphs {
			for v := range 2 {
				gop.CloseMachine(old.kvm[v])
				gop.CloseMachine(old.ovm[v])
			}
			delete(m.graphs, k)
		}
	}
	m.graphs[b] = mg
	return mg, nil
}

func (m *mocoV3) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	if err := checkImageBatch(idx); err != nil {
		return StepResult{}, err
	}
	mg, err := m.graphFor(len(idx))
	if err != nil {
		return StepResult{}, err
	}
	if err := m.ds.gatherViews(m.aug, [2][]float32{mg.ox[0].Float32s(), mg.ox[1].Float32s()}, idx, rng); err != nil {
		return StepResult{}, err
	}
	for v := range 2 {
		copy(mg.kx[v].Float32s(), mg.ox[v].Float32s())
	}
	// Keys first (moco-v3 computes them under no_grad in the same step).
	// The key graphs are reset after their outputs are copied.
	if err := runBoth(mg.kvm, nil); err != nil {
		for v := range 2 {
			mg.kvm[v].Reset()
		}
		return StepResult{}, fmt.Errorf("momentum branch: %w", err)
	}
	for v := range 2 {
		copy(mg.keyIn[v].Float32s(), mg.keys[v].Value().Data().([]float32))
		mg.kvm[v].Reset()
	}
	var key0 []float32
	if m.cfg.Model.Projection == "key" {
		key0 = slices.Clone(mg.keyIn[0].Float32s())
	}
	defer func() {
		for v := range 2 {
			mg.ovm[v].Reset()
		}
	}()
	if err := runBoth(mg.ovm, nil); err != nil {
		return StepResult{}, fmt.Errorf("run step: %w", err)
	}
	for v := range 2 {
		if mg.encG[v], err = mg.oEnc[v].Grads(mg.encG[v]); err != nil {
			return StepResult{}, err
		}
		if mg.projG[v], err = mg.oProj[v].Grads(mg.projG[v]); err != nil {
			return StepResult{}, err
		}
		if mg.predG[v], err = mg.oPred[v].Grads(mg.predG[v]); err != nil {
			return StepResult{}, err
		}
	}
	// A parameter's gradient is the sum of the two views' (as Gorgonia adds
	// the two terms of a node used twice).
	m.encG = sumGrads(m.encG, mg.encG[0], mg.encG[1])
	m.projG = sumGrads(m.projG, mg.projG[0], mg.projG[1])
	m.predG = sumGrads(m.predG, mg.predG[0], mg.predG[1])
	m.grads = append(append(append(m.grads[:0], m.encG...), m.projG...), m.predG...)
	// Each module's BatchNorm calls in call order: view 1's, then view 2's.
	for _, c := range [][2]model.StatsCommitter{
		{mg.oEnc[0], mg.oEnc[1]}, {mg.oProj[0], mg.oProj[1]}, {mg.oPred[0], mg.oPred[1]},
		{mg.kEnc[0], mg.kEnc[1]}, {mg.kProj[0], mg.kProj[1]},
	} {
		for v := range 2 {
			if err := c[v].CommitStats(); err != nil {
				return StepResult{}, err
			}
		}
	}
	// scale·(L1 + L2) as BuildSymmetric computes it: (L1 + L2)·scale in
	// float32.
	var terms [2]float32
	for v := range 2 {
		l, err := scalarOf(mg.term[v].Value())
		if err != nil {
			return StepResult{}, err
		}
		terms[v] = float32(l)
	}
	sum := terms[0] + terms[1]
	lv := float64(sum * float32(m.scale))
	proj := key0
	if proj == nil {
		proj = slices.Clone(mg.q[0].Value().Data().([]float32))
	}
	return StepResult{Loss: lv, Grads: m.grads, Proj: proj, ProjDim: m.cfg.Model.ProjDim}, nil
}

// AfterStep moves the momentum branch towards the online one with the
// momentum of the coming step: moco-v3's update before that step's keys.
func (m *mocoV3) AfterStep(step, total int) ([]map[string]any, error) {
	mom := optim.EMAMomentum(m.cfg.Model.Momentum, step, total)
	for i, p := range m.online {
		if err := optim.EMA(m.momentum[i].Value.Float32s(), p.Value.Float32s(), mom); err != nil {
			return nil, fmt.Errorf("momentum update of %s: %w", p.Name, err)
		}
	}
	if step%max(m.cfg.Train.LogEvery, 1) != 0 && step != total {
		return nil, nil
	}
	return []map[string]any{{"event": "momentum", "step": step, "momentum": mom}}, nil
}

func (m *mocoV3) Embed(split, which string) (sampler.Embeddings, error) {
	n, pixels, err := m.ds.split(split)
	if err != nil {
		return sampler.Embeddings{}, err
	}
	tr := m.ds.train
	if which == "projection" {
		which = m.cfg.Model.Projection
	}
	enc, heads := m.enc, []*model.MLP{}
	switch which {
	case "encoder":
	case "query":
		heads = []*model.MLP{m.proj, m.pred}
	case "key":
		enc, heads = m.mEnc, []*model.MLP{m.mProj}
	default:
		return sampler.Embeddings{}, fmt.Errorf("embed: unknown representation %q (encoder, projection, query, key)", which)
	}
	outs, err := model.RunImageBatches(pixels, n, tr.C, tr.H, tr.W, embedBatch, func(g *G.ExprGraph, x *G.Node) ([]*G.Node, error) {
		h, err := enc.Bind(g).Encode(x, false)
		for _, hd := range heads {
			if err != nil {
				break
			}
			h, err = hd.Bind(g).Forward(h, false)
		}
		return []*G.Node{h}, err
	})
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d %s images (%s): %w", n, split, which, err)
	}
	return sampler.Embeddings{N: n, D: len(outs[0]) / n, Data: outs[0]}, nil
}

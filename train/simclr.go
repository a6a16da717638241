package train

import (
	"fmt"
	"math/rand/v2"
	"runtime"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"github.com/batchsampler-go/batchsampler/sampler"
)

func init() {
	RegisterMethod("simclr", MethodSpec{Modalities: []string{"image"}, Validate: validateResNet, New: newSimCLR,
		ModelKeys:   []string{"kind", "arch", "stem", "conv", "widths", "blocks", "proj_dim", "proj_hidden"},
		AugmentKeys: []string{"mode", "image"}})
}

// validateResNet checks the model and augment keys of a ResNet encoder
// with image views (method simclr).
func validateResNet(c *Config) []string {
	errs := validateResNetEncoder(c)
	if c.Model.ProjDim < 0 || c.Model.ProjHidden < 0 {
		errs = append(errs, fmt.Sprintf("model.proj_dim, model.proj_hidden: must be >= 0, got %d, %d", c.Model.ProjDim, c.Model.ProjHidden))
	}
	if err := oneOf("augment.image", c.Augment.Image, "simclr", "crop_flip", "none"); err != nil {
		errs = append(errs, err.Error())
	}
	return errs
}

// validateResNetEncoder checks the keys of the ResNet encoder that the
// image methods share: model.kind, stem, conv, arch, widths and blocks.
func validateResNetEncoder(c *Config) []string {
	var errs problems
	add := errs.add
	add(oneOf("model.kind", c.Model.Kind, "resnet"))
	add(oneOf("model.stem", c.Model.Stem, "", "cifar", "imagenet"))
	add(oneOf("model.conv", c.Model.Conv, "", "direct", "winograd"))
	if _, err := model.ResNetPreset(c.Model.Arch); err != nil {
		errs = append(errs, "model.arch: "+err.Error())
	}
	if len(c.Model.Widths) != len(c.Model.Blocks) {
		errs = append(errs, fmt.Sprintf("model.widths, model.blocks: give both with the same length (got %d and %d)", len(c.Model.Widths), len(c.Model.Blocks)))
	}
	for i := range c.Model.Widths {
		add(positive(fmt.Sprintf("model.widths[%d]", i), c.Model.Widths[i]))
	}
	for i := range c.Model.Blocks {
		add(positive(fmt.Sprintf("model.blocks[%d]", i), c.Model.Blocks[i]))
	}
	return errs
}

// resnetConfig is the ResNet of the model section for images of the given
// channels: the preset of model.arch, model.widths and blocks when given,
// and the stem.
func resnetConfig(cfg *Config, channels int) (model.ResNetConfig, error) {
	rc, err := model.ResNetPreset(cfg.Model.Arch)
	if err != nil {
		return rc, fmt.Errorf("model.arch: %w", err)
	}
	if len(cfg.Model.Widths) > 0 {
		rc.Widths, rc.Blocks = cfg.Model.Widths, cfg.Model.Blocks
	}
	rc.InChannels, rc.ImageNetStem = channels, cfg.Model.Stem == "imagenet"
	rc.Winograd = cfg.Model.Conv == "winograd"
	return rc, nil
}

func newSimCLR(cfg *Config, ds Dataset, seed uint64) (Method, error) {
	d, ok := ds.(*imageDataset)
	if !ok {
		return nil, fmt.Errorf("simclr needs an image dataset, got %T", ds)
	}
	rc, err := resnetConfig(cfg, d.train.C)
	if err != nil {
		return nil, err
	}
	rc.ProjHidden, rc.ProjDim = cfg.Model.ProjHidden, cfg.Model.ProjDim
	m, err := model.NewResNet(rc, seed)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	var aug augment.ImageCompose
	switch cfg.Augment.Image {
	case "simclr":
		aug = augment.SimCLRCIFAR()
	case "crop_flip":
		aug = augment.ImageCompose{Augs: []augment.ImageAugmenter{
			augment.RandomResizedCrop{Scale: [2]float64{0.08, 1}, Ratio: [2]float64{3.0 / 4, 4.0 / 3}},
			augment.HorizontalFlip{P: 0.5},
		}}
	}
	aug.Augs = append(aug.Augs, augment.Normalize{Mean: d.mean, Std: d.std})
	if err := augment.ValidateImageAugmenter(aug, d.train.C, d.train.H, d.train.W); err != nil {
		return nil, fmt.Errorf("augment: %w", err)
	}
	// The training graph is compiled once and re-run; every value read
	// after a run is copied (Step, EmbedImages), so the ops may keep their
	// outputs across runs instead of allocating them anew (~0.7 GB a step).
	ops.SetOutputReuse(true)
	return &simCLR{cfg: cfg, ds: d, net: m, aug: aug, graphs: map[int]*imageGraph{}}, nil
}

// simCLR is SimCLR: a ResNet encoder, two augmented views of every
// image, NT-Xent (or another loss of the loss package) on the projections.
// The training graph is compiled once per batch size and re-run.
type simCLR struct {
	cfg    *Config
	ds     *imageDataset
	net    *model.ResNet
	aug    augment.ImageAugmenter
	graphs map[int]*imageGraph
	grads  [][]float32
}

// imageGraph is a compiled training step for one batch size: each view's
// network, loss and gradient in an expression graph of its own, the two run
// at the same time on two goroutines (see ops.Exchange).
type imageGraph struct {
	views  [2]viewGraph
	ex     *ops.Exchange
	images int
	grads  [2][][]float32 // each view's parameter gradients, read after a run
}

// viewGraph is one view's graph: its images x, its projections proj, the
// loss of proj and the other view's projections (a copy, through the
// Exchange), and the gradient of that loss with respect to the parameters
// through proj only.
type viewGraph struct {
	g     *G.ExprGraph
	bound *model.ResNetBound
	x     *tensor.Dense
	proj  *G.Node
	loss  *G.Node
	vm    G.VM
}

func (im *simCLR) Params() []*model.Param { return im.net.Params() }

// graphFor returns the compiled step for batches of b images.
func (im *simCLR) graphFor(b int) (*imageGraph, error) {
	if ig := im.graphs[b]; ig != nil {
		return ig, nil
	}
	tr := im.ds.train
	ig := &imageGraph{images: b, ex: ops.NewExchange()}
	for v := range 2 {
		vg := &ig.views[v]
		vg.g = G.NewGraph()
		vg.bound = im.net.Bind(vg.g)
		x, xv := vg.bound.Input(b, tr.H, tr.W)
		vg.x = xv
		emb, err := vg.bound.Encode(x, true)
		if err != nil {
			return nil, fmt.Errorf("encode view %d: %w", v+1, err)
		}
		if vg.proj, err = vg.bound.Project(emb); err != nil {
			return nil, fmt.Errorf("project view %d: %w", v+1, err)
		}
		peer, err := ig.ex.Swap(v, vg.proj)
		if err != nil {
			return nil, fmt.Errorf("view %d: %w", v+1, err)
		}
		z := [2]*G.Node{vg.proj, peer}
		if v == 1 {
			z = [2]*G.Node{peer, vg.proj}
		}
		if vg.loss, err = loss.Build(im.cfg.Loss, z[0], z[1]); err != nil {
			return nil, fmt.Errorf("loss: %w", err)
		}
		if _, err := G.Grad(vg.loss, vg.bound.Learnables()...); err != nil {
			return nil, fmt.Errorf("gradient of view %d: %w", v+1, err)
		}
		vg.vm = G.NewTapeMachine(vg.g)
	}
	// Keep at most a full and a last partial batch size compiled.
	if len(im.graphs) >= 2 {
		for k, old := range im.graphs {
			for v := range old.views {
				gop.CloseMachine(old.views[v].vm)
			}
			delete(im.graphs, k)
		}
	}
	im.graphs[b] = ig
	return ig, nil
}

// run runs both views' machines at the same time (an error aborts the
// other view's wait at the Exchange) and reads their gradients.
func (ig *imageGraph) run() error {
	if err := runBoth([2]G.VM{ig.views[0].vm, ig.views[1].vm}, ig.ex.Abort); err != nil {
		ig.ex.Reset()
		return err
	}
	for v := range 2 {
		var err error
		if ig.grads[v], err = ig.views[v].bound.Grads(ig.grads[v]); err != nil {
			return err
		}
	}
	return nil
}

func (im *simCLR) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	if len(idx) < 2 {
		return StepResult{}, fmt.Errorf("image step: batch of %d images; BatchNorm needs at least 2", len(idx))
	}
	ig, err := im.graphFor(len(idx))
	if err != nil {
		return StepResult{}, err
	}
	tr := im.ds.train
	for v := range 2 {
		if err := augment.AugmentGather(im.aug, ig.views[v].x.Float32s(), tr.Pixels, idx, tr.C, tr.H, tr.W, rng.Uint64(), runtime.GOMAXPROCS(0)); err != nil {
			return StepResult{}, fmt.Errorf("augment view %d: %w", v+1, err)
		}
	}
	defer func() {
		for v := range 2 {
			ig.views[v].vm.Reset()
		}
	}()
	if err := ig.run(); err != nil {
		return StepResult{}, fmt.Errorf("run step: %w", err)
	}
	// A parameter's gradient is the sum of the two views' (as Gorgonia adds
	// the two terms of a node used twice: float32 addition, commutative).
	im.grads = sumGrads(im.grads, ig.grads[0], ig.grads[1])
	for v := range 2 {
		if err := ig.views[v].bound.CommitStats(); err != nil {
			return StepResult{}, err
		}
	}
	lv, err := scalarOf(ig.views[0].loss.Value())
	if err != nil {
		return StepResult{}, err
	}
	p := ig.views[0].proj.Value().Data().([]float32)
	return StepResult{Loss: lv, Grads: im.grads, Proj: append([]float32(nil), p...), ProjDim: ig.views[0].proj.Shape()[1]}, nil
}

// embedBatch is the batch size of evaluation-mode forward passes.
const embedBatch = 256

func (im *simCLR) Embed(split, which string) (sampler.Embeddings, error) {
	n, pixels, err := im.ds.split(split)
	if err != nil {
		return sampler.Embeddings{}, err
	}
	tr := im.ds.train
	emb, proj, err := im.net.EmbedImages(pixels, n, tr.H, tr.W, embedBatch)
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d %s images: %w", n, split, err)
	}
	switch which {
	case "projection":
		return sampler.Embeddings{N: n, D: im.net.ProjDim(), Data: proj}, nil
	case "encoder":
		return sampler.Embeddings{N: n, D: im.net.EmbedDim(), Data: emb}, nil
	}
	return sampler.Embeddings{}, fmt.Errorf("embed: unknown representation %q (encoder, projection)", which)
}

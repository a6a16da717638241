package train

import (
	"fmt"
	"math/rand/v2"

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
	if err := oneOf("augment.image", c.Augment.Image, imageViewNames(true)...); err != nil {
		errs = append(errs, err.Error())
	}
	return errs
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
	aug, err := imageViews(cfg.Augment.Image, d)
	if err != nil {
		return nil, err
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
	aug    [2]augment.ImageAugmenter // the two views' pipelines (the same)
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
	if err := checkImageBatch(idx); err != nil {
		return StepResult{}, err
	}
	ig, err := im.graphFor(len(idx))
	if err != nil {
		return StepResult{}, err
	}
	if err := im.ds.gatherViews(im.aug, [2][]float32{ig.views[0].x.Float32s(), ig.views[1].x.Float32s()}, idx, rng); err != nil {
		return StepResult{}, err
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

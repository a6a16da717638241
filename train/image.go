package train

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"github.com/batchsampler-go/batchsampler/sampler"
)

func init() { Register("image", imageBuilder{}) }

// ImageDataConfig is data.image: subsets of a real dataset, or the size of
// a generated one (data.source synthetic).
type ImageDataConfig struct {
	// MaxTrain and MaxTest keep the first images of the training and test
	// sets (0 = all).
	MaxTrain int `yaml:"max_train"`
	MaxTest  int `yaml:"max_test"`
	// Generated set (source synthetic): training and test images, classes,
	// side length, pixel noise and the generator's seed.
	Images     int     `yaml:"images"`
	TestImages int     `yaml:"test_images"`
	Classes    int     `yaml:"classes"`
	Size       int     `yaml:"size"`
	Noise      float64 `yaml:"noise"`
	Seed       uint64  `yaml:"seed"`
}

// defaultImageConfig is the image modality's defaults: SimCLR with a
// ResNet-14 (16/32/64 channels, projection 64-64-128), NT-Xent τ = 0.5,
// Adam 1e-3, B = 256, on generated images; linear probe and weighted kNN
// (k = 200, T = 0.1).
func defaultImageConfig() Config {
	c := DefaultConfig()
	c.Modality = "image"
	c.Data = DataConfig{Source: "synthetic", Image: ImageDataConfig{
		Images: 2000, TestImages: 500, Classes: 10, Size: 32, Noise: 0.05, Seed: 1,
	}}
	c.Model = ModelConfig{Kind: "resnet", Arch: "resnet14", ProjDim: 128}
	c.Augment = AugmentConfig{Mode: "random_choice", Image: "simclr"}
	c.Loss = loss.Default("image")
	c.Train = TrainConfig{Epochs: 10, BatchSize: 256, LR: 1e-3, LogEvery: 10, Checkpoint: true}
	c.Eval = EvalConfig{Kind: "linear_probe", KNNK: 200, KNNTemperature: 0.1}
	return c
}

// validateImage checks the keys the image modality reads.
func (c *Config) validateImage() []string {
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	d := c.Data
	add(oneOf("data.source", d.Source, "cifar10", "cifar100", "cifar100-coarse", "idx", "synthetic"))
	if d.Source != "synthetic" && d.Path == "" {
		errs = append(errs, "data.path: required for source "+d.Source+" (the directory of the dataset's files)")
	}
	if d.Image.MaxTrain < 0 || d.Image.MaxTest < 0 {
		errs = append(errs, fmt.Sprintf("data.image.max_train, max_test: must be >= 0 (0 = all), got %d, %d", d.Image.MaxTrain, d.Image.MaxTest))
	}
	if d.Source == "synthetic" {
		add(positive("data.image.images", d.Image.Images))
		add(positive("data.image.test_images", d.Image.TestImages))
		add(positive("data.image.classes", d.Image.Classes))
		add(positive("data.image.size", d.Image.Size))
	}
	add(oneOf("model.kind", c.Model.Kind, "resnet"))
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
	if c.Model.ProjDim < 0 || c.Model.ProjHidden < 0 {
		errs = append(errs, fmt.Sprintf("model.proj_dim, model.proj_hidden: must be >= 0, got %d, %d", c.Model.ProjDim, c.Model.ProjHidden))
	}
	add(oneOf("augment.image", c.Augment.Image, "simclr", "crop_flip", "none"))
	add(oneOf("eval.kind", c.Eval.Kind, "linear_probe", "knn"))
	add(positive("eval.knn_k", c.Eval.KNNK))
	if !(c.Eval.KNNTemperature > 0) {
		errs = append(errs, fmt.Sprintf("eval.knn_temperature: must be > 0, got %v", c.Eval.KNNTemperature))
	}
	if c.Eval.ProbeL2 < 0 {
		errs = append(errs, fmt.Sprintf("eval.probe_l2: must be >= 0 (0 = default), got %v", c.Eval.ProbeL2))
	}
	if c.Train.BatchSize < 2 {
		errs = append(errs, fmt.Sprintf("train.batch_size: BatchNorm needs at least 2 images, got %d", c.Train.BatchSize))
	}
	return errs
}

// imageDataset is a training and a test split with the training set's
// per-channel mean and std; norm holds both splits normalised by them.
type imageDataset struct {
	train, test         *data.ImageSet
	mean, std           []float32
	trainNorm, testNorm []float32
}

func (d *imageDataset) Name() string      { return d.train.Name }
func (d *imageDataset) NumInstances() int { return d.train.N }
func (d *imageDataset) Labels() []int     { return d.train.Labels }
func (d *imageDataset) NumClasses() int   { return d.train.NumClasses }

type imageBuilder struct{}

func (imageBuilder) Load(cfg *Config) (Dataset, error) {
	dc := cfg.Data
	ic := dc.Image
	var (
		tr, te *data.ImageSet
		err    error
	)
	dir := dc.ResolvedPath()
	switch dc.Source {
	case "cifar10":
		if tr, err = data.ReadCIFAR10Dir(dir, true); err == nil {
			te, err = data.ReadCIFAR10Dir(dir, false)
		}
	case "cifar100", "cifar100-coarse":
		fine := dc.Source == "cifar100"
		if tr, err = data.ReadCIFAR100Dir(dir, true, fine); err == nil {
			te, err = data.ReadCIFAR100Dir(dir, false, fine)
		}
	case "idx":
		if tr, err = data.ReadMNISTDir(dir, true); err == nil {
			te, err = data.ReadMNISTDir(dir, false)
		}
	case "synthetic":
		sc := data.SynthImageConfig{Images: ic.Images + ic.TestImages, Classes: ic.Classes, Channels: 3, Height: ic.Size, Width: ic.Size, Noise: ic.Noise}
		var all *data.ImageSet
		if all, err = data.GenerateImages(sc, ic.Seed); err == nil {
			if tr, err = all.Subset(seq(ic.Images)); err == nil {
				te, err = all.Subset(seqFrom(ic.Images, ic.TestImages))
			}
		}
	default:
		err = fmt.Errorf("data.source %q is not an image source (cifar10, cifar100, cifar100-coarse, idx, synthetic)", dc.Source)
	}
	if err != nil {
		if dc.Source != "synthetic" && !filepath.IsAbs(dc.Path) && dc.Root == "" {
			return nil, fmt.Errorf("load dataset (data root %s; set data.root or $BATCHSAMPLER_DATA to change it): %w", dc.DataRoot(), err)
		}
		return nil, fmt.Errorf("load dataset: %w", err)
	}
	if tr, err = firstImages(tr, ic.MaxTrain); err != nil {
		return nil, err
	}
	if te, err = firstImages(te, ic.MaxTest); err != nil {
		return nil, err
	}
	if tr.Labels == nil || te.Labels == nil {
		return nil, fmt.Errorf("load dataset %s: the image modality needs labelled training and test sets (for evaluation only)", tr.Name)
	}
	if tr.C != te.C || tr.H != te.H || tr.W != te.W {
		return nil, fmt.Errorf("load dataset %s: training images are %d×%d×%d, test images %d×%d×%d", tr.Name, tr.C, tr.H, tr.W, te.C, te.H, te.W)
	}
	d := &imageDataset{train: tr, test: te}
	d.mean, d.std = tr.MeanStd()
	for c, s := range d.std {
		if !(s > 0) {
			return nil, fmt.Errorf("load dataset %s: channel %d of the training images is constant (std %v); cannot normalise", tr.Name, c, s)
		}
	}
	// The sets keep their [0,1] pixels for augmentation; evaluation-mode
	// embeddings read normalised copies.
	for _, sp := range []struct {
		set *data.ImageSet
		dst *[]float32
	}{{tr, &d.trainNorm}, {te, &d.testNorm}} {
		c := *sp.set
		c.Pixels = slices.Clone(sp.set.Pixels)
		if err := c.Normalize(d.mean, d.std); err != nil {
			return nil, fmt.Errorf("load dataset: %w", err)
		}
		*sp.dst = c.Pixels
	}
	return d, nil
}

// firstImages returns the first n images of s (all when n is 0 or ≥ N).
func firstImages(s *data.ImageSet, n int) (*data.ImageSet, error) {
	if n == 0 || n >= s.N {
		return s, nil
	}
	return s.Subset(seq(n))
}

func seqFrom(lo, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = lo + i
	}
	return s
}

func (imageBuilder) New(cfg *Config, ds Dataset, seed uint64) (Modality, error) {
	d, ok := ds.(*imageDataset)
	if !ok {
		return nil, fmt.Errorf("image modality needs an image dataset, got %T", ds)
	}
	rc, err := model.ResNetPreset(cfg.Model.Arch)
	if err != nil {
		return nil, fmt.Errorf("model.arch: %w", err)
	}
	if len(cfg.Model.Widths) > 0 {
		rc.Widths, rc.Blocks = cfg.Model.Widths, cfg.Model.Blocks
	}
	rc.InChannels, rc.ProjHidden, rc.ProjDim = d.train.C, cfg.Model.ProjHidden, cfg.Model.ProjDim
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
	return &imageModality{cfg: cfg, ds: d, net: m, aug: aug, graphs: map[int]*imageGraph{}}, nil
}

// imageModality is SimCLR: a ResNet encoder, two augmented views of every
// image, NT-Xent (or another loss of the loss package) on the projections.
// The training graph is compiled once per batch size and re-run.
type imageModality struct {
	cfg    *Config
	ds     *imageDataset
	net    *model.ResNet
	aug    augment.ImageAugmenter
	graphs map[int]*imageGraph
	grads  [][]float32
}

// imageGraph is a compiled training step for one batch size.
type imageGraph struct {
	g      *G.ExprGraph
	bound  *model.ResNetBound
	x      [2]*tensor.Dense
	proj   [2]*G.Node
	loss   *G.Node
	vm     G.VM
	images int
}

func (im *imageModality) NumInstances() int      { return im.ds.train.N }
func (im *imageModality) Labels() []int          { return im.ds.train.Labels }
func (im *imageModality) Params() []*model.Param { return im.net.Params() }

// graphFor returns the compiled step for batches of b images.
func (im *imageModality) graphFor(b int) (*imageGraph, error) {
	if ig := im.graphs[b]; ig != nil {
		return ig, nil
	}
	tr := im.ds.train
	ig := &imageGraph{g: G.NewGraph(), images: b}
	ig.bound = im.net.Bind(ig.g)
	for v := range 2 {
		x, xv := ig.bound.Input(b, tr.H, tr.W)
		ig.x[v] = xv
		emb, err := ig.bound.Encode(x, true)
		if err != nil {
			return nil, fmt.Errorf("encode view %d: %w", v+1, err)
		}
		if ig.proj[v], err = ig.bound.Project(emb); err != nil {
			return nil, fmt.Errorf("project view %d: %w", v+1, err)
		}
	}
	l, err := loss.Build(im.cfg.Loss, ig.proj[0], ig.proj[1])
	if err != nil {
		return nil, fmt.Errorf("loss: %w", err)
	}
	ig.loss = l
	if _, err := G.Grad(l, ig.bound.Learnables()...); err != nil {
		return nil, fmt.Errorf("gradient: %w", err)
	}
	ig.vm = G.NewTapeMachine(ig.g)
	// Keep at most a full and a last partial batch size compiled.
	if len(im.graphs) >= 2 {
		for k, old := range im.graphs {
			old.vm.Close()
			delete(im.graphs, k)
		}
	}
	im.graphs[b] = ig
	return ig, nil
}

func (im *imageModality) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	if len(idx) < 2 {
		return StepResult{}, fmt.Errorf("image step: batch of %d images; BatchNorm needs at least 2", len(idx))
	}
	ig, err := im.graphFor(len(idx))
	if err != nil {
		return StepResult{}, err
	}
	tr := im.ds.train
	for v := range 2 {
		if err := augment.AugmentGather(im.aug, ig.x[v].Float32s(), tr.Pixels, idx, tr.C, tr.H, tr.W, rng.Uint64(), runtime.GOMAXPROCS(0)); err != nil {
			return StepResult{}, fmt.Errorf("augment view %d: %w", v+1, err)
		}
	}
	defer ig.vm.Reset()
	if err := ig.vm.RunAll(); err != nil {
		return StepResult{}, fmt.Errorf("run step: %w", err)
	}
	if im.grads, err = ig.bound.Grads(im.grads); err != nil {
		return StepResult{}, err
	}
	if err := ig.bound.CommitStats(); err != nil {
		return StepResult{}, err
	}
	lv, err := scalarOf(ig.loss.Value())
	if err != nil {
		return StepResult{}, err
	}
	p := ig.proj[0].Value().Data().([]float32)
	return StepResult{Loss: lv, Grads: im.grads, Proj: append([]float32(nil), p...), ProjDim: ig.proj[0].Shape()[1]}, nil
}

// embedBatch is the batch size of evaluation-mode forward passes.
const embedBatch = 256

func (im *imageModality) Embed(which string) (sampler.Embeddings, error) {
	tr := im.ds.train
	emb, proj, err := im.net.EmbedImages(im.ds.trainNorm, tr.N, tr.H, tr.W, embedBatch)
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d training images: %w", tr.N, err)
	}
	if which == "projection" {
		return sampler.Embeddings{N: tr.N, D: im.net.ProjDim(), Data: proj}, nil
	}
	return sampler.Embeddings{N: tr.N, D: im.net.EmbedDim(), Data: emb}, nil
}

// Evaluate embeds the test set with the same encoder and scores the frozen
// representations: top-1 test accuracy of a linear probe trained on emb
// (eval.kind linear_probe) and of the weighted kNN monitor.
func (im *imageModality) Evaluate(emb sampler.Embeddings, seed uint64) (Score, error) {
	te := im.ds.test
	testEmb, _, err := im.net.EmbedImages(im.ds.testNorm, te.N, te.H, te.W, embedBatch)
	if err != nil {
		return Score{}, fmt.Errorf("embed %d test images: %w", te.N, err)
	}
	ec := im.cfg.Eval
	classes := im.ds.train.NumClasses
	knn, err := eval.KNNAccuracy(emb.Data, im.ds.train.Labels, testEmb, te.Labels, emb.D, classes,
		eval.KNNOptions{K: ec.KNNK, Temperature: ec.KNNTemperature})
	if err != nil {
		return Score{}, fmt.Errorf("knn monitor: %w", err)
	}
	if ec.Kind == "knn" {
		return Score{Metric: "knn_accuracy", Value: 100 * knn}, nil
	}
	acc, err := eval.LinearProbe(emb.Data, im.ds.train.Labels, testEmb, te.Labels, emb.D, classes,
		eval.ProbeOptions{L2: ec.ProbeL2})
	if err != nil {
		return Score{}, fmt.Errorf("linear probe: %w", err)
	}
	return Score{Metric: "linear_probe_accuracy", Value: 100 * acc, Detail: map[string]any{"knn_accuracy": 100 * knn}}, nil
}

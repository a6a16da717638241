package train

import (
	"fmt"
	"slices"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
)

func init() {
	RegisterData("image", DataSpec{Validate: validateImageData, Load: loadImages, Defaults: defaultImageConfig,
		Keys: []string{"source", "name", "root", "path", "image"}}, "simclr")
}

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
	c.Optim = defaultOptim()
	c.Train = TrainConfig{Epochs: 10, BatchSize: 256, LR: 1e-3, LogEvery: 10, Checkpoint: true}
	c.Eval = EvalConfig{Kind: "linear_probe", KNNK: 200, KNNTemperature: 0.1}
	return c
}

// validateImageData checks the data keys the image modality reads.
func validateImageData(c *Config) []string {
	var errs problems
	add := errs.add
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
		if d.Image.Classes < 1 || d.Image.Classes > data.NumSynthImageClasses {
			errs = append(errs, fmt.Sprintf("data.image.classes: must be in 1..%d (shape and colour classes of the generated images), got %d", data.NumSynthImageClasses, d.Image.Classes))
		}
		if d.Image.Size < 8 || d.Image.Size > 1024 {
			errs = append(errs, fmt.Sprintf("data.image.size: must be in 8..1024 pixels, got %d", d.Image.Size))
		}
		if !(d.Image.Noise >= 0 && d.Image.Noise <= 1) {
			errs = append(errs, fmt.Sprintf("data.image.noise: must be in [0, 1], got %v", d.Image.Noise))
		}
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
func (d *imageDataset) Splits() []string  { return []string{"train", "test"} }

// TestLabels are the labels of the test split.
func (d *imageDataset) TestLabels() []int { return d.test.Labels }

func loadImages(cfg *Config) (Dataset, error) {
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
		return nil, loadError(dc, err)
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

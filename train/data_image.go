package train

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
)

// imageSources are the allowed values of data.source for images.
var imageSources = []string{"cifar10", "cifar100", "cifar100-coarse", "idx", "stl10", "folder", "synthetic"}

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
	// Pretrain is the set the method trains on (and the sampler draws
	// from): "train" (default) or "train+unlabeled", the labelled training
	// images followed by an unlabeled set (STL-10's unlabeled_X.bin, or
	// the unlabeled/ folder of source folder), as the paper pre-trains on
	// STL-10. The linear probe is still fitted on the labelled training
	// images only. MaxUnlabeled keeps the first unlabeled images (0 = all).
	Pretrain     string `yaml:"pretrain"`
	MaxUnlabeled int    `yaml:"max_unlabeled"`
	// Generated set (source synthetic): training and test images, classes,
	// side length, pixel noise and the generator's seed. Size is also the
	// side the images of sources stl10 (resized from 96 by area averaging,
	// 0 = 96) and folder (resized and centre-cropped) are read at.
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
	c.Model = ModelConfig{Kind: "resnet", ProjDim: 128, ResNetModel: ResNetModel{Arch: "resnet14"}}
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
	add(oneOf("data.source", d.Source, imageSources...))
	add(oneOf("data.image.pretrain", d.Image.Pretrain, "", "train", "train+unlabeled"))
	if d.Image.Pretrain == "train+unlabeled" && d.Source != "stl10" && d.Source != "folder" {
		errs = append(errs, "data.image.pretrain: train+unlabeled needs an unlabeled set: source stl10 or folder (DIR/unlabeled/), not "+d.Source)
	}
	if d.Image.MaxUnlabeled < 0 {
		errs = append(errs, fmt.Sprintf("data.image.max_unlabeled: must be >= 0 (0 = all), got %d", d.Image.MaxUnlabeled))
	}
	switch d.Source {
	case "stl10":
		if d.Image.Size < 0 || d.Image.Size > data.STL10Side {
			errs = append(errs, fmt.Sprintf("data.image.size: STL-10 images are read at 1..%d pixels (0 = %d), got %d", data.STL10Side, data.STL10Side, d.Image.Size))
		}
	case "folder":
		if d.Image.Size < 8 || d.Image.Size > 1024 {
			errs = append(errs, fmt.Sprintf("data.image.size: the folder's images are resized and centre-cropped to size×size, 8..1024 pixels, got %d", d.Image.Size))
		}
	}
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
// With an unlabeled set (data.image.pretrain train+unlabeled) the training
// split is the labelled images followed by the unlabeled ones, and the
// first `labeled` images form the split "labeled" the probe is fitted on.
type imageDataset struct {
	train, test         *data.ImageSet
	mean, std           []float32
	trainNorm, testNorm []float32
	labeled             int
	labels              []int // the labelled images' labels
}

func (d *imageDataset) Name() string      { return d.train.Name }
func (d *imageDataset) NumInstances() int { return d.train.N }
func (d *imageDataset) NumClasses() int   { return d.train.NumClasses }

// Labels are the training split's labels, or nil when it holds unlabeled
// images (the batch diagnostics then have no false-negative ratio).
func (d *imageDataset) Labels() []int {
	if d.labeled < d.train.N {
		return nil
	}
	return d.labels
}

func (d *imageDataset) Splits() []string {
	if d.labeled < d.train.N {
		return []string{"train", "labeled", "test"}
	}
	return []string{"train", "test"}
}

var (
	_ TestLabeler   = (*imageDataset)(nil)
	_ ProbeSplitter = (*imageDataset)(nil)
)

// TestLabels are the labels of the test split.
func (d *imageDataset) TestLabels() []int { return d.test.Labels }

// ProbeSplit is the split a probe is fitted on, with its labels: the
// labelled training images.
func (d *imageDataset) ProbeSplit() (string, []int) {
	if d.labeled < d.train.N {
		return "labeled", d.labels
	}
	return "train", d.labels
}

// split returns the images of a split and their normalised pixels.
func (d *imageDataset) split(name string) (n int, pixels []float32, err error) {
	switch name {
	case "train":
		return d.train.N, d.trainNorm, nil
	case "labeled":
		return d.labeled, d.trainNorm[:d.labeled*d.train.ImageSize()], nil
	case "test":
		return d.test.N, d.testNorm, nil
	}
	return 0, nil, fmt.Errorf("embed: image data has no split %q (%s)", name, strings.Join(d.Splits(), ", "))
}

// loadImages reads the image source data.source names (imageReaders), keeps
// the first max_train/max_test images, checks the splits agree, and builds
// the dataset with its normalised copies (newImageDataset).
func loadImages(cfg *Config) (Dataset, error) {
	dc := cfg.Data
	read, ok := imageReaders[dc.Source]
	if !ok {
		return nil, loadError(dc, fmt.Errorf("data.source %q is not an image source (%s)", dc.Source, strings.Join(imageSources, ", ")))
	}
	sp, err := read(dc.ResolvedPath(), dc.Source, dc.Image)
	if err != nil {
		return nil, loadError(dc, err)
	}
	if sp.train, err = firstImages(sp.train, dc.Image.MaxTrain); err != nil {
		return nil, err
	}
	if sp.test, err = firstImages(sp.test, dc.Image.MaxTest); err != nil {
		return nil, err
	}
	if err := sp.check(); err != nil {
		return nil, err
	}
	return newImageDataset(sp)
}

// imageSplits are the image sets a source reads: labelled training and test
// images, and unlabelled pre-training images (STL-10's, a folder's) or nil.
type imageSplits struct{ train, test, unlabeled *data.ImageSet }

// imageReader reads the splits of one image source from dir; source is the
// data.source value (one reader serves cifar100 and cifar100-coarse).
type imageReader func(dir, source string, ic ImageDataConfig) (imageSplits, error)

// imageReaders holds the reader of each value of imageSources.
var imageReaders = map[string]imageReader{
	"cifar10":         readCIFAR10Splits,
	"cifar100":        readCIFAR100Splits,
	"cifar100-coarse": readCIFAR100Splits,
	"idx":             readIDXSplits,
	"stl10":           readSTL10Splits,
	"folder":          readFolderSplits,
	"synthetic":       generateImageSplits,
}

func readCIFAR10Splits(dir, _ string, _ ImageDataConfig) (sp imageSplits, err error) {
	if sp.train, err = data.ReadCIFAR10Dir(dir, true); err == nil {
		sp.test, err = data.ReadCIFAR10Dir(dir, false)
	}
	return sp, err
}

func readCIFAR100Splits(dir, source string, _ ImageDataConfig) (sp imageSplits, err error) {
	fine := source == "cifar100"
	if sp.train, err = data.ReadCIFAR100Dir(dir, true, fine); err == nil {
		sp.test, err = data.ReadCIFAR100Dir(dir, false, fine)
	}
	return sp, err
}

func readIDXSplits(dir, _ string, _ ImageDataConfig) (sp imageSplits, err error) {
	if sp.train, err = data.ReadMNISTDir(dir, true); err == nil {
		sp.test, err = data.ReadMNISTDir(dir, false)
	}
	return sp, err
}

// readSTL10Splits reads STL-10's train and test splits, and its unlabeled
// split with pretrain train+unlabeled.
func readSTL10Splits(dir, _ string, ic ImageDataConfig) (sp imageSplits, err error) {
	opt := data.STL10Options{Size: ic.Size, Max: ic.MaxTrain}
	if sp.train, err = data.ReadSTL10Dir(dir, "train", opt); err != nil {
		return sp, err
	}
	opt.Max = ic.MaxTest
	if sp.test, err = data.ReadSTL10Dir(dir, "test", opt); err != nil || ic.Pretrain != "train+unlabeled" {
		return sp, err
	}
	opt.Max = ic.MaxUnlabeled
	sp.unlabeled, err = data.ReadSTL10Dir(dir, "unlabeled", opt)
	return sp, err
}

func readFolderSplits(dir, _ string, ic ImageDataConfig) (sp imageSplits, err error) {
	sp.train, sp.test, sp.unlabeled, err = readImageFolders(dir, ic)
	return sp, err
}

// generateImageSplits generates images+test_images synthetic images and
// splits them in that order.
func generateImageSplits(_, _ string, ic ImageDataConfig) (sp imageSplits, err error) {
	sc := data.SynthImageConfig{Images: ic.Images + ic.TestImages, Classes: ic.Classes, Channels: 3, Height: ic.Size, Width: ic.Size, Noise: ic.Noise}
	all, err := data.GenerateImages(sc, ic.Seed)
	if err != nil {
		return sp, err
	}
	if sp.train, err = all.Subset(seq(ic.Images)); err == nil {
		sp.test, err = all.Subset(seqFrom(ic.Images, ic.TestImages))
	}
	return sp, err
}

// check reports splits the image modality cannot use: unlabelled training
// or test images, or splits of different image shapes.
func (sp imageSplits) check() error {
	tr, te, unl := sp.train, sp.test, sp.unlabeled
	if tr.Labels == nil || te.Labels == nil {
		return fmt.Errorf("load dataset %s: the image modality needs labelled training and test sets (for evaluation only)", tr.Name)
	}
	if tr.C != te.C || tr.H != te.H || tr.W != te.W {
		return fmt.Errorf("load dataset %s: training images are %d×%d×%d, test images %d×%d×%d", tr.Name, tr.C, tr.H, tr.W, te.C, te.H, te.W)
	}
	if unl != nil && (unl.C != tr.C || unl.H != tr.H || unl.W != tr.W) {
		return fmt.Errorf("load dataset %s: training images are %d×%d×%d, unlabeled images %d×%d×%d", tr.Name, tr.C, tr.H, tr.W, unl.C, unl.H, unl.W)
	}
	return nil
}

// newImageDataset builds the dataset of checked splits: the unlabelled
// images appended to the training set (after its labelled ones), the
// per-channel mean and std of that set, and normalised copies of the
// training and test pixels for evaluation-mode embeddings (the sets keep
// their [0,1] pixels for augmentation).
func newImageDataset(sp imageSplits) (*imageDataset, error) {
	tr, te := sp.train, sp.test
	d := &imageDataset{train: tr, test: te, labeled: tr.N, labels: tr.Labels}
	if unl := sp.unlabeled; unl != nil {
		all := *tr
		all.N, all.Labels = tr.N+unl.N, nil
		all.Pixels = append(slices.Clip(tr.Pixels), unl.Pixels...)
		d.train = &all
	}
	d.mean, d.std = d.train.MeanStd()
	for c, s := range d.std {
		if !(s > 0) {
			return nil, fmt.Errorf("load dataset %s: channel %d of the training images is constant (std %v); cannot normalise", tr.Name, c, s)
		}
	}
	for _, sp := range []struct {
		set *data.ImageSet
		dst *[]float32
	}{{d.train, &d.trainNorm}, {te, &d.testNorm}} {
		c := *sp.set
		c.Pixels = slices.Clone(sp.set.Pixels)
		if err := c.Normalize(d.mean, d.std); err != nil {
			return nil, fmt.Errorf("load dataset: %w", err)
		}
		*sp.dst = c.Pixels
	}
	return d, nil
}

// readImageFolders reads source folder: DIR/train and DIR/test (or
// DIR/val) in torchvision's ImageFolder layout, and with pretrain
// train+unlabeled every image under DIR/unlabeled.
func readImageFolders(dir string, ic ImageDataConfig) (tr, te, unl *data.ImageSet, err error) {
	opt := data.FolderOptions{Size: ic.Size, Max: ic.MaxTrain}
	if tr, err = data.ReadImageFolder(filepath.Join(dir, "train"), opt); err != nil {
		return nil, nil, nil, err
	}
	test := filepath.Join(dir, "test")
	if _, serr := os.Stat(test); serr != nil {
		if _, verr := os.Stat(filepath.Join(dir, "val")); verr != nil {
			return nil, nil, nil, fmt.Errorf("read image folders in %s: neither test/ nor val/ exists: expected train/ and test/ (or val/), each with one sub-folder per class", dir)
		}
		test = filepath.Join(dir, "val")
	}
	opt.Max = ic.MaxTest
	if te, err = data.ReadImageFolder(test, opt); err != nil {
		return nil, nil, nil, err
	}
	if !slices.Equal(tr.ClassNames, te.ClassNames) {
		return nil, nil, nil, fmt.Errorf("read image folders in %s: train/ has classes %v, %s has %v: expected the same class folders", dir, tr.ClassNames, filepath.Base(test), te.ClassNames)
	}
	if ic.Pretrain == "train+unlabeled" {
		opt.Max = ic.MaxUnlabeled
		if unl, err = data.ReadUnlabeledImageFolder(filepath.Join(dir, "unlabeled"), opt); err != nil {
			return nil, nil, nil, err
		}
	}
	tr.Name, te.Name = filepath.Base(dir), filepath.Base(dir)
	return tr, te, unl, nil
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

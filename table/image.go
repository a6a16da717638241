package table

import (
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/train"
)

// The blocks of the image table: SimCLR with the NT-Xent loss, with the DCL
// and HCL losses (the paper's image table: SimCLR's views and in-batch
// negatives, the loss changed), and MoCo v3 (the paper's other vision
// method). Each has the Uniform, kNN Sampler and BatchSampler rows.
// BlockDCL and BlockHCL are shared with the graph table.
const (
	BlockSimCLR = "simclr"
	BlockMoCoV3 = "mocov3"
	// BlockUntrained is the reference row of every dataset: the encoder at
	// its random initialisation (train.epochs 0), scored by the same
	// protocol, so a trained row's gain over it is the training's.
	BlockUntrained = "untrained"
)

// ImageBlocks lists the image table's blocks in the paper's row order.
var ImageBlocks = []string{BlockSimCLR, BlockDCL, BlockHCL, BlockMoCoV3}

// imageBlockTitle is an image block's name in the table.
var imageBlockTitle = map[string]string{BlockSimCLR: "SimCLR", BlockDCL: "DCL", BlockHCL: "HCL", BlockMoCoV3: "MoCo v3"}

// The kinds of image dataset the table finds under a data root, by layout.
const (
	ImageCIFAR10  = "cifar10"  // CIFAR-10 binary version: data_batch_*.bin, test_batch*.bin
	ImageCIFAR100 = "cifar100" // CIFAR-100 binary version: train.bin, test.bin
	ImageIDX      = "idx"      // MNIST-style IDX files (Fashion-MNIST): train-images-idx3-ubyte[.gz] …
	ImageSTL10    = "stl10"    // STL-10 binary version: train_X.bin, test_X.bin, unlabeled_X.bin
	ImageFolder   = "folder"   // train/ and test/ (or val/), one sub-folder per class (ImageNet-100, your own)
)

// DebianFashionMNIST is where Debian's dataset-fashion-mnist package
// installs Fashion-MNIST; the image table looks there besides the data root.
const DebianFashionMNIST = "/usr/share/datasets/fashion-mnist"

// ImageData is an image dataset found for the table.
type ImageData struct {
	// Name is the table's column: the dataset's directory name.
	Name string
	// Kind is one of ImageCIFAR10 … ImageFolder (train's data.source,
	// except ImageFolder's source is "folder" too).
	Kind string
	// Path is data.path: relative to the data root (forward slashes) or
	// absolute (DebianFashionMNIST, a folder named by path).
	Path string
	// Train is the number of training images (what the method trains on
	// and the sampler draws from), Classes the number of classes (0:
	// unknown until read).
	Train, Classes int
	// Paper is the paper's column this dataset stands for ("" for none):
	// CIFAR10, CIFAR100, STL10 or ImageNet-100.
	Paper string
}

// ImageSettings are one dataset's settings at a 2-core scale, and what
// they scale down from (the paper's vision appendix).
type ImageSettings struct {
	Arch      string // ResNet preset (model.arch)
	Size      int    // image side read at (0: native)
	Epochs    int
	BatchSize int
	// RefreshEvery is t, the steps between two builds of the samplers'
	// graphs; M and K BatchSampler's candidates and neighbours; Alpha its
	// restart probability (start → end; equal: constant).
	RefreshEvery       int
	M, K               int
	AlphaStart, Alpha  float64
	EvalEvery          int
	Pretrain           string // data.image.pretrain ("" or train+unlabeled)
	Paper              string // the paper's setting it scales down from
	MoCoWarmupEpochs   int    // MoCo v3's warm-up (epochs)
	MoCoProjectionWide int    // MoCo v3's projector and predictor hidden width
}

// SubsetMaxTrain is the size up to which a CIFAR-10 layout is run with the
// recipe of configs/simclr-cifar10-subset.yaml (the shared subset holds
// 5,085 training images): 25 epochs, the graphs rebuilt once an epoch.
const SubsetMaxTrain = 10_000

// FullImageEpochs is the number of epochs of a full-size dataset (tens of
// thousands of images, N/B ≈ 200) at the 2-core scale, chosen from the
// measured cost of a step and of a refresh so that one block (three
// samplers × three seeds) on the 60,000 Fashion-MNIST images costs about
// six hours of 2-core compute (about 0.33 s a step, 12 s a refresh, 43 s an
// evaluation: 5.4 hours estimated), every 4 epochs evaluated for the
// curve: see docs/image-table.md.
const FullImageEpochs = 20

// ImageSettingsFor returns the 2-core settings of a dataset: the paper's
// vision appendix (B = 256, Adam 1e-3, τ = 0.5, 128-d projection; the
// graphs rebuilt every t = 100 steps; RWR with α 0.2 → 0.05; M = 500, K =
// 100 for CIFAR-10, M = 1000 for CIFAR-100 and STL-10; ImageNet-100: M =
// 1000, K = 500, α 0.1) with a ResNet-8 or a narrow ResNet-18 instead of
// ResNet-50, and epochs cut to a 2-core budget. Datasets the paper does not
// have (Fashion-MNIST, your own folder) get CIFAR-10's settings. t is at
// most one epoch's batches, so a small dataset's graph is still rebuilt
// once an epoch.
func ImageSettingsFor(d ImageData) ImageSettings {
	s := ImageSettings{Arch: "resnet8", BatchSize: 256, Epochs: FullImageEpochs, RefreshEvery: 100, M: 500, K: 100,
		AlphaStart: 0.2, Alpha: 0.05, EvalEvery: 4, MoCoWarmupEpochs: 1, MoCoProjectionWide: 1024}
	paper := "ResNet-50, 1000 epochs, 32×32, B 256, t 100, M 500, K 100"
	switch d.Kind {
	case ImageCIFAR100:
		s.M = 1000
		paper = "ResNet-50, 1000 epochs, 32×32, B 256, t 100, M 1000, K 100"
	case ImageSTL10:
		s.M, s.Size, s.Pretrain = 1000, 32, "train+unlabeled"
		paper = "ResNet-50, 1000 epochs, 96×96, train+unlabeled, B 256, t 100, M 1000, K 100"
	case ImageIDX:
		paper = "not in the paper: CIFAR-10's settings (ResNet-50, 1000 epochs, B 256, t 100, M 500, K 100)"
	case ImageFolder:
		s.Size = 32
		paper = "not in the paper: CIFAR-10's settings (ResNet-50, 1000 epochs, B 256, t 100, M 500, K 100)"
		if d.Paper == "ImageNet-100" {
			s.Arch, s.Size, s.Epochs, s.M, s.K, s.AlphaStart, s.Alpha = "resnet18-narrow", 64, 10, 1000, 500, 0.1, 0.1
			s.MoCoWarmupEpochs, s.MoCoProjectionWide = 2, 2048
			paper = "ResNet-50, 100 epochs, 224×224, B 512, LARS, τ 0.1, t 100, M 1000, K 500, α 0.1"
		}
	}
	s.Paper = paper
	if d.Kind == ImageCIFAR10 && d.Train > 0 && d.Train <= SubsetMaxTrain {
		// The recipe of configs/simclr-cifar10-subset.yaml.
		s.Epochs, s.RefreshEvery, s.EvalEvery = 25, 20, 5
	}
	if d.Train > 0 {
		if bpe := (d.Train + s.BatchSize - 1) / s.BatchSize; s.RefreshEvery > bpe {
			s.RefreshEvery = bpe
		}
		if s.M >= d.Train {
			s.M = d.Train - 1
		}
		if s.K > s.M {
			s.K = s.M
		}
	}
	return s
}

// imageKind tells the kind of image dataset dir holds ("" for none).
func imageKind(dir string) string {
	has := func(pattern string) bool {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		return len(m) > 0
	}
	isDir := func(name string) bool {
		st, err := os.Stat(filepath.Join(dir, name))
		return err == nil && st.IsDir()
	}
	switch {
	case has("data_batch_*.bin") && has("test_batch*.bin"):
		return ImageCIFAR10
	case has("train.bin") && has("test.bin"):
		return ImageCIFAR100
	case has("train-images-idx3-ubyte*") && has("t10k-images-idx3-ubyte*"):
		return ImageIDX
	case has("train_X.bin") && has("test_X.bin"):
		return ImageSTL10
	case isDir("train") && (isDir("test") || isDir("val")):
		return ImageFolder
	}
	return ""
}

// countImages counts the training images of a dataset of kind at dir
// without decoding them (file sizes, an IDX header, folder listings); STL-10
// counts train+unlabeled, what the table pre-trains on.
func countImages(dir, kind string) (int, error) {
	size := func(pattern string) (int64, error) {
		paths, _ := filepath.Glob(filepath.Join(dir, pattern))
		var n int64
		for _, p := range paths {
			st, err := os.Stat(p)
			if err != nil {
				return 0, err
			}
			n += st.Size()
		}
		return n, nil
	}
	switch kind {
	case ImageCIFAR10, ImageCIFAR100:
		pattern, rec := "data_batch_*.bin", int64(1+data.CIFARImageBytes)
		if kind == ImageCIFAR100 {
			pattern, rec = "train.bin", int64(2+data.CIFARImageBytes)
		}
		n, err := size(pattern)
		return int(n / rec), err
	case ImageSTL10:
		n, err := size("train_X.bin")
		if err != nil {
			return 0, err
		}
		u, err := size("unlabeled_X.bin")
		return int((n + u) / (96 * 96 * 3)), err
	case ImageIDX:
		return idxCount(dir)
	case ImageFolder:
		n := 0
		classes, err := os.ReadDir(filepath.Join(dir, "train"))
		if err != nil {
			return 0, err
		}
		for _, c := range classes {
			if !c.IsDir() {
				continue
			}
			files, err := os.ReadDir(filepath.Join(dir, "train", c.Name()))
			if err != nil {
				return 0, err
			}
			for _, f := range files {
				switch strings.ToLower(filepath.Ext(f.Name())) {
				case ".png", ".jpg", ".jpeg":
					n++
				}
			}
		}
		return n, nil
	}
	return 0, fmt.Errorf("count images in %s: unknown kind %q", dir, kind)
}

// idxCount reads the image count of an IDX training file's header.
func idxCount(dir string) (int, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "train-images-idx3-ubyte*"))
	if len(paths) == 0 {
		return 0, fmt.Errorf("count images in %s: no train-images-idx3-ubyte[.gz]", dir)
	}
	sort.Strings(paths)
	f, err := os.Open(paths[0])
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(paths[0], ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return 0, fmt.Errorf("count images in %s: %w", paths[0], err)
		}
		defer z.Close()
		r = z
	}
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, fmt.Errorf("count images in %s: header: %w", paths[0], err)
	}
	return int(binary.BigEndian.Uint32(hdr[4:])), nil
}

// paperImageColumn is the paper's column a dataset stands for.
func paperImageColumn(name, kind string) string {
	switch kind {
	case ImageCIFAR10:
		return "CIFAR10"
	case ImageCIFAR100:
		return "CIFAR100"
	case ImageSTL10:
		return "STL10"
	case ImageFolder:
		if n := strings.ToLower(strings.ReplaceAll(name, "-", "")); n == "imagenet100" {
			return "ImageNet-100"
		}
	}
	return ""
}

// LocateImages finds an image dataset: name is a directory under root (or
// an absolute path, or DebianFashionMNIST's base name "fashion-mnist" when
// it is not under root). The error says where it looked and what it expected.
func LocateImages(root, name string) (ImageData, error) {
	if name == "" || name == "." || name == ".." {
		return ImageData{}, fmt.Errorf("dataset %q: expected a directory under the data root or an absolute path", name)
	}
	candidates := []string{filepath.Join(root, filepath.FromSlash(name))}
	rel := filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		candidates, rel = []string{name}, name
	} else if name == filepath.Base(DebianFashionMNIST) {
		candidates = append(candidates, DebianFashionMNIST)
	}
	for i, dir := range candidates {
		kind := imageKind(dir)
		if kind == "" {
			continue
		}
		n, err := countImages(dir, kind)
		if err != nil {
			return ImageData{}, fmt.Errorf("dataset %s: %w", name, err)
		}
		p := rel
		if i > 0 {
			p = dir
		}
		base := filepath.Base(dir)
		return ImageData{Name: base, Kind: kind, Path: p, Train: n, Paper: paperImageColumn(base, kind)}, nil
	}
	return ImageData{}, fmt.Errorf("dataset %s: not found in %s (expected the CIFAR-10 or CIFAR-100 binary files, Fashion-MNIST's IDX files, STL-10's binary files, or train/ and test/ folders of class folders; get one with go run ./cmd/download)",
		name, strings.Join(candidates, " or "))
}

// DiscoverImages lists the image datasets under root (each sub-directory
// whose files are of a kind the table reads) and Debian's Fashion-MNIST,
// in the paper's column order first (CIFAR10, CIFAR100, STL10,
// ImageNet-100), then by name.
func DiscoverImages(root string) []ImageData {
	var out []ImageData
	seen := map[string]bool{}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if d, err := LocateImages(root, e.Name()); err == nil {
			out = append(out, d)
			seen[d.Name] = true
		}
	}
	if !seen[filepath.Base(DebianFashionMNIST)] {
		if d, err := LocateImages(root, filepath.Base(DebianFashionMNIST)); err == nil {
			out = append(out, d)
		}
	}
	order := []string{"CIFAR10", "CIFAR100", "STL10", "ImageNet-100"}
	rank := func(d ImageData) int {
		if i := slices.Index(order, d.Paper); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out, func(a, b ImageData) int {
		if r := rank(a) - rank(b); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// ImageConfigYAML is the config of one block on one image dataset with its
// settings (ImageSettingsFor): SimCLR, DCL and HCL train the ResNet with
// SimCLR's views and in-batch negatives (NT-Xent τ = 0.5; DCL and HCL with
// τ⁺ = 0.1, HCL β = 1), Adam 1e-3; MoCo v3 its recipe of
// configs/mocov3-cifar10-subset.yaml (projector and predictor 1024,
// momentum 0.99 → 1, τ = 0.2, LARS 0.3 with a warm-up epoch then cosine).
// BlockUntrained is SimCLR's config with no epoch and the Uniform row only.
// Every block has three seeds; root is written as data.root unless empty.
func ImageConfigYAML(block string, d ImageData, root string) (string, error) {
	s := ImageSettingsFor(d)
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s-%s\nmodality: image\n", block, strings.ToLower(d.Name))
	if block == BlockMoCoV3 {
		b.WriteString("method: mocov3\n")
	}
	var extra []string
	if root != "" {
		extra = append(extra, fmt.Sprintf("root: %q", root))
	}
	var img []string
	if s.Size > 0 && (d.Kind == ImageSTL10 || d.Kind == ImageFolder) {
		img = append(img, fmt.Sprintf("size: %d", s.Size))
	}
	if s.Pretrain != "" {
		img = append(img, "pretrain: "+s.Pretrain)
	}
	if len(img) > 0 {
		extra = append(extra, "image: {"+strings.Join(img, ", ")+"}")
	}
	source := d.Kind
	tail := ""
	if len(extra) > 0 {
		tail = ", " + strings.Join(extra, ", ")
	}
	fmt.Fprintf(&b, "data: {source: %s, path: %q%s}\n", source, d.Path, tail)
	epochs, lr := s.Epochs, "0.001"
	switch block {
	case BlockSimCLR, BlockDCL, BlockHCL, BlockUntrained:
		fmt.Fprintf(&b, "model: {kind: resnet, arch: %s, proj_dim: 128}\n", s.Arch)
		b.WriteString("augment: {image: simclr}\n")
		switch block {
		case BlockDCL:
			b.WriteString("loss: {kind: dcl, form: simclr, temperature: 0.5, tau_plus: 0.1}\n")
		case BlockHCL:
			b.WriteString("loss: {kind: hcl, form: simclr, temperature: 0.5, tau_plus: 0.1, beta: 1.0}\n")
		default:
			b.WriteString("loss: {kind: infonce, form: simclr, temperature: 0.5}\n")
		}
	case BlockMoCoV3:
		w := s.MoCoProjectionWide
		fmt.Fprintf(&b, "model: {kind: resnet, arch: %s, proj_hidden: %d, proj_dim: 128, pred_hidden: %d, momentum: 0.99, projection: query}\n", s.Arch, w, w)
		b.WriteString("augment: {image: mocov3}\n")
		b.WriteString("loss: {kind: infonce, form: simcse, temperature: 0.2}\n")
		fmt.Fprintf(&b, "optim: {kind: lars, weight_decay: 1e-5, trust_coefficient: 0.02, momentum: 0.9, schedule: {kind: warmup_cosine, warmup_epochs: %d}}\n", s.MoCoWarmupEpochs)
		lr = "0.3"
	default:
		return "", fmt.Errorf("block %q: expected one of %s", block, strings.Join(ImageBlocks, ", "))
	}
	if block == BlockUntrained {
		b.WriteString("samplers:\n  - {kind: uniform}\n")
		epochs = 0
	} else {
		alpha := fmt.Sprintf("{start: %g, end: %g}", s.AlphaStart, s.Alpha)
		fmt.Fprintf(&b, `samplers:
  - {kind: uniform}
  - {kind: knn, refresh_every: %d}
  - {kind: batchsampler, m: %d, k: %d, walk: rwr, graph: proximity, alpha: %s, refresh_every: %d}
`, s.RefreshEvery, s.M, s.K, alpha, s.RefreshEvery)
	}
	fmt.Fprintf(&b, "train: {epochs: %d, batch_size: %d, lr: %s, log_every: 5, eval_every: %d}\n", epochs, s.BatchSize, lr, s.EvalEvery)
	b.WriteString("eval: {kind: linear_probe, knn_k: 200, knn_temperature: 0.1}\nseeds: [0, 1, 2]\n")
	return b.String(), nil
}

// ImageConfig is ImageConfigYAML parsed by train.ParseConfig with the
// overrides sets (key.path=value, as cmd/train's -set).
func ImageConfig(block string, d ImageData, root string, sets []string) (train.Config, error) {
	y, err := ImageConfigYAML(block, d, root)
	if err != nil {
		return train.Config{}, err
	}
	if block == BlockUntrained {
		// Whatever the overrides, the reference is the initial encoder
		// with the Uniform row alone.
		sets = append(slices.Clip(sets), "train.epochs=0", "samplers=[{kind: uniform}]")
	}
	cfg, err := train.ParseConfig([]byte(y), sets)
	if err != nil {
		return train.Config{}, fmt.Errorf("%s on %s: %w", block, d.Name, err)
	}
	return cfg, nil
}

// PlanImages lays out the image table: the untrained reference and every
// block on every image dataset found under the data root (opt.Datasets:
// directory names under the root or absolute paths; empty: DiscoverImages),
// with each dataset's settings (ImageSettingsFor) and opt.Sets on top. A
// named dataset that is not there is skipped with a line saying so; the
// kinds the table looks for and did not find are listed in Skipped too.
func PlanImages(opt PlanOptions, defaultRoot string) (*Plan, error) {
	blocks := opt.Blocks
	if len(blocks) == 0 {
		blocks = ImageBlocks
	}
	for _, b := range blocks {
		if !slices.Contains(ImageBlocks, b) {
			return nil, fmt.Errorf("method %q: expected one of %s", b, strings.Join(ImageBlocks, ", "))
		}
	}
	root := opt.Root
	if root == "" {
		root = defaultRoot
	}
	p := &Plan{Root: root, Images: map[string]ImageData{}}
	var found []ImageData
	if len(opt.Datasets) == 0 {
		found = DiscoverImages(root)
		p.Skipped = absentImageKinds(root, found)
		if len(found) == 0 {
			return nil, fmt.Errorf("no image dataset under %s nor at %s:\n%s", root, DebianFashionMNIST, strings.Join(p.Skipped, "\n"))
		}
	} else {
		for _, name := range opt.Datasets {
			d, err := LocateImages(root, name)
			if err != nil {
				p.Skipped = append(p.Skipped, err.Error())
				continue
			}
			found = append(found, d)
		}
	}
	for _, d := range found {
		if _, dup := p.Images[d.Name]; dup {
			return nil, fmt.Errorf("dataset %s: named twice (two datasets in directories of the same name)", d.Name)
		}
		p.Images[d.Name] = d
		for _, b := range append([]string{BlockUntrained}, blocks...) {
			cfg, err := ImageConfig(b, d, opt.Root, opt.Sets)
			if err != nil {
				return nil, err
			}
			p.Cells = append(p.Cells, cellrun.Cell{Dataset: d.Name, Block: b, Config: cfg, Dir: filepath.Join(d.Name, b)})
		}
	}
	if len(p.Cells) == 0 {
		return nil, fmt.Errorf("no dataset to run:\n%s", strings.Join(p.Skipped, "\n"))
	}
	return p, nil
}

// absentImageKinds says, one line each, which of the paper's image
// datasets (and Fashion-MNIST) were not found, and how to get them.
func absentImageKinds(root string, found []ImageData) []string {
	var out []string
	have := func(pred func(ImageData) bool) bool { return slices.ContainsFunc(found, pred) }
	if !have(func(d ImageData) bool { return d.Kind == ImageCIFAR10 && d.Train >= 50_000 }) {
		out = append(out, fmt.Sprintf("CIFAR-10 (full, 50,000 images): absent under %s (get it with go run ./cmd/download -dataset cifar-10)", root))
	}
	if !have(func(d ImageData) bool { return d.Kind == ImageCIFAR100 }) {
		out = append(out, fmt.Sprintf("CIFAR-100: absent under %s (get it with go run ./cmd/download -dataset cifar-100)", root))
	}
	if !have(func(d ImageData) bool { return d.Kind == ImageSTL10 }) {
		out = append(out, fmt.Sprintf("STL-10: absent under %s (get it with go run ./cmd/download -dataset stl-10)", root))
	}
	if !have(func(d ImageData) bool { return d.Paper == "ImageNet-100" }) {
		out = append(out, fmt.Sprintf("ImageNet-100: absent under %s (expected a folder imagenet100/ with train/ and val/ class folders; see docs/image-table.md)", root))
	}
	if !have(func(d ImageData) bool { return d.Kind == ImageIDX }) {
		out = append(out, fmt.Sprintf("Fashion-MNIST: absent under %s and at %s (apt-get install dataset-fashion-mnist)", root, DebianFashionMNIST))
	}
	return out
}

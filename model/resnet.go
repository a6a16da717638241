package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ResNetConfig sizes a CIFAR-style ResNet: a 3×3 stem convolution (stride
// 1, no max-pool), stages of BasicBlocks (the first block of every stage
// after the first halves the resolution), global average pooling, and a
// projection head Linear → ReLU → Linear. Zero fields take their defaults.
//
// Depths in the usual CIFAR naming: Blocks {1,1,1} is ResNet-8, {2,2,2}
// ResNet-14, {3,3,3} ResNet-20 (6n+2 layers), all with Widths {16,32,64};
// Widths {32,64,128,256} with Blocks {2,2,2,2} is a narrow ResNet-18.
type ResNetConfig struct {
	InChannels int   // image channels; default 3
	Stem       int   // stem width; default Widths[0]
	Widths     []int // stage widths; default {16, 32, 64}
	Blocks     []int // BasicBlocks per stage; default 2 per stage
	ProjHidden int   // projection hidden width; default EmbedDim
	ProjDim    int   // projection output; default 128
	// ImageNetStem replaces the CIFAR stem (3×3 convolution, stride 1, no
	// pooling) by torchvision's ResNet stem: a 7×7 convolution with stride
	// 2 and padding 3, BatchNorm, ReLU and a 3×3 max-pool with stride 2 and
	// padding 1 (a quarter of the resolution: for 96-pixel and larger images).
	ImageNetStem bool
	// Winograd computes the 3×3 stride-1 convolutions with 8 or more
	// channels in and out by Winograd's F(2×2, 3×3) (ops.ConvOpts.Winograd):
	// the forward pass, dX and dW with 16 multiplications per 2×2 output
	// tile and channel pair instead of 36. Same function, other rounding.
	Winograd bool
	// NoHead leaves the projection head out (a method that brings its own
	// heads, e.g. MoCo v3's MLPs): Params holds the encoder only, Project
	// is an error and EmbedImages returns no projections.
	NoHead bool
	// BNEps and BNMomentum configure every BatchNorm (defaults 1e-5 and
	// 0.1, PyTorch's; momentum is the weight of the new batch statistics).
	BNEps, BNMomentum float64
	// Float64 makes parameters and activations float64 (gradient checks).
	Float64 bool
}

// ResNetPreset returns the configuration of a named architecture:
// "resnet8", "resnet14", "resnet20" (16/32/64 channels) or "resnet18-narrow"
// (32/64/128/256 channels, two blocks per stage).
func ResNetPreset(name string) (ResNetConfig, error) {
	switch name {
	case "resnet8":
		return ResNetConfig{Widths: []int{16, 32, 64}, Blocks: []int{1, 1, 1}}, nil
	case "resnet14", "":
		return ResNetConfig{Widths: []int{16, 32, 64}, Blocks: []int{2, 2, 2}}, nil
	case "resnet20":
		return ResNetConfig{Widths: []int{16, 32, 64}, Blocks: []int{3, 3, 3}}, nil
	case "resnet18-narrow":
		return ResNetConfig{Widths: []int{32, 64, 128, 256}, Blocks: []int{2, 2, 2, 2}}, nil
	}
	return ResNetConfig{}, fmt.Errorf("resnet preset %q: want resnet8, resnet14, resnet20 or resnet18-narrow", name)
}

func (c ResNetConfig) withDefaults() (ResNetConfig, error) {
	if c.InChannels == 0 {
		c.InChannels = 3
	}
	if len(c.Widths) == 0 {
		c.Widths = []int{16, 32, 64}
	}
	if len(c.Blocks) == 0 {
		c.Blocks = make([]int, len(c.Widths))
		for i := range c.Blocks {
			c.Blocks[i] = 2
		}
	}
	c.Widths, c.Blocks = slices.Clone(c.Widths), slices.Clone(c.Blocks)
	if c.Stem == 0 {
		c.Stem = c.Widths[0]
	}
	if c.ProjHidden == 0 {
		c.ProjHidden = c.Widths[len(c.Widths)-1]
	}
	if c.ProjDim == 0 {
		c.ProjDim = 128
	}
	if c.BNEps == 0 {
		c.BNEps = 1e-5
	}
	if c.BNMomentum == 0 {
		c.BNMomentum = 0.1
	}
	switch {
	case c.InChannels < 0 || c.Stem < 0 || c.ProjHidden < 0 || c.ProjDim < 0:
		return c, fmt.Errorf("resnet config: negative size (InChannels %d, Stem %d, ProjHidden %d, ProjDim %d)", c.InChannels, c.Stem, c.ProjHidden, c.ProjDim)
	case len(c.Blocks) != len(c.Widths):
		return c, fmt.Errorf("resnet config: %d stage widths but %d block counts", len(c.Widths), len(c.Blocks))
	case !(c.BNEps > 0) || math.IsInf(c.BNEps, 0):
		return c, fmt.Errorf("resnet config: BNEps = %v, want a finite value > 0", c.BNEps)
	case !(c.BNMomentum > 0 && c.BNMomentum <= 1):
		return c, fmt.Errorf("resnet config: BNMomentum = %v, want in (0, 1]", c.BNMomentum)
	}
	for i := range c.Widths {
		if c.Widths[i] <= 0 || c.Blocks[i] <= 0 {
			return c, fmt.Errorf("resnet config: stage %d has width %d and %d blocks, want both > 0", i, c.Widths[i], c.Blocks[i])
		}
	}
	return c, nil
}

// convBN is a convolution without bias followed by BatchNorm.
type convBN struct {
	w              int // weight index, shape out×in×k×k
	stride, pad, k int
	bn             bnIdx
}

// basicBlock is conv3×3-BN-ReLU-conv3×3-BN plus the shortcut (identity, or
// a 1×1 convolution with BN when the shape changes), then ReLU.
type basicBlock struct {
	c1, c2   convBN
	shortcut *convBN
}

// ResNet is a CIFAR-style residual network with a SimCLR projection head.
// Convolution weights are out×in×kh×kw (PyTorch's layout); Linear weights
// are in×out, so that a layer is x·W + b.
type ResNet struct {
	cfg    ResNetConfig
	params []*Param
	stem   convBN
	blocks []basicBlock
	// head is Linear(EmbedDim, ProjHidden) → ReLU → Linear(ProjHidden, ProjDim).
	head headIdx
}

// NewResNet builds a ResNet initialised as torchvision does: convolution
// weights from N(0, 2/fan_out) (Kaiming normal, fan-out mode), BatchNorm
// γ = 1, β = 0, running mean 0, running variance 1, and the head's Linear
// layers from U(−1/√fan_in, 1/√fan_in). The draws come from a PCG source
// seeded with seed, in the order of Params.
func NewResNet(cfg ResNetConfig, seed uint64) (*ResNet, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &ResNet{cfg: cfg}
	p := &paramBuilder{dt: m.dtype(), rng: rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))}
	newConvBN := func(prefix, bnName string, in, out, k, stride int) convBN {
		c := convBN{stride: stride, pad: k / 2, k: k}
		c.w = p.add(prefix+".weight", true, out, in, k, k)
		std := math.Sqrt(2 / float64(out*k*k))
		fill(p.value(c.w), func() float64 { return p.rng.NormFloat64() * std })
		c.bn = p.batchNorm(bnName+".", out)
		return c
	}
	if cfg.ImageNetStem {
		m.stem = newConvBN("conv1", "bn1", cfg.InChannels, cfg.Stem, 7, 2)
	} else {
		m.stem = newConvBN("conv1", "bn1", cfg.InChannels, cfg.Stem, 3, 1)
	}
	in := cfg.Stem
	for s, w := range cfg.Widths {
		for j := 0; j < cfg.Blocks[s]; j++ {
			stride := 1
			if s > 0 && j == 0 {
				stride = 2
			}
			pre := fmt.Sprintf("layer%d.%d.", s+1, j)
			var b basicBlock
			b.c1 = newConvBN(pre+"conv1", pre+"bn1", in, w, 3, stride)
			b.c2 = newConvBN(pre+"conv2", pre+"bn2", w, w, 3, 1)
			if stride != 1 || in != w {
				sc := newConvBN(pre+"shortcut.0", pre+"shortcut.1", in, w, 1, stride)
				b.shortcut = &sc
			}
			m.blocks = append(m.blocks, b)
			in = w
		}
	}
	if !cfg.NoHead {
		m.head = p.head(m.EmbedDim(), cfg.ProjHidden, cfg.ProjDim)
	}
	m.params = p.params
	return m, nil
}

func (m *ResNet) dtype() tensor.Dtype {
	if m.cfg.Float64 {
		return tensor.Float64
	}
	return tensor.Float32
}

// Config returns the configuration with defaults filled in.
func (m *ResNet) Config() ResNetConfig { return m.cfg }

// Params returns the parameters and buffers in a stable order with unique,
// PyTorch-like names (conv1.weight, bn1.{weight,bias,running_mean,
// running_var}, layerS.B.conv1.weight, …, layerS.B.shortcut.{0,1}.*,
// proj.{0,2}.{weight,bias}). The slice is shared with the model.
func (m *ResNet) Params() []*Param { return m.params }

// EmbedDim returns the size of the pooled representation, the last stage's width.
func (m *ResNet) EmbedDim() int { return m.cfg.Widths[len(m.cfg.Widths)-1] }

// ProjDim returns the size of the projection head's output (0 without a head).
func (m *ResNet) ProjDim() int {
	if m.cfg.NoHead {
		return 0
	}
	return m.cfg.ProjDim
}

// ForwardFLOPs returns the multiply-adds ×2 of one image's forward pass
// through the encoder and head, for h×w inputs.
func (m *ResNet) ForwardFLOPs(h, w int) int64 {
	var f int64
	conv := func(c convBN, in, out, hi, wi int) (int, int) {
		ho := (hi+2*c.pad-c.k)/c.stride + 1
		wo := (wi+2*c.pad-c.k)/c.stride + 1
		f += 2 * int64(ho*wo) * int64(out*in*c.k*c.k)
		return ho, wo
	}
	in := m.cfg.InChannels
	h, w = conv(m.stem, in, m.cfg.Stem, h, w)
	if m.cfg.ImageNetStem {
		h, w = (h-1)/2+1, (w-1)/2+1 // max-pool 3×3, stride 2, padding 1
	}
	in = m.cfg.Stem
	k := 0
	for s, wd := range m.cfg.Widths {
		for j := 0; j < m.cfg.Blocks[s]; j++ {
			b := m.blocks[k]
			k++
			if b.shortcut != nil {
				conv(*b.shortcut, in, wd, h, w)
			}
			h, w = conv(b.c1, in, wd, h, w)
			conv(b.c2, wd, wd, h, w)
			in = wd
		}
	}
	if !m.cfg.NoHead {
		f += 2 * int64(m.EmbedDim()*m.cfg.ProjHidden+m.cfg.ProjHidden*m.cfg.ProjDim)
	}
	return f
}

// ResNetBound is a ResNet bound into one Gorgonia expression graph. Its
// parameter nodes share their values with the model's Params, so an
// optimiser step on the Params is seen by the next run of the graph. The
// graph may be compiled once and run many times (fixed batch size): write
// new pixels into the input tensors, run, read Grads, call CommitStats.
//
// A ResNetBound is used by one goroutine at a time.
type ResNetBound struct {
	binding
	m *ResNet
	n int
}

// Bind prepares m for the expression graph g. Call it once per graph.
func (m *ResNet) Bind(g *gorgonia.ExprGraph) *ResNetBound {
	return &ResNetBound{binding: newBinding(g, m.params), m: m}
}

// Input adds an input node of n images (n×C×h×w) and returns it with its
// backing tensor: write pixels into the tensor's data before every run.
func (b *ResNetBound) Input(n, h, w int) (*gorgonia.Node, *tensor.Dense) {
	v := tensor.New(tensor.Of(b.m.dtype()), tensor.WithShape(n, b.m.cfg.InChannels, h, w))
	x := gorgonia.NewTensor(b.g, b.m.dtype(), 4, gorgonia.WithShape(n, b.m.cfg.InChannels, h, w),
		gorgonia.WithName(fmt.Sprintf("images.%d", b.n)), gorgonia.WithValue(v))
	b.n++
	return x, v
}

// convBN adds conv → BN (→ ReLU when relu, fused into the BN op) and
// records the BN call.
func (b *ResNetBound) convBN(x *gorgonia.Node, c convBN, train, relu, noGradX bool) (*gorgonia.Node, error) {
	name := b.m.params[c.w].Name
	y, err := ops.Conv2D(x, b.node(c.w), ops.ConvOpts{Stride: c.stride, Pad: c.pad, NoInputGrad: noGradX, Winograd: b.m.cfg.Winograd})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b.batchNorm(ops.BatchNorm2D, y, c.bn, ops.BNConfig{Eps: b.m.cfg.BNEps, Training: train, ReLU: relu})
}

// Encode adds the encoder applied to x (n×C×h×w) and returns the pooled
// representations (n × EmbedDim). With train true, BatchNorm uses batch
// statistics, recorded for CommitStats; with train false it uses the
// running statistics as they are now (copied into the graph).
func (b *ResNetBound) Encode(x *gorgonia.Node, train bool) (*gorgonia.Node, error) {
	s := x.Shape()
	if s.Dims() != 4 || s[1] != b.m.cfg.InChannels {
		return nil, fmt.Errorf("resnet encode: input shape %v, want (n, %d, h, w)", s, b.m.cfg.InChannels)
	}
	if train && s[0] < 2 {
		return nil, fmt.Errorf("resnet encode: training-mode BatchNorm needs at least 2 images, got %d", s[0])
	}
	h, err := b.convBN(x, b.m.stem, train, true, true)
	if err != nil {
		return nil, fmt.Errorf("resnet encode: stem: %w", err)
	}
	if b.m.cfg.ImageNetStem {
		if h, err = gorgonia.MaxPool2D(h, tensor.Shape{3, 3}, []int{1, 1}, []int{2, 2}); err != nil {
			return nil, fmt.Errorf("resnet encode: stem max-pool: %w", err)
		}
	}
	for k, blk := range b.m.blocks {
		main, err := b.convBN(h, blk.c1, train, true, false)
		if err != nil {
			return nil, fmt.Errorf("resnet encode: block %d: %w", k, err)
		}
		if main, err = b.convBN(main, blk.c2, train, false, false); err != nil {
			return nil, fmt.Errorf("resnet encode: block %d: %w", k, err)
		}
		short := h
		if blk.shortcut != nil {
			if short, err = b.convBN(h, *blk.shortcut, train, false, false); err != nil {
				return nil, fmt.Errorf("resnet encode: block %d shortcut: %w", k, err)
			}
		}
		if h, err = ops.AddReLU(main, short); err != nil {
			return nil, fmt.Errorf("resnet encode: block %d join: %w", k, err)
		}
	}
	emb, err := ops.GlobalAvgPool(h)
	if err != nil {
		return nil, fmt.Errorf("resnet encode: pooling: %w", err)
	}
	return emb, nil
}

// Project adds the projection head applied to emb (n × EmbedDim).
func (b *ResNetBound) Project(emb *gorgonia.Node) (*gorgonia.Node, error) {
	if b.m.cfg.NoHead {
		return nil, errors.New("resnet project: the network was built without a projection head (NoHead)")
	}
	return b.project(emb, b.m.EmbedDim(), b.m.head, b.linear)
}

// Learnables returns the nodes of the trainable parameters used so far in
// this graph, in Params order: pass them to gorgonia.Grad.
func (b *ResNetBound) Learnables() gorgonia.Nodes { return b.learnables() }

// Grads copies, after a run, the gradient of every trainable parameter in
// Params order into dst (grown or reallocated as needed; pass the previous
// result to reuse its buffers) and returns it. A parameter the graph does
// not use gets nil, which an optimizer's Step skips.
func (b *ResNetBound) Grads(dst [][]float32) ([][]float32, error) { return b.grads(dst) }

// CommitStats folds the batch statistics of the latest run of every
// training-mode BatchNorm call into the running buffers, in call order (two
// views = two updates, as two forward calls in PyTorch):
// running_mean ← (1−m)·running_mean + m·μ_B and
// running_var ← (1−m)·running_var + m·σ²_B·n/(n−1), m = BNMomentum.
// Call it once after every run. On error no buffer is changed.
func (b *ResNetBound) CommitStats() error { return b.commitStats(b.m.cfg.BNMomentum) }

// EmbedImages returns evaluation-mode (running BatchNorm statistics)
// representations (n × EmbedDim) and projections (n × ProjDim; nil without
// a head) of the n images in pixels (n×C×h×w, float32), computed in batches
// of batch images through one compiled graph (the last batch is
// zero-padded).
func (m *ResNet) EmbedImages(pixels []float32, n, h, w, batch int) (emb, proj []float32, err error) {
	if m.cfg.Float64 {
		return nil, nil, fmt.Errorf("resnet embed: %w", errNotFloat32)
	}
	outs, err := RunImageBatches(pixels, n, m.cfg.InChannels, h, w, batch, func(g *gorgonia.ExprGraph, x *gorgonia.Node) ([]*gorgonia.Node, error) {
		b := m.Bind(g)
		e, err := b.Encode(x, false)
		if err != nil || m.cfg.NoHead {
			return []*gorgonia.Node{e}, err
		}
		p, err := b.Project(e)
		return []*gorgonia.Node{e, p}, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("resnet embed: %w", err)
	}
	if m.cfg.NoHead {
		return outs[0], nil, nil
	}
	return outs[0], outs[1], nil
}

// RunImageBatches runs, in evaluation mode, a float32 graph over the n
// images in pixels (n×c×h×w) in batches of batch images: build adds to g
// the network applied to the batch input x (batch×c×h×w) and returns its
// outputs, each batch×d; the graph is compiled once and run once per batch
// (the last batch zero-padded). It returns every output for all n images,
// n×d row-major each.
func RunImageBatches(pixels []float32, n, c, h, w, batch int, build func(g *gorgonia.ExprGraph, x *gorgonia.Node) ([]*gorgonia.Node, error)) ([][]float32, error) {
	size := c * h * w
	if n <= 0 || size <= 0 || len(pixels) != n*size {
		return nil, fmt.Errorf("%d pixel values for %d images of %d×%d×%d", len(pixels), n, c, h, w)
	}
	if batch <= 0 {
		return nil, fmt.Errorf("batch %d, want > 0", batch)
	}
	batch = min(batch, n)
	g := gorgonia.NewGraph()
	xv := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(batch, c, h, w))
	x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(batch, c, h, w), gorgonia.WithName("images.0"), gorgonia.WithValue(xv))
	nodes, err := build(g, x)
	if err != nil {
		return nil, err
	}
	dims := make([]int, len(nodes))
	outs := make([][]float32, len(nodes))
	for k, nd := range nodes {
		if s := nd.Shape(); s.Dims() != 2 || s[0] != batch {
			return nil, fmt.Errorf("output %d has shape %v, want (%d, d)", k, s, batch)
		}
		dims[k] = nd.Shape()[1]
		outs[k] = make([]float32, n*dims[k])
	}
	vm := gorgonia.NewTapeMachine(g)
	defer gop.CloseMachine(vm)
	buf := xv.Float32s()
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		copy(buf, pixels[lo*size:hi*size])
		clear(buf[(hi-lo)*size:])
		if err := vm.RunAll(); err != nil {
			return nil, fmt.Errorf("images %d..%d: %w", lo, hi-1, err)
		}
		for k, nd := range nodes {
			d := dims[k]
			copy(outs[k][lo*d:hi*d], nd.Value().Data().([]float32))
		}
		vm.Reset()
	}
	return outs, nil
}

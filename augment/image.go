package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// ImageAugmenter writes a randomly transformed copy of one image into dst.
//
// Images are float32 tensors of c×h×w values laid out channel, row, column
// (CHW, one image of an NCHW batch); the SimCLR augmentations expect values
// in [0,1] and keep them there ([Normalize] excepted). dst and src must both
// hold exactly c·h·w values and may be the same slice (in place), but must
// not overlap otherwise. A length mismatch is a programming error and
// panics; [AugmentBatch] checks shapes and parameters first and returns an
// error instead.
//
// Implementations in this package are plain values without mutable state,
// safe for concurrent use with one *rand.Rand per goroutine, and allocate
// nothing per call in the steady state.
type ImageAugmenter interface {
	Augment(dst, src []float32, c, h, w int, rng *rand.Rand)
}

// ImageValidator is implemented by image augmenters that can check their
// parameters against an image shape before use.
type ImageValidator interface {
	Validate(c, h, w int) error
}

// ValidateImageAugmenter checks aug (and, for [ImageCompose] and
// [RandomApply], its parts) against the shape c×h×w.
func ValidateImageAugmenter(aug ImageAugmenter, c, h, w int) error {
	if c < 1 || h < 1 || w < 1 {
		return fmt.Errorf("image shape %d×%d×%d: expected positive sizes", c, h, w)
	}
	if aug == nil {
		return nil
	}
	if v, ok := aug.(ImageValidator); ok {
		return v.Validate(c, h, w)
	}
	return nil
}

// checkImage panics with a clear message when dst or src does not hold
// c·h·w values.
func checkImage(name string, dst, src []float32, c, h, w int) {
	n := c * h * w
	if c < 1 || h < 1 || w < 1 || len(dst) != n || len(src) != n {
		panic(fmt.Sprintf("augment: %s: dst has %d values, src %d: expected c×h×w = %d×%d×%d = %d each", name, len(dst), len(src), c, h, w, n))
	}
}

// sameStart reports whether two non-empty slices start at the same element.
func sameStart(a, b []float32) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

// ImageCompose applies Augs in sequence, as torchvision's Compose: the
// first writes src into dst, each next one transforms dst in place. Nil
// entries are skipped; with none, dst becomes a copy of src.
type ImageCompose struct {
	Augs []ImageAugmenter
}

// Augment applies every augmenter of c.Augs in order.
func (ic ImageCompose) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("compose", dst, src, c, h, w)
	from := src
	for _, a := range ic.Augs {
		if a == nil {
			continue
		}
		a.Augment(dst, from, c, h, w, rng)
		from = dst
	}
	if sameStart(from, src) && !sameStart(dst, src) {
		copy(dst, src)
	}
}

// Validate checks every part.
func (ic ImageCompose) Validate(c, h, w int) error {
	for i, a := range ic.Augs {
		if err := ValidateImageAugmenter(a, c, h, w); err != nil {
			return fmt.Errorf("compose, part %d: %w", i, err)
		}
	}
	return nil
}

// String returns "compose(a, b, ...)".
func (ic ImageCompose) String() string {
	parts := make([]string, len(ic.Augs))
	for i, a := range ic.Augs {
		parts[i] = imageAugName(a)
	}
	return "compose(" + strings.Join(parts, ", ") + ")"
}

func imageAugName(a ImageAugmenter) string {
	if s, ok := a.(fmt.Stringer); ok {
		return s.String()
	}
	if a == nil {
		return "identity"
	}
	return fmt.Sprintf("%T", a)
}

// RandomApply applies Aug with probability P (torchvision's RandomApply:
// one uniform draw u, applied when u < P) and copies the image otherwise.
type RandomApply struct {
	Aug ImageAugmenter
	P   float64
}

// Augment applies r.Aug with probability r.P.
func (r RandomApply) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("random_apply", dst, src, c, h, w)
	if rng.Float64() < r.P && r.Aug != nil {
		r.Aug.Augment(dst, src, c, h, w, rng)
		return
	}
	if !sameStart(dst, src) {
		copy(dst, src)
	}
}

// Validate checks P and the wrapped augmenter.
func (r RandomApply) Validate(c, h, w int) error {
	if !(r.P >= 0 && r.P <= 1) {
		return fmt.Errorf("random_apply: P = %g: expected a probability in [0, 1]", r.P)
	}
	return ValidateImageAugmenter(r.Aug, c, h, w)
}

// String returns "random_apply(aug, p=P)".
func (r RandomApply) String() string {
	return fmt.Sprintf("random_apply(%s, p=%g)", imageAugName(r.Aug), r.P)
}

// Normalize maps every value x of channel k to (x − Mean[k]) / Std[k], as
// torchvision's Normalize. Mean and Std hold one entry per channel, or one
// entry used for every channel. The output is no longer in [0,1]: put
// Normalize last.
type Normalize struct {
	Mean, Std []float32
}

// Augment normalises src into dst. It panics if Mean or Std do not fit c
// (see Validate).
func (n Normalize) Augment(dst, src []float32, c, h, w int, _ *rand.Rand) {
	checkImage("normalize", dst, src, c, h, w)
	if err := n.Validate(c, h, w); err != nil {
		panic("augment: " + err.Error())
	}
	hw := h * w
	for ch := 0; ch < c; ch++ {
		k := 0
		if len(n.Mean) > 1 {
			k = ch
		}
		m, s := n.Mean[k], n.Std[k]
		d, x := dst[ch*hw:(ch+1)*hw], src[ch*hw:(ch+1)*hw]
		for i, v := range x {
			d[i] = (v - m) / s
		}
	}
}

// Validate checks that Mean and Std have 1 or c entries and that every Std
// is positive and finite.
func (n Normalize) Validate(c, _, _ int) error {
	if len(n.Mean) != len(n.Std) || (len(n.Mean) != 1 && len(n.Mean) != c) {
		return fmt.Errorf("normalize: %d means and %d deviations: expected %d of each (or 1)", len(n.Mean), len(n.Std), c)
	}
	for k, s := range n.Std {
		if !(s > 0) || math.IsInf(float64(s), 0) || math.IsNaN(float64(n.Mean[k])) || math.IsInf(float64(n.Mean[k]), 0) {
			return fmt.Errorf("normalize: channel %d mean %v std %v: expected a finite mean and a positive finite std", k, n.Mean[k], s)
		}
	}
	return nil
}

// String returns "normalize(mean=[...], std=[...])".
func (n Normalize) String() string { return fmt.Sprintf("normalize(mean=%v, std=%v)", n.Mean, n.Std) }

// SimCLRCIFAR returns the augmentation of SimCLR for CIFAR (Chen et al.,
// 2020, appendix B.9; the torchvision pipeline of most reimplementations):
//
//	RandomResizedCrop(32, scale=(0.08, 1), ratio=(3/4, 4/3))
//	RandomHorizontalFlip(p=0.5)
//	RandomApply([ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8)
//	RandomGrayscale(p=0.2)
//
// on images in [0,1]. Normalisation by the dataset's mean and std is not
// included: append it, e.g.
//
//	aug := augment.SimCLRCIFAR()
//	aug.Augs = append(aug.Augs, augment.Normalize{Mean: mean, Std: std})
//
// with mean, std from (*data.ImageSet).MeanStd of the training images.
func SimCLRCIFAR() ImageCompose {
	c := CropFlip()
	c.Augs = append(c.Augs,
		ColorJitter{Brightness: 0.4, Contrast: 0.4, Saturation: 0.4, Hue: 0.1, P: 0.8},
		RandomGrayscale{P: 0.2},
	)
	return c
}

// CropFlip returns the geometric half of SimCLRCIFAR, torchvision's
//
//	RandomResizedCrop(32, scale=(0.08, 1), ratio=(3/4, 4/3))
//	RandomHorizontalFlip(p=0.5)
//
// without the colour distortions. Append Normalize, as for SimCLRCIFAR.
func CropFlip() ImageCompose {
	return ImageCompose{Augs: []ImageAugmenter{
		RandomResizedCrop{Scale: [2]float64{0.08, 1}, Ratio: [2]float64{3.0 / 4, 4.0 / 3}},
		HorizontalFlip{P: 0.5},
	}}
}

// ImageRNG returns the generator [AugmentBatch] uses for image k of a batch
// augmented with seed: a PCG seeded by a SplitMix64 mix of (seed, k), so
// that neighbouring seeds and positions give unrelated streams.
func ImageRNG(seed uint64, k int) *rand.Rand {
	a, b := imageSeeds(seed, k)
	return rand.New(rand.NewPCG(a, b))
}

func imageSeeds(seed uint64, k int) (uint64, uint64) {
	x := splitMix64(seed ^ 0x6a09e667f3bcc909)
	y := splitMix64(x ^ uint64(k))
	return y, splitMix64(y ^ 0xbb67ae8584caa73b)
}

func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// AugmentBatch writes aug applied to each of the n images of src (n×c×h×w,
// contiguous) into the same position of dst, using workers goroutines (≤ 0
// means GOMAXPROCS). Image k uses ImageRNG(seed, k), so the result depends
// on seed only, not on the number of workers or on scheduling. A nil aug
// copies. dst and src must not overlap unless they are the same slice.
func AugmentBatch(aug ImageAugmenter, dst, src []float32, n, c, h, w int, seed uint64, workers int) error {
	if n < 0 {
		return fmt.Errorf("augment batch: n = %d: expected n >= 0", n)
	}
	if err := ValidateImageAugmenter(aug, c, h, w); err != nil {
		return fmt.Errorf("augment batch: %w", err)
	}
	d := c * h * w
	if len(src) != n*d || len(dst) != n*d {
		return fmt.Errorf("augment batch: dst has %d values, src %d: expected n×c×h×w = %d×%d×%d×%d = %d each", len(dst), len(src), n, c, h, w, n*d)
	}
	runBatch(n, workers, func(k int, rng *rand.Rand) {
		one(aug, dst[k*d:(k+1)*d], src[k*d:(k+1)*d], c, h, w, rng)
	}, seed)
	return nil
}

// AugmentGather is AugmentBatch on images picked from a dataset: pixels
// holds a whole dataset (N×c×h×w) and image k of dst (len(idx)×c×h×w)
// receives aug applied to image idx[k], with ImageRNG(seed, k). This is
// one view of a training batch; call it twice with different seeds for the
// two views of SimCLR. dst must not overlap pixels.
func AugmentGather(aug ImageAugmenter, dst, pixels []float32, idx []int, c, h, w int, seed uint64, workers int) error {
	if err := ValidateImageAugmenter(aug, c, h, w); err != nil {
		return fmt.Errorf("augment gather: %w", err)
	}
	d := c * h * w
	if len(pixels)%d != 0 {
		return fmt.Errorf("augment gather: dataset holds %d values: expected a multiple of c×h×w = %d", len(pixels), d)
	}
	if len(dst) != len(idx)*d {
		return fmt.Errorf("augment gather: dst has %d values: expected len(idx)×c×h×w = %d×%d = %d", len(dst), len(idx), d, len(idx)*d)
	}
	n := len(pixels) / d
	for k, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("augment gather: idx[%d] = %d: expected an image in [0,%d)", k, i, n)
		}
	}
	runBatch(len(idx), workers, func(k int, rng *rand.Rand) {
		i := idx[k]
		one(aug, dst[k*d:(k+1)*d], pixels[i*d:(i+1)*d], c, h, w, rng)
	}, seed)
	return nil
}

func one(aug ImageAugmenter, dst, src []float32, c, h, w int, rng *rand.Rand) {
	if aug == nil {
		if !sameStart(dst, src) {
			copy(dst, src)
		}
		return
	}
	aug.Augment(dst, src, c, h, w, rng)
}

// runBatch calls fn(k, rng) for k in [0,n) on up to workers goroutines,
// with rng seeded by ImageRNG(seed, k).
func runBatch(n, workers int, fn func(k int, rng *rand.Rand), seed uint64) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		pcg := rand.NewPCG(0, 0)
		rng := rand.New(pcg)
		for k := 0; k < n; k++ {
			pcg.Seed(imageSeeds(seed, k))
			fn(k, rng)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			pcg := rand.NewPCG(0, 0)
			rng := rand.New(pcg)
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				pcg.Seed(imageSeeds(seed, k))
				fn(k, rng)
			}
		})
	}
	wg.Wait()
}

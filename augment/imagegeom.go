package augment

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// RandomResizedCrop is torchvision's RandomResizedCrop with the output size
// equal to the input size: it crops a random region whose area is a
// fraction of the image drawn uniformly from Scale and whose aspect ratio
// w/h is drawn log-uniformly from Ratio, and resizes it back to h×w with
// bilinear interpolation.
//
// The region is drawn as torchvision's get_params does: up to 10 attempts
// of (area, log-ratio) draws, w = round(√(area·ratio)), h =
// round(√(area/ratio)) (round half to even, as Python's round), accepted
// when 0 < w ≤ W and 0 < h ≤ H, then a uniform top-left corner; after 10
// failures, a centred crop of the whole image clamped to the ratio range.
// The interpolation is PyTorch's bilinear with align_corners=False (source
// coordinate (x+0.5)·scale−0.5 clamped at 0, neighbours clamped at the
// border); a crop is never larger than the image, so antialiasing, which
// torchvision applies only when shrinking, plays no part.
//
// The zero value uses Scale [0.08, 1] and Ratio [3/4, 4/3] (SimCLR's and
// torchvision's defaults); a zero array stands for its default.
type RandomResizedCrop struct {
	Scale [2]float64
	Ratio [2]float64
}

func (r RandomResizedCrop) params() (scale, ratio [2]float64) {
	scale, ratio = r.Scale, r.Ratio
	if scale == [2]float64{} {
		scale = [2]float64{0.08, 1}
	}
	if ratio == [2]float64{} {
		ratio = [2]float64{3.0 / 4, 4.0 / 3}
	}
	return scale, ratio
}

// Validate checks 0 < Scale[0] ≤ Scale[1] and 0 < Ratio[0] ≤ Ratio[1],
// all finite.
func (r RandomResizedCrop) Validate(_, _, _ int) error {
	scale, ratio := r.params()
	ok := func(v [2]float64) bool {
		return v[0] > 0 && v[0] <= v[1] && !math.IsInf(v[1], 0)
	}
	if !ok(scale) {
		return fmt.Errorf("random_resized_crop: scale %v: expected 0 < min <= max, finite", scale)
	}
	if !ok(ratio) {
		return fmt.Errorf("random_resized_crop: ratio %v: expected 0 < min <= max, finite", ratio)
	}
	return nil
}

// String returns "random_resized_crop(scale=[a b], ratio=[c d])".
func (r RandomResizedCrop) String() string {
	scale, ratio := r.params()
	return fmt.Sprintf("random_resized_crop(scale=%v, ratio=%v)", scale, ratio)
}

// CropParams draws the region (top, left, height, width) of an h×w image
// as torchvision's RandomResizedCrop.get_params does. It always returns a
// region inside the image with positive sizes.
func (r RandomResizedCrop) CropParams(h, w int, rng *rand.Rand) (top, left, ch, cw int) {
	scale, ratio := r.params()
	area := float64(h) * float64(w)
	logLo, logHi := math.Log(ratio[0]), math.Log(ratio[1])
	for range 10 {
		target := area * (scale[0] + (scale[1]-scale[0])*rng.Float64())
		aspect := math.Exp(logLo + (logHi-logLo)*rng.Float64())
		fw := math.RoundToEven(math.Sqrt(target * aspect))
		fh := math.RoundToEven(math.Sqrt(target / aspect))
		if fw > 0 && fw <= float64(w) && fh > 0 && fh <= float64(h) {
			cw, ch = int(fw), int(fh)
			top = rng.IntN(h - ch + 1)
			left = rng.IntN(w - cw + 1)
			return top, left, ch, cw
		}
	}
	// Fallback: central crop.
	inRatio := float64(w) / float64(h)
	lo, hi := min(ratio[0], ratio[1]), max(ratio[0], ratio[1])
	switch {
	case inRatio < lo:
		cw = w
		ch = clampInt(int(math.RoundToEven(float64(cw)/lo)), 1, h)
	case inRatio > hi:
		ch = h
		cw = clampInt(int(math.RoundToEven(float64(ch)*hi)), 1, w)
	default:
		cw, ch = w, h
	}
	return (h - ch) / 2, (w - cw) / 2, ch, cw
}

func clampInt(v, lo, hi int) int { return min(max(v, lo), hi) }

// Augment crops a random region of src and resizes it into dst.
func (r RandomResizedCrop) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("random_resized_crop", dst, src, c, h, w)
	top, left, ch, cw := r.CropParams(h, w, rng)
	ResizeCrop(dst, src, c, h, w, top, left, ch, cw)
}

// resizeScratch holds the interpolation tables and, for in-place use, a
// copy of the source.
type resizeScratch struct {
	x0, x1 []int32
	lx     []float32
	copy   []float32
}

var resizePool = sync.Pool{New: func() any { return new(resizeScratch) }}

// ResizeCrop writes the region (top, left, ch, cw) of the c×h×w image src,
// resized to h×w by PyTorch's bilinear interpolation (align_corners=False),
// into dst. The region must lie inside the image; dst may be src. A region
// of the whole image gives an exact copy.
func ResizeCrop(dst, src []float32, c, h, w, top, left, ch, cw int) {
	checkImage("resize_crop", dst, src, c, h, w)
	if top < 0 || left < 0 || ch < 1 || cw < 1 || top+ch > h || left+cw > w {
		panic(fmt.Sprintf("augment: resize_crop: region top=%d left=%d %d×%d outside the %d×%d image", top, left, ch, cw, h, w))
	}
	s := resizePool.Get().(*resizeScratch)
	defer resizePool.Put(s)
	if sameStart(dst, src) {
		s.copy = append(s.copy[:0], src...)
		src = s.copy
	}
	s.x0 = growInt32(s.x0, w)
	s.x1 = growInt32(s.x1, w)
	s.lx = growF32(s.lx, w)
	sx := float32(cw) / float32(w)
	for x := 0; x < w; x++ {
		i0, i1, l := bilinearSource(x, sx, cw)
		s.x0[x], s.x1[x], s.lx[x] = int32(left+i0), int32(left+i1), l
	}
	sy := float32(ch) / float32(h)
	hw := h * w
	for y := 0; y < h; y++ {
		j0, j1, ly := bilinearSource(y, sy, ch)
		r0, r1 := (top+j0)*w, (top+j1)*w
		for k := 0; k < c; k++ {
			plane := src[k*hw : (k+1)*hw]
			row0, row1 := plane[r0:r0+w], plane[r1:r1+w]
			out := dst[k*hw+y*w : k*hw+(y+1)*w]
			for x := range out {
				a, b := s.x0[x], s.x1[x]
				lx := s.lx[x]
				top := row0[a] + lx*(row0[b]-row0[a])
				bot := row1[a] + lx*(row1[b]-row1[a])
				out[x] = top + ly*(bot-top)
			}
		}
	}
}

// bilinearSource returns the two source indices (within a region of n
// pixels) and the weight of the second for output index i, as PyTorch's
// upsample_bilinear2d with align_corners=False.
func bilinearSource(i int, scale float32, n int) (i0, i1 int, l float32) {
	r := max(scale*(float32(i)+0.5)-0.5, 0)
	i0 = min(int(r), n-1)
	i1 = i0
	if i0 < n-1 {
		i1 = i0 + 1
	}
	return i0, i1, r - float32(i0)
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// HorizontalFlip mirrors the image left-right with probability P
// (torchvision's RandomHorizontalFlip: one uniform draw u, flipped when
// u < P). SimCLR uses P = 0.5; P = 1 always flips.
type HorizontalFlip struct {
	P float64
}

// Augment flips src into dst with probability f.P, else copies it.
func (f HorizontalFlip) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("horizontal_flip", dst, src, c, h, w)
	if rng.Float64() < f.P {
		for r := 0; r < c*h; r++ {
			in, out := src[r*w:(r+1)*w], dst[r*w:(r+1)*w]
			for i, j := 0, w-1; i <= j; i, j = i+1, j-1 {
				out[i], out[j] = in[j], in[i]
			}
		}
		return
	}
	if !sameStart(dst, src) {
		copy(dst, src)
	}
}

// Validate checks that P is a probability.
func (f HorizontalFlip) Validate(_, _, _ int) error {
	if !(f.P >= 0 && f.P <= 1) {
		return fmt.Errorf("horizontal_flip: P = %g: expected a probability in [0, 1]", f.P)
	}
	return nil
}

// String returns "horizontal_flip(p=P)".
func (f HorizontalFlip) String() string { return fmt.Sprintf("horizontal_flip(p=%g)", f.P) }

package augment

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/internal/hsv"
)

// Luma weights of torchvision's rgb_to_grayscale for tensors (ITU-R 601-2).
const (
	LumaR = 0.2989
	LumaG = 0.587
	LumaB = 0.114
)

// ColorJitter is torchvision's ColorJitter wrapped in RandomApply with
// probability P: with probability P it adjusts brightness, contrast,
// saturation and hue, in an order drawn uniformly at random for each image,
// with factors drawn uniformly from [max(0, 1−s), 1+s] for the first three
// (s the strength) and from [−Hue, Hue] for the hue. A zero strength skips
// that adjustment (and its draw), as in torchvision. SimCLR uses 0.4, 0.4,
// 0.4, 0.1 with P = 0.8. Note that P = 0 never applies the jitter.
//
// The adjustments follow torchvision's tensor functions on values in
// [0,1], each clamping its result to [0,1]:
//   - brightness b: x·b;
//   - contrast f: f·x + (1−f)·m, with m the mean luma of the whole image;
//   - saturation f: f·x + (1−f)·luma(pixel);
//   - hue δ: RGB → HSV, H ← (H + δ) mod 1, HSV → RGB.
//
// Luma is LumaR·r + LumaG·g + LumaB·b. For one-channel images the luma is
// the value itself and saturation and hue do nothing (as in torchvision);
// for other channel counts the contrast mean is over all values.
type ColorJitter struct {
	Brightness, Contrast, Saturation, Hue float64
	P                                     float64
}

// Validate checks that the strengths are finite and non-negative, Hue at
// most 0.5, and P a probability.
func (j ColorJitter) Validate(_, _, _ int) error {
	for _, s := range []struct {
		name string
		v    float64
	}{{"brightness", j.Brightness}, {"contrast", j.Contrast}, {"saturation", j.Saturation}} {
		if !(s.v >= 0) || math.IsInf(s.v, 0) {
			return fmt.Errorf("color_jitter: %s = %g: expected a finite strength >= 0", s.name, s.v)
		}
	}
	if !(j.Hue >= 0 && j.Hue <= 0.5) {
		return fmt.Errorf("color_jitter: hue = %g: expected [0, 0.5]", j.Hue)
	}
	if !(j.P >= 0 && j.P <= 1) {
		return fmt.Errorf("color_jitter: P = %g: expected a probability in [0, 1]", j.P)
	}
	return nil
}

// String returns "color_jitter(b, c, s, h, p=P)".
func (j ColorJitter) String() string {
	return fmt.Sprintf("color_jitter(%g, %g, %g, %g, p=%g)", j.Brightness, j.Contrast, j.Saturation, j.Hue, j.P)
}

// JitterParams is one draw of ColorJitter: the order of the four
// adjustments (0 brightness, 1 contrast, 2 saturation, 3 hue) and their
// factors; a factor of 1 (0 for Hue) with its Use flag false means skipped.
type JitterParams struct {
	Order                                 [4]int
	Brightness, Contrast, Saturation, Hue float32
	Use                                   [4]bool
}

// Params draws the order and the factors as torchvision's
// ColorJitter.get_params: a random permutation, then one uniform draw per
// non-zero strength, in the order brightness, contrast, saturation, hue.
func (j ColorJitter) Params(rng *rand.Rand) JitterParams {
	var p JitterParams
	perm := rng.Perm(4)
	copy(p.Order[:], perm)
	p.Brightness, p.Contrast, p.Saturation = 1, 1, 1
	factor := func(s float64) float32 {
		lo := max(0, 1-s)
		return float32(lo + (1+s-lo)*rng.Float64())
	}
	if j.Brightness > 0 {
		p.Brightness, p.Use[0] = factor(j.Brightness), true
	}
	if j.Contrast > 0 {
		p.Contrast, p.Use[1] = factor(j.Contrast), true
	}
	if j.Saturation > 0 {
		p.Saturation, p.Use[2] = factor(j.Saturation), true
	}
	if j.Hue > 0 {
		p.Hue, p.Use[3] = float32(-j.Hue+2*j.Hue*rng.Float64()), true
	}
	return p
}

// Augment jitters src into dst with probability j.P, else copies it.
func (j ColorJitter) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("color_jitter", dst, src, c, h, w)
	if !(rng.Float64() < j.P) {
		if !sameStart(dst, src) {
			copy(dst, src)
		}
		return
	}
	ApplyJitter(dst, src, c, h, w, j.Params(rng))
}

// ApplyJitter applies the adjustments of p in p.Order to src, writing dst
// (which may be src).
func ApplyJitter(dst, src []float32, c, h, w int, p JitterParams) {
	checkImage("color_jitter", dst, src, c, h, w)
	if !sameStart(dst, src) {
		copy(dst, src)
	}
	for _, op := range p.Order {
		if op < 0 || op > 3 || !p.Use[op] {
			continue
		}
		switch op {
		case 0:
			AdjustBrightness(dst, dst, p.Brightness)
		case 1:
			AdjustContrast(dst, dst, c, h, w, p.Contrast)
		case 2:
			AdjustSaturation(dst, dst, c, h, w, p.Saturation)
		case 3:
			AdjustHue(dst, dst, c, h, w, p.Hue)
		}
	}
}

func clamp01(v float32) float32 { return min(max(v, 0), 1) }

// AdjustBrightness writes clamp(x·f, 0, 1) for every value (torchvision's
// adjust_brightness). dst and src have the same length and may be equal.
func AdjustBrightness(dst, src []float32, f float32) {
	for i, v := range src[:len(dst)] {
		dst[i] = clamp01(f * v)
	}
}

// AdjustContrast blends every value with the image's mean luma m:
// clamp(f·x + (1−f)·m, 0, 1) (torchvision's adjust_contrast).
func AdjustContrast(dst, src []float32, c, h, w int, f float32) {
	checkImage("adjust_contrast", dst, src, c, h, w)
	hw := h * w
	var sum float64
	if c == 3 {
		r, g, b := src[:hw], src[hw:2*hw], src[2*hw:3*hw]
		for i := range r {
			sum += float64(LumaR*r[i] + LumaG*g[i] + LumaB*b[i])
		}
		sum /= float64(hw)
	} else {
		for _, v := range src {
			sum += float64(v)
		}
		sum /= float64(len(src))
	}
	m := (1 - f) * float32(sum)
	for i, v := range src {
		dst[i] = clamp01(f*v + m)
	}
}

// AdjustSaturation blends every RGB pixel with its luma l:
// clamp(f·x + (1−f)·l, 0, 1) (torchvision's adjust_saturation). Images
// without three channels are copied unchanged.
func AdjustSaturation(dst, src []float32, c, h, w int, f float32) {
	in, out, ok := rgbPlanes("adjust_saturation", dst, src, c, h, w)
	if !ok {
		return
	}
	for i := range in.r {
		r, g, b := in.r[i], in.g[i], in.b[i]
		l := (1 - f) * (LumaR*r + LumaG*g + LumaB*b)
		out.r[i], out.g[i], out.b[i] = clamp01(f*r+l), clamp01(f*g+l), clamp01(f*b+l)
	}
}

// AdjustHue shifts the hue of every RGB pixel by delta (a fraction of the
// colour wheel, in [−0.5, 0.5]) through torchvision's _rgb2hsv and
// _hsv2rgb. Images without three channels are copied unchanged.
func AdjustHue(dst, src []float32, c, h, w int, delta float32) {
	in, out, ok := rgbPlanes("adjust_hue", dst, src, c, h, w)
	if !ok {
		return
	}
	for i := range in.r {
		hh, s, v := RGBToHSV(in.r[i], in.g[i], in.b[i])
		hh = wrapUnit(hh + delta) // Python's (h + delta) % 1.0
		out.r[i], out.g[i], out.b[i] = HSVToRGB(hh, s, v)
	}
}

// rgb is the red, green and blue planes of one c×h×w image (c = 3).
type rgb struct{ r, g, b []float32 }

// planesOf splits a 3×h×w image into its planes of hw pixels.
func planesOf(img []float32, hw int) rgb {
	return rgb{img[:hw], img[hw : 2*hw], img[2*hw : 3*hw]}
}

// rgbPlanes checks the c×h×w images dst and src for the adjustment op and
// returns the planes of src (in) and of dst (out). For an image without
// three channels it copies src into dst (unless they are one) and reports
// false: the per-pixel colour adjustments leave it unchanged.
func rgbPlanes(op string, dst, src []float32, c, h, w int) (in, out rgb, ok bool) {
	checkImage(op, dst, src, c, h, w)
	if c != 3 {
		if !sameStart(dst, src) {
			copy(dst, src)
		}
		return rgb{}, rgb{}, false
	}
	return planesOf(src, h*w), planesOf(dst, h*w), true
}

// wrapUnit returns x mod 1 in [0,1] for any finite x (1 only by rounding
// of a tiny negative x, as in PyTorch's float32 %).
func wrapUnit(x float32) float32 {
	if x >= 0 && x < 1 {
		return x
	}
	return x - float32(math.Floor(float64(x)))
}

// RGBToHSV converts one pixel as torchvision's _rgb2hsv: hue in [0,1),
// saturation (max−min)/max (0 for grey), value max.
func RGBToHSV(r, g, b float32) (h, s, v float32) {
	maxc := max(r, g, b)
	minc := min(r, g, b)
	cr := maxc - minc
	if cr == 0 {
		return 0, 0, maxc
	}
	s = cr / maxc
	rc, gc, bc := (maxc-r)/cr, (maxc-g)/cr, (maxc-b)/cr
	switch {
	case maxc == r:
		h = bc - gc
	case maxc == g:
		h = 2 + rc - bc
	default:
		h = 4 + gc - rc
	}
	h = h/6 + 1            // in [5/6, 11/6]
	h -= float32(int32(h)) // fmod(h/6 + 1, 1): truncation is floor here
	return h, s, maxc
}

// HSVToRGB converts one pixel as torchvision's _hsv2rgb (hue in [0,1),
// results clamped to [0,1]).
func HSVToRGB(h, s, v float32) (r, g, b float32) {
	h6 := h * 6
	var fi float32
	if h6 >= 0 && h6 < 1<<24 {
		fi = float32(int32(h6)) // floor without the float64 round trip
	} else {
		fi = float32(math.Floor(float64(h6)))
	}
	f := h6 - fi
	i := int(fi) % 6
	if i < 0 {
		i += 6
	}
	p := clamp01(v * (1 - s))
	q := clamp01(v * (1 - s*f))
	t := clamp01(v * (1 - s*(1-f)))
	return hsv.Sextant(i, v, p, q, t)
}

// RandomGrayscale replaces, with probability P, every channel of an RGB
// image by its luma LumaR·r + LumaG·g + LumaB·b (torchvision's
// RandomGrayscale: one uniform draw u, converted when u < P). Images
// without three channels are copied unchanged. SimCLR uses P = 0.2.
type RandomGrayscale struct {
	P float64
}

// Augment converts src to grey into dst with probability g.P, else copies.
func (g RandomGrayscale) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("random_grayscale", dst, src, c, h, w)
	if rng.Float64() < g.P && c == 3 {
		Grayscale(dst, src, h, w)
		return
	}
	if !sameStart(dst, src) {
		copy(dst, src)
	}
}

// Grayscale writes the luma of the 3×h×w RGB image src into all three
// channels of dst (which may be src).
func Grayscale(dst, src []float32, h, w int) {
	checkImage("grayscale", dst, src, 3, h, w)
	hw := h * w
	r, gg, b := src[:hw], src[hw:2*hw], src[2*hw:3*hw]
	for i := range r {
		l := LumaR*r[i] + LumaG*gg[i] + LumaB*b[i]
		dst[i], dst[hw+i], dst[2*hw+i] = l, l, l
	}
}

// Validate checks that P is a probability.
func (g RandomGrayscale) Validate(_, _, _ int) error {
	if !(g.P >= 0 && g.P <= 1) {
		return fmt.Errorf("random_grayscale: P = %g: expected a probability in [0, 1]", g.P)
	}
	return nil
}

// String returns "random_grayscale(p=P)".
func (g RandomGrayscale) String() string { return fmt.Sprintf("random_grayscale(p=%g)", g.P) }

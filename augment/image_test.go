package augment

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// imgRand returns a c×h×w image of uniform values in [0,1).
func imgRand(c, h, w int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 77))
	x := make([]float32, c*h*w)
	for i := range x {
		x[i] = r.Float32()
	}
	return x
}

func imgRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xabcdef)) }

func imgMaxDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

// imageAugmenters are the augmenters whose invariants every test checks.
func imageAugmenters() map[string]ImageAugmenter {
	return map[string]ImageAugmenter{
		"simclr":    SimCLRCIFAR(),
		"crop":      RandomResizedCrop{},
		"flip":      HorizontalFlip{P: 0.5},
		"jitter":    ColorJitter{Brightness: 0.4, Contrast: 0.4, Saturation: 0.4, Hue: 0.1, P: 0.8},
		"strong":    ColorJitter{Brightness: 0.9, Contrast: 0.9, Saturation: 0.9, Hue: 0.5, P: 1},
		"grayscale": RandomGrayscale{P: 0.5},
		"apply":     RandomApply{Aug: RandomGrayscale{P: 1}, P: 0.5},
	}
}

func TestImageAugmentersInvariants(t *testing.T) {
	shapes := [][3]int{{3, 32, 32}, {3, 7, 13}, {1, 28, 28}, {3, 1, 1}, {2, 5, 4}}
	for name, aug := range imageAugmenters() {
		t.Run(name, func(t *testing.T) {
			for _, sh := range shapes {
				c, h, w := sh[0], sh[1], sh[2]
				if err := ValidateImageAugmenter(aug, c, h, w); err != nil {
					t.Fatal(err)
				}
				inputs := [][]float32{imgRand(c, h, w, 1), make([]float32, c*h*w), slices.Repeat([]float32{1}, c*h*w)}
				for k, src := range inputs {
					keep := slices.Clone(src)
					for seed := uint64(0); seed < 30; seed++ {
						dst := make([]float32, len(src))
						aug.Augment(dst, src, c, h, w, imgRNG(seed))
						if !slices.Equal(src, keep) {
							t.Fatalf("%v input %d: the source was modified", sh, k)
						}
						for i, v := range dst {
							if !(v >= 0 && v <= 1) {
								t.Fatalf("%v input %d seed %d: value %d = %v outside [0,1]", sh, k, seed, i, v)
							}
						}
						again := make([]float32, len(src))
						aug.Augment(again, src, c, h, w, imgRNG(seed))
						if !slices.Equal(dst, again) {
							t.Fatalf("%v seed %d: not deterministic", sh, seed)
						}
						inPlace := slices.Clone(src)
						aug.Augment(inPlace, inPlace, c, h, w, imgRNG(seed))
						if !slices.Equal(dst, inPlace) {
							t.Fatalf("%v seed %d: in place differs from out of place by %g", sh, seed, imgMaxDiff(dst, inPlace))
						}
					}
				}
			}
			// Different seeds give different views of a textured image.
			src := imgRand(3, 32, 32, 5)
			distinct := map[string]bool{}
			for seed := uint64(0); seed < 20; seed++ {
				dst := make([]float32, len(src))
				aug.Augment(dst, src, 3, 32, 32, imgRNG(seed))
				distinct[string(imgBytes(dst))] = true
			}
			if len(distinct) < 2 {
				t.Fatalf("20 seeds gave %d distinct outputs", len(distinct))
			}
		})
	}
}

func imgBytes(x []float32) []byte {
	b := make([]byte, 0, 4*len(x))
	for _, v := range x {
		u := math.Float32bits(v)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return b
}

func TestHorizontalFlip(t *testing.T) {
	c, h, w := 3, 4, 5
	src := imgRand(c, h, w, 2)
	once, twice := make([]float32, len(src)), make([]float32, len(src))
	flip := HorizontalFlip{P: 1}
	flip.Augment(once, src, c, h, w, imgRNG(1))
	for k := 0; k < c; k++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				if once[(k*h+y)*w+x] != src[(k*h+y)*w+(w-1-x)] {
					t.Fatalf("flip at (%d,%d,%d) is not the mirrored value", k, y, x)
				}
			}
		}
	}
	flip.Augment(twice, once, c, h, w, imgRNG(2))
	if !slices.Equal(twice, src) {
		t.Fatal("flipping twice is not the identity")
	}
	never := make([]float32, len(src))
	HorizontalFlip{P: 0}.Augment(never, src, c, h, w, imgRNG(3))
	if !slices.Equal(never, src) {
		t.Fatal("P = 0 changed the image")
	}
}

// refResize is PyTorch's upsample_bilinear2d (align_corners=False) on one
// channel, written in float64 in its own form: source coordinate, then the
// four weights h0λ·w0λ, h0λ·w1λ, h1λ·w0λ, h1λ·w1λ.
func refResize(in [][]float64, outH, outW int) [][]float64 {
	inH, inW := len(in), len(in[0])
	out := make([][]float64, outH)
	for y := range out {
		out[y] = make([]float64, outW)
		sy := math.Max(float64(inH)/float64(outH)*(float64(y)+0.5)-0.5, 0)
		y0 := int(sy)
		y1 := y0
		if y0 < inH-1 {
			y1++
		}
		h1l := sy - float64(y0)
		h0l := 1 - h1l
		for x := range out[y] {
			sx := math.Max(float64(inW)/float64(outW)*(float64(x)+0.5)-0.5, 0)
			x0 := int(sx)
			x1 := x0
			if x0 < inW-1 {
				x1++
			}
			w1l := sx - float64(x0)
			w0l := 1 - w1l
			out[y][x] = h0l*(w0l*in[y0][x0]+w1l*in[y0][x1]) + h1l*(w0l*in[y1][x0]+w1l*in[y1][x1])
		}
	}
	return out
}

func TestResizeCrop(t *testing.T) {
	// Known value: torch.nn.functional.interpolate of [[1,2],[3,4]] to 4×4,
	// bilinear, align_corners=False.
	want := []float32{
		1, 1.25, 1.75, 2,
		1.5, 1.75, 2.25, 2.5,
		2.5, 2.75, 3.25, 3.5,
		3, 3.25, 3.75, 4,
	}
	src := []float32{1, 2, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0} // the 2×2 in the top-left of a 4×4
	dst := make([]float32, 16)
	ResizeCrop(dst, src, 1, 4, 4, 0, 0, 2, 2)
	if !slices.Equal(dst, want) {
		t.Fatalf("got %v, want %v", dst, want)
	}
	// Random regions of random images against the float64 reference.
	r := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 200; trial++ {
		c, h, w := 1+r.IntN(3), 1+r.IntN(20), 1+r.IntN(20)
		img := imgRand(c, h, w, uint64(trial))
		ch, cw := 1+r.IntN(h), 1+r.IntN(w)
		top, left := r.IntN(h-ch+1), r.IntN(w-cw+1)
		got := make([]float32, len(img))
		ResizeCrop(got, img, c, h, w, top, left, ch, cw)
		for k := 0; k < c; k++ {
			region := make([][]float64, ch)
			for y := range region {
				region[y] = make([]float64, cw)
				for x := range region[y] {
					region[y][x] = float64(img[(k*h+top+y)*w+left+x])
				}
			}
			ref := refResize(region, h, w)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					if d := math.Abs(float64(got[(k*h+y)*w+x]) - ref[y][x]); d > 2e-6 {
						t.Fatalf("trial %d (%d×%d×%d, region %d,%d %d×%d): (%d,%d,%d) = %v, reference %v", trial, c, h, w, top, left, ch, cw, k, y, x, got[(k*h+y)*w+x], ref[y][x])
					}
				}
			}
		}
	}
}

func TestRandomResizedCropIdentity(t *testing.T) {
	crop := RandomResizedCrop{Scale: [2]float64{1, 1}, Ratio: [2]float64{1, 1}}
	for _, n := range []int{1, 5, 32} {
		src := imgRand(3, n, n, uint64(n))
		dst := make([]float32, len(src))
		crop.Augment(dst, src, 3, n, n, imgRNG(uint64(n)))
		if !slices.Equal(dst, src) {
			t.Fatalf("%d×%d: scale 1, ratio 1 is not the identity (max diff %g)", n, n, imgMaxDiff(dst, src))
		}
	}
}

func TestCropParams(t *testing.T) {
	type region struct{ top, left, h, w int }
	tests := []struct {
		name  string
		crop  RandomResizedCrop
		h, w  int
		check func(r region) bool
		// fixed, when set, is the only region allowed.
		fixed *region
	}{
		{"quarter squares", RandomResizedCrop{Scale: [2]float64{0.25, 0.25}, Ratio: [2]float64{1, 1}}, 32, 32,
			func(r region) bool { return r.h == 16 && r.w == 16 }, nil},
		{"wide halves", RandomResizedCrop{Scale: [2]float64{0.5, 0.5}, Ratio: [2]float64{2, 2}}, 32, 32,
			func(r region) bool { return r.h == 16 && r.w == 32 && r.left == 0 }, nil},
		{"fallback, ratio holds 1", RandomResizedCrop{Scale: [2]float64{2, 3}}, 32, 32, nil, &region{0, 0, 32, 32}},
		{"fallback, too square", RandomResizedCrop{Scale: [2]float64{2, 3}, Ratio: [2]float64{2, 3}}, 32, 32, nil, &region{8, 0, 16, 32}},
		{"fallback, too wide", RandomResizedCrop{Scale: [2]float64{2, 3}, Ratio: [2]float64{0.5, 1}}, 20, 40, nil, &region{0, 10, 20, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := imgRNG(4)
			tops := map[int]bool{}
			for range 2000 {
				top, left, ch, cw := tt.crop.CropParams(tt.h, tt.w, rng)
				r := region{top, left, ch, cw}
				if top < 0 || left < 0 || ch < 1 || cw < 1 || top+ch > tt.h || left+cw > tt.w {
					t.Fatalf("region %+v outside %d×%d", r, tt.h, tt.w)
				}
				if tt.fixed != nil && r != *tt.fixed {
					t.Fatalf("region %+v, want %+v", r, *tt.fixed)
				}
				if tt.check != nil && !tt.check(r) {
					t.Fatalf("unexpected region %+v", r)
				}
				tops[top] = true
			}
			if tt.fixed == nil && len(tops) != tt.h-16+1 {
				t.Fatalf("%d distinct top offsets, want all %d", len(tops), tt.h-16+1)
			}
		})
	}
	// The SimCLR range on 32×32: aspect ratios are symmetric in log, within
	// [3/4, 4/3] up to rounding, and areas within [0.08, 1] up to rounding.
	rng := imgRNG(5)
	var sumLog float64
	const n = 20000
	for range n {
		_, _, ch, cw := RandomResizedCrop{}.CropParams(32, 32, rng)
		lr := math.Log(float64(cw) / float64(ch))
		sumLog += lr
		slack := math.Log((float64(min(ch, cw)) + 1) / float64(min(ch, cw)))
		if math.Abs(lr) > math.Log(4.0/3)+2*slack {
			t.Fatalf("crop %d×%d: aspect outside [3/4, 4/3] beyond rounding", ch, cw)
		}
		if a := float64(ch*cw) / 1024; a < 0.05 {
			t.Fatalf("crop %d×%d: area fraction %.3f below 0.08 beyond rounding", ch, cw, a)
		}
	}
	if m := sumLog / n; math.Abs(m) > 0.01 {
		t.Fatalf("mean log aspect ratio %.4f, want about 0 (log-uniform, symmetric)", m)
	}
	bad := []RandomResizedCrop{{Scale: [2]float64{0, 1}}, {Scale: [2]float64{0.5, 0.4}}, {Ratio: [2]float64{-1, 1}}, {Ratio: [2]float64{1, math.Inf(1)}}}
	for _, b := range bad {
		if err := b.Validate(3, 32, 32); err == nil {
			t.Errorf("%v validates", b)
		}
	}
}

// refRGBToHSV and refHSVToRGB are Python's colorsys in float64 (the
// algorithm torchvision's tensor functions vectorise).
func refRGBToHSV(r, g, b float64) (h, s, v float64) {
	maxc, minc := math.Max(r, math.Max(g, b)), math.Min(r, math.Min(g, b))
	v = maxc
	if minc == maxc {
		return 0, 0, v
	}
	s = (maxc - minc) / maxc
	rc, gc, bc := (maxc-r)/(maxc-minc), (maxc-g)/(maxc-minc), (maxc-b)/(maxc-minc)
	switch {
	case r == maxc:
		h = bc - gc
	case g == maxc:
		h = 2 + rc - bc
	default:
		h = 4 + gc - rc
	}
	h = h / 6
	return h - math.Floor(h), s, v
}

func refHSVToRGB(h, s, v float64) (r, g, b float64) {
	if s == 0 {
		return v, v, v
	}
	i := int(h * 6)
	f := h*6 - float64(i)
	p, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	switch i % 6 {
	case 0:
		return v, t, p
	case 1:
		return q, v, p
	case 2:
		return p, v, t
	case 3:
		return p, q, v
	case 4:
		return t, p, v
	}
	return v, p, q
}

func TestColorAdjustmentsReference(t *testing.T) {
	const c, h, w = 3, 6, 7
	hw := h * w
	for seed := uint64(0); seed < 20; seed++ {
		src := imgRand(c, h, w, seed)
		src[0], src[hw], src[2*hw] = 0.5, 0.5, 0.5 // a grey pixel
		src[1], src[hw+1], src[2*hw+1] = 1, 0, 0   // pure red
		r := rand.New(rand.NewPCG(seed, 3))
		f := float32(0.6 + 0.8*r.Float64())
		delta := float32(r.Float64() - 0.5)
		luma := func(x []float32, i int) float64 {
			return LumaR*float64(x[i]) + LumaG*float64(x[hw+i]) + LumaB*float64(x[2*hw+i])
		}
		clamp := func(v float64) float64 { return math.Min(math.Max(v, 0), 1) }
		var meanLuma float64
		for i := 0; i < hw; i++ {
			meanLuma += luma(src, i) / float64(hw)
		}
		got := make([]float32, len(src))
		check := func(what string, ref func(k, i int) float64, tol float64) {
			t.Helper()
			for k := 0; k < c; k++ {
				for i := 0; i < hw; i++ {
					if d := math.Abs(float64(got[k*hw+i]) - ref(k, i)); d > tol {
						t.Fatalf("seed %d %s: channel %d pixel %d = %v, reference %v", seed, what, k, i, got[k*hw+i], ref(k, i))
					}
				}
			}
		}
		AdjustBrightness(got, src, f)
		check("brightness", func(k, i int) float64 { return clamp(float64(f) * float64(src[k*hw+i])) }, 1e-6)
		AdjustContrast(got, src, c, h, w, f)
		check("contrast", func(k, i int) float64 {
			return clamp(float64(f)*float64(src[k*hw+i]) + (1-float64(f))*meanLuma)
		}, 1e-6)
		AdjustSaturation(got, src, c, h, w, f)
		check("saturation", func(k, i int) float64 {
			return clamp(float64(f)*float64(src[k*hw+i]) + (1-float64(f))*luma(src, i))
		}, 1e-6)
		AdjustHue(got, src, c, h, w, delta)
		check("hue", func(k, i int) float64 {
			hh, s, v := refRGBToHSV(float64(src[i]), float64(src[hw+i]), float64(src[2*hw+i]))
			hh += float64(delta)
			hh -= math.Floor(hh)
			rgb := [3]float64{}
			rgb[0], rgb[1], rgb[2] = refHSVToRGB(hh, s, v)
			return rgb[k]
		}, 2e-5)
		Grayscale(got, src, h, w)
		check("grayscale", func(k, i int) float64 { return luma(src, i) }, 1e-6)
	}
	// Known values: a third of the wheel turns red into green, and half
	// into cyan.
	for _, tt := range []struct {
		delta   float32
		r, g, b float32
	}{{1.0 / 3, 0, 1, 0}, {0.5, 0, 1, 1}, {-1.0 / 3, 0, 0, 1}} {
		px := []float32{1, 0, 0}
		AdjustHue(px, px, 3, 1, 1, tt.delta)
		if imgMaxDiff(px, []float32{tt.r, tt.g, tt.b}) > 1e-6 {
			t.Fatalf("red shifted by %v = %v, want %v %v %v", tt.delta, px, tt.r, tt.g, tt.b)
		}
	}
}

func TestHSVRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		rgb := [3]float32{r.Float32(), r.Float32(), r.Float32()}
		if r.IntN(10) == 0 {
			rgb[1] = rgb[0]
		}
		h, s, v := RGBToHSV(rgb[0], rgb[1], rgb[2])
		if !(h >= 0 && h < 1) || !(s >= 0 && s <= 1) || v != max(rgb[0], rgb[1], rgb[2]) {
			t.Fatalf("RGBToHSV(%v) = %v %v %v", rgb, h, s, v)
		}
		r2, g2, b2 := HSVToRGB(h, s, v)
		if imgMaxDiff([]float32{r2, g2, b2}, rgb[:]) > 1e-5 {
			t.Fatalf("round trip %v -> %v %v %v", rgb, r2, g2, b2)
		}
	}
}

func TestColorJitterIdentityCases(t *testing.T) {
	src := imgRand(3, 8, 8, 3)
	for name, aug := range map[string]ImageAugmenter{
		"zero strengths":    ColorJitter{P: 1},
		"P = 0":             ColorJitter{Brightness: 0.9, Contrast: 0.9, Saturation: 0.9, Hue: 0.5},
		"factors of one":    RandomApply{Aug: ColorJitter{P: 1}, P: 1},
		"grayscale P = 0":   RandomGrayscale{},
		"grey image, hue":   ColorJitter{Hue: 0.5, P: 1},
		"empty compose":     ImageCompose{},
		"nil-only compose":  ImageCompose{Augs: []ImageAugmenter{nil}},
		"random apply, nil": RandomApply{P: 1},
	} {
		in := src
		if strings.HasPrefix(name, "grey image") {
			in = make([]float32, len(src)) // a grey image: all channels equal
			for i := 0; i < 64; i++ {
				in[i], in[64+i], in[128+i] = src[i], src[i], src[i]
			}
		}
		for seed := uint64(0); seed < 20; seed++ {
			dst := make([]float32, len(in))
			aug.Augment(dst, in, 3, 8, 8, imgRNG(seed))
			if d := imgMaxDiff(dst, in); d > 1e-6 {
				t.Fatalf("%s seed %d: changed the image by %g", name, seed, d)
			}
		}
	}
	// One channel: saturation, hue and grayscale do nothing.
	grey := imgRand(1, 5, 5, 4)
	out := make([]float32, 25)
	ColorJitter{Saturation: 0.9, Hue: 0.5, P: 1}.Augment(out, grey, 1, 5, 5, imgRNG(1))
	RandomGrayscale{P: 1}.Augment(out, out, 1, 5, 5, imgRNG(1))
	if !slices.Equal(out, grey) {
		t.Fatal("saturation, hue or grayscale changed a one-channel image")
	}
}

func TestColorJitterParams(t *testing.T) {
	j := ColorJitter{Brightness: 0.4, Contrast: 0.4, Saturation: 0.4, Hue: 0.1, P: 1}
	rng := imgRNG(6)
	firsts := map[int]int{}
	for range 4000 {
		p := j.Params(rng)
		perm := slices.Clone(p.Order[:])
		slices.Sort(perm)
		if !slices.Equal(perm, []int{0, 1, 2, 3}) {
			t.Fatalf("order %v is not a permutation", p.Order)
		}
		firsts[p.Order[0]]++
		for _, f := range []float32{p.Brightness, p.Contrast, p.Saturation} {
			if f < 0.6 || f > 1.4 {
				t.Fatalf("factor %v outside [0.6, 1.4]", f)
			}
		}
		if p.Hue < -0.1 || p.Hue > 0.1 || p.Use != [4]bool{true, true, true, true} {
			t.Fatalf("hue %v, use %v", p.Hue, p.Use)
		}
	}
	for op := 0; op < 4; op++ { // each adjustment comes first about 1/4 of the time
		if n := firsts[op]; n < 1000-5*27 || n > 1000+5*27 {
			t.Fatalf("adjustment %d first %d times in 4000, want about 1000", op, n)
		}
	}
	// Saturation at factor 0 is grayscale, contrast at 0 the mean luma.
	src := imgRand(3, 4, 4, 7)
	sat, gray := make([]float32, 48), make([]float32, 48)
	ApplyJitter(sat, src, 3, 4, 4, JitterParams{Order: [4]int{2, 0, 1, 3}, Saturation: 0, Use: [4]bool{false, false, true, false}})
	Grayscale(gray, src, 4, 4)
	if d := imgMaxDiff(sat, gray); d > 1e-6 {
		t.Fatalf("saturation 0 differs from grayscale by %g", d)
	}
	bad := []ColorJitter{{Brightness: -1}, {Contrast: math.NaN()}, {Hue: 0.6}, {P: 2}, {Saturation: math.Inf(1)}}
	for _, b := range bad {
		if err := b.Validate(3, 4, 4); err == nil {
			t.Errorf("%+v validates", b)
		}
	}
}

// TestApplicationRates checks that the random choices happen with their
// probabilities (binomial counts within 5 standard deviations).
func TestApplicationRates(t *testing.T) {
	const n = 4000
	src := imgRand(3, 6, 6, 8)
	tests := []struct {
		aug     ImageAugmenter
		p       float64
		changed func(dst []float32) bool
	}{
		{HorizontalFlip{P: 0.5}, 0.5, nil},
		{RandomGrayscale{P: 0.2}, 0.2, func(d []float32) bool { return d[0] == d[36] && d[0] == d[72] }},
		{ColorJitter{Brightness: 0.4, Contrast: 0.4, Saturation: 0.4, Hue: 0.1, P: 0.8}, 0.8, nil},
		{RandomApply{Aug: HorizontalFlip{P: 1}, P: 0.3}, 0.3, nil},
	}
	for _, tt := range tests {
		count := 0
		dst := make([]float32, len(src))
		for seed := uint64(0); seed < n; seed++ {
			tt.aug.Augment(dst, src, 3, 6, 6, ImageRNG(99, int(seed)))
			if tt.changed != nil && tt.changed(dst) || tt.changed == nil && !slices.Equal(dst, src) {
				count++
			}
		}
		sd := math.Sqrt(n * tt.p * (1 - tt.p))
		if math.Abs(float64(count)-n*tt.p) > 5*sd {
			t.Errorf("%v applied %d times in %d, want about %.0f", tt.aug, count, n, n*tt.p)
		}
	}
}

func TestNormalize(t *testing.T) {
	src := imgRand(3, 2, 2, 9)
	n := Normalize{Mean: []float32{0.1, 0.2, 0.3}, Std: []float32{0.5, 0.25, 2}}
	dst := make([]float32, 12)
	n.Augment(dst, src, 3, 2, 2, nil)
	for i := range dst {
		k := i / 4
		if want := (float64(src[i]) - float64(n.Mean[k])) / float64(n.Std[k]); math.Abs(float64(dst[i])-want) > 1e-6 {
			t.Fatalf("value %d = %v, want %v", i, dst[i], want)
		}
	}
	one := Normalize{Mean: []float32{0.5}, Std: []float32{0.5}}
	one.Augment(dst, src, 3, 2, 2, nil)
	if want := (src[11] - 0.5) / 0.5; dst[11] != want {
		t.Fatalf("broadcast: %v, want %v", dst[11], want)
	}
	for _, b := range []Normalize{{Mean: []float32{0, 0}, Std: []float32{1, 1}}, {Mean: []float32{0}, Std: []float32{0}}, {}} {
		if err := b.Validate(3, 2, 2); err == nil {
			t.Errorf("%v validates for 3 channels", b)
		}
	}
	// Appended to the SimCLR pipeline, a batch checks it before starting.
	aug := SimCLRCIFAR()
	aug.Augs = append(aug.Augs, Normalize{Mean: []float32{0.5, 0.5}, Std: []float32{1, 1}})
	err := AugmentBatch(aug, make([]float32, 12), src, 1, 3, 2, 2, 1, 1)
	if err == nil || !strings.Contains(err.Error(), "compose, part 4: normalize: 2 means") {
		t.Fatalf("error %v", err)
	}
}

func TestAugmentBatchParallelEqualsSequential(t *testing.T) {
	const n, c, h, w = 37, 3, 32, 32
	d := c * h * w
	src := imgRand(n*c, h, w, 10)
	aug := SimCLRCIFAR()
	// Reference: a plain loop with ImageRNG.
	want := make([]float32, len(src))
	for k := 0; k < n; k++ {
		aug.Augment(want[k*d:(k+1)*d], src[k*d:(k+1)*d], c, h, w, ImageRNG(42, k))
	}
	for _, workers := range []int{1, 2, 3, 8, 0} {
		got := make([]float32, len(src))
		if err := AugmentBatch(aug, got, src, n, c, h, w, 42, workers); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d workers: differs from the sequential loop", workers)
		}
	}
	other := make([]float32, len(src))
	AugmentBatch(aug, other, src, n, c, h, w, 43, 2)
	if slices.Equal(other, want) {
		t.Fatal("seeds 42 and 43 gave the same batch")
	}
	// Gather: images picked from a dataset equal the batch of the copies.
	idx := []int{5, 0, 36, 5}
	picked := make([]float32, len(idx)*d)
	for k, i := range idx {
		copy(picked[k*d:], src[i*d:(i+1)*d])
	}
	wantG := make([]float32, len(picked))
	AugmentBatch(aug, wantG, picked, len(idx), c, h, w, 7, 1)
	gotG := make([]float32, len(picked))
	if err := AugmentGather(aug, gotG, src, idx, c, h, w, 7, 2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotG, wantG) {
		t.Fatal("AugmentGather differs from AugmentBatch on the gathered images")
	}
	// The two repeated images got different views (different positions).
	if slices.Equal(gotG[:d], gotG[3*d:]) {
		t.Fatal("positions 0 and 3 of the batch got the same view")
	}
	// A nil augmenter copies.
	cp := make([]float32, len(src))
	AugmentBatch(nil, cp, src, n, c, h, w, 1, 2)
	if !slices.Equal(cp, src) {
		t.Fatal("nil augmenter did not copy")
	}
}

func TestAugmentBatchErrors(t *testing.T) {
	src := make([]float32, 2*3*4*4)
	tests := []struct {
		name     string
		run      func() error
		contains string
	}{
		{"short dst", func() error { return AugmentBatch(SimCLRCIFAR(), src[:10], src, 2, 3, 4, 4, 1, 1) }, "dst has 10 values"},
		{"bad shape", func() error { return AugmentBatch(SimCLRCIFAR(), src, src, 2, 0, 4, 4, 1, 1) }, "expected positive sizes"},
		{"negative n", func() error { return AugmentBatch(nil, src, src, -1, 3, 4, 4, 1, 1) }, "n = -1"},
		{"bad flip", func() error { return AugmentBatch(HorizontalFlip{P: 1.5}, src, src, 2, 3, 4, 4, 1, 1) }, "P = 1.5"},
		{"gather index", func() error {
			return AugmentGather(nil, make([]float32, 48), src, []int{2}, 3, 4, 4, 1, 1)
		}, "idx[0] = 2"},
		{"gather dst", func() error { return AugmentGather(nil, src, src, []int{0}, 3, 4, 4, 1, 1) }, "expected len(idx)×c×h×w"},
		{"gather dataset", func() error { return AugmentGather(nil, src[:48], src[:47], []int{0}, 3, 4, 4, 1, 1) }, "multiple of"},
	}
	for _, tt := range tests {
		if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.contains)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "expected c×h×w") {
			t.Fatalf("Augment with a wrong length: recovered %v", r)
		}
	}()
	HorizontalFlip{}.Augment(src[:5], src[:5], 3, 4, 4, imgRNG(1))
}

func TestImageAugmenterStrings(t *testing.T) {
	got := SimCLRCIFAR().String()
	want := "compose(random_resized_crop(scale=[0.08 1], ratio=[0.75 1.3333333333333333]), horizontal_flip(p=0.5), color_jitter(0.4, 0.4, 0.4, 0.1, p=0.8), random_grayscale(p=0.2))"
	if got != want {
		t.Fatalf("String() = %s\nwant        %s", got, want)
	}
	if s := (RandomApply{Aug: Normalize{Mean: []float32{0}, Std: []float32{1}}, P: 0.5}).String(); s != "random_apply(normalize(mean=[0], std=[1]), p=0.5)" {
		t.Fatalf("String() = %s", s)
	}
}

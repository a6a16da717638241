package data

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/internal/hsv"
)

// SynthImageConfig parameterises GenerateImages.
type SynthImageConfig struct {
	Images  int // number of images, > 0
	Classes int // number of classes, 1..NumSynthImageClasses (1..NumSynthShapes for one channel)
	// Channels is 3 (RGB) or 1 (grey); 0 means 3.
	Channels int
	// Height and Width are the image size, each 8..1024; 0 means 32.
	Height, Width int
	// Noise is the standard deviation, in [0, 1], of the Gaussian noise
	// added to every value before clamping to [0, 1].
	Noise float64
}

// NumSynthShapes is the number of shapes GenerateImages draws.
const NumSynthShapes = 8

// NumSynthImageClasses is the largest number of classes GenerateImages
// makes for colour images: every shape in two colours.
const NumSynthImageClasses = 2 * NumSynthShapes

var synthShapes = [NumSynthShapes]string{"disk", "square", "triangle", "cross", "ring", "h-stripes", "v-stripes", "checker"}

// SynthImageClass describes class c of GenerateImages with classes
// classes: its shape and the hue of that shape in [0,1) (the hue matters
// for colour images only). It returns "" and 0 when c is out of range.
func SynthImageClass(c, classes int) (shape string, hue float64) {
	if c < 0 || c >= classes || classes > NumSynthImageClasses {
		return "", 0
	}
	return synthShapes[c%NumSynthShapes], synthHue(c, classes)
}

// synthHue spreads the classes' hues evenly around the colour wheel, so
// two classes with the same shape get far-apart colours.
func synthHue(c, classes int) float64 {
	return float64(c) / float64(classes)
}

// DefaultSynthImageConfig is the set of the image demo: 2,000 RGB 32×32
// images in 10 classes, noise 0.05.
func DefaultSynthImageConfig() SynthImageConfig {
	return SynthImageConfig{Images: 2000, Classes: 10, Channels: 3, Height: 32, Width: 32, Noise: 0.05}
}

// GenerateImages makes a balanced labelled set of synthetic images named
// "synthetic-images", a deterministic function of cfg and seed, for tests
// and demos. Class c is a shape (disk, square, triangle, cross, ring,
// horizontal stripes, vertical stripes, checkerboard for c mod 8) filled
// with a class colour of hue c/Classes, drawn on a random background:
//
//   - the shape's centre, size (a radius of 22-38% of the smaller side) and
//     rotation (±0.3 rad) are random, as are its saturation and brightness
//     and a small jitter of its hue (±0.03);
//   - the background has a random weakly saturated colour and a linear
//     gradient; one image in two has a dark shape on a light background;
//   - every value gets Gaussian noise of standard deviation Noise, then is
//     clamped to [0, 1].
//
// Edges are anti-aliased by 2×2 supersampling. The class counts differ by
// at most one and the order of classes is shuffled. With one channel the
// value is the luma of the colour image, so classes are told apart by
// shape only and at most NumSynthShapes classes are allowed.
func GenerateImages(cfg SynthImageConfig, seed uint64) (*ImageSet, error) {
	if cfg.Channels == 0 {
		cfg.Channels = 3
	}
	if cfg.Height == 0 {
		cfg.Height = 32
	}
	if cfg.Width == 0 {
		cfg.Width = 32
	}
	maxClasses := NumSynthImageClasses
	if cfg.Channels == 1 {
		maxClasses = NumSynthShapes
	}
	switch {
	case cfg.Images < 1:
		return nil, fmt.Errorf("generate images: Images = %d: expected at least 1", cfg.Images)
	case cfg.Channels != 1 && cfg.Channels != 3:
		return nil, fmt.Errorf("generate images: Channels = %d: expected 1 or 3", cfg.Channels)
	case cfg.Classes < 1 || cfg.Classes > maxClasses:
		return nil, fmt.Errorf("generate images: Classes = %d: expected 1..%d for %d channel(s)", cfg.Classes, maxClasses, cfg.Channels)
	case cfg.Height < 8 || cfg.Height > 1024 || cfg.Width < 8 || cfg.Width > 1024:
		return nil, fmt.Errorf("generate images: size %d×%d: expected 8..1024 each", cfg.Height, cfg.Width)
	case !(cfg.Noise >= 0 && cfg.Noise <= 1):
		return nil, fmt.Errorf("generate images: Noise = %g: expected [0, 1]", cfg.Noise)
	}
	d := cfg.Channels * cfg.Height * cfg.Width
	if cfg.Images > MaxImageValues/d {
		return nil, fmt.Errorf("generate images: %d images of %d values: expected at most %d values", cfg.Images, d, MaxImageValues)
	}

	master := rand.New(rand.NewPCG(seed, 0x5eed1a6e))
	labels := make([]int, cfg.Images)
	for i := range labels {
		labels[i] = i % cfg.Classes
	}
	master.Shuffle(len(labels), func(i, j int) { labels[i], labels[j] = labels[j], labels[i] })

	s := &ImageSet{Name: "synthetic-images", N: cfg.Images, C: cfg.Channels, H: cfg.Height, W: cfg.Width,
		Pixels: make([]float32, cfg.Images*d), Labels: labels, NumClasses: cfg.Classes,
		ClassNames: make([]string, cfg.Classes)}
	for c := range s.ClassNames {
		shape, hue := SynthImageClass(c, cfg.Classes)
		if cfg.Channels == 1 {
			s.ClassNames[c] = shape
		} else {
			s.ClassNames[c] = fmt.Sprintf("%s/hue%.2f", shape, hue)
		}
	}
	rgb := make([]float32, 3*cfg.Height*cfg.Width)
	for i := 0; i < cfg.Images; i++ {
		r := rand.New(rand.NewPCG(seed, uint64(i)+1))
		drawSynthImage(rgb, cfg, labels[i], r)
		out := s.Pixels[i*d : (i+1)*d]
		hw := cfg.Height * cfg.Width
		if cfg.Channels == 3 {
			copy(out, rgb)
		} else {
			for p := 0; p < hw; p++ {
				out[p] = 0.299*rgb[p] + 0.587*rgb[hw+p] + 0.114*rgb[2*hw+p]
			}
		}
		if cfg.Noise > 0 {
			for p := range out {
				out[p] += float32(cfg.Noise * r.NormFloat64())
			}
		}
		for p, v := range out {
			out[p] = min(max(v, 0), 1)
		}
	}
	return s, nil
}

// drawSynthImage paints one noiseless RGB image of class c into rgb (3 planes).
func drawSynthImage(rgb []float32, cfg SynthImageConfig, c int, r *rand.Rand) {
	h, w := cfg.Height, cfg.Width
	hw := h * w
	hue := synthHue(c, cfg.Classes) + 0.06*(r.Float64()-0.5)
	fgS, fgV := 0.6+0.4*r.Float64(), 0.6+0.4*r.Float64()
	bgH, bgS, bgV := r.Float64(), 0.25*r.Float64(), 0.05+0.3*r.Float64()
	if r.IntN(2) == 1 { // dark shape on a light background
		fgV, bgV = 0.25+0.2*r.Float64(), 0.7+0.3*r.Float64()
	}
	fr, fg, fb := synthHSVToRGB(hue, fgS, fgV)
	br, bg, bb := synthHSVToRGB(bgH, bgS, bgV)
	gradA := 2 * math.Pi * r.Float64()
	gradAmp := 0.15 * r.Float64()
	side := float64(min(h, w))
	rad := side * (0.22 + 0.16*r.Float64())
	cy := float64(h) * (0.3 + 0.4*r.Float64())
	cx := float64(w) * (0.3 + 0.4*r.Float64())
	rot := 0.6 * (r.Float64() - 0.5)
	cosR, sinR := math.Cos(rot), math.Sin(rot)
	shape := c % NumSynthShapes
	gx, gy := math.Cos(gradA), math.Sin(gradA)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			// Coverage of the shape by 2×2 subsamples.
			cover := 0.0
			for sy := 0; sy < 2; sy++ {
				for sx := 0; sx < 2; sx++ {
					px := float64(x) + 0.25 + 0.5*float64(sx) - cx
					py := float64(y) + 0.25 + 0.5*float64(sy) - cy
					dx := (cosR*px + sinR*py) / rad
					dy := (-sinR*px + cosR*py) / rad
					if inSynthShape(shape, dx, dy) {
						cover += 0.25
					}
				}
			}
			g := gradAmp * ((float64(x)/float64(w)-0.5)*gx + (float64(y)/float64(h)-0.5)*gy)
			p := y*w + x
			rgb[p] = float32(cover*fr + (1-cover)*(br+g))
			rgb[hw+p] = float32(cover*fg + (1-cover)*(bg+g))
			rgb[2*hw+p] = float32(cover*fb + (1-cover)*(bb+g))
		}
	}
}

// inSynthShape reports whether the point (dx, dy), in units of the shape's
// radius from its centre, lies inside shape.
func inSynthShape(shape int, dx, dy float64) bool {
	ax, ay := math.Abs(dx), math.Abs(dy)
	inSquare := ax <= 0.85 && ay <= 0.85
	switch shape {
	case 0: // disk
		return dx*dx+dy*dy <= 1
	case 1: // square
		return inSquare
	case 2: // triangle, apex up
		return dy >= -0.9 && dy <= 0.8 && ax <= 0.55*(dy+0.9)
	case 3: // cross
		return (ax <= 0.3 && ay <= 1) || (ay <= 0.3 && ax <= 1)
	case 4: // ring
		d2 := dx*dx + dy*dy
		return d2 <= 1 && d2 >= 0.3
	case 5: // horizontal stripes
		return inSquare && int(math.Floor((dy+0.85)*3))%2 == 0
	case 6: // vertical stripes
		return inSquare && int(math.Floor((dx+0.85)*3))%2 == 0
	default: // checkerboard
		return inSquare && (int(math.Floor((dx+0.85)*2.5))+int(math.Floor((dy+0.85)*2.5)))%2 == 0
	}
}

// synthHSVToRGB converts a colour with hue in [0,1) (wrapped), saturation and
// value in [0,1] to RGB.
func synthHSVToRGB(h, s, v float64) (r, g, b float64) {
	h -= math.Floor(h)
	h6 := h * 6
	i := int(h6) % 6
	f := h6 - math.Floor(h6)
	p, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	return hsv.Sextant(i, v, p, q, t)
}

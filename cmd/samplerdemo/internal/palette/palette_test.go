package palette

import (
	"fmt"
	"image/color"
	"math"
	"testing"
)

// Colour-vision deficiency simulation matrices (Machado, Oliveira &
// Fernandes 2009, severity 1), applied to linear RGB.
var vision = map[string][3][3]float64{
	"normal":       {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	"protanopia":   {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	"deuteranopia": {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	"tritanopia":   {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.146803}, {0.004733, 0.691367, 0.303900}},
}

// lab converts an sRGB colour seen through m to CIELAB (D65).
func lab(c color.NRGBA, m [3][3]float64) [3]float64 {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	l := [3]float64{lin(c.R), lin(c.G), lin(c.B)}
	var s [3]float64
	for i := range 3 {
		for j := range 3 {
			s[i] += m[i][j] * l[j]
		}
		s[i] = min(max(s[i], 0), 1)
	}
	x := 0.4124*s[0] + 0.3576*s[1] + 0.1805*s[2]
	y := 0.2126*s[0] + 0.7152*s[1] + 0.0722*s[2]
	z := 0.0193*s[0] + 0.1192*s[1] + 0.9505*s[2]
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	fx, fy, fz := f(x/0.95047), f(y), f(z/1.08883)
	return [3]float64{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

// deltaE is the smallest CIE76 colour difference of a and b over the four
// kinds of vision.
func deltaE(a, b color.NRGBA) (float64, string) {
	best, who := math.Inf(1), ""
	for name, m := range vision {
		p, q := lab(a, m), lab(b, m)
		if d := math.Sqrt((p[0]-q[0])*(p[0]-q[0]) + (p[1]-q[1])*(p[1]-q[1]) + (p[2]-q[2])*(p[2]-q[2])); d < best {
			best, who = d, name
		}
	}
	return best, who
}

// TestCyclicNeighboursDiffer: for every C up to Safe, classes c and c+1 mod
// C (neighbours on the demo's ring) differ by ΔE ≥ 24 in normal vision and
// in each simulated dichromacy, which the palette's usual order (orange,
// sky blue, bluish green, yellow, blue, vermillion, reddish purple) fails
// at C = 6: its classes 5 and 0 are vermillion and orange.
func TestCyclicNeighboursDiffer(t *testing.T) {
	const minDE = 24
	cyclicMin := func(cols []color.NRGBA) (float64, string) {
		best, at := math.Inf(1), ""
		for i := range cols {
			j := (i + 1) % len(cols)
			if len(cols) == 2 && i == 1 {
				continue
			}
			if d, who := deltaE(cols[i], cols[j]); d < best {
				best, at = d, fmt.Sprintf("classes %d and %d in %s vision", i, j, who)
			}
		}
		return best, at
	}
	for c := 2; c <= Safe; c++ {
		cols := make([]color.NRGBA, c)
		seen := map[color.NRGBA]bool{}
		for i := range cols {
			cols[i] = Class(i, c)
			if seen[cols[i]] {
				t.Errorf("C=%d: class %d repeats a colour", c, i)
			}
			seen[cols[i]] = true
		}
		if d, at := cyclicMin(cols); d < minDE {
			t.Errorf("C=%d: %s differ by ΔE %.1f, want ≥ %d", c, at, d, minDE)
		}
	}
	usual := []color.NRGBA{orange, skyBlue, green, yellow, blue, vermillion}
	if d, at := cyclicMin(usual); d >= minDE {
		t.Errorf("the usual order at C=6: smallest ΔE %.1f (%s): the test would not catch it", d, at)
	}
}

func TestHex(t *testing.T) {
	h := Hex(3)
	if len(h) != 3 || h[0] != "#56b4e9" || h[2] != "#d55e00" {
		t.Errorf("Hex(3) = %v", h)
	}
	if h := Hex(12); len(h) != 12 || h[0] == h[1] {
		t.Errorf("Hex(12) = %v", h)
	}
}

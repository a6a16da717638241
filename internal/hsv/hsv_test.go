package hsv

import (
	"math"
	"testing"
)

// TestSextant checks the six sextants against the colours at the start of
// each (f = 0, s = 1: t = 0, q = v) computed from the colour wheel: red,
// yellow, green, cyan, blue, magenta, and an out-of-range i taken as 5.
func TestSextant(t *testing.T) {
	for _, tc := range []struct {
		i       int
		r, g, b float64
	}{
		{0, 1, 0, 0}, {1, 1, 1, 0}, {2, 0, 1, 0}, {3, 0, 1, 1}, {4, 0, 0, 1}, {5, 1, 0, 1}, {7, 1, 0, 1},
	} {
		// At the start of sextant i, s = 1, v = 1: p = 0, q = 1, t = 0;
		// the colour named for that hue has q where the wheel rises.
		h := float64(tc.i) / 6
		if tc.i > 5 {
			h = 5.0 / 6
		}
		r, g, b := reference(h)
		if r != tc.r || g != tc.g || b != tc.b {
			t.Fatalf("reference(%g) = %g %g %g, want %g %g %g", h, r, g, b, tc.r, tc.g, tc.b)
		}
		gr, gg, gb := Sextant(tc.i, 1.0, 0, 1, 0)
		if gr != tc.r || gg != tc.g || gb != tc.b {
			t.Errorf("Sextant(%d, v=1, p=0, q=1, t=0) = %g %g %g, want %g %g %g", tc.i, gr, gg, gb, tc.r, tc.g, tc.b)
		}
	}
}

// TestSextantMatchesWheel checks Sextant in both precisions against the
// piecewise-linear colour wheel (each channel as a function of the hue) on
// a grid of hues, saturations and values.
func TestSextantMatchesWheel(t *testing.T) {
	for k := range 60 {
		h := (float64(k) + 0.5) / 60
		for _, s := range []float64{0, 0.3, 1} {
			for _, v := range []float64{0.2, 1} {
				h6 := h * 6
				i := int(h6)
				f := h6 - float64(i)
				p, q, tt := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
				r, g, b := Sextant(i, v, p, q, tt)
				wr, wg, wb := reference(h)
				// The wheel gives the fully saturated colour of value 1;
				// scale it to value v and saturation s.
				want := [3]float64{v * (1 - s + s*wr), v * (1 - s + s*wg), v * (1 - s + s*wb)}
				for c, got := range [3]float64{r, g, b} {
					if math.Abs(got-want[c]) > 1e-12 {
						t.Fatalf("h=%g s=%g v=%g: channel %d = %g, want %g", h, s, v, c, got, want[c])
					}
				}
				r32, g32, b32 := Sextant(i, float32(v), float32(p), float32(q), float32(tt))
				if r32 != float32(r) || g32 != float32(g) || b32 != float32(b) {
					t.Fatalf("h=%g s=%g v=%g: float32 %g %g %g, float64 %g %g %g", h, s, v, r32, g32, b32, r, g, b)
				}
			}
		}
	}
}

// reference is the fully saturated colour of value 1 at hue h ∈ [0,1): each
// channel is 1 within 60° of its primary, 0 beyond 120°, linear between.
func reference(h float64) (r, g, b float64) {
	ch := func(centre float64) float64 {
		d := math.Abs(h*360 - centre)
		d = math.Min(d, 360-d)
		return math.Max(0, math.Min(1, 2-d/60))
	}
	return ch(0), ch(120), ch(240)
}

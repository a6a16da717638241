// Package hsv holds the step of the HSV → RGB conversion that every
// variant shares: placing v, p, q and t by the sextant of the hue. The
// variants differ in precision and in how they compute the sextant and
// p, q, t (augment's float32 copy of torchvision's _hsv2rgb, data's
// float64 colours of the synthetic images), so each keeps that part.
package hsv

// Sextant returns the RGB colour of a hue in sextant i (0 ≤ i < 6, the
// integer part of 6·h; any other i is taken as 5) with value v and
// p = v(1−s), q = v(1−s·f), t = v(1−s(1−f)), f the fractional part of 6·h.
func Sextant[T float32 | float64](i int, v, p, q, t T) (r, g, b T) {
	switch i {
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
	default:
		return v, p, q
	}
}

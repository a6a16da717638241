// Package palette holds the class colours of the teaching demo (its PNG
// pictures and its web page): the Okabe–Ito colour-blind-safe palette,
// ordered so that classes c and c+1 (and C−1 and 0, neighbours on a ring)
// differ most, also as seen with each of the three dichromacies.
package palette

import (
	"fmt"
	"image/color"
	"math"
)

// The Okabe & Ito (2008) palette without black, its yellow darkened a
// little to read on white.
var (
	vermillion = color.NRGBA{0xD5, 0x5E, 0x00, 0xff}
	skyBlue    = color.NRGBA{0x56, 0xB4, 0xE9, 0xff}
	yellow     = color.NRGBA{0xD5, 0xC7, 0x11, 0xff}
	green      = color.NRGBA{0x00, 0x9E, 0x73, 0xff} // bluish green
	orange     = color.NRGBA{0xE6, 0x9F, 0x00, 0xff}
	blue       = color.NRGBA{0x00, 0x72, 0xB2, 0xff}
	purple     = color.NRGBA{0xCC, 0x79, 0xA7, 0xff} // reddish purple
)

// byClasses[C] are the colours of C classes: for each C the choice and
// order of C of the seven colours that maximises the smallest colour
// difference (CIE76 ΔE, the least of normal vision and simulated
// protanopia, deuteranopia and tritanopia) between cyclic neighbours c and
// c+1 mod C, found by trying every ordered choice (TestCyclicNeighboursDiffer
// checks the result: ΔE ≥ 24 everywhere; the palette's usual order put
// orange and vermillion, ΔE 18.3, side by side as classes 5 and 0 of 6).
var byClasses = [][]color.NRGBA{
	2: {blue, vermillion},
	3: {skyBlue, yellow, vermillion},
	4: {orange, skyBlue, vermillion, blue},
	5: {orange, skyBlue, yellow, vermillion, green},
	6: {orange, skyBlue, vermillion, blue, yellow, green},
	7: {orange, skyBlue, blue, yellow, purple, vermillion, green},
}

// Safe is the largest number of classes Class colours from the
// colour-blind-safe palette; beyond it the colours are evenly spaced hues.
const Safe = 7

// Class returns the colour of class c of C.
func Class(c, classes int) color.NRGBA {
	switch {
	case classes <= 1:
		return blue
	case classes <= Safe:
		return byClasses[classes][c%classes]
	}
	return hsv(360*float64(c)/float64(classes), 0.75, 0.85)
}

// Hex returns the colours of C classes as "#rrggbb" strings.
func Hex(classes int) []string {
	out := make([]string, classes)
	for c := range out {
		k := Class(c, classes)
		out[c] = fmt.Sprintf("#%02x%02x%02x", k.R, k.G, k.B)
	}
	return out
}

func hsv(h, s, v float64) color.NRGBA {
	cc := v * s
	x := cc * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := v - cc
	var r, g, b float64
	switch {
	case h < 60:
		r, g = cc, x
	case h < 120:
		r, g = x, cc
	case h < 180:
		g, b = cc, x
	case h < 240:
		g, b = x, cc
	case h < 300:
		r, b = x, cc
	default:
		r, b = cc, x
	}
	return color.NRGBA{uint8(255 * (r + m)), uint8(255 * (g + m)), uint8(255 * (b + m)), 0xff}
}

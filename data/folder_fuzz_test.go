package data

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"testing"
)

// fuzzFolderMaxPixels is the pixel limit of FuzzDecodeFolderImage, lower
// than MaxFolderImagePixels so that a header claiming a large image does
// not make the fuzzer allocate hundreds of megabytes.
const fuzzFolderMaxPixels = 1 << 16

func FuzzDecodeFolderImage(f *testing.F) {
	gradient := paint(7, 5, func(x, y int) color.Color { return color.RGBA{uint8(30 * x), uint8(50 * y), 99, 255} })
	pal := image.NewPaletted(image.Rect(0, 0, 3, 4), color.Palette{red, color.NRGBA{0, 0, 255, 100}})
	pal.SetColorIndex(1, 1, 1)
	gray16 := image.NewGray16(image.Rect(0, 0, 5, 2))
	gray16.SetGray16(2, 1, color.Gray16{0xfedc})
	alpha := image.NewNRGBA(image.Rect(0, 0, 2, 6))
	alpha.SetNRGBA(1, 3, color.NRGBA{10, 200, 30, 7})
	for _, seed := range [][]byte{
		encodeImage(f, gradient, "png"),
		encodeImage(f, gradient, "jpeg"),
		encodeImage(f, image.NewGray(image.Rect(0, 0, 9, 3)), "jpeg"),
		encodeImage(f, pal, "png"),
		encodeImage(f, gray16, "png"),
		encodeImage(f, alpha, "png"),
		pngWithSize(f, 300, 300),
		pngWithSize(f, 0, 3),
		jpegWithHeight(f, 0),
		[]byte("\x89PNG\r\n\x1a\n"),
		{0xff, 0xd8},
		{},
	} {
		f.Add(seed, uint8(4), false)
		f.Add(seed, uint8(1), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, size uint8, grey bool) {
		sz, ch := 1+int(size%16), 3
		if grey {
			ch = 1
		}
		dst := make([]float32, ch*sz*sz)
		for i := range dst {
			dst[i] = float32(math.NaN())
		}
		var dec folderDecoder
		if err := dec.decode(bytes.NewReader(b), "fuzz.png", sz, ch, fuzzFolderMaxPixels, dst); err != nil {
			return
		}
		// Every value written (no NaN sentinel left), finite, in [0,1].
		for i, v := range dst {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("value %d of %d×%d×%d = %v: expected a finite value in [0,1]", i, ch, sz, sz, v)
			}
		}
	})
}

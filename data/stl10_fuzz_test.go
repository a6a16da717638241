package data

import (
	"bytes"
	"testing"
)

// stl10FuzzX builds an images stream of images·27648 + extra bytes (extra
// may be negative) by repeating pattern (zeros when it is empty). Fuzz
// inputs stay small, so the fuzzer can mutate and minimize them quickly,
// while the streams hold whole images, truncated ones or extra bytes.
func stl10FuzzX(pattern []byte, images uint8, extra int8) []byte {
	n := max(0, int(images%4)*STL10ImageBytes+int(extra))
	x := make([]byte, n)
	if len(pattern) > 0 {
		for i := range x {
			x[i] = pattern[i%len(pattern)]
		}
	}
	return x
}

func FuzzDecodeSTL10(f *testing.F) {
	f.Add([]byte{0, 7, 255, 128}, uint8(1), int8(0), []byte{}, false, uint8(0), uint8(0))
	f.Add([]byte("stl"), uint8(2), int8(0), []byte{}, false, uint8(32), uint8(1))
	f.Add([]byte{9}, uint8(1), int8(-1), []byte{}, false, uint8(0), uint8(0))
	f.Add([]byte{1, 2, 3}, uint8(1), int8(1), []byte{}, false, uint8(7), uint8(0))
	f.Add([]byte{200, 3}, uint8(1), int8(0), []byte{1}, true, uint8(0), uint8(0))
	f.Add([]byte{5}, uint8(2), int8(0), []byte{10, 3}, true, uint8(40), uint8(0))
	f.Add([]byte{5}, uint8(2), int8(0), []byte{10, 3, 1}, true, uint8(1), uint8(2))
	f.Add([]byte{5}, uint8(2), int8(0), []byte{0, 11}, true, uint8(96), uint8(0))
	f.Add([]byte{5}, uint8(3), int8(0), []byte{4, 4}, true, uint8(95), uint8(0))
	f.Add([]byte{}, uint8(0), int8(0), []byte{}, true, uint8(97), uint8(0))
	f.Fuzz(func(t *testing.T, pattern []byte, images uint8, extra int8, y []byte, labelled bool, size, maxImages uint8) {
		x := stl10FuzzX(pattern, images, extra)
		opt := STL10Options{Size: int(size) % 100, Max: int(maxImages) % 8}
		var s *ImageSet
		var err error
		if labelled {
			s, err = DecodeSTL10(bytes.NewReader(x), bytes.NewReader(y), "x", "y", opt)
		} else {
			s, err = DecodeSTL10(bytes.NewReader(x), nil, "x", "", opt)
		}
		if err != nil {
			return
		}
		checkFuzzImages(t, s, -1)
		side := opt.Size
		if side == 0 {
			side = 96
		}
		if s.N < 1 || s.C != 3 || s.H != side || s.W != side {
			t.Fatalf("%d images of %d×%d×%d, want at least 1 of 3×%d×%d", s.N, s.C, s.H, s.W, side, side)
		}
		if s.N*STL10ImageBytes > len(x) || (opt.Max > 0 && s.N > opt.Max) {
			t.Fatalf("%d images from %d bytes with Max %d", s.N, len(x), opt.Max)
		}
		if opt.Max == 0 && len(x) != s.N*STL10ImageBytes {
			t.Fatalf("%d images from %d bytes: not a whole number", s.N, len(x))
		}
		if labelled != (s.Labels != nil) {
			t.Fatalf("labels %v for a stream with labels %v", s.Labels, labelled)
		}
		for k, l := range s.Labels {
			if l != int(y[k])-1 {
				t.Fatalf("label %d = %d from byte %d", k, l, y[k])
			}
		}
		if side == 96 {
			// Byte c·9216 + x·96 + y of image i is value (c, y, x).
			for i := range s.N {
				img, raw := s.Image(i), x[i*STL10ImageBytes:]
				for _, p := range [][3]int{{0, 0, 0}, {0, 1, 2}, {1, 95, 3}, {2, 40, 95}} {
					c, row, col := p[0], p[1], p[2]
					if got, want := img[(c*96+row)*96+col], byteToUnit[raw[c*9216+col*96+row]]; got != want {
						t.Fatalf("image %d (%d,%d,%d) = %v, want %v", i, c, row, col, got, want)
					}
				}
			}
		}
	})
}

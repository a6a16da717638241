package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/draw"
)

// Colours of the folder tests.
var (
	red   = color.RGBA{255, 0, 0, 255}
	green = color.RGBA{0, 255, 0, 255}
	blue  = color.RGBA{0, 0, 255, 255}
)

// paint returns a w×h image whose pixel (x, y) is f(x, y).
func paint(w, h int, f func(x, y int) color.Color) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Set(x, y, f(x, y))
		}
	}
	return m
}

func solid(w, h int, c color.Color) *image.RGBA {
	return paint(w, h, func(int, int) color.Color { return c })
}

// encodeImage encodes img as PNG, or as JPEG of quality 95 when format is
// "jpeg".
func encodeImage(t testing.TB, img image.Image, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95})
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes b to dir/rel, creating the folders on the way.
func writeFile(t testing.TB, dir, rel string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeImage writes img to dir/rel, as JPEG when rel ends in .jpg or .jpeg
// (any case), else as PNG.
func writeImage(t testing.TB, dir, rel string, img image.Image) string {
	t.Helper()
	format := "png"
	if ext := strings.ToLower(filepath.Ext(rel)); ext == ".jpg" || ext == ".jpeg" {
		format = "jpeg"
	}
	return writeFile(t, dir, rel, encodeImage(t, img, format))
}

// pixel returns channel c at row y, column x of image i of s.
func pixel(s *ImageSet, i, c, y, x int) float32 {
	return s.Image(i)[(c*s.H+y)*s.W+x]
}

// checkRGB asserts that pixel (y, x) of image i of s is want within tol.
func checkRGB(t *testing.T, s *ImageSet, i, y, x int, want [3]float64, tol float64) {
	t.Helper()
	for c := 0; c < 3; c++ {
		if got := float64(pixel(s, i, c, y, x)); math.Abs(got-want[c]) > tol {
			t.Errorf("image %d (row %d, col %d) channel %d = %.4f, want %.4f ± %g", i, y, x, c, got, want[c], tol)
		}
	}
}

func unit(c color.RGBA) [3]float64 {
	return [3]float64{float64(c.R) / 255, float64(c.G) / 255, float64(c.B) / 255}
}

func TestReadImageFolderClasses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pets")
	garbage := []byte("not an image")
	c1 := color.RGBA{10, 20, 30, 255}
	c2 := color.RGBA{40, 50, 60, 255}
	c3 := color.RGBA{70, 80, 90, 255}
	c4 := color.RGBA{100, 110, 120, 255}
	writeImage(t, dir, "b/x.JPG", solid(6, 6, green))
	writeImage(t, dir, "a/sub/0.png", solid(5, 7, c3))
	writeImage(t, dir, "a/1.png", solid(9, 9, c1))
	writeImage(t, dir, "a/z.PNG", solid(8, 12, c2))
	writeImage(t, dir, "C/only.jpeg", solid(7, 7, blue))
	writeImage(t, dir, "a/sub/deeper/2.png", solid(4, 4, c4))
	// Skipped: hidden class folders, hidden files and folders, other
	// extensions, and images directly in dir.
	writeFile(t, dir, ".hidden/x.png", garbage)
	writeFile(t, dir, "a/._1.png", garbage)
	writeFile(t, dir, "a/.DS_Store", garbage)
	writeFile(t, dir, "a/.cache/x.png", garbage)
	writeFile(t, dir, "a/notes.txt", garbage)
	writeFile(t, dir, "a/anim.gif", garbage)
	writeFile(t, dir, "a/png", garbage)
	writeFile(t, dir, "stray.png", garbage)

	s, err := ReadImageFolder(dir, FolderOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Name != "pets" || s.N != 6 || s.C != 3 || s.H != 4 || s.W != 4 {
		t.Fatalf("set %q of %d×%d×%d×%d, want pets of 6×3×4×4", s.Name, s.N, s.C, s.H, s.W)
	}
	// Byte order, as Python's sorted: upper case first.
	if want := []string{"C", "a", "b"}; !slices.Equal(s.ClassNames, want) || s.NumClasses != 3 {
		t.Fatalf("classes %v (%d), want %v", s.ClassNames, s.NumClasses, want)
	}
	if want := []int{0, 1, 1, 1, 1, 2}; !slices.Equal(s.Labels, want) {
		t.Fatalf("labels %v, want %v", s.Labels, want)
	}
	// torchvision's order inside a class: folder by folder (a, a/sub,
	// a/sub/deeper), by name within a folder.
	checkRGB(t, s, 0, 2, 2, unit(blue), 0.03)
	for i, c := range []color.RGBA{c1, c2, c3, c4} {
		checkRGB(t, s, 1+i, 1, 2, unit(c), 1e-6)
	}
	checkRGB(t, s, 5, 2, 1, unit(green), 0.03)
}

func TestReadImageFolderResizeCrop(t *testing.T) {
	tests := []struct {
		name string
		w, h int
		// left/top half red, the rest blue
		split func(x, y int) bool
		// the central kept pixels (col or row 4 and 5) and whether the
		// cut is across columns
		cols bool
	}{
		{"wide 40x20", 40, 20, func(x, _ int) bool { return x < 20 }, true},
		{"tall 20x40", 20, 40, func(_, y int) bool { return y < 20 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeImage(t, dir, "k/img.png", paint(tt.w, tt.h, func(x, y int) color.Color {
				if tt.split(x, y) {
					return red
				}
				return blue
			}))
			s, err := ReadImageFolder(dir, FolderOptions{Size: 10})
			if err != nil {
				t.Fatal(err)
			}
			if s.H != 10 || s.W != 10 {
				t.Fatalf("shape %d×%d, want 10×10", s.H, s.W)
			}
			// Resized to 20×10 (or 10×20), then cropped from offset 5:
			// resized columns 5..14 are kept, 0..9 red and 10..19 blue.
			// The 2:1 antialiased bilinear filter spans four source
			// pixels with weights 1/8, 3/8, 3/8, 1/8, so the two
			// columns at the cut are 7/8 of their side's colour.
			mix := func(a float64) [3]float64 { return [3]float64{a, 0, 1 - a} }
			for k := 0; k < 10; k++ {
				want := mix(1)
				switch {
				case k == 4:
					want = mix(0.875)
				case k == 5:
					want = mix(0.125)
				case k > 5:
					want = mix(0)
				}
				for j := 0; j < 10; j++ {
					y, x := j, k
					if !tt.cols {
						y, x = k, j
					}
					checkRGB(t, s, 0, y, x, want, 1e-4)
				}
			}
		})
	}
}

func TestReadImageFolderLayout(t *testing.T) {
	// R varies with the column and G with the row: NCHW, row-major.
	dir := t.TempDir()
	col := func(x int) uint8 { return uint8(10 + 40*x) }
	row := func(y int) uint8 { return uint8(5 + 60*y) }
	writeImage(t, dir, "k/a.png", paint(4, 4, func(x, y int) color.Color {
		return color.RGBA{col(x), row(y), 77, 255}
	}))
	s, err := ReadImageFolder(dir, FolderOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	img := s.Image(0)
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			want := []float32{float32(col(x)) / 255, float32(row(y)) / 255, float32(77) / 255}
			for c, w := range want {
				if got := img[c*16+y*4+x]; got != w {
					t.Fatalf("channel %d row %d col %d = %v, want %v", c, y, x, got, w)
				}
			}
		}
	}
}

func TestReadImageFolderExtremeAspect(t *testing.T) {
	// A 1×3000 column resizes to 8×24000; only the kept 8×8 (source rows
	// 1499.5 ± 0.5) are computed, and they are green.
	dir := t.TempDir()
	writeImage(t, dir, "k/a.png", paint(1, 3000, func(_, y int) color.Color {
		switch {
		case y < 1490:
			return red
		case y < 1510:
			return green
		}
		return blue
	}))
	s, err := ReadImageFolder(dir, FolderOptions{Size: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, yx := range [][2]int{{0, 0}, {7, 7}, {3, 5}} {
		checkRGB(t, s, 0, yx[0], yx[1], unit(green), 0)
	}
}

func TestReadImageFolderGrey(t *testing.T) {
	dir := t.TempDir()
	c := color.RGBA{200, 100, 50, 255}
	writeImage(t, dir, "k/a.png", solid(3, 3, c))
	writeImage(t, dir, "k/b.jpg", paint(8, 8, func(int, int) color.Color { return color.Gray{150} }))
	s, err := ReadImageFolder(dir, FolderOptions{Size: 3, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.C != 1 {
		t.Fatalf("%d channels, want 1", s.C)
	}
	want := float32(color.Gray16Model.Convert(c).(color.Gray16).Y) / 0xffff
	for i, v := range s.Image(0) {
		if v != want {
			t.Fatalf("grey value %d = %v, want %v (ITU-R 601 luma)", i, v, want)
		}
	}
	// A grey JPEG read as RGB: equal channels near the source value.
	s, err = ReadImageFolder(dir, FolderOptions{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkRGB(t, s, 1, 1, 1, [3]float64{150.0 / 255, 150.0 / 255, 150.0 / 255}, 0.01)
}

func TestReadImageFolderColorModels(t *testing.T) {
	rgb16 := image.NewRGBA64(image.Rect(0, 0, 2, 2))
	gray16 := image.NewGray16(image.Rect(0, 0, 2, 2))
	pal := image.NewPaletted(image.Rect(0, 0, 2, 2), color.Palette{red, green, color.NRGBA{0, 0, 255, 100}})
	alpha := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for y := 0; y < 2; y++ {
		for x := 0; x < 2; x++ {
			rgb16.SetRGBA64(x, y, color.RGBA64{0x1234, 0xabcd, 0x0101, 0xffff})
			gray16.SetGray16(x, y, color.Gray16{0x7ffe})
			alpha.SetNRGBA(x, y, color.NRGBA{200, 20, 2, 60})
		}
	}
	pal.SetColorIndex(0, 0, 0)
	pal.SetColorIndex(1, 0, 1)
	pal.SetColorIndex(0, 1, 2)
	pal.SetColorIndex(1, 1, 2)
	tests := []struct {
		name string
		img  image.Image
		// the wanted RGB of pixels (0,0) and (1,1), exact
		want [2][3]float64
	}{
		{"16-bit RGB keeps 16 bits", rgb16, [2][3]float64{
			{0x1234 / 65535.0, 0xabcd / 65535.0, 0x0101 / 65535.0},
			{0x1234 / 65535.0, 0xabcd / 65535.0, 0x0101 / 65535.0}}},
		{"16-bit grey", gray16, [2][3]float64{
			{0x7ffe / 65535.0, 0x7ffe / 65535.0, 0x7ffe / 65535.0},
			{0x7ffe / 65535.0, 0x7ffe / 65535.0, 0x7ffe / 65535.0}}},
		// Transparency is dropped, as PIL's convert("RGB").
		{"paletted with transparency", pal, [2][3]float64{unit(red), {0, 0, 1}}},
		{"non-premultiplied alpha", alpha, [2][3]float64{
			{200.0 / 255, 20.0 / 255, 2.0 / 255},
			{200.0 / 255, 20.0 / 255, 2.0 / 255}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeImage(t, dir, "k/a.png", tt.img)
			s, err := ReadImageFolder(dir, FolderOptions{Size: 2})
			if err != nil {
				t.Fatal(err)
			}
			for c := 0; c < 3; c++ {
				for k, yx := range [][2]int{{0, 0}, {1, 1}} {
					if got, want := pixel(s, 0, c, yx[0], yx[1]), float32(tt.want[k][c]); got != want {
						t.Errorf("pixel %v channel %d = %v, want %v", yx, c, got, want)
					}
				}
			}
		})
	}
}

func TestReadImageFolderJPEG(t *testing.T) {
	dir := t.TempDir()
	c := color.RGBA{200, 100, 50, 255}
	writeImage(t, dir, "k/a.jpg", solid(32, 24, c))
	writeImage(t, dir, "k/b.jpeg", paint(32, 32, func(x, _ int) color.Color {
		if x < 16 {
			return red
		}
		return blue
	}))
	s, err := ReadImageFolder(dir, FolderOptions{Size: 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, yx := range [][2]int{{0, 0}, {8, 8}, {15, 15}} {
		checkRGB(t, s, 0, yx[0], yx[1], unit(c), 0.02)
	}
	// Away from the cut (chroma is subsampled, so allow more there).
	checkRGB(t, s, 1, 8, 1, unit(red), 0.05)
	checkRGB(t, s, 1, 8, 14, unit(blue), 0.05)
}

// randomFolder writes n images of random sizes, content and format into
// classes of dir.
func randomFolder(t *testing.T, dir string, classes, n int) {
	r := rand.New(rand.NewPCG(7, 1))
	for i := 0; i < n; i++ {
		w, h := 3+r.IntN(40), 3+r.IntN(40)
		img := paint(w, h, func(int, int) color.Color {
			return color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
		})
		ext := []string{".png", ".jpg"}[i%2]
		writeImage(t, dir, fmt.Sprintf("class%d/img%02d%s", i%classes, i, ext), img)
	}
}

func TestReadImageFolderWorkers(t *testing.T) {
	dir := t.TempDir()
	randomFolder(t, dir, 3, 13)
	for _, ch := range []int{1, 3} {
		var first *ImageSet
		for _, w := range []int{1, 4, 0, 32} {
			s, err := ReadImageFolder(dir, FolderOptions{Size: 9, Channels: ch, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = s
				continue
			}
			if !slices.Equal(s.Pixels, first.Pixels) || !slices.Equal(s.Labels, first.Labels) {
				t.Fatalf("channels %d: %d workers give other values than 1 worker", ch, w)
			}
		}
	}
}

func TestReadImageFolderMax(t *testing.T) {
	dir := t.TempDir()
	randomFolder(t, dir, 2, 6) // class0: 0, 2, 4; class1: 1, 3, 5
	all, err := ReadImageFolder(dir, FolderOptions{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ max, n int }{{2, 2}, {4, 4}, {6, 6}, {100, 6}, {0, 6}} {
		s, err := ReadImageFolder(dir, FolderOptions{Size: 5, Max: tt.max, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if s.N != tt.n || s.NumClasses != 2 || len(s.ClassNames) != 2 {
			t.Fatalf("Max %d: N=%d classes %d, want N=%d and 2 classes", tt.max, s.N, s.NumClasses, tt.n)
		}
		if !slices.Equal(s.Labels, all.Labels[:tt.n]) || !slices.Equal(s.Pixels, all.Pixels[:tt.n*s.ImageSize()]) {
			t.Fatalf("Max %d: not the first %d images", tt.max, tt.n)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadUnlabeledImageFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "raw")
	writeImage(t, dir, "b.png", solid(4, 4, blue))
	writeImage(t, dir, "a.png", solid(4, 4, red))
	writeImage(t, dir, "deep/er/c.png", solid(6, 4, green))
	writeFile(t, dir, "deep/.x.png", []byte("hidden"))
	writeFile(t, dir, "readme.md", []byte("text"))
	s, err := ReadUnlabeledImageFolder(dir, FolderOptions{Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Name != "raw" || s.N != 3 || s.Labels != nil || s.NumClasses != 0 || s.ClassNames != nil {
		t.Fatalf("set %q N=%d labels %v classes %d names %v, want raw, 3 images, no labels", s.Name, s.N, s.Labels, s.NumClasses, s.ClassNames)
	}
	for i, c := range []color.RGBA{red, blue, green} {
		checkRGB(t, s, i, 2, 2, unit(c), 1e-6)
	}
}

func TestReadImageFolderSymlinkedClass(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "set")
	writeImage(t, dir, "a/x.png", solid(3, 3, red))
	writeImage(t, root, "elsewhere/y.png", solid(3, 3, green))
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(dir, "b")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	s, err := ReadImageFolder(dir, FolderOptions{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.ClassNames, []string{"a", "b"}) || !slices.Equal(s.Labels, []int{0, 1}) {
		t.Fatalf("classes %v labels %v", s.ClassNames, s.Labels)
	}
	checkRGB(t, s, 1, 1, 1, unit(green), 1e-6)
}

// pngWithSize returns a valid 1×1 PNG whose header claims w×h pixels (the
// IHDR checksum is recomputed).
func pngWithSize(t testing.TB, w, h uint32) []byte {
	b := encodeImage(t, solid(1, 1, red), "png")
	// signature (8), length (4), "IHDR" (4), width, height, ..., CRC.
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

// jpegWithHeight returns a JPEG whose frame header claims height h.
func jpegWithHeight(t testing.TB, h uint16) []byte {
	b := encodeImage(t, solid(4, 3, red), "jpeg")
	i := bytes.Index(b, []byte{0xff, 0xc0}) // SOF0: length, precision, height, width
	binary.BigEndian.PutUint16(b[i+5:], h)
	return b
}

func TestReadImageFolderErrors(t *testing.T) {
	good := encodeImage(t, solid(4, 4, red), "png")
	goodJPEG := encodeImage(t, solid(4, 4, red), "jpeg")
	tests := []struct {
		name      string
		files     map[string][]byte // relative path → content
		dir       string            // read this sub-path of the temp dir ("" = itself)
		opt       FolderOptions
		unlabeled bool
		contains  []string
	}{
		{name: "missing dir", dir: "nope", opt: FolderOptions{Size: 4}, contains: []string{"nope", "no such file"}},
		{name: "missing dir unlabeled", dir: "nope", opt: FolderOptions{Size: 4}, unlabeled: true, contains: []string{"nope"}},
		{name: "dir is a file", files: map[string][]byte{"f.png": good}, dir: "f.png", opt: FolderOptions{Size: 4}, contains: []string{"f.png", "not a directory"}},
		{name: "no class folders", files: map[string][]byte{"x.png": good, ".hid/y.png": good}, opt: FolderOptions{Size: 4},
			contains: []string{"no class folders", "1 image files directly", "ReadUnlabeledImageFolder"}},
		{name: "empty dir", opt: FolderOptions{Size: 4}, contains: []string{"no class folders"}},
		{name: "empty class", files: map[string][]byte{"a/x.png": good, "b/readme.txt": good, "b/.y.png": good}, opt: FolderOptions{Size: 4},
			contains: []string{string(filepath.Separator) + "b holds no .png, .jpg or .jpeg file"}},
		{name: "no images unlabeled", files: map[string][]byte{"a/readme.txt": good}, opt: FolderOptions{Size: 4}, unlabeled: true,
			contains: []string{"no .png, .jpg or .jpeg file"}},
		{name: "garbage", files: map[string][]byte{"a/bad.png": []byte("hello")}, opt: FolderOptions{Size: 4},
			contains: []string{"bad.png", "not a valid PNG or JPEG image"}},
		{name: "empty file", files: map[string][]byte{"a/empty.jpg": nil}, opt: FolderOptions{Size: 4},
			contains: []string{"empty.jpg", "not a valid PNG or JPEG image"}},
		{name: "truncated PNG", files: map[string][]byte{"a/cut.png": good[:len(good)/2]}, opt: FolderOptions{Size: 4},
			contains: []string{"cut.png", "not a valid PNG image"}},
		{name: "truncated JPEG", files: map[string][]byte{"a/cut.jpg": goodJPEG[:len(goodJPEG)/2]}, opt: FolderOptions{Size: 4},
			contains: []string{"cut.jpg", "not a valid JPEG image"}},
		{name: "corrupt unlabeled", files: map[string][]byte{"x/bad.jpeg": {0xff, 0xd8, 0xff, 0x00, 1, 2}}, opt: FolderOptions{Size: 4}, unlabeled: true,
			contains: []string{"bad.jpeg", "not a valid JPEG image"}},
		{name: "zero height JPEG", files: map[string][]byte{"a/flat.jpg": jpegWithHeight(t, 0)}, opt: FolderOptions{Size: 4},
			contains: []string{"flat.jpg", "4×0: expected a positive width and height"}},
		{name: "zero width PNG", files: map[string][]byte{"a/thin.png": pngWithSize(t, 0, 1)}, opt: FolderOptions{Size: 4},
			contains: []string{"thin.png", "not a valid PNG image"}},
		{name: "decompression bomb", files: map[string][]byte{"a/bomb.png": pngWithSize(t, 20000, 20000)}, opt: FolderOptions{Size: 4},
			contains: []string{"bomb.png", "20000×20000 = 400000000 pixels: expected at most 100000000"}},
		{name: "too many values", files: map[string][]byte{"a/x.png": good, "a/y.png": good}, opt: FolderOptions{Size: 20000},
			contains: []string{"2 images of 3×20000×20000 values: expected at most 2147483648"}},
		{name: "too many values for one image", files: map[string][]byte{"a/x.png": good}, opt: FolderOptions{Size: 1 << 16, Channels: 1},
			contains: []string{"1 images of 1×65536×65536 values"}},
		{name: "size", files: map[string][]byte{"a/x.png": good}, opt: FolderOptions{}, contains: []string{"FolderOptions.Size = 0"}},
		{name: "channels", files: map[string][]byte{"a/x.png": good}, opt: FolderOptions{Size: 4, Channels: 2}, contains: []string{"FolderOptions.Channels = 2"}},
		{name: "max", files: map[string][]byte{"a/x.png": good}, opt: FolderOptions{Size: 4, Max: -1}, contains: []string{"FolderOptions.Max = -1"}},
		{name: "workers", files: map[string][]byte{"a/x.png": good}, opt: FolderOptions{Size: 4, Workers: -2}, unlabeled: true, contains: []string{"FolderOptions.Workers = -2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for p, b := range tt.files {
				writeFile(t, root, p, b)
			}
			read := ReadImageFolder
			if tt.unlabeled {
				read = ReadUnlabeledImageFolder
			}
			s, err := read(filepath.Join(root, tt.dir), tt.opt)
			if err == nil {
				t.Fatalf("read a set of %d images, want an error", s.N)
			}
			for _, want := range tt.contains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestReadImageFolderFirstErrorInOrder(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 12; i++ {
		b := encodeImage(t, solid(5, 5, green), "png")
		if i >= 5 {
			b = []byte("broken")
		}
		writeFile(t, dir, fmt.Sprintf("k/%02d.png", i), b)
	}
	for _, w := range []int{1, 2, 4, 12} {
		for rep := 0; rep < 3; rep++ {
			_, err := ReadImageFolder(dir, FolderOptions{Size: 3, Workers: w})
			if err == nil || !strings.Contains(err.Error(), "05.png") {
				t.Fatalf("%d workers: error %v, want the first broken file 05.png", w, err)
			}
		}
	}
	// Max stops before the broken files.
	if s, err := ReadImageFolder(dir, FolderOptions{Size: 3, Max: 5}); err != nil || s.N != 5 {
		t.Fatalf("Max 5: %v", err)
	}
}

// TestFolderResizeMatchesScaleThenCrop checks that the one-step transform
// equals torchvision's two steps done with x/image/draw: scale the whole
// image (shorter side to size), then crop the centre.
func TestFolderResizeMatchesScaleThenCrop(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tt := range []struct{ w, h, size int }{
		{37, 23, 10}, {23, 37, 10}, {50, 50, 7}, {5, 9, 12}, {9, 5, 12}, {64, 21, 16}, {21, 64, 5}, {31, 30, 30}, {3, 100, 3},
	} {
		img := paint(tt.w, tt.h, func(int, int) color.Color {
			return color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
		})
		nw, nh := resizedSize(tt.w, tt.h, tt.size)
		full := image.NewRGBA64(image.Rect(0, 0, nw, nh))
		draw.BiLinear.Scale(full, full.Bounds(), img, img.Bounds(), draw.Src, nil)
		left := int(math.RoundToEven(float64(nw-tt.size) / 2))
		top := int(math.RoundToEven(float64(nh-tt.size) / 2))

		var dec folderDecoder
		got := make([]float32, 3*tt.size*tt.size)
		dec.resizeCrop(img, tt.size, 3, got)
		hw := tt.size * tt.size
		for y := 0; y < tt.size; y++ {
			for x := 0; x < tt.size; x++ {
				c := full.RGBA64At(left+x, top+y)
				for k, v := range []uint16{c.R, c.G, c.B} {
					if d := math.Abs(float64(got[k*hw+y*tt.size+x]) - float64(v)/0xffff); d > 2.0/0xffff {
						t.Fatalf("%d×%d to %d: channel %d row %d col %d differs from scale-then-crop by %g", tt.w, tt.h, tt.size, k, y, x, d)
					}
				}
			}
		}
	}
}

func TestFolderResizedSize(t *testing.T) {
	for _, tt := range []struct{ w, h, size, nw, nh int }{
		{40, 20, 10, 20, 10},
		{20, 40, 10, 10, 20},
		{30, 30, 7, 7, 7},
		{333, 500, 224, 224, 336}, // 336.33 truncated
		{500, 333, 224, 336, 224},
		{3, 2, 5, 7, 5}, // 7.5 truncated
	} {
		if nw, nh := resizedSize(tt.w, tt.h, tt.size); nw != tt.nw || nh != tt.nh {
			t.Errorf("resizedSize(%d, %d, %d) = %d, %d; want %d, %d", tt.w, tt.h, tt.size, nw, nh, tt.nw, tt.nh)
		}
	}
}

// TestFolderColorModelsInMemory covers the colour models the encoders of
// the standard library cannot write: CMYK (Adobe JPEG), YCbCr 4:2:0 and
// premultiplied RGBA with transparency.
func TestFolderColorModelsInMemory(t *testing.T) {
	cmyk := image.NewCMYK(image.Rect(0, 0, 3, 3))
	ycc := image.NewYCbCr(image.Rect(0, 0, 4, 4), image.YCbCrSubsampleRatio420)
	rgba := image.NewRGBA(image.Rect(0, 0, 3, 3))
	for i := range cmyk.Pix {
		cmyk.Pix[i] = []uint8{0, 200, 255, 30}[i%4]
	}
	for i := range ycc.Y {
		ycc.Y[i] = 120
	}
	for i := range ycc.Cb {
		ycc.Cb[i], ycc.Cr[i] = 90, 200
	}
	for y := 0; y < 3; y++ {
		for x := 0; x < 3; x++ {
			rgba.SetRGBA(x, y, color.RGBA{100, 0, 50, 200})
		}
	}
	wantOf := func(c color.Color) [3]float64 {
		n := color.NRGBA64Model.Convert(c).(color.NRGBA64)
		return [3]float64{float64(n.R) / 0xffff, float64(n.G) / 0xffff, float64(n.B) / 0xffff}
	}
	for _, tt := range []struct {
		name string
		img  image.Image
		want [3]float64
	}{
		{"CMYK", cmyk, wantOf(color.CMYK{0, 200, 255, 30})},
		{"YCbCr 4:2:0", ycc, wantOf(color.YCbCr{120, 90, 200})},
		{"premultiplied RGBA", rgba, wantOf(color.RGBA{100, 0, 50, 200})},
	} {
		var dec folderDecoder
		size := tt.img.Bounds().Dx()
		got := make([]float32, 3*size*size)
		dec.resizeCrop(tt.img, size, 3, got)
		for c := 0; c < 3; c++ {
			if v := float64(got[c*size*size+size+1]); math.Abs(v-tt.want[c]) > 1e-6 {
				t.Errorf("%s: channel %d = %v, want %v", tt.name, c, v, tt.want[c])
			}
		}
	}
}

// ExampleReadImageFolder reads a folder of one sub-folder per class, as
// torchvision's ImageFolder, into 8×8 RGB images.
func ExampleReadImageFolder() {
	dir, err := os.MkdirTemp("", "flowers")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	write := func(rel string, w, h int, c color.Color) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			log.Fatal(err)
		}
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
		if strings.HasSuffix(rel, ".png") {
			err = png.Encode(f, img)
		} else {
			err = jpeg.Encode(f, img, nil)
		}
		if err := errors.Join(err, f.Close()); err != nil {
			log.Fatal(err)
		}
	}
	write("tulip/1.png", 40, 30, color.RGBA{220, 30, 60, 255})
	write("tulip/2.jpg", 30, 50, color.RGBA{230, 40, 90, 255})
	write("daisy/1.png", 16, 16, color.RGBA{250, 250, 240, 255})

	s, err := ReadImageFolder(dir, FolderOptions{Size: 8})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.N, "images of", s.C, "×", s.H, "×", s.W)
	fmt.Println("classes", s.ClassNames, "labels", s.Labels)
	// Output:
	// 3 images of 3 × 8 × 8
	// classes [daisy tulip] labels [0 1 1]
}

package data

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stl10Pixel is the byte of the generated STL-10 image i at channel c, row
// y, column x. Rows and columns have different coefficients, so a reader
// that does not undo the column-major order gets other values.
func stl10Pixel(i, c, y, x int) byte { return byte((3*y + 7*x + 11*c + 13*i) % 256) }

// stl10XBytes writes n generated images, first to first+n-1, in the layout
// of the official *_X.bin files: per image the R, G and B planes, each 96
// columns of 96 rows (byte c·9216 + x·96 + y).
func stl10XBytes(first, n int) []byte {
	b := make([]byte, 0, n*STL10ImageBytes)
	for i := first; i < first+n; i++ {
		for c := range 3 {
			for x := range 96 {
				for y := range 96 {
					b = append(b, stl10Pixel(i, c, y, x))
				}
			}
		}
	}
	return b
}

// stl10Labels returns n label bytes of the official files, cycling 1..10.
func stl10Labels(n int) []byte {
	y := make([]byte, n)
	for i := range y {
		y[i] = byte(i%10 + 1)
	}
	return y
}

// writeSTL10 writes a generated split of n images in the official format
// in dir: SPLIT_X.bin and, unless split is "unlabeled", SPLIT_y.bin with
// stl10Labels(n).
func writeSTL10(t *testing.T, dir, split string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, split+"_X.bin"), stl10XBytes(0, n), 0o644); err != nil {
		t.Fatal(err)
	}
	if split != "unlabeled" {
		if err := os.WriteFile(filepath.Join(dir, split+"_y.bin"), stl10Labels(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSTL10Image compares image k of s (at 96×96) with generated image i,
// reading the result as NCHW row-major.
func checkSTL10Image(t *testing.T, s *ImageSet, k, i int) {
	t.Helper()
	img := s.Image(k)
	for c := range 3 {
		for y := range 96 {
			for x := range 96 {
				want := float32(stl10Pixel(i, c, y, x)) / 255
				if got := img[(c*96+y)*96+x]; got != want {
					t.Fatalf("image %d channel %d row %d column %d = %v, want %v", k, c, y, x, got, want)
				}
			}
		}
	}
}

func TestReadSTL10Dir(t *testing.T) {
	flat := t.TempDir()
	writeSTL10(t, flat, "train", 12)
	writeSTL10(t, flat, "test", 3)
	writeSTL10(t, flat, "unlabeled", 4)
	// The official archive's folder: dir/stl10_binary/*.bin.
	nested := t.TempDir()
	writeSTL10(t, filepath.Join(nested, STL10Path), "train", 2)
	tests := []struct {
		name, dir, split string
		n                int
		labels           []int // nil for the unlabeled split
	}{
		{"train", flat, "train", 12, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1}},
		{"test", flat, "test", 3, []int{0, 1, 2}},
		{"unlabeled", flat, "unlabeled", 4, nil},
		{"archive folder", nested, "train", 2, []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadSTL10Dir(tt.dir, tt.split, STL10Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.Name != "stl10" || s.N != tt.n || s.C != 3 || s.H != 96 || s.W != 96 {
				t.Fatalf("got %s N=%d C=%d H=%d W=%d, want stl10 N=%d 3×96×96", s.Name, s.N, s.C, s.H, s.W, tt.n)
			}
			if !slices.Equal(s.Labels, tt.labels) || (tt.labels == nil) != (s.Labels == nil) {
				t.Fatalf("labels %v, want %v", s.Labels, tt.labels)
			}
			wantClasses, wantNames := 10, STL10Classes
			if tt.labels == nil {
				wantClasses, wantNames = 0, nil
			}
			if s.NumClasses != wantClasses || !slices.Equal(s.ClassNames, wantNames) {
				t.Fatalf("%d classes %v, want %d %v", s.NumClasses, s.ClassNames, wantClasses, wantNames)
			}
			for k := range s.N {
				checkSTL10Image(t, s, k, k)
			}
		})
	}
}

// TestSTL10ColumnMajor checks single pixels by hand: byte c·9216 + x·96 + y
// of the file is channel c, row y, column x of the result.
func TestSTL10ColumnMajor(t *testing.T) {
	x := make([]byte, STL10ImageBytes)
	x[1*9216+5*96+2] = 200  // channel 1 (green), column 5, row 2
	x[2*9216+0*96+95] = 100 // channel 2 (blue), column 0, row 95
	s, err := DecodeSTL10(bytes.NewReader(x), nil, "x", "", STL10Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(c, y, x int) float32 { return s.Pixels[(c*96+y)*96+x] }
	if at(1, 2, 5) != 200.0/255 || at(1, 5, 2) != 0 || at(2, 95, 0) != 100.0/255 || at(2, 0, 95) != 0 {
		t.Fatalf("(1,2,5)=%v (1,5,2)=%v (2,95,0)=%v (2,0,95)=%v: want 200/255, 0, 100/255, 0",
			at(1, 2, 5), at(1, 5, 2), at(2, 95, 0), at(2, 0, 95))
	}
}

func TestReadSTL10ClassNames(t *testing.T) {
	dir := t.TempDir()
	writeSTL10(t, dir, "train", 1)
	names := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	os.WriteFile(filepath.Join(dir, "class_names.txt"), []byte(names), 0o644)
	s, err := ReadSTL10Dir(dir, "train", STL10Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Fields(names); !slices.Equal(s.ClassNames, want) {
		t.Fatalf("class names %v, want %v", s.ClassNames, want)
	}
	os.WriteFile(filepath.Join(dir, "class_names.txt"), []byte("a\nb\n"), 0o644)
	if _, err := ReadSTL10Dir(dir, "train", STL10Options{}); err == nil || !strings.Contains(err.Error(), "class_names.txt: 2 names: expected 10") {
		t.Fatalf("malformed class_names.txt: error %v", err)
	}
	// The unlabeled split has no classes, whatever class_names.txt says.
	writeSTL10(t, dir, "unlabeled", 1)
	if s, err := ReadSTL10Dir(dir, "unlabeled", STL10Options{}); err != nil || s.ClassNames != nil {
		t.Fatalf("unlabeled: %v, class names %v", err, s.ClassNames)
	}
}

func TestReadSTL10Errors(t *testing.T) {
	good := stl10XBytes(0, 3)
	tests := []struct {
		name     string
		split    string
		x, y     []byte // nil: no file
		opt      STL10Options
		contains []string
	}{
		{"truncated X", "train", good[:STL10ImageBytes-1], []byte{1}, STL10Options{},
			[]string{"train_X.bin", "27647 bytes is not a whole number of 96×96×3 images"}},
		{"one byte extra", "test", append(slices.Clone(good), 9), []byte{1, 2, 3}, STL10Options{},
			[]string{"test_X.bin", "82945 bytes is not a whole number", "the last one has 1"}},
		{"truncated X with Max", "unlabeled", good[:len(good)-5], nil, STL10Options{Max: 1},
			[]string{"unlabeled_X.bin", "82939 bytes is not a whole number"}},
		{"empty X", "train", []byte{}, []byte{}, STL10Options{}, []string{"train_X.bin", "empty"}},
		{"label 0", "train", good, []byte{1, 0, 2}, STL10Options{},
			[]string{"train_y.bin", "label 0 of image 1", "expected 1 to 10"}},
		{"label 11", "test", good, []byte{1, 2, 11}, STL10Options{Max: 1},
			[]string{"test_y.bin", "label 11 of image 2 (byte offset 2)", "expected 1 to 10"}},
		{"fewer labels than images", "train", good, []byte{1, 2}, STL10Options{},
			[]string{"train_y.bin", "2 labels for the 3 images of", "train_X.bin", "one label byte per image"}},
		{"more labels than images", "train", good, []byte{1, 2, 3, 4}, STL10Options{},
			[]string{"train_y.bin", "4 labels for the 3 images"}},
		{"missing X", "test", nil, []byte{1}, STL10Options{},
			[]string{"no test_X.bin in it or in", STL10Path, "expected the files of the binary release"}},
		{"missing y", "train", good, nil, STL10Options{}, []string{"train_y.bin", "no such file"}},
		{"unknown split", "validation", good, nil, STL10Options{},
			[]string{`split "validation"`, "[train test unlabeled]"}},
		{"size too large", "train", good, []byte{1, 2, 3}, STL10Options{Size: 97}, []string{"Size 97", "1 to 96"}},
		{"negative size", "train", good, []byte{1, 2, 3}, STL10Options{Size: -1}, []string{"Size -1"}},
		{"negative Max", "train", good, []byte{1, 2, 3}, STL10Options{Max: -1}, []string{"Max -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			split := tt.split
			if !slices.Contains(STL10Splits, split) {
				split = "train"
			}
			if tt.x != nil {
				os.WriteFile(filepath.Join(dir, split+"_X.bin"), tt.x, 0o644)
			}
			if tt.y != nil {
				os.WriteFile(filepath.Join(dir, split+"_y.bin"), tt.y, 0o644)
			}
			s, err := ReadSTL10Dir(dir, tt.split, tt.opt)
			if err == nil {
				t.Fatalf("no error; read %d images", s.N)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Fatalf("error %q does not contain %q", err, c)
				}
			}
		})
	}
	// A directory in place of a file.
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "train_X.bin"), 0o755)
	if _, err := ReadSTL10Dir(dir, "train", STL10Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: error %v", err)
	}
}

// TestDecodeSTL10 checks the reader version against ReadSTL10Dir and its
// own errors, which it finds while reading rather than from file sizes.
func TestDecodeSTL10(t *testing.T) {
	dir := t.TempDir()
	writeSTL10(t, dir, "train", 5)
	for _, opt := range []STL10Options{{}, {Max: 2}, {Max: 9}, {Size: 32, Max: 3}, {Size: 5}} {
		want, err := ReadSTL10Dir(dir, "train", opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeSTL10(bytes.NewReader(stl10XBytes(0, 5)), bytes.NewReader(stl10Labels(5)), "x", "y", opt)
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		if got.N != want.N || got.H != want.H || !slices.Equal(got.Pixels, want.Pixels) || !slices.Equal(got.Labels, want.Labels) ||
			!slices.Equal(got.ClassNames, want.ClassNames) || got.NumClasses != 10 || len(got.Pixels) != cap(got.Pixels) {
			t.Fatalf("%+v: DecodeSTL10 and ReadSTL10Dir differ", opt)
		}
	}
	x := stl10XBytes(0, 3)
	tests := []struct {
		name     string
		x, y     []byte // y nil: unlabelled
		opt      STL10Options
		n        int
		contains string // "" for success
	}{
		{"labelled", x, []byte{10, 1, 5}, STL10Options{}, 3, ""},
		{"Max below the labels: the rest of x is not read", append(slices.Clone(x), 1, 2), []byte{1, 2, 3}, STL10Options{Max: 2}, 2, ""},
		{"unlabelled", x, nil, STL10Options{}, 3, ""},
		{"unlabelled Max", append(slices.Clone(x), 7), nil, STL10Options{Max: 3}, 3, ""},
		{"unlabelled Max beyond x", x, nil, STL10Options{Max: 30}, 3, ""},
		{"fewer images than labels", x, []byte{1, 2, 3, 4}, STL10Options{}, 0, "x: 3 images for the 4 labels of y"},
		{"fewer images than Max labels", x, []byte{1, 2, 3, 4}, STL10Options{Max: 4}, 0, "x: 3 images for the 4 labels of y"},
		{"more images than labels", x, []byte{1, 2}, STL10Options{}, 0, "x: more than the 2 images of the 2 labels of y"},
		{"truncated image", x[:len(x)-1], []byte{1, 2, 3}, STL10Options{}, 0, "x: 82943 bytes is not a whole number of 96×96×3 images"},
		{"truncated unlabelled", x[:100], nil, STL10Options{}, 0, "x: 100 bytes is not a whole number"},
		{"no labels", x, []byte{}, STL10Options{}, 0, "y: no labels"},
		{"empty unlabelled", nil, nil, STL10Options{}, 0, "x: empty"},
		{"label 11", x, []byte{1, 11, 2}, STL10Options{}, 0, "y: label 11 of image 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var y io.Reader
			if tt.y != nil {
				y = bytes.NewReader(tt.y)
			}
			s, err := DecodeSTL10(bytes.NewReader(tt.x), y, "x", "y", tt.opt)
			if tt.contains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.contains) {
					t.Fatalf("error %v, want one containing %q", err, tt.contains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.N != tt.n || (tt.y == nil) != (s.Labels == nil) {
				t.Fatalf("N=%d labels %v, want N=%d", s.N, s.Labels, tt.n)
			}
			for k := range s.N {
				checkSTL10Image(t, s, k, k)
				if tt.y != nil && s.Labels[k] != int(tt.y[k])-1 {
					t.Fatalf("label %d = %d, want %d", k, s.Labels[k], tt.y[k]-1)
				}
			}
		})
	}
}

func TestReadSTL10Max(t *testing.T) {
	dir := t.TempDir()
	writeSTL10(t, dir, "train", 7)
	for _, tt := range []struct{ max, n int }{{1, 1}, {3, 3}, {7, 7}, {100, 7}, {0, 7}} {
		s, err := ReadSTL10Dir(dir, "train", STL10Options{Max: tt.max})
		if err != nil {
			t.Fatal(err)
		}
		if s.N != tt.n || len(s.Labels) != tt.n || len(s.Pixels) != tt.n*STL10ImageBytes {
			t.Fatalf("Max %d: N=%d, %d labels, %d values; want %d images", tt.max, s.N, len(s.Labels), len(s.Pixels), tt.n)
		}
		if want := []int{0, 1, 2, 3, 4, 5, 6}[:tt.n]; !slices.Equal(s.Labels, want) {
			t.Fatalf("Max %d: labels %v, want %v", tt.max, s.Labels, want)
		}
		checkSTL10Image(t, s, tt.n-1, tt.n-1)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endlessSTL10 serves generated images without end.
type endlessSTL10 struct{ off int64 }

func (e *endlessSTL10) Read(p []byte) (int, error) {
	for k := range p {
		o := e.off + int64(k)
		i, r := int(o/STL10ImageBytes), int(o%STL10ImageBytes)
		c, x, y := r/9216, r%9216/96, r%96
		p[k] = stl10Pixel(i, c, y, x)
	}
	e.off += int64(len(p))
	return len(p), nil
}

// TestReadSTL10UnlabeledMax reads the first images of a file the size of
// the real unlabeled_X.bin (100,000 images, 2.76 GB, sparse on disk) and
// of an endless stream: only the bytes of Max images are read.
func TestReadSTL10UnlabeledMax(t *testing.T) {
	dir := t.TempDir()
	writeSTL10(t, dir, "unlabeled", 4)
	p := filepath.Join(dir, "unlabeled_X.bin")
	if err := os.Truncate(p, 100000*STL10ImageBytes); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	s, err := ReadSTL10Dir(dir, "unlabeled", STL10Options{Max: 5, Size: 32})
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 5 || s.H != 32 || s.Labels != nil || s.NumClasses != 0 || len(s.Pixels) != 5*3*32*32 {
		t.Fatalf("N=%d H=%d labels %v classes %d values %d", s.N, s.H, s.Labels, s.NumClasses, len(s.Pixels))
	}
	for i, v := range s.Image(4) { // the sparse part reads as zeros
		if v != 0 {
			t.Fatalf("image 4 value %d = %v, want 0", i, v)
		}
	}
	// The whole file at 96×96 would pass MaxImageValues only just (2.76e9
	// bytes → 2.76e9 values, more than 2^31): refused before allocating.
	if _, err := ReadSTL10Dir(dir, "unlabeled", STL10Options{}); err == nil || !strings.Contains(err.Error(), "100000 images of 3×96×96: more than 2147483648 values") {
		t.Fatalf("whole file at 96×96: error %v", err)
	}

	for _, max := range []int{1, 3, 40} {
		cr := &countingReader{r: &endlessSTL10{}}
		s, err := DecodeSTL10(cr, nil, "endless", "", STL10Options{Max: max})
		if err != nil {
			t.Fatal(err)
		}
		if s.N != max || cr.n != int64(max)*STL10ImageBytes {
			t.Fatalf("Max %d: %d images, %d bytes read; want %d bytes", max, s.N, cr.n, max*STL10ImageBytes)
		}
		checkSTL10Image(t, s, max-1, max-1)
	}
}

// areaReference downsamples a 96×96 plane (plane[y][x]) to size×size in
// float64 by supersampling: every source pixel is split into size×size
// equal cells, so every output pixel covers exactly 96×96 cells, whose
// mean is the area-weighted average.
func areaReference(plane func(y, x int) float64, size int) []float64 {
	out := make([]float64, size*size)
	for oy := range size {
		for ox := range size {
			var sum float64
			for cy := oy * 96; cy < (oy+1)*96; cy++ {
				for cx := ox * 96; cx < (ox+1)*96; cx++ {
					sum += plane(cy/size, cx/size)
				}
			}
			out[oy*size+ox] = sum / (96 * 96)
		}
	}
	return out
}

func TestSTL10Size(t *testing.T) {
	const n = 2
	x := stl10XBytes(0, n)
	full, err := DecodeSTL10(bytes.NewReader(x), nil, "x", "", STL10Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Size 96 is the identity (and the same as 0).
	same, err := DecodeSTL10(bytes.NewReader(x), nil, "x", "", STL10Options{Size: 96})
	if err != nil || !slices.Equal(same.Pixels, full.Pixels) || same.H != 96 {
		t.Fatalf("Size 96: %v, or values differ from Size 0", err)
	}
	src := func(i, c int) func(y, x int) float64 {
		return func(y, x int) float64 { return float64(stl10Pixel(i, c, y, x)) / 255 }
	}
	// Size 32: the mean of every 3×3 block, by a plain float64 loop.
	s32, err := DecodeSTL10(bytes.NewReader(x), nil, "x", "", STL10Options{Size: 32})
	if err != nil {
		t.Fatal(err)
	}
	if s32.H != 32 || s32.W != 32 || len(s32.Pixels) != n*3*32*32 {
		t.Fatalf("Size 32: %d×%d, %d values", s32.H, s32.W, len(s32.Pixels))
	}
	for i := range n {
		for c := range 3 {
			for oy := range 32 {
				for ox := range 32 {
					var sum float64
					for dy := range 3 {
						for dx := range 3 {
							sum += float64(stl10Pixel(i, c, 3*oy+dy, 3*ox+dx))
						}
					}
					want := sum / 9 / 255
					if got := s32.Image(i)[(c*32+oy)*32+ox]; math.Abs(float64(got)-want) > 1e-6 {
						t.Fatalf("Size 32 image %d channel %d (%d,%d) = %v, want %v", i, c, oy, ox, got, want)
					}
				}
			}
		}
	}
	// Sizes that do not divide 96, against the supersampled reference.
	for _, size := range []int{1, 7, 40, 95} {
		s, err := DecodeSTL10(bytes.NewReader(x), nil, "x", "", STL10Options{Size: size})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		channels := 3
		if size > 48 {
			channels = 1 // the reference costs (96·size)² a channel
		}
		for c := range channels {
			want := areaReference(src(1, c), size)
			got := s.Image(1)[c*size*size : (c+1)*size*size]
			for k := range want {
				if math.Abs(float64(got[k])-want[k]) > 1e-6 {
					t.Fatalf("Size %d channel %d value %d = %v, want %v", size, c, k, got[k], want[k])
				}
			}
		}
	}
	// Saturated images stay exactly at 1, so values never leave [0,1].
	white := bytes.Repeat([]byte{255}, STL10ImageBytes)
	for _, size := range []int{1, 7, 32, 40, 96} {
		s, err := DecodeSTL10(bytes.NewReader(white), nil, "x", "", STL10Options{Size: size})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range s.Pixels {
			if v != 1 {
				t.Fatalf("Size %d: white value %d = %v, want 1", size, k, v)
			}
		}
	}
	// ReadSTL10Dir downsamples the same way.
	dir := t.TempDir()
	writeSTL10(t, dir, "test", n)
	s, err := ReadSTL10Dir(dir, "test", STL10Options{Size: 32})
	if err != nil || !slices.Equal(s.Pixels, s32.Pixels) {
		t.Fatalf("ReadSTL10Dir Size 32: %v, or values differ from DecodeSTL10", err)
	}
}

// TestExtractSTL10 unpacks a small archive in the official layout and
// reads it back; the size limit is the only difference from ExtractTarGz.
func TestExtractSTL10(t *testing.T) {
	if MaxSTL10ExtractBytes < 3_200_000_000 {
		t.Fatalf("MaxSTL10ExtractBytes %d is below the 3.1 GB of the STL-10 archive", MaxSTL10ExtractBytes)
	}
	archive := filepath.Join(t.TempDir(), "stl10_binary.tar.gz")
	b := makeTarGz(t, []tarMember{{name: STL10Path + "/", typ: tar.TypeDir},
		{name: STL10Path + "/train_X.bin", data: stl10XBytes(0, 2)}, {name: STL10Path + "/train_y.bin", data: []byte{3, 4}}})
	if err := os.WriteFile(archive, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	if err := ExtractSTL10(archive, dest); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSTL10Dir(dest, "train", STL10Options{})
	if err != nil || s.N != 2 || !slices.Equal(s.Labels, []int{2, 3}) {
		t.Fatalf("read back: %v", err)
	}
	checkSTL10Image(t, s, 1, 1)
	if err := ExtractSTL10(filepath.Join(dest, "missing.tar.gz"), dest); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing archive: error %v", err)
	}
}

// ExampleDecodeSTL10 decodes two images held in memory in the layout of
// train_X.bin and train_y.bin (a black one labelled 8, a white one
// labelled 1), downsampled to 32×32; ReadSTL10Dir reads the files of the
// official release the same way.
func ExampleDecodeSTL10() {
	x := make([]byte, 2*STL10ImageBytes)
	for i := STL10ImageBytes; i < len(x); i++ {
		x[i] = 255
	}
	y := []byte{8, 1}
	s, err := DecodeSTL10(bytes.NewReader(x), bytes.NewReader(y), "train_X.bin", "train_y.bin", STL10Options{Size: 32})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d images of %d×%d×%d\n", s.Name, s.N, s.C, s.H, s.W)
	for i := range s.N {
		fmt.Println(s.Labels[i], s.ClassNames[s.Labels[i]], s.Image(i)[0])
	}
	_, err = DecodeSTL10(bytes.NewReader(x[:STL10ImageBytes-1]), nil, "unlabeled_X.bin", "", STL10Options{})
	fmt.Println(err)
	// Output:
	// stl10: 2 images of 3×32×32
	// 7 monkey 0
	// 0 airplane 1
	// read STL-10 unlabeled_X.bin: 27647 bytes is not a whole number of 96×96×3 images (27648 bytes each; the last one has 27647)
}

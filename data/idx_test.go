package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// idxFixtureByte is pixel (y, x) of image i of testdata/idx (see
// testdata/IMAGES.md).
func idxFixtureByte(i, y, x int) byte { return byte((i*29 + y*5 + x*11) % 256) }

// idxBytes builds an IDX stream: magic 00 00 typ len(dims), the sizes, data.
func idxBytes(typ byte, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, typ, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(data)
	return b.Bytes()
}

func idxGzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadMNISTDirFixture(t *testing.T) {
	dir := filepath.Join("testdata", "idx")
	tests := []struct {
		name   string
		train  bool
		labels []int
	}{
		{"plain train files", true, []int{7, 0, 2}},
		{"gzipped t10k files", false, []int{1, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadMNISTDir(dir, tt.train)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.N != len(tt.labels) || s.C != 1 || s.H != 4 || s.W != 5 || s.Name != "idx" {
				t.Fatalf("%s N=%d C=%d H=%d W=%d", s.Name, s.N, s.C, s.H, s.W)
			}
			if !slices.Equal(s.Labels, tt.labels) || s.NumClasses != slices.Max(tt.labels)+1 {
				t.Fatalf("labels %v classes %d, want %v", s.Labels, s.NumClasses, tt.labels)
			}
			for i := 0; i < s.N; i++ {
				for y := 0; y < 4; y++ {
					for x := 0; x < 5; x++ {
						if got, want := s.Pixels[i*20+y*5+x], float32(idxFixtureByte(i, y, x))/255; got != want {
							t.Fatalf("image %d (%d,%d) = %v, want %v", i, y, x, got, want)
						}
					}
				}
			}
		})
	}
	if _, err := ReadMNISTDir(t.TempDir(), true); err == nil || !strings.Contains(err.Error(), "train-images-idx3-ubyte.gz") {
		t.Fatalf("empty directory: error %v", err)
	}
}

func TestReadIDXErrors(t *testing.T) {
	pix := make([]byte, 2*3*3)
	goodImg := idxBytes(8, []uint32{2, 3, 3}, pix)
	goodLab := idxBytes(8, []uint32{2}, []byte{1, 4})
	badCRC := idxGzip(t, goodImg)
	badCRC[len(badCRC)-6] ^= 0xff // inside the CRC-32 of the trailer
	tests := []struct {
		name     string
		img      []byte
		contains string
	}{
		{"bad magic", append([]byte{1}, goodImg[1:]...), "magic number 01 00 08 03"},
		{"int data type", idxBytes(0x0C, []uint32{2, 3, 3}, make([]byte, 72)), "data type 0x0c: expected 0x08"},
		{"labels as images", goodLab, "1 dimensions: expected 3"},
		{"images as labels", goodImg, "3 dimensions: expected 1"},
		{"short header", goodImg[:3], "reading the 4-byte magic number: unexpected EOF"},
		{"short sizes", goodImg[:9], "reading size 2 of 3: unexpected EOF"},
		{"truncated data", goodImg[:len(goodImg)-1], "17 data bytes: expected 18"},
		{"trailing data", append(slices.Clone(goodImg), 0), "data continues after the 18 bytes"},
		{"huge header", idxBytes(8, []uint32{1 << 31, 1 << 31, 2}, nil), "more than 2147483648 values"},
		{"zero-size images", idxBytes(8, []uint32{2, 0, 3}, nil), "image size 0×3"},
		{"gzip CRC", badCRC, "gzip"},
		{"count mismatch", goodImg, "holds 3 labels but"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			img, lab := tt.img, goodLab
			switch tt.name {
			case "images as labels":
				img, lab = goodImg, tt.img
			case "count mismatch":
				lab = idxBytes(8, []uint32{3}, []byte{1, 2, 3})
			}
			ip, lp := filepath.Join(dir, "imgs"), filepath.Join(dir, "labs")
			os.WriteFile(ip, img, 0o644)
			os.WriteFile(lp, lab, 0o644)
			_, err := ReadIDX(ip, lp)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("error %v, want one containing %q", err, tt.contains)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %v does not name the file", err)
			}
			// Gzipped, the same input gives the same complaint.
			if tt.name != "gzip CRC" {
				_, err := DecodeIDX(bytes.NewReader(idxGzip(t, img)), "i.gz", bytes.NewReader(idxGzip(t, lab)), "l.gz")
				if err == nil || !strings.Contains(err.Error(), tt.contains) {
					t.Fatalf("gzipped: error %v, want one containing %q", err, tt.contains)
				}
			}
		})
	}
	if _, err := ReadIDXImages(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("missing file: no error")
	}
}

// TestFashionMNIST reads the full Fashion-MNIST installed by Debian's
// dataset-fashion-mnist package, when present.
func TestFashionMNIST(t *testing.T) {
	const dir = "/usr/share/datasets/fashion-mnist"
	if _, err := os.Stat(filepath.Join(dir, "t10k-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("Fashion-MNIST not installed (apt-get install dataset-fashion-mnist): %v", err)
	}
	sets := []struct {
		train bool
		n     int
	}{{false, 10000}, {true, 60000}}
	for _, ss := range sets {
		if ss.train && testing.Short() {
			t.Log("skipping the 60,000 training images in -short mode")
			continue
		}
		s, err := ReadMNISTDir(dir, ss.train)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if s.N != ss.n || s.C != 1 || s.H != 28 || s.W != 28 || s.NumClasses != 10 || s.Name != "fashion-mnist" {
			t.Fatalf("%s: N=%d %d×%d×%d classes %d", s.Name, s.N, s.C, s.H, s.W, s.NumClasses)
		}
		if !slices.Equal(s.ClassNames, FashionMNISTClasses) {
			t.Fatalf("class names %v", s.ClassNames)
		}
		// Fashion-MNIST is balanced: 6,000 / 1,000 images per class.
		for c, n := range s.ClassCounts() {
			if n != ss.n/10 {
				t.Fatalf("class %d has %d images, want %d", c, n, ss.n/10)
			}
		}
	}
}

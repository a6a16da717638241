package data

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// fixturePixel is the byte at channel c, row y, column x of record r of the
// fixture file number f in testdata/cifar10 and testdata/cifar100 (the
// formula the fixtures were written with; see testdata/IMAGES.md).
func fixturePixel(f, r, c, y, x int) byte { return byte((f*101 + r*37 + c*59 + y*7 + x*3) % 256) }

// checkFixtureImage compares image k of s with record r of fixture file f,
// reading the planes independently of the reader (R, G, B planes of 32
// rows of 32 bytes).
func checkFixtureImage(t *testing.T, s *ImageSet, k, f, r int) {
	t.Helper()
	img := s.Image(k)
	for c := 0; c < 3; c++ {
		for y := 0; y < 32; y++ {
			for x := 0; x < 32; x++ {
				want := float32(fixturePixel(f, r, c, y, x)) / 255
				if got := img[c*1024+y*32+x]; got != want {
					t.Fatalf("image %d channel %d (%d,%d) = %v, want %v", k, c, y, x, got, want)
				}
			}
		}
	}
}

// cifarRecords builds CIFAR-10 records with the given labels (pixel bytes
// from fixturePixel with file number 9).
func cifarRecords(labels ...byte) []byte {
	var b bytes.Buffer
	for r, l := range labels {
		b.WriteByte(l)
		for c := 0; c < 3; c++ {
			for y := 0; y < 32; y++ {
				for x := 0; x < 32; x++ {
					b.WriteByte(fixturePixel(9, r, c, y, x))
				}
			}
		}
	}
	return b.Bytes()
}

func TestReadCIFAR10Fixture(t *testing.T) {
	dir := filepath.Join("testdata", "cifar10")
	s, err := ReadCIFAR10(filepath.Join(dir, "data_batch_1.bin"), filepath.Join(dir, "data_batch_2.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.N != 5 || s.C != 3 || s.H != 32 || s.W != 32 || s.NumClasses != 10 || s.Name != "cifar-10" {
		t.Fatalf("got %s N=%d C=%d H=%d W=%d classes=%d", s.Name, s.N, s.C, s.H, s.W, s.NumClasses)
	}
	if want := []int{6, 9, 0, 3, 1}; !slices.Equal(s.Labels, want) {
		t.Fatalf("labels %v, want %v", s.Labels, want)
	}
	// Records keep file order, then record order.
	for k, fr := range [][2]int{{1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}} {
		checkFixtureImage(t, s, k, fr[0], fr[1])
	}
	// Class names come from batches.meta.txt beside the files.
	if s.ClassNames[0] != "class0" || s.ClassNames[9] != "class9" || len(s.ClassNames) != 10 {
		t.Fatalf("class names %v: want those of testdata/cifar10/batches.meta.txt", s.ClassNames)
	}
}

func TestReadCIFAR10Dir(t *testing.T) {
	dir := filepath.Join("testdata", "cifar10")
	tests := []struct {
		name   string
		dir    string
		train  bool
		labels []int
	}{
		{"train", dir, true, []int{6, 9, 0, 3, 1}},
		{"test", dir, false, []int{3}},
	}
	// The official archive's folder layout: dir/cifar-10-batches-bin/*.bin.
	nested := t.TempDir()
	sub := filepath.Join(nested, "cifar-10-batches-bin")
	os.Mkdir(sub, 0o755)
	for _, f := range []string{"data_batch_2.bin", "test_batch.bin"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(sub, f), b, 0o644)
	}
	tests = append(tests, struct {
		name   string
		dir    string
		train  bool
		labels []int
	}{"archive folder", nested, true, []int{3, 1}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ReadCIFAR10Dir(tt.dir, tt.train)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Labels, tt.labels) {
				t.Fatalf("labels %v, want %v", s.Labels, tt.labels)
			}
		})
	}
	// Without batches.meta.txt the names are the standard ones.
	s, err := ReadCIFAR10Dir(nested, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.ClassNames, CIFAR10Classes) {
		t.Fatalf("class names %v, want %v", s.ClassNames, CIFAR10Classes)
	}
	if _, err := ReadCIFAR10Dir(t.TempDir(), true); err == nil || !strings.Contains(err.Error(), "data_batch_*.bin") {
		t.Fatalf("empty directory: error %v", err)
	}
}

func TestReadCIFAR10Errors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := cifarRecords(1, 2, 3)
	tests := []struct {
		name     string
		data     []byte
		contains []string
	}{
		{"truncated last record", good[:len(good)-100], []string{"trunc.bin", "record 2 is truncated", "2973 of 3073 bytes"}},
		{"one byte extra", append(slices.Clone(good), 7), []string{"record 3 is truncated", "1 of 3073"}},
		{"label out of range", cifarRecords(0, 10, 1), []string{"record 1", "label 10", "[0,10)"}},
		{"label 255", cifarRecords(255), []string{"record 0", "label 255"}},
		{"empty", nil, []string{"empty file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write("trunc.bin", tt.data)
			_, err := ReadCIFAR10(write("ok.bin", good), p)
			if err == nil {
				t.Fatal("no error")
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Fatalf("error %q does not contain %q", err, c)
				}
			}
			// The in-memory decoder agrees.
			if _, err := DecodeCIFAR10(tt.data, "trunc.bin"); err == nil || !strings.Contains(err.Error(), tt.contains[0]) {
				t.Fatalf("DecodeCIFAR10: error %v, want one containing %q", err, tt.contains[0])
			}
		})
	}
	if _, err := ReadCIFAR10(); err == nil {
		t.Fatal("no files: no error")
	}
	if _, err := ReadCIFAR10(filepath.Join(dir, "missing.bin")); err == nil || !strings.Contains(err.Error(), "missing.bin") {
		t.Fatalf("missing file: error %v", err)
	}
	if _, err := ReadCIFAR10(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: error %v", err)
	}
	// A malformed batches.meta.txt is reported, not silently ignored.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "x.bin"), good, 0o644)
	os.WriteFile(filepath.Join(bad, "batches.meta.txt"), []byte("a\nb\n"), 0o644)
	if _, err := ReadCIFAR10(filepath.Join(bad, "x.bin")); err == nil || !strings.Contains(err.Error(), "2 names: expected 10") {
		t.Fatalf("bad meta: error %v", err)
	}
}

func TestReadCIFAR100(t *testing.T) {
	dir := filepath.Join("testdata", "cifar100")
	for _, fine := range []bool{true, false} {
		s, err := ReadCIFAR100Dir(dir, true, fine)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		want, classes, name0 := []int{19, 0}, 20, "coarse0"
		if fine {
			want, classes, name0 = []int{99, 5}, 100, "fine0"
		}
		if !slices.Equal(s.Labels, want) || s.NumClasses != classes || s.ClassNames[0] != name0 {
			t.Fatalf("fine=%v: labels %v classes %d names[0] %q; want %v %d %q", fine, s.Labels, s.NumClasses, s.ClassNames[0], want, classes, name0)
		}
		checkFixtureImage(t, s, 1, 4, 1)
	}
	s, err := ReadCIFAR100Dir(dir, false, true)
	if err != nil || !slices.Equal(s.Labels, []int{42}) {
		t.Fatalf("test set: %v, %v", s, err)
	}
	checkFixtureImage(t, s, 0, 5, 0)

	rec := func(coarse, fine byte) []byte { return append([]byte{coarse, fine}, cifarRecords(0)[1:]...) }
	errs := []struct {
		name     string
		data     []byte
		contains string
	}{
		{"coarse out of range", append(rec(1, 1), rec(20, 1)...), "record 1 (byte offset 3074): coarse label 20"},
		{"fine out of range", rec(1, 100), "record 0 (byte offset 0): fine label 100"},
		{"truncated", rec(1, 1)[:3073], "record 0 is truncated: 3073 of 3074 bytes"},
	}
	for _, tt := range errs {
		p := filepath.Join(t.TempDir(), "train.bin")
		os.WriteFile(p, tt.data, 0o644)
		for _, fine := range []bool{true, false} { // both label bytes are always checked
			if _, err := ReadCIFAR100(fine, p); err == nil || !strings.Contains(err.Error(), tt.contains) || !strings.Contains(err.Error(), p) {
				t.Errorf("%s (fine=%v): error %v, want one containing %q and the path", tt.name, fine, err, tt.contains)
			}
			if _, err := DecodeCIFAR100(tt.data, p, fine); err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("%s (fine=%v): DecodeCIFAR100 error %v", tt.name, fine, err)
			}
		}
	}
}

// TestCIFAR10Shared reads the exact subset of the real CIFAR-10 kept in
// shared/data/cifar10 and checks it against the facts in its SOURCES.md.
func TestCIFAR10Shared(t *testing.T) {
	dir := testenv.Path(t, "cifar10")
	train, err := ReadCIFAR10Dir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	test, err := ReadCIFAR10Dir(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 5*1017 || test.N != 1017 {
		t.Fatalf("%d train / %d test images, want 5085 / 1017", train.N, test.N)
	}
	if !slices.Equal(test.ClassNames, CIFAR10Classes) {
		t.Fatalf("class names %v", test.ClassNames)
	}
	if y := test.Labels[0]; y != 3 || test.ClassNames[y] != "cat" {
		t.Fatalf("first test image: label %d, want 3 (cat)", y)
	}
	if want := []int{3, 8, 8, 0, 6, 6, 1, 6, 3, 1}; !slices.Equal(test.Labels[:10], want) {
		t.Fatalf("first test labels %v, want %v", test.Labels[:10], want)
	}
	if want := []int{6, 9, 9, 4, 1, 1, 2, 7, 8, 3}; !slices.Equal(train.Labels[:10], want) {
		t.Fatalf("first train labels %v, want %v", train.Labels[:10], want)
	}
	// Per-file class counts of SOURCES.md.
	counts := map[string][]int{
		"data_batch_1.first1017.bin": {103, 113, 102, 94, 103, 86, 109, 102, 101, 104},
		"data_batch_5.first1017.bin": {104, 97, 96, 91, 109, 96, 102, 105, 106, 111},
		"test_batch.first1017.bin":   {105, 93, 100, 104, 92, 87, 114, 102, 110, 110},
	}
	for f, want := range counts {
		s, err := ReadCIFAR10(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ClassCounts(); !slices.Equal(got, want) {
			t.Errorf("%s: class counts %v, want %v", f, got, want)
		}
	}
	// The channel statistics of the full CIFAR-10 training set are widely
	// published: mean (0.4914, 0.4822, 0.4465), std (0.2470, 0.2435,
	// 0.2616). 5,085 images estimate the mean to about ±0.002.
	mean, std := train.MeanStd()
	wantMean, wantStd := []float64{0.4914, 0.4822, 0.4465}, []float64{0.2470, 0.2435, 0.2616}
	for c := range 3 {
		if math.Abs(float64(mean[c])-wantMean[c]) > 0.01 || math.Abs(float64(std[c])-wantStd[c]) > 0.01 {
			t.Errorf("channel %d: mean %.4f std %.4f, want about %.4f %.4f", c, mean[c], std[c], wantMean[c], wantStd[c])
		}
	}
	t.Logf("subset channel mean %v std %v", mean, std)
}

func TestCIFARURL(t *testing.T) {
	tests := []struct{ name, url, md5 string }{
		{"cifar-10", "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz", "c32a1d4ab5d03f1284b67883e8d87530"},
		{"CIFAR-100", "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz", "03b5dce01913d631647c71ecec9e9cb8"},
	}
	for _, tt := range tests {
		u, m, err := CIFARURL(tt.name)
		if err != nil || u != tt.url || m != tt.md5 {
			t.Errorf("CIFARURL(%q) = %q, %q, %v", tt.name, u, m, err)
		}
	}
	if _, _, err := CIFARURL("cifar-1000"); err == nil || !strings.Contains(err.Error(), fmt.Sprint(CIFARNames)) {
		t.Fatalf("unknown name: error %v", err)
	}
}

package data

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// checkFuzzImages asserts what every successfully read image set must
// satisfy.
func checkFuzzImages(t *testing.T, s *ImageSet, wantN int) {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatalf("read a set that does not validate: %v", err)
	}
	if wantN >= 0 && s.N != wantN {
		t.Fatalf("%d images, want %d", s.N, wantN)
	}
	for i, v := range s.Pixels {
		if v < 0 || v > 1 {
			t.Fatalf("value %d = %v outside [0,1]", i, v)
		}
	}
}

func FuzzReadCIFAR10(f *testing.F) {
	for _, p := range []string{"cifar10/test_batch.bin", "cifar10/data_batch_2.bin", "cifar100/train.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte{})
	f.Add(cifarRecords(10))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := DecodeCIFAR10(b, "fuzz.bin"); err == nil {
			checkFuzzImages(t, s, len(b)/(1+CIFARImageBytes))
			if len(b)%(1+CIFARImageBytes) != 0 {
				t.Fatalf("accepted %d bytes, not a whole number of records", len(b))
			}
		}
		for _, fine := range []bool{false, true} {
			if s, err := DecodeCIFAR100(b, "fuzz.bin", fine); err == nil {
				checkFuzzImages(t, s, len(b)/(2+CIFARImageBytes))
			}
		}
	})
}

// idxFuzzSep splits a fuzz input into the images and the labels stream.
var idxFuzzSep = []byte("\xffSEP\xff")

func FuzzReadIDX(f *testing.F) {
	dir := filepath.Join("testdata", "idx")
	pairs := [][2]string{
		{"train-images-idx3-ubyte", "train-labels-idx1-ubyte"},
		{"t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"},
	}
	for _, p := range pairs {
		img, err := os.ReadFile(filepath.Join(dir, p[0]))
		if err != nil {
			f.Fatal(err)
		}
		lab, err := os.ReadFile(filepath.Join(dir, p[1]))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Join([][]byte{img, lab}, idxFuzzSep))
		f.Add(bytes.Join([][]byte{img[:len(img)-1], lab}, idxFuzzSep))
	}
	f.Add(bytes.Join([][]byte{idxBytes(8, []uint32{0, 0, 0}, nil), idxBytes(8, []uint32{0}, nil)}, idxFuzzSep))
	f.Add(bytes.Join([][]byte{idxBytes(8, []uint32{1, 1, 1}, []byte{255}), idxBytes(8, []uint32{1}, []byte{200})}, idxFuzzSep))
	f.Fuzz(func(t *testing.T, b []byte) {
		img, lab, _ := bytes.Cut(b, idxFuzzSep)
		s, err := DecodeIDX(bytes.NewReader(img), "images", bytes.NewReader(lab), "labels")
		if err != nil {
			return
		}
		checkFuzzImages(t, s, -1)
		if s.C != 1 {
			t.Fatalf("IDX images with %d channels", s.C)
		}
	})
}

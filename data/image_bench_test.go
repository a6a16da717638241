package data

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// BenchmarkReadCIFAR10Shared reads the five training files of the shared
// CIFAR-10 subset (5,085 images, 15.6 MB).
func BenchmarkReadCIFAR10Shared(b *testing.B) {
	dir := testenv.Path(b, "cifar10")
	b.SetBytes(5 * 1017 * (1 + CIFARImageBytes))
	for b.Loop() {
		if _, err := ReadCIFAR10Dir(dir, true); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadFashionMNISTTest reads the gzipped Fashion-MNIST test set
// (10,000 images) installed by Debian's dataset-fashion-mnist.
func BenchmarkReadFashionMNISTTest(b *testing.B) {
	const dir = "/usr/share/datasets/fashion-mnist"
	if _, err := os.Stat(filepath.Join(dir, "t10k-images-idx3-ubyte.gz")); err != nil {
		b.Skipf("Fashion-MNIST not installed: %v", err)
	}
	for b.Loop() {
		if _, err := ReadMNISTDir(dir, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGenerateImages makes the default synthetic set (2,000 RGB 32×32
// images).
func BenchmarkGenerateImages(b *testing.B) {
	for b.Loop() {
		if _, err := GenerateImages(DefaultSynthImageConfig(), 1); err != nil {
			b.Fatal(err)
		}
	}
}

package data_test

import (
	"fmt"
	"log"

	"github.com/batchsampler-go/batchsampler/data"
)

// ExampleReadCIFAR10Dir reads the training files of the CIFAR-10 binary
// version (here the tiny fixture; the same call reads the official
// cifar-10-batches-bin/ or the shared subset) and computes the channel
// statistics used to normalise.
func ExampleReadCIFAR10Dir() {
	s, err := data.ReadCIFAR10Dir("testdata/cifar10", true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d images of %d×%d×%d, labels %v\n", s.Name, s.N, s.C, s.H, s.W, s.Labels)
	fmt.Println("first class:", s.ClassNames[s.Labels[0]])
	mean, std := s.MeanStd()
	fmt.Printf("mean %.3f std %.3f\n", mean, std)
	// Output:
	// cifar-10: 5 images of 3×32×32, labels [6 9 0 3 1]
	// first class: class6
	// mean [0.485 0.501 0.515] std [0.287 0.282 0.289]
}

// ExampleGenerateImages makes the synthetic image set of the demo.
func ExampleGenerateImages() {
	cfg := data.DefaultSynthImageConfig()
	cfg.Images = 100
	s, err := data.GenerateImages(cfg, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name, s.N, "images", s.C, "×", s.H, "×", s.W, "class counts", s.ClassCounts())
	fmt.Println(s.ClassNames[:3])
	// Output:
	// synthetic-images 100 images 3 × 32 × 32 class counts [10 10 10 10 10 10 10 10 10 10]
	// [disk/hue0.00 square/hue0.10 triangle/hue0.20]
}

package augment_test

import (
	"fmt"
	"log"
	"slices"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
)

// ExampleSimCLRCIFAR makes the two SimCLR views of a batch of images: the
// CIFAR pipeline followed by normalisation with the training set's channel
// statistics, applied in parallel and reproducibly (one seed per view).
func ExampleSimCLRCIFAR() {
	set, err := data.GenerateImages(data.SynthImageConfig{Images: 64, Classes: 4}, 1)
	if err != nil {
		log.Fatal(err)
	}
	mean, std := set.MeanStd()
	aug := augment.SimCLRCIFAR()
	aug.Augs = append(aug.Augs, augment.Normalize{Mean: mean, Std: std})
	fmt.Println(aug.Augs[0])
	fmt.Println(aug.Augs[2])

	batch := []int{3, 14, 15, 9} // indices from a sampler
	d := set.ImageSize()
	view1 := make([]float32, len(batch)*d)
	view2 := make([]float32, len(batch)*d)
	step := uint64(0)
	if err := augment.AugmentGather(aug, view1, set.Pixels, batch, set.C, set.H, set.W, 2*step, 0); err != nil {
		log.Fatal(err)
	}
	if err := augment.AugmentGather(aug, view2, set.Pixels, batch, set.C, set.H, set.W, 2*step+1, 0); err != nil {
		log.Fatal(err)
	}
	again := make([]float32, len(view1))
	augment.AugmentGather(aug, again, set.Pixels, batch, set.C, set.H, set.W, 2*step, 1)
	fmt.Println("views differ:", !slices.Equal(view1, view2), "reproducible:", slices.Equal(view1, again))
	// Output:
	// random_resized_crop(scale=[0.08 1], ratio=[0.75 1.3333333333333333])
	// color_jitter(0.4, 0.4, 0.4, 0.1, p=0.8)
	// views differ: true reproducible: true
}

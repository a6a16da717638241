package train

import (
	"fmt"
	"math/rand/v2"
	"runtime"

	"github.com/batchsampler-go/batchsampler/augment"
)

// imageViewKind is a value of augment.image: the two views' pipelines on
// images in [0, 1], before normalisation.
type imageViewKind struct {
	name  string
	views func() [2]augment.ImageCompose
	// symmetric: both views take the same pipeline.
	symmetric bool
}

// imageViewKinds are the values of augment.image.
var imageViewKinds = []imageViewKind{
	{"mocov3", augment.MoCoV3CIFAR, false},
	{"simclr", func() [2]augment.ImageCompose {
		return [2]augment.ImageCompose{augment.SimCLRCIFAR(), augment.SimCLRCIFAR()}
	}, true},
	{"crop_flip", func() [2]augment.ImageCompose { return [2]augment.ImageCompose{augment.CropFlip(), augment.CropFlip()} }, true},
	{"none", func() [2]augment.ImageCompose { return [2]augment.ImageCompose{} }, true},
}

// imageViewNames lists the values of augment.image (only those whose views
// take the same pipeline with symmetric).
func imageViewNames(symmetric bool) []string {
	var names []string
	for _, k := range imageViewKinds {
		if k.symmetric || !symmetric {
			names = append(names, k.name)
		}
	}
	return names
}

// imageViews returns the two views' pipelines of augment.image, each
// followed by the normalisation of the training set's statistics.
func imageViews(kind string, d *imageDataset) ([2]augment.ImageAugmenter, error) {
	var out [2]augment.ImageAugmenter
	var views [2]augment.ImageCompose
	found := false
	for _, k := range imageViewKinds {
		if k.name == kind {
			views, found = k.views(), true
		}
	}
	if !found {
		return out, fmt.Errorf("augment.image: %q is not one of %v", kind, imageViewNames(false))
	}
	for v := range views {
		views[v].Augs = append(views[v].Augs, augment.Normalize{Mean: d.mean, Std: d.std})
		if err := augment.ValidateImageAugmenter(views[v], d.train.C, d.train.H, d.train.W); err != nil {
			return out, fmt.Errorf("augment: view %d: %w", v+1, err)
		}
		out[v] = views[v]
	}
	return out, nil
}

// checkImageBatch refuses a training batch of fewer than 2 images, which
// BatchNorm cannot normalise.
func checkImageBatch(idx []int) error {
	if len(idx) < 2 {
		return fmt.Errorf("image step: batch of %d images; BatchNorm needs at least 2", len(idx))
	}
	return nil
}

// gatherViews writes the two views of the training images idx into dst[0]
// and dst[1] (B×C×H×W each), view v made by augs[v] with a seed drawn from
// rng, view 1's first.
func (d *imageDataset) gatherViews(augs [2]augment.ImageAugmenter, dst [2][]float32, idx []int, rng *rand.Rand) error {
	tr := d.train
	for v := range 2 {
		if err := augment.AugmentGather(augs[v], dst[v], tr.Pixels, idx, tr.C, tr.H, tr.W, rng.Uint64(), runtime.GOMAXPROCS(0)); err != nil {
			return fmt.Errorf("augment view %d: %w", v+1, err)
		}
	}
	return nil
}

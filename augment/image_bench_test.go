package augment

import (
	"fmt"
	"testing"
)

// BenchmarkSimCLRCIFARImage is the SimCLR CIFAR pipeline on one 3×32×32
// image on one goroutine.
func BenchmarkSimCLRCIFARImage(b *testing.B) {
	src := imgRand(3, 32, 32, 1)
	dst := make([]float32, len(src))
	aug := SimCLRCIFAR()
	rng := imgRNG(1)
	b.ReportAllocs()
	for b.Loop() {
		aug.Augment(dst, src, 3, 32, 32, rng)
	}
}

// BenchmarkImageOps times each augmentation alone, always applied, on one
// 3×32×32 image.
func BenchmarkImageOps(b *testing.B) {
	ops := []ImageAugmenter{
		RandomResizedCrop{},
		HorizontalFlip{P: 1},
		ColorJitter{Brightness: 0.4, Contrast: 0.4, Saturation: 0.4, Hue: 0.1, P: 1},
		ColorJitter{Hue: 0.1, P: 1},
		RandomGrayscale{P: 1},
	}
	src := imgRand(3, 32, 32, 1)
	dst := make([]float32, len(src))
	for _, op := range ops {
		b.Run(fmt.Sprint(op), func(b *testing.B) {
			rng := imgRNG(1)
			for b.Loop() {
				op.Augment(dst, src, 3, 32, 32, rng)
			}
		})
	}
}

// BenchmarkAugmentGather256 is one view of a batch of 256 CIFAR-sized
// images gathered from a 1,024-image set, on GOMAXPROCS goroutines; the
// time per image is reported as µs/img.
func BenchmarkAugmentGather256(b *testing.B) {
	const n, bsz = 1024, 256
	pixels := imgRand(3*n, 32, 32, 2)
	idx := make([]int, bsz)
	for i := range idx {
		idx[i] = (i * 37) % n
	}
	dst := make([]float32, bsz*3*32*32)
	aug := SimCLRCIFAR()
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		if err := AugmentGather(aug, dst, pixels, idx, 3, 32, 32, seed, 0); err != nil {
			b.Fatal(err)
		}
		seed++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*bsz), "µs/img")
}

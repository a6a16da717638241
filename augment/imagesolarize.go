package augment

import (
	"fmt"
	"math/rand/v2"
)

// SolarizeThreshold is PIL's ImageOps.solarize default threshold, 128 of
// 255, on images in [0,1]: MoCo v3's and BYOL's Solarize.
const SolarizeThreshold = 128.0 / 255

// RandomSolarize inverts, with probability P, every value at or above
// Threshold: v ← 1 − v (PIL's ImageOps.solarize on [0,1] images, applied
// by MoCo v3 and BYOL to the second view; torchvision's RandomSolarize).
// It expects pixels in [0,1], so place it before Normalize.
type RandomSolarize struct {
	P, Threshold float64
}

// Augment solarizes src into dst with probability s.P, else copies.
func (s RandomSolarize) Augment(dst, src []float32, c, h, w int, rng *rand.Rand) {
	checkImage("random_solarize", dst, src, c, h, w)
	if rng.Float64() < s.P {
		th := float32(s.Threshold)
		for i, v := range src {
			if v >= th {
				v = 1 - v
			}
			dst[i] = v
		}
		return
	}
	if !sameStart(dst, src) {
		copy(dst, src)
	}
}

// Validate checks that P is a probability and Threshold lies in [0, 1].
func (s RandomSolarize) Validate(_, _, _ int) error {
	if !(s.P >= 0 && s.P <= 1) {
		return fmt.Errorf("random_solarize: P = %g: expected a probability in [0, 1]", s.P)
	}
	if !(s.Threshold >= 0 && s.Threshold <= 1) {
		return fmt.Errorf("random_solarize: Threshold = %g: expected a value in [0, 1] (pixels are in [0,1])", s.Threshold)
	}
	return nil
}

// String returns "random_solarize(p=P,threshold=T)".
func (s RandomSolarize) String() string {
	return fmt.Sprintf("random_solarize(p=%g,threshold=%g)", s.P, s.Threshold)
}

// MoCoV3CIFAR returns the two view pipelines of MoCo v3 at CIFAR scale
// (solo-learn's cifar/mocov3.yaml): both views take SimCLRCIFAR's crop,
// flip, colour jitter and grey-scale; the second view also solarizes with
// probability 0.2 (at this size neither view blurs). Append Normalize to
// both, as for SimCLRCIFAR.
func MoCoV3CIFAR() [2]ImageCompose {
	v1, v2 := SimCLRCIFAR(), SimCLRCIFAR()
	v2.Augs = append(v2.Augs, RandomSolarize{P: 0.2, Threshold: SolarizeThreshold})
	return [2]ImageCompose{v1, v2}
}

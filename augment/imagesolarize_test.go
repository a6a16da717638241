package augment

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRandomSolarize(t *testing.T) {
	th := float32(SolarizeThreshold)
	src := []float32{0, 0.25, 0.5, th, 0.75, 1}
	for _, tc := range []struct {
		p    float64
		want []float32
	}{
		{1, []float32{0, 0.25, 0.5, 1 - th, 0.25, 0}}, // 0.5 < 128/255 stays
		{0, src},
	} {
		dst := make([]float32, len(src))
		RandomSolarize{P: tc.p, Threshold: SolarizeThreshold}.Augment(dst, src, 1, 2, 3, rand.New(rand.NewPCG(1, 2)))
		for i := range dst {
			if dst[i] != tc.want[i] {
				t.Fatalf("p=%g: got %v, want %v", tc.p, dst, tc.want)
			}
		}
	}
	// In place, and about P of the images solarized.
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	for range 2000 {
		img := []float32{0.9}
		RandomSolarize{P: 0.2, Threshold: 0.5}.Augment(img, img, 1, 1, 1, rng)
		if img[0] != 0.9 {
			n++
		}
	}
	if n < 340 || n > 460 { // 400 ± 4.7σ
		t.Fatalf("solarized %d of 2000 images with P = 0.2", n)
	}
	for _, s := range []RandomSolarize{{P: 1.5, Threshold: 0.5}, {P: 0.5, Threshold: 2}} {
		if err := ValidateImageAugmenter(s, 1, 2, 2); err == nil || !strings.Contains(err.Error(), "random_solarize") {
			t.Errorf("%v: error %v", s, err)
		}
	}
}

func TestMoCoV3CIFARViews(t *testing.T) {
	v := MoCoV3CIFAR()
	if len(v[1].Augs) != len(v[0].Augs)+1 {
		t.Fatalf("view 2 has %d augmentations, view 1 %d: want one more (solarize)", len(v[1].Augs), len(v[0].Augs))
	}
	if _, ok := v[1].Augs[len(v[1].Augs)-1].(RandomSolarize); !ok {
		t.Fatalf("view 2 ends with %T, want RandomSolarize", v[1].Augs[len(v[1].Augs)-1])
	}
	for _, c := range v {
		if err := ValidateImageAugmenter(c, 3, 32, 32); err != nil {
			t.Fatal(err)
		}
	}
}

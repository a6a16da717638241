package data

import (
	"slices"
	"strings"
	"testing"
)

func TestGenerateImages(t *testing.T) {
	tests := []struct {
		name    string
		cfg     SynthImageConfig
		c, h, w int
	}{
		{"default but fewer", SynthImageConfig{Images: 300, Classes: 10, Channels: 3, Height: 32, Width: 32, Noise: 0.05}, 3, 32, 32},
		{"grey, non-square", SynthImageConfig{Images: 50, Classes: 8, Channels: 1, Height: 12, Width: 20, Noise: 0.1}, 1, 12, 20},
		{"zero sizes mean 32×32 RGB", SynthImageConfig{Images: 33, Classes: 16}, 3, 32, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := GenerateImages(tt.cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
			if s.N != tt.cfg.Images || s.C != tt.c || s.H != tt.h || s.W != tt.w || s.NumClasses != tt.cfg.Classes || len(s.ClassNames) != tt.cfg.Classes {
				t.Fatalf("N=%d C=%d H=%d W=%d classes=%d names=%d", s.N, s.C, s.H, s.W, s.NumClasses, len(s.ClassNames))
			}
			counts := s.ClassCounts()
			if slices.Max(counts)-slices.Min(counts) > 1 {
				t.Fatalf("class counts %v differ by more than one", counts)
			}
			for i, v := range s.Pixels {
				if v < 0 || v > 1 {
					t.Fatalf("value %d = %v outside [0,1]", i, v)
				}
			}
			again, _ := GenerateImages(tt.cfg, 7)
			if !slices.Equal(again.Pixels, s.Pixels) || !slices.Equal(again.Labels, s.Labels) {
				t.Fatal("same seed, different images")
			}
			other, _ := GenerateImages(tt.cfg, 8)
			if slices.Equal(other.Pixels, s.Pixels) {
				t.Fatal("different seeds, same images")
			}
		})
	}
}

// TestGenerateImagesLearnable checks that the classes carry signal a
// simple classifier finds: 1-nearest-neighbour on raw pixels, trained on
// one half and tested on the other, beats chance (10%) by a wide margin,
// and the noiseless shapes of two classes differ.
func TestGenerateImagesLearnable(t *testing.T) {
	cfg := DefaultSynthImageConfig()
	cfg.Images = 600
	s, err := GenerateImages(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	d := s.ImageSize()
	half := s.N / 2
	correct := 0
	for i := half; i < s.N; i++ {
		best, bestD := -1, float32(0)
		q := s.Image(i)
		for j := 0; j < half; j++ {
			var dist float32
			for k, v := range s.Image(j) {
				e := v - q[k]
				dist += e * e
			}
			if best < 0 || dist < bestD {
				best, bestD = j, dist
			}
		}
		if s.Labels[best] == s.Labels[i] {
			correct++
		}
	}
	acc := float64(correct) / float64(s.N-half)
	t.Logf("1-NN accuracy on raw pixels: %.3f (chance 0.1), %d values per image", acc, d)
	if acc < 0.3 {
		t.Fatalf("1-NN accuracy %.3f: the classes carry too little signal", acc)
	}
}

func TestGenerateImagesErrors(t *testing.T) {
	tests := []struct {
		cfg      SynthImageConfig
		contains string
	}{
		{SynthImageConfig{Images: 0, Classes: 2}, "Images = 0"},
		{SynthImageConfig{Images: 5, Classes: 0}, "Classes = 0"},
		{SynthImageConfig{Images: 5, Classes: 17}, "expected 1..16"},
		{SynthImageConfig{Images: 5, Classes: 9, Channels: 1}, "expected 1..8 for 1 channel"},
		{SynthImageConfig{Images: 5, Classes: 2, Channels: 2}, "Channels = 2"},
		{SynthImageConfig{Images: 5, Classes: 2, Height: 4}, "size 4×32"},
		{SynthImageConfig{Images: 5, Classes: 2, Noise: -1}, "Noise = -1"},
		{SynthImageConfig{Images: 1 << 30, Classes: 2}, "expected at most"},
	}
	for _, tt := range tests {
		if _, err := GenerateImages(tt.cfg, 1); err == nil || !strings.Contains(err.Error(), tt.contains) {
			t.Errorf("%+v: error %v, want one containing %q", tt.cfg, err, tt.contains)
		}
	}
	if sh, hue := SynthImageClass(12, 16); sh != "ring" || hue != 0.75 {
		t.Fatalf("class 12 of 16 is %q, hue %v; want ring, 0.75", sh, hue)
	}
	if sh, _ := SynthImageClass(10, 10); sh != "" {
		t.Fatalf("class 10 of 10 is %q, want none", sh)
	}
}

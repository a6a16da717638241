package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func randomImageSet(n, c, h, w, classes int, seed uint64) *ImageSet {
	r := rand.New(rand.NewPCG(seed, 1))
	s := &ImageSet{Name: "rand", N: n, C: c, H: h, W: w, Pixels: make([]float32, n*c*h*w), Labels: make([]int, n), NumClasses: classes}
	for i := range s.Pixels {
		s.Pixels[i] = r.Float32()
	}
	for i := range s.Labels {
		s.Labels[i] = r.IntN(classes)
	}
	return s
}

func TestImageSetValidate(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(s *ImageSet)
		contains string
	}{
		{"ok", func(s *ImageSet) {}, ""},
		{"unlabelled", func(s *ImageSet) { s.Labels, s.NumClasses = nil, 0 }, ""},
		{"zero channels", func(s *ImageSet) { s.C = 0 }, "expected N >= 0 and C, H, W >= 1"},
		{"pixel count", func(s *ImageSet) { s.Pixels = s.Pixels[1:] }, "expected N×C×H×W"},
		{"NaN", func(s *ImageSet) { s.Pixels[7] = float32(math.NaN()) }, "pixel value 7 (image 0) is NaN"},
		{"Inf", func(s *ImageSet) { s.Pixels[len(s.Pixels)-1] = float32(math.Inf(1)) }, "image 3) is +Inf"},
		{"label range", func(s *ImageSet) { s.Labels[2] = 5 }, "label 5 of image 2"},
		{"negative label", func(s *ImageSet) { s.Labels[0] = -1 }, "label -1 of image 0"},
		{"label count", func(s *ImageSet) { s.Labels = s.Labels[:3] }, "3 labels for 4 images"},
		{"no classes", func(s *ImageSet) { s.NumClasses = 0 }, "NumClasses = 0"},
		{"unlabelled with classes", func(s *ImageSet) { s.Labels = nil }, "no labels but NumClasses = 5"},
		{"class names", func(s *ImageSet) { s.ClassNames = []string{"a"} }, "1 class names for 5 classes"},
		{"huge", func(s *ImageSet) { s.N = 1 << 40 }, "expected at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := randomImageSet(4, 3, 2, 5, 5, 1)
			tt.mutate(s)
			err := s.Validate()
			if tt.contains == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("error %v, want one containing %q", err, tt.contains)
			}
		})
	}
	var nilSet *ImageSet
	if nilSet.Validate() == nil {
		t.Fatal("nil set validates")
	}
}

func TestImageSetSubset(t *testing.T) {
	s := randomImageSet(6, 2, 3, 4, 3, 2)
	s.ClassNames = []string{"a", "b", "c"}
	idx := []int{4, 0, 4}
	sub, err := s.Subset(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Validate(); err != nil {
		t.Fatal(err)
	}
	if sub.N != 3 || sub.NumClasses != 3 || !slices.Equal(sub.ClassNames, s.ClassNames) {
		t.Fatalf("subset N=%d classes=%d names=%v", sub.N, sub.NumClasses, sub.ClassNames)
	}
	for k, i := range idx {
		if !slices.Equal(sub.Image(k), s.Image(i)) || sub.Labels[k] != s.Labels[i] {
			t.Fatalf("subset image %d is not image %d", k, i)
		}
	}
	sub.Pixels[0] = 42 // a copy, not a view
	sub.ClassNames[0] = "z"
	if s.Image(4)[0] == 42 || s.ClassNames[0] == "z" {
		t.Fatal("subset shares memory with the set")
	}
	if _, err := s.Subset([]int{1, 6}); err == nil || !strings.Contains(err.Error(), "index 6 (position 1)") {
		t.Fatalf("out of range: error %v", err)
	}
	empty, err := s.Subset(nil)
	if err != nil || empty.N != 0 || empty.Validate() != nil {
		t.Fatalf("empty subset: %+v %v", empty, err)
	}
}

func TestImageSetMeanStdNormalize(t *testing.T) {
	s := randomImageSet(7, 3, 5, 6, 2, 3)
	for i := range s.Pixels { // give the channels different statistics
		c := (i / 30) % 3
		s.Pixels[i] = s.Pixels[i]*float32(c+1) + float32(c)
	}
	mean, std := s.MeanStd()
	// Reference: the one-pass textbook formula in float64 over an explicit
	// gather of each channel.
	for c := 0; c < 3; c++ {
		var sum, sq float64
		var n float64
		for img := 0; img < s.N; img++ {
			for p := 0; p < 30; p++ {
				v := float64(s.Pixels[img*90+c*30+p])
				sum += v
				sq += v * v
				n++
			}
		}
		m := sum / n
		sd := math.Sqrt(sq/n - m*m)
		if math.Abs(float64(mean[c])-m) > 1e-6 || math.Abs(float64(std[c])-sd) > 1e-5 {
			t.Fatalf("channel %d: MeanStd %v %v, reference %v %v", c, mean[c], std[c], m, sd)
		}
	}
	if err := s.Normalize(mean, std); err != nil {
		t.Fatal(err)
	}
	m2, s2 := s.MeanStd()
	for c := 0; c < 3; c++ {
		if math.Abs(float64(m2[c])) > 1e-5 || math.Abs(float64(s2[c])-1) > 1e-5 {
			t.Fatalf("after Normalize channel %d: mean %v std %v, want 0 and 1", c, m2[c], s2[c])
		}
	}
	bad := []struct {
		mean, std []float32
		contains  string
	}{
		{[]float32{0, 0}, []float32{1, 1}, "2 means and 2 deviations"},
		{[]float32{0, 0, 0}, []float32{1, 0, 1}, "channel 1"},
		{[]float32{0}, []float32{float32(math.Inf(1))}, "positive finite std"},
		{[]float32{float32(math.NaN())}, []float32{1}, "finite mean"},
	}
	for _, b := range bad {
		if err := s.Normalize(b.mean, b.std); err == nil || !strings.Contains(err.Error(), b.contains) {
			t.Errorf("Normalize(%v, %v): error %v, want %q", b.mean, b.std, err, b.contains)
		}
	}
	// One mean and std for every channel.
	g := &ImageSet{N: 1, C: 2, H: 1, W: 2, Pixels: []float32{1, 2, 3, 4}}
	if err := g.Normalize([]float32{2}, []float32{2}); err != nil || !slices.Equal(g.Pixels, []float32{-0.5, 0, 0.5, 1}) {
		t.Fatalf("broadcast normalize: %v %v", g.Pixels, err)
	}
	var empty ImageSet
	empty.C, empty.H, empty.W = 3, 2, 2
	if m, sd := empty.MeanStd(); len(m) != 3 || m[0] != 0 || sd[2] != 0 {
		t.Fatalf("empty set: %v %v", m, sd)
	}
}

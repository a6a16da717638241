package data

import (
	"errors"
	"fmt"
	"math"
)

// MaxImageValues bounds N·C·H·W of an ImageSet built by the readers and the
// generator of this package (2^31 float32 values, 8 GiB).
const MaxImageValues = 1 << 31

// ImageSet is a labelled image classification dataset held in memory as one
// contiguous float32 tensor.
//
// Pixels holds N images of C×H×W values each, image-major then channel,
// row and column (NCHW, the layout of PyTorch and of Gorgonia's Conv2d).
// The readers store values in [0,1] (byte/255); [ImageSet.Normalize]
// changes that, so apply it only to sets that are not augmented afterwards.
type ImageSet struct {
	Name       string
	N, C, H, W int
	Pixels     []float32 // N×C×H×W, in [0,1] as read
	// Labels holds N class indices in [0, NumClasses), or nil for an
	// unlabelled set (NumClasses is then 0).
	Labels     []int
	NumClasses int
	// ClassNames, when not nil, has NumClasses entries.
	ClassNames []string
}

// ImageSize returns C·H·W, the number of values of one image.
func (s *ImageSet) ImageSize() int { return s.C * s.H * s.W }

// Image returns image i as a slice of Pixels (not a copy).
func (s *ImageSet) Image(i int) []float32 {
	d := s.ImageSize()
	return s.Pixels[i*d : (i+1)*d : (i+1)*d]
}

// Validate checks the shapes, the labels and that every pixel is finite,
// and returns an error that says what is wrong.
func (s *ImageSet) Validate() error {
	if s == nil {
		return errors.New("nil image set")
	}
	if s.N < 0 || s.C < 1 || s.H < 1 || s.W < 1 {
		return fmt.Errorf("image set %q: shape N=%d C=%d H=%d W=%d: expected N >= 0 and C, H, W >= 1", s.Name, s.N, s.C, s.H, s.W)
	}
	d := s.C * s.H * s.W
	if d > MaxImageValues || (s.N > 0 && d > MaxImageValues/s.N) {
		return fmt.Errorf("image set %q: %d×%d×%d×%d values: expected at most %d", s.Name, s.N, s.C, s.H, s.W, MaxImageValues)
	}
	if len(s.Pixels) != s.N*d {
		return fmt.Errorf("image set %q: %d pixel values: expected N×C×H×W = %d×%d×%d×%d = %d", s.Name, len(s.Pixels), s.N, s.C, s.H, s.W, s.N*d)
	}
	for i, v := range s.Pixels {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("image set %q: pixel value %d (image %d) is %v: expected a finite number", s.Name, i, i/d, v)
		}
	}
	if s.Labels == nil {
		if s.NumClasses != 0 {
			return fmt.Errorf("image set %q: no labels but NumClasses = %d: expected 0", s.Name, s.NumClasses)
		}
	} else {
		if len(s.Labels) != s.N {
			return fmt.Errorf("image set %q: %d labels for %d images", s.Name, len(s.Labels), s.N)
		}
		if s.NumClasses < 1 {
			return fmt.Errorf("image set %q: NumClasses = %d: expected at least 1 for a labelled set", s.Name, s.NumClasses)
		}
		for i, y := range s.Labels {
			if y < 0 || y >= s.NumClasses {
				return fmt.Errorf("image set %q: label %d of image %d: expected a class in [0,%d)", s.Name, y, i, s.NumClasses)
			}
		}
	}
	if s.ClassNames != nil && len(s.ClassNames) != s.NumClasses {
		return fmt.Errorf("image set %q: %d class names for %d classes", s.Name, len(s.ClassNames), s.NumClasses)
	}
	return nil
}

// ClassCounts returns the number of images of every class (nil for an
// unlabelled set).
func (s *ImageSet) ClassCounts() []int {
	if s.Labels == nil {
		return nil
	}
	c := make([]int, s.NumClasses)
	for _, y := range s.Labels {
		if y >= 0 && y < len(c) {
			c[y]++
		}
	}
	return c
}

// Subset returns a new set holding copies of the images idx (in that order;
// an index may repeat). Class names and the number of classes are kept.
func (s *ImageSet) Subset(idx []int) (*ImageSet, error) {
	d := s.ImageSize()
	out := &ImageSet{Name: s.Name, N: len(idx), C: s.C, H: s.H, W: s.W, NumClasses: s.NumClasses}
	if s.ClassNames != nil {
		out.ClassNames = append([]string(nil), s.ClassNames...)
	}
	out.Pixels = make([]float32, len(idx)*d)
	if s.Labels != nil {
		out.Labels = make([]int, len(idx))
	}
	for k, i := range idx {
		if i < 0 || i >= s.N {
			return nil, fmt.Errorf("image set %q: subset index %d (position %d) out of range [0,%d)", s.Name, i, k, s.N)
		}
		copy(out.Pixels[k*d:(k+1)*d], s.Pixels[i*d:(i+1)*d])
		if s.Labels != nil {
			out.Labels[k] = s.Labels[i]
		}
	}
	return out, nil
}

// MeanStd returns the mean and the standard deviation of every channel over
// all pixels of all images (population statistics, accumulated in
// float64), the values torchvision's Normalize expects. An empty set gives
// zero means and zero deviations.
func (s *ImageSet) MeanStd() (mean, std []float32) {
	mean = make([]float32, s.C)
	std = make([]float32, s.C)
	hw := s.H * s.W
	cnt := float64(s.N) * float64(hw)
	if cnt == 0 {
		return mean, std
	}
	for c := 0; c < s.C; c++ {
		// Two passes: the mean first, then the centred squares, which is
		// exact enough in float64 for any realistic set.
		var sum float64
		for n := 0; n < s.N; n++ {
			base := (n*s.C + c) * hw
			for _, v := range s.Pixels[base : base+hw] {
				sum += float64(v)
			}
		}
		m := sum / cnt
		var sq float64
		for n := 0; n < s.N; n++ {
			base := (n*s.C + c) * hw
			for _, v := range s.Pixels[base : base+hw] {
				d := float64(v) - m
				sq += d * d
			}
		}
		mean[c] = float32(m)
		std[c] = float32(math.Sqrt(sq / cnt))
	}
	return mean, std
}

// Normalize replaces every value x of channel c by (x − mean[c]) / std[c],
// in place. mean and std need C entries each (or one, used for every
// channel), and every std must be positive and finite.
func (s *ImageSet) Normalize(mean, std []float32) error {
	if (len(mean) != s.C && len(mean) != 1) || len(std) != len(mean) {
		return fmt.Errorf("image set %q: normalize with %d means and %d deviations: expected %d of each (or 1)", s.Name, len(mean), len(std), s.C)
	}
	for c := range std {
		if !(std[c] > 0) || math.IsInf(float64(std[c]), 0) || math.IsNaN(float64(mean[c])) || math.IsInf(float64(mean[c]), 0) {
			return fmt.Errorf("image set %q: channel %d mean %v std %v: expected a finite mean and a positive finite std", s.Name, c, mean[c], std[c])
		}
	}
	hw := s.H * s.W
	for n := 0; n < s.N; n++ {
		for c := 0; c < s.C; c++ {
			k := 0
			if len(mean) > 1 {
				k = c
			}
			m, sd := mean[k], std[k]
			base := (n*s.C + c) * hw
			px := s.Pixels[base : base+hw]
			for i, v := range px {
				px[i] = (v - m) / sd
			}
		}
	}
	return nil
}

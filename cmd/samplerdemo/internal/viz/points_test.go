package viz

import (
	"math"
	"slices"
	"testing"
)

// TestCirclePointsDistribution checks the point set against known values:
// labels i mod C, radii within [1−r, 1+r] with mean 1, and the angle around
// the class centre distributed as N(0, σ²), whose E[cos(θ−centre)] is
// exp(−σ²/2).
func TestCirclePointsDistribution(t *testing.T) {
	for _, cfg := range []PointsConfig{
		{N: 6000, Classes: 6, Spread: 0.3, RadiusJitter: 0.1, Seed: 1},
		{N: 5000, Classes: 5, Spread: 0.8, RadiusJitter: 0.5, Seed: 2},
		{N: 3000, Classes: 1, Spread: 0, RadiusJitter: 0, Seed: 3},
	} {
		e, labels, err := CirclePoints(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if e.N != cfg.N || e.D != 2 || len(e.Data) != 2*cfg.N || len(labels) != cfg.N {
			t.Fatalf("%+v: shapes N=%d D=%d data=%d labels=%d", cfg, e.N, e.D, len(e.Data), len(labels))
		}
		var sumCos, sumCos2, sumR float64
		for i := range cfg.N {
			if labels[i] != i%cfg.Classes {
				t.Fatalf("%+v: label %d of point %d", cfg, labels[i], i)
			}
			x, y := float64(e.Data[2*i]), float64(e.Data[2*i+1])
			r := math.Hypot(x, y)
			if r < 1-cfg.RadiusJitter-1e-6 || r > 1+cfg.RadiusJitter+1e-6 {
				t.Fatalf("%+v: radius %v of point %d", cfg, r, i)
			}
			c := math.Cos(math.Atan2(y, x) - ClassAngle(labels[i], cfg.Classes))
			sumCos += c
			sumCos2 += c * c
			sumR += r
		}
		n := float64(cfg.N)
		mean := sumCos / n
		se := math.Sqrt(max(sumCos2/n-mean*mean, 0)/n) + 1e-6
		if want := math.Exp(-cfg.Spread * cfg.Spread / 2); math.Abs(mean-want) > 5*se {
			t.Errorf("%+v: mean cos(angle − centre) = %.5f, want exp(−σ²/2) = %.5f (± %.5f)", cfg, mean, want, se)
		}
		// Uniform radius in [1−r, 1+r]: mean 1, s.d. r/√3.
		if se := cfg.RadiusJitter / math.Sqrt(3*n); math.Abs(sumR/n-1) > 5*se+1e-6 {
			t.Errorf("%+v: mean radius %.5f, want 1 ± %.5f", cfg, sumR/n, 5*se)
		}
	}
}

func TestCirclePointsDeterministicAndErrors(t *testing.T) {
	cfg := PointsConfig{N: 100, Classes: 3, Spread: 0.4, RadiusJitter: 0.1, Seed: 5}
	a, _, _ := CirclePoints(cfg)
	b, _, _ := CirclePoints(cfg)
	if !slices.Equal(a.Data, b.Data) {
		t.Error("same seed, different points")
	}
	cfg.Seed = 6
	c, _, _ := CirclePoints(cfg)
	if slices.Equal(a.Data, c.Data) {
		t.Error("different seeds, same points")
	}
	for _, bad := range []PointsConfig{
		{N: 0, Classes: 1},
		{N: 10, Classes: 0},
		{N: 10, Classes: 2, Spread: -1},
		{N: 10, Classes: 2, Spread: math.NaN()},
		{N: 10, Classes: 2, Spread: math.Inf(1)},
		{N: 10, Classes: 2, RadiusJitter: 1},
	} {
		if _, _, err := CirclePoints(bad); err == nil {
			t.Errorf("CirclePoints(%+v) accepted", bad)
		}
	}
}

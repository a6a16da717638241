package eval

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRanks(t *testing.T) {
	cases := []struct {
		in, want []float64
	}{
		{[]float64{10, 20, 20, 5}, []float64{2, 3.5, 3.5, 1}},
		{[]float64{3, 3, 3}, []float64{2, 2, 2}},
		{[]float64{1, 2, 3}, []float64{1, 2, 3}},
		{[]float64{0.5, -1, 0.5, 0.5, 7, -1}, []float64{4, 1.5, 4, 4, 6, 1.5}},
		{[]float64{0, math.Copysign(0, -1)}, []float64{1.5, 1.5}}, // -0 == 0
		{nil, []float64{}},
	}
	for _, c := range cases {
		if got := Ranks(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Ranks(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSpearmanHand(t *testing.T) {
	cases := []struct {
		name string
		x, y []float64
		want float64
	}{
		// ranks x = [1, 2.5, 2.5, 4], y = [1, 3, 2, 4]: Σdxdy = 4.5,
		// Σdx² = 4.5, Σdy² = 5, ρ = 4.5/√22.5 = 3/√10.
		{"ties in x", []float64{1, 2, 2, 3}, []float64{1, 3, 2, 4}, 3 / math.Sqrt(10)},
		// ranks x = [2, 2, 2, 4], y = [3, 1, 2, 4]: Σdxdy = 3, Σdx² = 3,
		// Σdy² = 5, ρ = 3/√15.
		{"triple tie", []float64{1, 1, 1, 2}, []float64{3, 1, 2, 4}, 3 / math.Sqrt(15)},
		{"reversed with ties", []float64{1, 2, 2, 3}, []float64{30, 20, 20, 10}, -1},
		{"monotone transform", []float64{0.1, 0.5, 0.2, 0.9}, []float64{math.Exp(0.1), math.Exp(0.5), math.Exp(0.2), math.Exp(0.9)}, 1},
		// no ties: 1 − 6Σd²/(n(n²−1)) with d = [0, 2, −1, −1, 0] → 1 − 36/120.
		{"no ties", []float64{1, 2, 3, 4, 5}, []float64{1, 4, 2, 3, 5}, 0.7},
	}
	for _, c := range cases {
		got, err := Spearman(c.x, c.y)
		if err != nil || math.Abs(got-c.want) > 1e-14 {
			t.Errorf("%s: Spearman = %v (%v), want %v", c.name, got, err, c.want)
		}
	}
}

func TestSpearmanScipy(t *testing.T) {
	// Numbers printed by testdata/spearman_reference.py (SciPy 1.10.1).
	x := []float64{0.6, 0.5, -0.6, -1.2, -0.1, 1.2, 1.3, 0.9, 0.3, 1.6, 1.2, -0.2, -1.1, -0.4, -0.4, 0.7, -1.9, -0.2, 1.7, -0.9, -0.8, -0.1, -1.4, -0.1, -0.0}
	y := []float64{1.2, 1.0, -1.2, -2.4, -0.2, 0.0, 5.0, 5.0, 3.0, 4.0, 4.0, 1.0, 2.0, 1.0, 3.0, 0.0, 1.0, 5.0, 5.0, 2.0, 4.0, 1.0, 0.0, 4.0, 1.0}
	rankX := []float64{18.0, 17.0, 7.0, 3.0, 13.0, 21.5, 23.0, 20.0, 16.0, 24.0, 21.5, 10.5, 4.0, 8.5, 8.5, 19.0, 1.0, 10.5, 25.0, 5.0, 6.0, 13.0, 2.0, 13.0, 15.0}
	const spearman, pearson = 0.41487097973712456, 0.4659999129921804
	if got := Ranks(x); !slices.Equal(got, rankX) {
		t.Errorf("Ranks = %v\nscipy   %v", got, rankX)
	}
	if got, err := Spearman(x, y); err != nil || math.Abs(got-spearman) > 1e-14 {
		t.Errorf("Spearman = %v (%v), scipy %v", got, err, spearman)
	}
	if got, err := Pearson(x, y); err != nil || math.Abs(got-pearson) > 1e-14 {
		t.Errorf("Pearson = %v (%v), scipy %v", got, err, pearson)
	}
}

func TestSpearmanRandomAgainstFormula(t *testing.T) {
	// Without ties Spearman equals 1 − 6Σd²/(n(n²−1)), an independent formula.
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 2 + rng.IntN(200)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = rng.Float64(), rng.Float64()+0.3*x[i]
		}
		rx, ry := Ranks(x), Ranks(y)
		var d2 float64
		for i := range rx {
			d2 += (rx[i] - ry[i]) * (rx[i] - ry[i])
		}
		fn := float64(n)
		want := 1 - 6*d2/(fn*(fn*fn-1))
		got, err := Spearman(x, y)
		if err != nil || math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d n=%d: %v, formula %v", trial, n, got, want)
		}
	}
}

func TestSpearmanErrors(t *testing.T) {
	if r, err := Spearman([]float64{1, 1, 1}, []float64{1, 2, 3}); !errors.Is(err, ErrConstantInput) || !math.IsNaN(r) {
		t.Errorf("constant x: %v %v", r, err)
	}
	if r, err := Pearson([]float64{1, 2, 3}, []float64{4, 4, 4}); !errors.Is(err, ErrConstantInput) || !math.IsNaN(r) {
		t.Errorf("constant y: %v %v", r, err)
	}
	for _, c := range [][2][]float64{
		{{1, 2}, {1, 2, 3}},
		{{1}, {1}},
		{{1, math.NaN()}, {1, 2}},
		{{1, 2}, {math.Inf(1), 2}},
	} {
		if _, err := Spearman(c[0], c[1]); err == nil || errors.Is(err, ErrConstantInput) {
			t.Errorf("Spearman(%v, %v): error %v", c[0], c[1], err)
		}
	}
}

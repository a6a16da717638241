package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrConstantInput is returned (with a NaN coefficient) by Spearman and
// Pearson when one of the inputs is constant, so the correlation is
// undefined (scipy returns nan with a warning).
var ErrConstantInput = errors.New("eval: correlation of a constant input is undefined")

// Ranks returns the ranks of x, 1 for the smallest value, with tied values
// sharing the average of the ranks they span (scipy.stats.rankdata with
// method="average"): Ranks([10, 20, 20, 5]) = [2, 3.5, 3.5, 1]. NaN values
// are not allowed (the caller checks).
func Ranks(x []float64) []float64 {
	n := len(x)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, n)
	for s := 0; s < n; {
		e := s + 1
		for e < n && x[order[e]] == x[order[s]] {
			e++
		}
		avg := float64(s+1+e) / 2 // mean of the ranks s+1 … e
		for q := s; q < e; q++ {
			r[order[q]] = avg
		}
		s = e
	}
	return r
}

// checkCorrInput validates the inputs of a correlation.
func checkCorrInput(name string, x, y []float64) error {
	if len(x) != len(y) {
		return fmt.Errorf("eval: %s: %d values against %d: expected equal lengths", name, len(x), len(y))
	}
	if len(x) < 2 {
		return fmt.Errorf("eval: %s: %d values: expected at least 2", name, len(x))
	}
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) || math.IsInf(x[i], 0) || math.IsInf(y[i], 0) {
			return fmt.Errorf("eval: %s: value %d is not finite (%v, %v)", name, i, x[i], y[i])
		}
	}
	return nil
}

// Pearson returns the Pearson correlation coefficient of x and y (two-pass,
// float64). Inputs must have equal length ≥ 2 and be finite; a constant
// input gives NaN and ErrConstantInput.
func Pearson(x, y []float64) (float64, error) {
	if err := checkCorrInput("Pearson", x, y); err != nil {
		return math.NaN(), err
	}
	return pearson(x, y)
}

func pearson(x, y []float64) (float64, error) {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN(), ErrConstantInput
	}
	r := sxy / math.Sqrt(sxx*syy)
	return max(-1, min(1, r)), nil
}

// Spearman returns Spearman's rank correlation of x and y: the Pearson
// correlation of their average ranks (Ranks), as scipy.stats.spearmanr
// computes it. Inputs must have equal length ≥ 2 and be finite; a constant
// input gives NaN and ErrConstantInput.
func Spearman(x, y []float64) (float64, error) {
	if err := checkCorrInput("Spearman", x, y); err != nil {
		return math.NaN(), err
	}
	return pearson(Ranks(x), Ranks(y))
}

package eval

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestSVMCrossValidateDeterministic: the result does not depend on the
// number of workers, on repeated calls, nor on whether distances are
// precomputed or computed on demand.
func TestSVMCrossValidateDeterministic(t *testing.T) {
	x, y := clusteredData(11, 240, 12, 3, 1)
	base, err := SVMCrossValidate(x, 240, 12, y, SVMOptions{Seed: 5, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []SVMOptions{
		{Seed: 5, Workers: 1},
		{Seed: 5, Workers: 2},
		{Seed: 5, Workers: 7},
		{Seed: 5, Workers: 2, MaxPrecomputeBytes: 1}, // on-demand distances
		{Seed: 5, Workers: 2, CacheBytes: 1},         // two-row kernel cache
	} {
		got, err := SVMCrossValidate(x, 240, 12, y, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, base) {
			t.Errorf("options %+v: result differs from Workers=1:\n got %+v\nwant %+v", opt, got, base)
		}
	}
	other, err := SVMCrossValidate(x, 240, 12, y, SVMOptions{Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other.FoldIDs, base.FoldIDs) {
		t.Error("seeds 5 and 6 gave the same outer folds")
	}
	if base.Mean < 0.5 || base.Mean > 1 || len(base.FoldAcc) != 10 || len(base.ChosenC) != 10 {
		t.Errorf("implausible result %+v", base)
	}
	if m, s := MeanStd(base.FoldAcc); m != base.Mean || s != base.Std {
		t.Errorf("Mean/Std %v/%v, MeanStd of FoldAcc %v/%v", base.Mean, base.Std, m, s)
	}
}

// TestSVMCrossValidateSingleC: with one C the inner search is skipped and
// every fold uses it (GraphCL's search=False).
func TestSVMCrossValidateSingleC(t *testing.T) {
	fx := loadEmbed(t, "embed2")
	res, err := SVMCrossValidate(fx.x, fx.n, fx.d, fx.y, SVMOptions{FoldIDs: fx.folds, Cs: []float64{10}})
	if err != nil {
		t.Fatal(err)
	}
	if res.InnerMean != nil {
		t.Error("InnerMean set with a single C")
	}
	// Independent check of each fold through the public SVC.
	for f := range res.FoldAcc {
		var xtr, xte []float64
		var ytr, yte []int
		for i, g := range fx.folds {
			row := fx.rows64(i, i+1)
			if g == f {
				xte, yte = append(xte, row...), append(yte, fx.y[i])
			} else {
				xtr, ytr = append(xtr, row...), append(ytr, fx.y[i])
			}
		}
		svc := &SVC{C: 10}
		if err := svc.Fit(xtr, len(ytr), fx.d, ytr); err != nil {
			t.Fatal(err)
		}
		pred, _ := svc.Predict(xte, len(yte))
		if acc := accuracy(pred, yte); acc != res.FoldAcc[f] || res.ChosenC[f] != 10 {
			t.Errorf("fold %d: accuracy %v (C %v), SVC gives %v", f, res.FoldAcc[f], res.ChosenC[f], acc)
		}
	}
}

func TestSVMCrossValidateBadInputs(t *testing.T) {
	x, y := clusteredData(1, 40, 3, 2, 1)
	nan := append([]float32(nil), x...)
	nan[7] = float32(math.NaN())
	badFolds := make([]int, 40)
	for i := range badFolds {
		badFolds[i] = 2 * (i % 2) // fold 1 is empty
	}
	oneOdd := make([]int, 40) // sample 0 is the only member of class 1
	oneOdd[0] = 1
	firstAlone := make([]int, 40) // sample 0 alone in fold 0
	for i := 1; i < 40; i++ {
		firstAlone[i] = 1
	}
	cases := []struct {
		name string
		x    []float32
		n, d int
		y    []int
		opt  SVMOptions
		want string
	}{
		{"size mismatch", x[:100], 40, 3, y, SVMOptions{}, "want n×d"},
		{"label mismatch", x, 40, 3, y[:39], SVMOptions{}, "39 labels for 40 rows"},
		{"NaN", nan, 40, 3, y, SVMOptions{}, "row 2, column 1"},
		{"bad C", x, 40, 3, y, SVMOptions{Cs: []float64{1, 0}}, "Cs[1]"},
		{"too many folds", x, 40, 3, y, SVMOptions{Folds: 30}, "outer folds"},
		{"inner folds 1", x, 40, 3, y, SVMOptions{InnerFolds: 1}, "InnerFolds"},
		{"fold ids length", x, 40, 3, y, SVMOptions{FoldIDs: []int{0, 1}}, "FoldIDs has 2 entries"},
		{"negative fold id", x, 40, 3, y, SVMOptions{FoldIDs: append([]int{-1}, badFolds[1:]...)}, "FoldIDs[0] = -1"},
		{"empty fold", x, 40, 3, y, SVMOptions{FoldIDs: badFolds}, "outer fold 1 of 3 is empty"},
		{"one class in a training part", x, 40, 3, oneOdd, SVMOptions{FoldIDs: firstAlone, Cs: []float64{1}}, "want at least 2"},
	}
	for _, tc := range cases {
		_, err := SVMCrossValidate(tc.x, tc.n, tc.d, tc.y, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

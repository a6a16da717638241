package sampler

import (
	"math"
	"strconv"
	"testing"
)

// The paper's claim on a labelled mixture: Uniform ≈ 1/C < BatchSampler <
// kNN, with BatchSampler's false-negative ratio rising with M and with α.
// "Rising" is checked as: never significantly lower than the previous
// setting (3 standard errors), and significantly higher across the whole
// range (M = K → M = N, α = 0 → 0.5 at M = 200). At M = K the graph ignores
// the embeddings, so BatchSampler must match Uniform.
func TestFalseNegativeOrdering(t *testing.T) {
	const n, c = 3000, 10
	e, labels, err := GaussianMixture(MixtureConfig{N: n, C: c, D: 16, Between: 1, Within: 1.5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ms := []int{10, 50, 200, n}
	alphas := []float64{0, 0.2, 0.5}
	rows, err := CompareSamplers(e, labels, CompareConfig{B: 64, K: 10, Ms: ms, Alphas: alphas, Batches: 300, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", MarkdownTable(rows))
	uni, knn := rows[0].Stats, rows[len(rows)-1].Stats
	bs := func(mi, ai int) BatchStats { return rows[1+mi*len(alphas)+ai].Stats }
	se := func(a, b BatchStats) float64 { return math.Hypot(a.FNStdErr, b.FNStdErr) }
	higher := func(what string, lo, hi BatchStats, strict bool) {
		t.Helper()
		d := hi.FNRatio - lo.FNRatio
		if strict && d < 3*se(lo, hi) {
			t.Errorf("%s: false-negative ratio %.4f → %.4f is not significantly higher", what, lo.FNRatio, hi.FNRatio)
		}
		if !strict && d < -3*se(lo, hi) {
			t.Errorf("%s: false-negative ratio falls %.4f → %.4f", what, lo.FNRatio, hi.FNRatio)
		}
	}
	want := (float64(n)/c - 1) / float64(n-1) // P(same label) for two distinct random instances
	if math.Abs(uni.FNRatio-want) > 4*uni.FNStdErr {
		t.Errorf("Uniform false-negative ratio %.4f, want ≈ %.4f", uni.FNRatio, want)
	}
	for ai, a := range alphas {
		if d := math.Abs(bs(0, ai).FNRatio - uni.FNRatio); d > 4*se(bs(0, ai), uni) {
			t.Errorf("M=K α=%v: %.4f differs from Uniform %.4f", a, bs(0, ai).FNRatio, uni.FNRatio)
		}
		for mi := 1; mi < len(ms); mi++ {
			higher("M↑ at α="+ftoa(a), bs(mi-1, ai), bs(mi, ai), false)
			higher("Uniform < BatchSampler", uni, bs(mi, ai), true)
			if ms[mi] < n {
				higher("BatchSampler < kNN", bs(mi, ai), knn, true)
			}
		}
		higher("M=K → M=N at α="+ftoa(a), bs(0, ai), bs(len(ms)-1, ai), true)
	}
	for mi := 1; mi < len(ms); mi++ {
		for ai := 1; ai < len(alphas); ai++ {
			higher("α↑ at M="+ftoa(float64(ms[mi])), bs(mi, ai-1), bs(mi, ai), false)
		}
	}
	higher("α=0 → 0.5 at M=200", bs(2, 0), bs(2, 2), true)
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

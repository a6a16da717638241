package lab

import (
	"fmt"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// TestExperiments measures the three experiments of docs/teaching-demo.md
// on the page's default point set (200 batches per row, seed 1) and checks
// what the page tells a student to look for: at K ≥ B−1, raising α brings
// more hard true negatives and more false negatives; raising M from K to
// N−1 moves BatchSampler from Uniform's false-negative ratio to the kNN
// Sampler's, with the most hard negatives in between; at α = 1, K < B−1
// makes the walk fall back, and the batch (a few small neighbourhoods
// scattered over the data) loses the hard negatives that K = B−1 gives.
// Run it with -v for the table the docs quote.
func TestExperiments(t *testing.T) {
	ds := DefaultData()
	e, labels, centres, err := Clusters(ds)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := New(e, labels)
	thr := neighbourCosine(centres)
	base := Settings{Sampler: sampler.KindBatchSampler, B: 32, M: 200, K: 31, Alpha: 0.2, Seed: 1, Threshold: thr}
	const n = 200
	m := func(s Settings) Measure {
		r, err := l.Measure(s, n)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	row := func(name string, r Measure) {
		t.Logf("| %s | %.3f ± %.3f | %.3f ± %.3f | %.3f |", name, r.Metrics.FN, r.FNErr, r.Metrics.Hard, r.HardErr, r.Metrics.MeanCos)
	}
	t.Logf("%d points, %d classes × %d sub-clusters on the circle (spread %v, seed %d); B = 32, seed 1, hard if cosine ≥ %.2f; %d batches per row",
		ds.N, ds.Classes, ds.Sub, ds.Spread, ds.Seed, thr, n)
	t.Log("| sampler | false-negative ratio | hard-true-negative ratio | mean cosine |")
	u, k := base, base
	u.Sampler, k.Sampler = sampler.KindUniform, sampler.KindKNN
	mu, mk := m(u), m(k)
	row("Uniform", mu)
	row("kNN Sampler", mk)

	t.Log("Experiment 1: α from 0.05 to 1 (M = 200, K = 31 = B−1)")
	var a0, a1 Measure
	for _, a := range []float64{0.05, 0.2, 0.5, 1} {
		s := base
		s.Alpha = a
		r := m(s)
		row(fmt.Sprintf("BatchSampler α = %v", a), r)
		if a == 0.05 {
			a0 = r
		}
		a1 = r
	}
	if !(a1.Metrics.Hard > a0.Metrics.Hard && a1.Metrics.FN > a0.Metrics.FN) {
		t.Errorf("α 0.05 → 1 at K = B−1: hard %.3f → %.3f, FN %.3f → %.3f; want both to rise", a0.Metrics.Hard, a1.Metrics.Hard, a0.Metrics.FN, a1.Metrics.FN)
	}

	t.Log("Experiment 2: M from K to N−1 (K = 31, α = 0.2)")
	var first, last Measure
	best := 0.0
	for _, mm := range []int{31, 100, 200, 300, 450, ds.N - 1} {
		s := base
		s.M = mm
		r := m(s)
		row(fmt.Sprintf("BatchSampler M = %d", mm), r)
		if mm == 31 {
			first = r
		}
		last = r
		best = max(best, r.Metrics.Hard)
	}
	if !(first.Metrics.FN < mu.Metrics.FN+0.02 && last.Metrics.FN > 0.7 && best > first.Metrics.Hard && best > last.Metrics.Hard) {
		t.Errorf("M = K: FN %.3f (Uniform %.3f); M = N−1: FN %.3f; the most hard negatives %.3f, at the ends %.3f and %.3f",
			first.Metrics.FN, mu.Metrics.FN, last.Metrics.FN, best, first.Metrics.Hard, last.Metrics.Hard)
	}

	t.Log("Experiment 3: K < B−1 against K ≥ B−1 (M = 200, α = 1)")
	var hard8, hard31 float64
	for _, kk := range []int{8, 31} {
		s := base
		s.K, s.Alpha = kk, 1
		r := m(s)
		row(fmt.Sprintf("BatchSampler K = %d, α = 1", kk), r)
		if kk == 8 {
			hard8 = r.Metrics.Hard
			v, err := l.Batch(s, false)
			if err != nil {
				t.Fatal(err)
			}
			if v.Jumps == 0 {
				t.Errorf("K = 8 < B−1 at α = 1: the first batch's walk did not fall back")
			}
			t.Logf("K = 8, α = 1: the first batch's walk fell back %d times", v.Jumps)
		} else {
			hard31 = r.Metrics.Hard
		}
	}
	if !(hard8 < hard31) {
		t.Errorf("α = 1: hard-negative ratio %.3f with K = 8, %.3f with K = 31; want fewer when the walk falls back", hard8, hard31)
	}
}

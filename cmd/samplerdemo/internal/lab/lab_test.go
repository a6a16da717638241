package lab

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// direct builds the sampler of s as any Go program would, without the lab.
func direct(t *testing.T, s Settings, e sampler.Embeddings) sampler.Sampler {
	t.Helper()
	spec := sampler.Spec{Kind: s.Sampler}
	if s.Sampler == sampler.KindBatchSampler {
		spec = sampler.Spec{Kind: s.Sampler, M: s.M, K: s.K, Walk: s.Walk, Graph: s.Graph, Alpha: sampler.AlphaSchedule{Start: s.Alpha, End: s.Alpha, Constant: true}}
	}
	smp, err := spec.New(e.N, s.B, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if rf, ok := smp.(sampler.Refresher); ok {
		if err := rf.Refresh(e); err != nil {
			t.Fatal(err)
		}
	}
	return smp
}

// TestBatchMatchesSampler: the lab's batches, continued with next, are the
// sampler package's batches for the same settings, with its diagnostics;
// BatchSampler's steps replay to the batch.
func TestBatchMatchesSampler(t *testing.T) {
	e, labels, _, err := Clusters(DataSpec{N: 300, Classes: 3, Sub: 3, Dim: 3, Spread: 0.1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(e, labels)
	if err != nil {
		t.Fatal(err)
	}
	var all []Settings
	all = append(all, Settings{Sampler: sampler.KindUniform, B: 24, Seed: 3, Threshold: 0.8}, Settings{Sampler: sampler.KindKNN, B: 24, Seed: 3, Threshold: 0.8})
	for _, walk := range sampler.Walks {
		for _, k := range []int{5, 23} {
			all = append(all, Settings{Sampler: sampler.KindBatchSampler, Walk: walk, M: 60, K: k, B: 24, Alpha: 1 - 0.01*float64(k), Seed: 3, Threshold: 0.8})
		}
	}
	all = append(all, Settings{Sampler: sampler.KindBatchSampler, Graph: sampler.GraphKNN, M: 30, K: 30, B: 24, Alpha: 0.2, Seed: 9, Threshold: 0.5})
	for _, s := range all {
		name := fmt.Sprintf("%+v", s)
		want := direct(t, s, e)
		jumps := 0
		for i := range 4 {
			v, err := l.Batch(s, i > 0)
			if err != nil {
				t.Fatal(err)
			}
			w := want.Next()
			if v.Index != i || !slices.Equal(v.Batch, w) {
				t.Fatalf("%s: batch %d (index %d) %v, sampler %v", name, i, v.Index, v.Batch, w)
			}
			if v.Metrics.FN != sampler.FalseNegativeRatio(w, labels) || v.Metrics.Hard != sampler.HardNegativeRatio(w, labels, e, s.Threshold) ||
				v.Metrics.MeanCos != sampler.MeanCosine(w, e) || !slices.Equal(v.Metrics.Hist, sampler.CosineHistogram(w, e, HistBins)) {
				t.Fatalf("%s: batch %d: metrics %+v differ from the sampler package's", name, i, v.Metrics)
			}
			if s.Sampler != sampler.KindBatchSampler {
				if len(v.Steps) != 0 || v.Rows != nil {
					t.Fatalf("%s: steps or rows for a sampler that does not walk", name)
				}
				continue
			}
			// replay the steps
			in := map[int]bool{v.Batch[0]: true}
			order := []int{v.Batch[0]}
			batchJumps := 0
			for _, st := range v.Steps {
				if st[2] == StepJump {
					batchJumps++
				}
				if st[2] != StepJump && !slices.Contains(v.Rows[st[0]], st[1]) {
					t.Fatalf("%s: step %v is not an edge of the rows given", name, st)
				}
				if (st[3] == 1) == in[st[1]] {
					t.Fatalf("%s: step %v: new flag wrong", name, st)
				}
				if st[3] == 1 {
					in[st[1]] = true
					order = append(order, st[1])
				}
				if st[2] == StepJump {
					jumps++
				}
			}
			if !slices.Equal(order, v.Batch) {
				t.Fatalf("%s: the steps replay to %v, the batch is %v", name, order, v.Batch)
			}
			if v.Jumps != batchJumps {
				t.Fatalf("%s: %d jumps counted, %d in the steps", name, v.Jumps, batchJumps)
			}
			for u, row := range v.Rows {
				for q, x := range row {
					if c := sampler.PairCosines([]int{u, x}, e)[0]; math.Abs(c-v.Cos[u][q]) > 0 {
						t.Fatalf("%s: cosine of %d and %d: %v, want %v", name, u, x, v.Cos[u][q], c)
					}
				}
			}
		}
		if s.Walk == sampler.WalkRWR && s.K == 5 && jumps == 0 {
			t.Errorf("%s: K = 5 < B−1 at α = 0.95 and no fallback jump in 4 batches", name)
		}
		// a new call without next starts over
		v, err := l.Batch(s, false)
		if err != nil {
			t.Fatal(err)
		}
		if first := direct(t, s, e).Next(); v.Index != 0 || !slices.Equal(v.Batch, first) {
			t.Errorf("%s: without next: index %d batch %v, want the first %v", name, v.Index, v.Batch, first)
		}
	}
}

// TestMeasure: Measure averages the diagnostics of the first n batches.
func TestMeasure(t *testing.T) {
	e, labels, _, err := Clusters(DefaultData())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := New(e, labels)
	s := Settings{Sampler: sampler.KindBatchSampler, M: 100, K: 31, B: 32, Alpha: 0.3, Seed: 2, Threshold: 0.9}
	m, err := l.Measure(s, 30)
	if err != nil {
		t.Fatal(err)
	}
	smp := direct(t, s, e)
	var fn, hard, cos float64
	hist := make([]float64, HistBins)
	for range 30 {
		b := smp.Next()
		fn += sampler.FalseNegativeRatio(b, labels)
		hard += sampler.HardNegativeRatio(b, labels, e, s.Threshold)
		cos += sampler.MeanCosine(b, e)
		for i, h := range sampler.CosineHistogram(b, e, HistBins) {
			hist[i] += h / 30
		}
	}
	if math.Abs(m.Metrics.FN-fn/30) > 1e-15 || math.Abs(m.Metrics.Hard-hard/30) > 1e-15 || math.Abs(m.Metrics.MeanCos-cos/30) > 1e-15 {
		t.Errorf("Measure %+v, direct FN %v hard %v cos %v", m.Metrics, fn/30, hard/30, cos/30)
	}
	var sum float64
	for i := range hist {
		sum += m.Metrics.Hist[i]
		if math.Abs(hist[i]-m.Metrics.Hist[i]) > 1e-12 {
			t.Errorf("histogram bin %d: %v, direct %v", i, m.Metrics.Hist[i], hist[i])
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("histogram sums to %v", sum)
	}
	for _, bad := range []struct {
		s Settings
		n int
	}{{s, 0}, {Settings{Sampler: "walk", B: 32}, 5}, {Settings{Sampler: "uniform", B: 1}, 5}, {Settings{Sampler: "batchsampler", B: 32, K: 40, M: 20}, 5}, {Settings{Sampler: "uniform", B: 8, Threshold: 2}, 5}} {
		if _, err := l.Measure(bad.s, bad.n); err == nil {
			t.Errorf("Measure(%+v, %d) accepted", bad.s, bad.n)
		}
	}
}

package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/train"
)

// An experiment of two samplers × two seeds, written by hand: the summary
// averages the logged steps' false-negative ratio and in-batch cosine, the
// epochs' coverage, the refreshes' build time and Next's time per step,
// keeps the paired comparison, and the table and the figure are written.
func TestSummary(t *testing.T) {
	runs := t.TempDir()
	dir := filepath.Join(runs, "exp")
	res := train.Results{Results: []train.ResultEntry{
		{Dataset: "D", Modality: "graph", Sampler: "uniform", Metric: "acc", Seeds: []uint64{0, 1}, PerSeed: []float64{70, 72}, Mean: 71, Std: 1},
		{Dataset: "D", Modality: "graph", Sampler: "gcbs", Metric: "acc", Seeds: []uint64{0, 1}, PerSeed: []float64{71, 74}, Mean: 72.5, Std: 1.5,
			Comparison: &train.Paired{Baseline: "uniform", MeanDiff: 1.5, T: 3, P: 0.2, N: 2}},
	}}
	metrics := map[string][]string{}
	for _, smp := range []string{"uniform", "gcbs"} {
		for seed := range 2 {
			id := smp + "-seed" + string(rune('0'+seed))
			res.Runs = append(res.Runs, train.RunResult{ID: id, Sampler: smp, Seed: uint64(seed), Steps: 4})
			lines := []string{
				`{"run":"` + id + `","step":1,"fn_ratio":0.25,"batch_cos":0.1}`,
				`{"run":"` + id + `","step":2,"fn_ratio":null,"batch_cos":0.3}`,
				`{"event":"epoch_end","run":"` + id + `","step":4,"coverage":0.5}`,
				`{"event":"sampler_time","run":"` + id + `","step":4,"next_seconds":0.008}`,
			}
			if smp == "gcbs" {
				lines = append(lines, `{"event":"refresh","step":0,"build_seconds":2}`, `{"event":"refresh","step":2,"build_seconds":4}`)
			}
			metrics[id] = lines
		}
	}
	for id, lines := range metrics {
		p := filepath.Join(dir, "runs", id)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "metrics.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(runs, "unstarted"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := run([]string{"-runs", runs, "-out", out}); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Rows    []Row
		Missing []string
	}
	sb, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sb, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Rows) != 2 || len(sum.Missing) != 1 || sum.Missing[0] != "unstarted" {
		t.Fatalf("rows %d, missing %v", len(sum.Rows), sum.Missing)
	}
	g := sum.Rows[1]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	switch {
	case g.Sampler != "gcbs" || g.FNRatio == nil || !near(*g.FNRatio, 0.25):
		t.Errorf("fn ratio %v, want 0.25 (the null step left out)", g.FNRatio)
	case !near(g.BatchCos, 0.2):
		t.Errorf("batch cos %v, want 0.2", g.BatchCos)
	case g.Coverage == nil || !near(*g.Coverage, 0.5):
		t.Errorf("coverage %v", g.Coverage)
	case g.RefreshSeconds == nil || !near(*g.RefreshSeconds, 3) || g.Refreshes != 2:
		t.Errorf("refresh %v s, %v per run; want 3 s, 2", g.RefreshSeconds, g.Refreshes)
	case !near(g.NextMillis, 2):
		t.Errorf("next %v ms per batch, want 8 ms / 4 steps = 2", g.NextMillis)
	case g.Diff == nil || *g.Diff != 1.5 || g.DiffSE == nil || !near(*g.DiffSE, 0.5):
		t.Errorf("diff %v ± %v, want 1.5 ± 0.5", g.Diff, g.DiffSE)
	}
	md, _ := os.ReadFile(filepath.Join(out, "table.md"))
	if !strings.Contains(string(md), "| gcbs | 2 | 72.50 ± 1.50 | +1.50 (0.20) | 0.250 | 0.200 |") {
		t.Errorf("table:\n%s", md)
	}
	if st, err := os.Stat(filepath.Join(out, "composition-graph.png")); err != nil || st.Size() == 0 {
		t.Errorf("figure: %v", err)
	}
}

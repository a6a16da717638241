package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A BatchSampler whose m (or k) exceeds N − 1 runs with M = N − 1 (every
// other instance a candidate): Run says so in its log and records the M
// and K it ran with in every run's result (runs/<id>/result.json and
// results.json) and in results.md, while config.yaml keeps the config as
// given.
func TestSamplerClampedToTheDatasetIsRecorded(t *testing.T) {
	dir := t.TempDir()
	cfg := mustParse(t, tinySynthetic, "seeds=[0]", "train.epochs=1",
		"samplers=[{kind: uniform}, {kind: batchsampler, label: big, m: 5000, k: 20, alpha: 0.2}, {kind: batchsampler, label: fits, m: 40, k: 5, alpha: 0.2}]")
	var logs []string
	res, err := Run(context.Background(), cfg, Options{OutDir: dir, Observer: Observer{Log: func(s string) { logs = append(logs, s) }}})
	if err != nil {
		t.Fatal(err)
	}
	log := strings.Join(logs, "\n")
	for _, want := range []string{"big", "m = 5000", "N = 90", "M = 89"} {
		if !strings.Contains(log, want) {
			t.Errorf("log does not say %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "fits:") {
		t.Errorf("a sampler that fits is reported:\n%s", log)
	}
	want := map[string][2]int{"uniform-seed0": {0, 0}, "big-seed0": {89, 20}, "fits-seed0": {40, 5}}
	for _, r := range res.Runs {
		if got := [2]int{r.SamplerM, r.SamplerK}; got != want[r.ID] {
			t.Errorf("%s: ran with M, K = %v, want %v", r.ID, got, want[r.ID])
		}
	}
	var rr RunResult
	if err := readJSON(filepath.Join(dir, "runs", "big-seed0", "result.json"), &rr); err != nil || rr.SamplerM != 89 {
		t.Errorf("runs/big-seed0/result.json: sampler_m %d (%v), want 89", rr.SamplerM, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "big: m = 5000 and k = 20 in the config; it ran with M = 89") {
		t.Errorf("results.md does not say how big ran:\n%s", md)
	}
	y, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if !strings.Contains(string(y), "m: 5000") {
		t.Errorf("config.yaml lost the config's m:\n%s", y)
	}
}

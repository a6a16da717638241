package train_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/train"
)

// tinyGraphs is a small synthetic graph experiment: 90 graphs, 3 classes,
// 3 epochs of batches of 32, two seeds.
const tinyGraphs = `
name: tiny
modality: graph
data:
  source: synthetic
  synthetic: {graphs: 90, classes: 3, min_nodes: 8, max_nodes: 14, node_labels: 2, noise: 0.1, seed: 3}
model: {kind: gin, hidden: 8, layers: 2}
loss: {kind: infonce, form: graphcl, temperature: 0.2}
train: {epochs: 3, batch_size: 32, lr: 0.01}
eval: {kind: svm, folds: 3, inner_folds: 2, cs: [0.1, 10]}
seeds: [0, 1]
`

// TestMethodFromOutside registers the method of momentum_method_test.go
// from outside package train, trains it with two
// samplers, interrupts it mid-epoch, resumes it, and checks that the
// resumed run ends bit for bit where an uninterrupted one does (losses,
// scores, and the EMA target's parameters in the checkpointed state), that
// the target moved with the scheduled momentum, and that it evaluates.
func TestMethodFromOutside(t *testing.T) {
	train.RegisterMethod("test-momentum", tinyMomentumSpec)
	t.Cleanup(func() { train.UnregisterMethod("test-momentum") })
	cfg, err := train.ParseConfig([]byte(tinyGraphs), []string{"method=test-momentum", "model.proj_dim=8",
		`samplers=[{kind: uniform}, {kind: batchsampler, label: bs, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`})
	if err != nil {
		t.Fatal(err)
	}
	ref := t.TempDir()
	want, err := train.Run(context.Background(), cfg, train.Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range want.Runs {
		if r.Metric != "svm_accuracy" || !(r.Value > 0) {
			t.Errorf("%s: %s %v", r.ID, r.Metric, r.Value)
		}
	}
	// The target follows MoCo v3's momentum schedule, one update per step.
	moms := emaMomenta(t, ref, "uniform-seed0")
	if len(moms) != 9 || moms[0] != optim.EMAMomentum(0.9, 1, 9) || moms[8] != 1 {
		t.Errorf("momenta %v, want 9 updates from EMAMomentum(0.9, 1, 9) up to 1", moms)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	obs := train.Observer{Step: func(s train.StepInfo) {
		if s.Run == "bs-seed1" && s.Step == 5 {
			cancel()
		}
	}}
	if _, err := train.Run(ctx, cfg, train.Options{OutDir: dir, Observer: obs}); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	params, err := train.CheckpointParams(filepath.Join(dir, "runs", "bs-seed1", "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	targets := 0
	for _, name := range params {
		if strings.HasPrefix(name, "target.") {
			targets++
		}
	}
	if targets == 0 || targets != len(params)-targets-1 { // online + predictor vs target
		t.Errorf("checkpoint holds %d target parameters of %d: want the EMA copy of every online GIN parameter", targets, len(params))
	}
	got, err := train.Run(context.Background(), cfg, train.Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := resultsOf(got), resultsOf(want); !maps.Equal(g, w) {
		t.Errorf("resumed %v, uninterrupted %v", g, w)
	}
	if g, w := stepLosses(t, dir), stepLosses(t, ref); !maps.Equal(g, w) {
		t.Errorf("resumed run's losses differ from the uninterrupted run's:\n%v\n%v", g, w)
	}
}

// emaMomenta reads a run's "ema" records.
func emaMomenta(t *testing.T, dir, run string) []float64 {
	t.Helper()
	var out []float64
	for _, m := range metricsLines(t, filepath.Join(dir, "runs", run, "metrics.jsonl")) {
		if m["event"] == "ema" {
			out = append(out, m["momentum"].(float64))
		}
	}
	return out
}

// resultsOf maps each run of res to its score.
func resultsOf(res *train.Results) map[string]float64 {
	out := map[string]float64{}
	for _, r := range res.Runs {
		out[r.ID] = r.Value
	}
	return out
}

// stepLosses reads "run step" → loss from DIR/metrics.jsonl.
func stepLosses(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range metricsLines(t, filepath.Join(dir, "metrics.jsonl")) {
		if m["event"] == nil {
			out[fmt.Sprintf("%v %v", m["run"], m["step"])] = m["loss"].(float64)
		}
	}
	return out
}

// metricsLines reads the records of a metrics.jsonl file.
func metricsLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

package train

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchsampler-go/batchsampler/optim"
)

// TestOptimizerAndScheduleFromConfig trains GraphCL with LARS and a
// warm-up + cosine schedule chosen in the config alone: the learning rate
// logged at every step is train.lr × the schedule's factor.
func TestOptimizerAndScheduleFromConfig(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "seeds=[0]",
		"optim={kind: lars, weight_decay: 1e-6, trust_coefficient: 0.02, schedule: {kind: warmup_cosine, warmup_steps: 3}}")
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sched := optim.Schedule{Kind: optim.WarmupCosine, Warmup: 3}
	steps := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] != nil {
			continue
		}
		s := int(m["step"].(float64))
		want := cfg.Train.LR * sched.Factor(s-1, 9)
		if got := m["lr"].(float64); math.Abs(got-want) > 1e-15 {
			t.Errorf("step %d: lr %v, want %v", s, got, want)
		}
		steps++
	}
	if steps != 9 {
		t.Errorf("%d steps logged, want 9", steps)
	}
	c, err := loadCheckpoint(filepath.Join(dir, "runs", "uniform-seed0", "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	restored := optim.NewLARS(optimParams(mustMethod(t, &cfg).Params()), 1)
	if err := restored.UnmarshalBinary(c.Optimizer); err != nil || restored.Steps() != 9 || restored.TrustCoefficient != 0.02 {
		t.Errorf("checkpointed optimizer: %v, %d steps, trust %v; want LARS after 9 steps with trust 0.02", err, restored.Steps(), restored.TrustCoefficient)
	}
}

// mustMethod builds the method of cfg on its dataset, seed 1.
func mustMethod(t *testing.T, cfg *Config) Method {
	t.Helper()
	ds, err := dataSpecs[cfg.Modality].Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := methodFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.New(cfg, ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

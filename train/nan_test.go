package train

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// fakeModality trains one scalar parameter and reports a NaN loss at a
// chosen step, to test the loop's handling of diverging runs.
type fakeModality struct {
	n      int
	p      *model.Param
	steps  int
	nanAt  int
	labels []int
}

type fakeDataset struct {
	n          int
	unlabelled bool
}

func (d fakeDataset) Name() string      { return "fake" }
func (d fakeDataset) NumInstances() int { return d.n }
func (d fakeDataset) Labels() []int {
	if d.unlabelled {
		return nil
	}
	return make([]int, d.n)
}
func (d fakeDataset) NumClasses() int { return 1 }

func (d fakeDataset) Splits() []string { return []string{"train"} }

// registerFake registers a fake modality (40 instances), its method
// (a NaN loss at step nanAt, no labels when unlabelled) and protocol, for
// the duration of test t.
func registerFake(t *testing.T, name string, nanAt int, unlabelled bool) {
	oldProtocol, hadProtocol := protocolSpecs["fake"]
	t.Cleanup(func() {
		delete(dataSpecs, name)
		delete(defaultMethod, name)
		delete(methodSpecs, name)
		if hadProtocol {
			protocolSpecs["fake"] = oldProtocol
		} else {
			delete(protocolSpecs, "fake")
		}
	})
	RegisterData(name, DataSpec{
		Load: func(*Config) (Dataset, error) { return fakeDataset{n: 40, unlabelled: unlabelled}, nil },
		Defaults: func() Config {
			c := DefaultConfig()
			c.Modality, c.Eval.Kind = name, "fake"
			return c
		},
	}, name)
	RegisterMethod(name, MethodSpec{Modalities: []string{name}, New: func(_ *Config, ds Dataset, _ uint64) (Method, error) {
		p := &model.Param{Name: "w", Trainable: true, Value: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{1}))}
		f := &fakeModality{n: ds.NumInstances(), p: p, nanAt: nanAt, labels: ds.Labels()}
		return f, nil
	}})
	ps := protocolSpecs["fake"]
	ps.Modalities = append(ps.Modalities, name)
	ps.New = func(*Config) Protocol { return fakeProtocol{} }
	RegisterProtocol("fake", ps)
}

type fakeProtocol struct{}

func (fakeProtocol) Evaluate(EvalEnv) (Score, error) { return Score{Metric: "fake", Value: 1}, nil }

func (f *fakeModality) Params() []*model.Param { return []*model.Param{f.p} }
func (f *fakeModality) Step(idx []int, _ *rand.Rand) (StepResult, error) {
	f.steps++
	l := 1.0
	if f.steps == f.nanAt {
		l = math.NaN()
	}
	return StepResult{Loss: l, Grads: [][]float32{{0.1}}, Proj: make([]float32, 2*len(idx)), ProjDim: 2}, nil
}
func (f *fakeModality) Embed(_, _ string) (sampler.Embeddings, error) {
	return sampler.Embeddings{N: f.n, D: 1, Data: make([]float32, f.n)}, nil
}

func TestNaNLossStopsAndKeepsCheckpoint(t *testing.T) {
	registerFake(t, "fake-nan", 7, false) // 40 instances, B=10: 4 steps per epoch
	cfg := mustParse(t, "modality: fake-nan\ndata: {source: synthetic}\ntrain: {epochs: 3, batch_size: 10}\n")
	dir := t.TempDir()
	_, err := Run(context.Background(), cfg, Options{OutDir: dir})
	if err == nil || !strings.Contains(err.Error(), "loss is NaN at step 7 (epoch 2)") || !strings.Contains(err.Error(), "checkpoint") {
		t.Fatalf("want a NaN error naming the step and the checkpoint, got %v", err)
	}
	c, err := loadCheckpoint(filepath.Join(dir, "runs", "uniform-seed0", "checkpoint.gob"))
	if err != nil {
		t.Fatalf("the last good checkpoint is gone: %v", err)
	}
	if c.Step != 4 {
		t.Errorf("checkpoint at step %d, want the end of epoch 1 (step 4)", c.Step)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "uniform-seed0", "result.json")); err == nil {
		t.Error("a diverged run must not leave a result")
	}
}

// TestUnlabelledModality runs a fake modality without labels (as text
// corpora are): the loop must log no false-negative ratio, and JSON must
// stay valid.
func TestUnlabelledModality(t *testing.T) {
	registerFake(t, "fake-unlabelled", 0, true)
	cfg := mustParse(t, "modality: fake-unlabelled\ndata: {source: synthetic}\ntrain: {epochs: 2, batch_size: 10}\n"+
		"samplers: [{kind: uniform}, {kind: batchsampler, m: 20, k: 5, alpha: 0.5, refresh_every: 3}]\n")
	dir := t.TempDir()
	res, err := Run(context.Background(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Results {
		if e.FinalFNRatio != nil {
			t.Errorf("%s: a false-negative ratio without labels: %v", e.Sampler, *e.FinalFNRatio)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"fn_ratio":null`) {
		t.Errorf("metrics should log fn_ratio as null without labels:\n%.400s", b)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "| – |") {
		t.Errorf("results.md:\n%s", md)
	}
}

package train

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/sbinet/npyio"
	"go.yaml.in/yaml/v3"
	"gonum.org/v1/gonum/mat"

	"github.com/batchsampler-go/batchsampler/model"
)

// Options control where and how an experiment runs.
type Options struct {
	// OutDir is the run directory.
	OutDir string
	// Resume continues the runs found in OutDir instead of refusing to
	// reuse a directory that already holds a run.
	Resume bool
	Hooks  Hooks
}

// Run trains every (sampler, seed) pair of cfg, evaluates each, and writes
// the run directory. Finished runs found in OutDir are not trained again.
func Run(ctx context.Context, cfg Config, opt Options) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, ok := builders[cfg.Modality]
	if !ok {
		return nil, fmt.Errorf("modality %q is not available", cfg.Modality)
	}
	dir := opt.OutDir
	cfgPath := filepath.Join(dir, "config.yaml")
	if !opt.Resume {
		if _, err := os.Stat(cfgPath); err == nil {
			return nil, fmt.Errorf("%s already holds a run (config.yaml exists): continue it with -resume %s, or choose another -out", dir, dir)
		}
	}
	// Load the data first: a bad dataset leaves no half-made run directory.
	ds, err := b.Load(&cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return nil, err
	}
	if !opt.Resume {
		y, err := yaml.Marshal(&cfg)
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(cfgPath, y); err != nil {
			return nil, err
		}
	}
	opt.Hooks.logf("dataset %s: %d instances, %d classes", ds.Name(), ds.NumInstances(), ds.NumClasses())

	var specs []RunSpec
	for _, sc := range cfg.SamplerList() {
		for _, s := range cfg.Seeds {
			specs = append(specs, RunSpec{Sampler: sc, Seed: s})
		}
	}
	// Bring every run's metrics file back to its last checkpoint and rebuild
	// DIR/metrics.jsonl from them, so a resumed run logs each step once.
	var runMetrics []string
	for _, sp := range specs {
		rdir := filepath.Join(dir, "runs", sp.ID())
		mp := filepath.Join(rdir, "metrics.jsonl")
		runMetrics = append(runMetrics, mp)
		if _, err := os.Stat(filepath.Join(rdir, "result.json")); err == nil {
			continue
		}
		if c, err := loadCheckpoint(filepath.Join(rdir, "checkpoint.gob")); err == nil {
			if err := truncateFile(mp, c.MetricsOffset); err != nil {
				return nil, err
			}
		} else if os.IsNotExist(err) {
			os.Remove(mp)
		} else {
			return nil, err
		}
	}
	if err := concatFiles(filepath.Join(dir, "metrics.jsonl"), runMetrics); err != nil {
		return nil, err
	}

	var results []RunResult
	for _, sp := range specs {
		rr, err := runOne(ctx, &cfg, b, ds, sp, dir, opt.Hooks)
		if err != nil {
			return nil, err
		}
		results = append(results, *rr)
	}
	res := summarize(&cfg, ds, results)
	if err := writeResults(dir, res); err != nil {
		return nil, err
	}
	if err := writePlots(dir); err != nil {
		opt.Hooks.logf("plots: %v", err)
	}
	return res, nil
}

// runOne trains and evaluates one run, or loads its result if it finished.
func runOne(ctx context.Context, cfg *Config, b Builder, ds Dataset, sp RunSpec, dir string, hooks Hooks) (*RunResult, error) {
	rdir := filepath.Join(dir, "runs", sp.ID())
	resPath := filepath.Join(rdir, "result.json")
	var done RunResult
	if err := readJSON(resPath, &done); err == nil {
		hooks.logf("%s: finished earlier, %s %.2f", sp.ID(), done.Metric, done.Value)
		return &done, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return nil, err
	}
	mod, err := b.New(cfg, ds, subSeed(sp.Seed, "model"))
	if err != nil {
		return nil, err
	}
	smp, err := newSampler(sp.Sampler, mod.NumInstances(), cfg.Train.BatchSize, subSeed(sp.Seed, "sampler"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sp.ID(), err)
	}
	mw, err := openMetrics(filepath.Join(rdir, "metrics.jsonl"), filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return nil, err
	}
	defer mw.close()
	augSrc := rand.NewPCG(subSeed(sp.Seed, "augment"), 1)
	r := &runner{
		cfg: cfg, spec: sp, dir: rdir, mod: mod, smp: smp,
		opt:    model.NewAdam(cfg.Train.LR, mod.Params()),
		augSrc: augSrc, aug: rand.New(augSrc), hooks: hooks, labels: mod.Labels(), metrics: mw,
	}
	if c, err := loadCheckpoint(r.ckptPath()); err == nil {
		if err := r.restore(c); err != nil {
			return nil, fmt.Errorf("%s: resume: %w", sp.ID(), err)
		}
		hooks.logf("%s: resuming at step %d", sp.ID(), r.step)
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	if err := r.train(ctx); err != nil {
		return nil, err
	}
	t0 := time.Now()
	emb, err := mod.Embed("encoder")
	if err != nil {
		return nil, fmt.Errorf("%s: embed for evaluation: %w", sp.ID(), err)
	}
	sc, err := mod.Evaluate(emb, sp.Seed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sp.ID(), err)
	}
	evalSec := time.Since(t0).Seconds()
	if cfg.ExportEmbeddings {
		if err := exportNPY(filepath.Join(dir, "embeddings"), sp.ID(), emb.Data, emb.N, emb.D, mod.Labels()); err != nil {
			return nil, err
		}
	}
	rr := &RunResult{
		ID: sp.ID(), Sampler: sp.Sampler.DisplayName(), Seed: sp.Seed, Steps: r.step,
		Metric: sc.Metric, Value: sc.Value, FoldStd: sc.Std,
		TrainSeconds: r.trainSeconds, SamplerSeconds: r.samplerSeconds, EvalSeconds: evalSec,
		FinalFNRatio: r.lastEpochFN, Evals: r.evals, Detail: sc.Detail,
	}
	if c, ok := smp.(interface{ Coverage() float64 }); ok {
		rr.FinalCoverage = c.Coverage()
	}
	if err := mw.write(map[string]any{"event": "final", "run": sp.ID(), "step": r.step, "metric": sc.Metric, "value": sc.Value, "std": sc.Std, "eval_seconds": evalSec}); err != nil {
		return nil, err
	}
	if err := writeJSON(resPath, rr); err != nil {
		return nil, err
	}
	spread := ""
	if sc.Std > 0 {
		spread = fmt.Sprintf(" ± %.2f over folds", sc.Std)
	}
	hooks.logf("%s: %s %.2f%s (train %.1fs, eval %.1fs)", sp.ID(), sc.Metric, sc.Value, spread, r.trainSeconds, evalSec)
	if hooks.RunEnd != nil {
		hooks.RunEnd(sp.ID())
	}
	return rr, nil
}

// exportNPY writes DIR/<id>_embeddings.npy (N×d float64) and <id>_labels.npy (int64).
func exportNPY(dir, id string, x []float32, n, d int, labels []int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = float64(v)
	}
	ys := make([]int64, len(labels))
	for i, v := range labels {
		ys[i] = int64(v)
	}
	write := func(name string, v any) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := npyio.Write(f, v); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", name, err)
		}
		return f.Close()
	}
	if err := write(id+"_embeddings.npy", mat.NewDense(n, d, xs)); err != nil {
		return err
	}
	return write(id+"_labels.npy", ys)
}

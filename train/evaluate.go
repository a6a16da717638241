package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// Evaluate scores the trained runs of the run directory dir again, without
// training: for every (sampler, seed) run of DIR/config.yaml it rebuilds the
// method, restores the parameters of DIR/runs/<id>/checkpoint.gob (the
// checkpoint written when the run's training finished) and evaluates them
// with the config's protocol, or with the protocol that the overrides sets
// give. sets may change the eval section ("eval.folds=5",
// "eval.kind=knn"), except eval.select_every (model selection happens
// during training), data.root (where the same dataset is now) and
// data.text.senteval_dir (where the SentEval STS tasks are, to score them
// for a run trained before they were there); the rest of the config is the
// trained run's.
//
// Evaluate never modifies dir's files. With opt.OutDir set it writes the
// evaluation there: config.yaml (the config it evaluated with),
// results.json and results.md (the run contract's formats; train_seconds
// and steps are those of the training). Each run is evaluated with its
// seed, as at the end of training: without overrides the scores equal the
// recorded ones. A cancelled ctx stops the evaluation within a fraction of
// a second with an error matching ErrInterrupted, and nothing is written.
// opt.Resume is ignored; opt.Observer sees log lines, Eval progress and
// RunEnd after each run.
func Evaluate(ctx context.Context, dir string, sets []string, opt Options) (*Results, error) {
	for _, s := range sets {
		key, _, _ := strings.Cut(s, "=")
		if key != "eval" && !strings.HasPrefix(key, "eval.") && key != "data.root" && key != "data.text.senteval_dir" {
			return nil, fmt.Errorf("-set %s: an evaluation of a trained run takes eval.* overrides (and data.root, where its dataset is now, and data.text.senteval_dir, where the SentEval STS tasks are); the rest of the config is the one in %s", s, filepath.Join(dir, "config.yaml"))
		}
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	trained, err := LoadConfig(cfgPath, nil)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory of cmd/train: %w", dir, err)
	}
	cfg, err := LoadConfig(cfgPath, sets)
	if err != nil {
		return nil, err
	}
	if cfg.Eval.SelectEvery != trained.Eval.SelectEvery {
		return nil, fmt.Errorf("-set eval.select_every: model selection happens during training (the runs of %s used %d); it cannot change in an evaluation", dir, trained.Eval.SelectEvery)
	}
	if out := opt.OutDir; out != "" {
		if same, _ := sameDir(out, dir); same {
			return nil, fmt.Errorf("%s is the run directory; an evaluation writes elsewhere (e.g. %s)", out, filepath.Join(dir, "evaluations", "NAME"))
		}
		if _, err := os.Stat(filepath.Join(out, "results.json")); err == nil {
			return nil, fmt.Errorf("%s already holds results (results.json exists); choose another directory", out)
		}
	}
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		return nil, err
	}
	if err := checkData(&cfg, ds); err != nil {
		return nil, err
	}
	opt.Observer.logf("dataset %s: %d instances, %d classes", ds.Name(), ds.NumInstances(), ds.NumClasses())
	var runs []RunResult
	for _, sc := range cfg.SamplerList() {
		for _, seed := range cfg.Seeds {
			rr, err := evaluateRun(ctx, &cfg, ds, RunSpec{Sampler: sc, Seed: seed}, dir, opt.Observer)
			if err != nil {
				return nil, err
			}
			runs = append(runs, *rr)
		}
	}
	res := summarize(&cfg, ds, runs)
	prov := currentProvenance()
	res.Provenance = &prov
	res.Notes = clampNotes(&cfg, ds)
	res.FNRatioChance = fnRatioChance(ds.Labels())
	if out := opt.OutDir; out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		var y bytes.Buffer
		if err := WriteConfig(&y, &cfg); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(filepath.Join(out, "config.yaml"), y.Bytes()); err != nil {
			return nil, err
		}
		if err := writeResults(out, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// sameDir reports whether a and b name the same existing directory.
func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// evaluateRun restores one run from its checkpoint and scores it.
func evaluateRun(ctx context.Context, cfg *Config, ds Dataset, sp RunSpec, dir string, obs Observer) (*RunResult, error) {
	rdir := filepath.Join(dir, "runs", sp.ID())
	ckpt := filepath.Join(rdir, "checkpoint.gob")
	c, err := loadCheckpoint(ckpt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no checkpoint %s: the run has not trained yet (-resume %s trains it)", sp.ID(), ckpt, dir)
	}
	if err != nil {
		return nil, err
	}
	r, untrained, err := newRun(cfg, ds, sp, rdir, obs)
	if err != nil {
		return nil, err
	}
	if err := r.restore(c); err != nil {
		return nil, fmt.Errorf("%s: restore %s: %w", sp.ID(), ckpt, err)
	}
	if r.step < r.total {
		return nil, fmt.Errorf("%s: %s holds step %d of %d: the run's training is not finished (-resume %s finishes it)", sp.ID(), ckpt, r.step, r.total, dir)
	}
	r.ctx = ctx
	r.mem = newMemTracker()
	obs.logf("%s: evaluating the parameters of step %d (eval.kind %s)", sp.ID(), r.step, cfg.Eval.Kind)
	t0 := time.Now()
	sc, err := r.finalScore(untrained)
	if cancelledBy(ctx, err) {
		return nil, &interruptError{msg: fmt.Sprintf("%s: evaluation interrupted; nothing was written", sp.ID()), cause: ctx.Err()}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sp.ID(), r.diverged(err))
	}
	rr := &RunResult{
		ID: sp.ID(), Sampler: sp.Sampler.DisplayName(), Seed: sp.Seed, Steps: r.step,
		Metric: sc.Metric, Value: sc.Value, FoldStd: sc.Std,
		TrainSeconds: r.trainSeconds, SamplerSeconds: r.smp.SamplerSeconds(), EvalSeconds: time.Since(t0).Seconds(),
		FinalFNRatio: r.lastEpochFN, Evals: r.evals, Detail: sc.Detail,
	}
	r.mem.observe()
	rr.MaxRSS, rr.HeapPeak = processMaxRSS(), r.mem.Peak()
	rr.samplerMK(r)
	if cv, ok := r.smp.Sampler().(sampler.Coverer); ok {
		rr.FinalCoverage = cv.Coverage()
	}
	var done RunResult
	if readJSON(filepath.Join(rdir, "result.json"), &done) == nil {
		// The times the run recorded (the checkpoint's are those of the last
		// epoch's end, a moment earlier).
		rr.TrainSeconds, rr.SamplerSeconds = done.TrainSeconds, done.SamplerSeconds
	}
	spread := ""
	if sc.Std > 0 {
		spread = fmt.Sprintf(" ± %.2f over folds", sc.Std)
	}
	obs.logf("%s: %s %.2f%s (eval %.1fs)", sp.ID(), sc.Metric, sc.Value, spread, rr.EvalSeconds)
	if obs.RunEnd != nil {
		obs.RunEnd(sp.ID())
	}
	return rr, nil
}

// finalScore is the score a run reports at the end of its training (runOne)
// and when it is evaluated again (Evaluate): the protocol's score of the
// final parameters or, with model selection, of the selected ones (the
// final ones' detail under "<key>_final", the selected step under
// "best_step"), with the untrained reference scores in the detail.
func (r *run) finalScore(untrained map[string]any) (Score, error) {
	sc, err := r.evaluate()
	if err != nil {
		return Score{}, err
	}
	detail := map[string]any{}
	for k, v := range sc.Detail {
		detail[k] = v
	}
	if r.sel != nil && r.sel.step >= 0 {
		for k, v := range sc.Detail {
			detail[k+"_final"] = v
		}
		r.sel.swap()
		sc, err = r.evaluate()
		r.sel.swap()
		if err != nil {
			return Score{}, fmt.Errorf("evaluate the selected parameters (step %d): %w", r.sel.step, err)
		}
		for k, v := range sc.Detail {
			detail[k] = v
		}
		detail["best_step"] = r.sel.step
	}
	for k, v := range untrained {
		detail[k] = v
	}
	sc.Detail = detail
	return sc, nil
}

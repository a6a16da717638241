package train

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// The standard hooks of a run, in the order they run. Each is one small
// function; addHooks is the only place that lists them.
//
//	before every step:  lr-schedule, sampler
//	after every step:   sampler-observe, method, select, metrics, observer
//	at an epoch's end:  epoch-metrics, evaluate, checkpoint
func (r *run) addHooks(sel *selectHook) {
	r.add("lr-schedule", beforeStep, hookLRSchedule)
	r.add("sampler", beforeStep, hookSamplerRefresh)
	r.add("sampler-observe", afterStep, hookSamplerObserve)
	if _, ok := r.method.(AfterStepper); ok {
		r.add("method", afterStep, hookMethodAfterStep)
	}
	if sel != nil {
		r.add("select", afterStep, sel.afterStep)
	}
	r.add("metrics", afterStep, hookMetrics)
	r.add("observer", afterStep, hookObserver)
	r.add("epoch-metrics", epochEnd, hookEpochMetrics)
	if r.cfg.Train.EvalEvery > 0 {
		r.add("evaluate", epochEnd, hookEvaluate)
	}
	if r.cfg.Train.Checkpoint {
		r.add("checkpoint", epochEnd, func(r *run) error {
			r.trainSeconds = r.elapsed()
			return r.checkpointNow()
		})
	}
}

// hookLRSchedule sets the scheduled learning rate of the coming step.
func hookLRSchedule(r *run) error {
	r.opt.SetLR(r.cfg.Train.LR * r.sched.Factor(r.step, r.total))
	return nil
}

// hookSamplerRefresh advances the sampler's schedule and refreshes its graph
// when due (sampler.Driver: the sampler's own refresh policy).
func hookSamplerRefresh(r *run) error {
	rep, err := r.smp.BeforeStep(r.step, r.total)
	if err != nil || rep == nil {
		return err
	}
	return r.metrics.write(rep.Fields())
}

// hookSamplerObserve hands the step's projections (both views', when the
// method gives them) to the sampler's cache
// and logs the in-batch cosine histogram of the first batch of an epoch and
// of the first batch after a refresh (the paper's Figures 4-5).
func hookSamplerObserve(r *run) error {
	refreshed, err := r.smp.ObserveViews(r.idx, r.res.Proj, r.res.Proj2, r.res.ProjDim)
	if err != nil {
		return err
	}
	if !refreshed && (r.step-1)%r.bpe != 0 {
		return nil
	}
	h := sampler.CosineHistogram(seq(len(r.idx)), sampler.Embeddings{N: len(r.idx), D: r.res.ProjDim, Data: r.res.Proj}, histBins)
	if h == nil {
		return nil
	}
	return r.metrics.write(map[string]any{"event": "cos_hist", "run": r.spec.ID(), "sampler": r.spec.Sampler.DisplayName(), "step": r.step, "epoch": r.epoch(), "hist": h})
}

// histBins is the number of bins of the logged in-batch cosine histograms.
const histBins = 20

// hookMethodAfterStep runs the method's own per-step work.
func hookMethodAfterStep(r *run) error {
	recs, err := r.method.(AfterStepper).AfterStep(r.step, r.total)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		rec["run"] = r.spec.ID()
		if err := r.metrics.write(rec); err != nil {
			return err
		}
	}
	return nil
}

// hookMetrics accumulates the false-negative ratio and writes the step's
// metrics line every train.log_every steps and at the last step.
func hookMetrics(r *run) error {
	fn := math.NaN() // no labels: no false-negative ratio
	if r.labels != nil {
		fn = sampler.FalseNegativeRatio(r.idx, r.labels)
		r.fnSum += fn
		r.fnCount++
	}
	if r.step%r.cfg.Train.LogEvery != 0 && r.step != r.total {
		return nil
	}
	rec := map[string]any{
		"run": r.spec.ID(), "sampler": r.spec.Sampler.DisplayName(), "seed": r.spec.Seed,
		"step": r.step, "epoch": r.epoch(), "loss": r.res.Loss, "seconds": r.elapsed(),
		"fn_ratio": fn, "batch_cos": sampler.MeanCosine(seq(len(r.idx)), sampler.Embeddings{N: len(r.idx), D: r.res.ProjDim, Data: r.res.Proj}),
		"lr": r.opt.LR(),
	}
	if a, ok := r.smp.Sampler().(sampler.Restarter); ok {
		rec["alpha"] = a.Alpha()
	}
	if r.res.Nodes > 0 {
		rec["batch_nodes"] = r.res.Nodes
	}
	if ec, ok := r.smp.Sampler().(sampler.EpochCounter); ok {
		if e, own := ec.SamplerEpoch(); own {
			rec["sampler_epoch"] = e
		}
	}
	return r.metrics.write(rec)
}

// hookObserver tells the caller's Observer about the step.
func hookObserver(r *run) error {
	if r.obs.Step != nil {
		si := StepInfo{Run: r.spec.ID(), Step: r.step, TotalSteps: r.total, Epoch: r.epoch(), Loss: r.res.Loss, Elapsed: time.Duration(r.elapsed() * float64(time.Second))}
		if r.prog != nil {
			si.RunIndex, si.Runs = r.runIndex+1, r.prog.runs
			si.SoFar, si.Left = r.prog.eta(r.runIndex, r.step, r.total)
		}
		r.obs.Step(si)
	}
	return nil
}

// hookEpochMetrics writes the epoch_end record (the epoch's mean
// false-negative ratio and the sampler's coverage) and the sampler_time
// record (the time its Next took over the epoch, next_seconds).
func hookEpochMetrics(r *run) error {
	rec := map[string]any{"event": "epoch_end", "run": r.spec.ID(), "step": r.step, "epoch": r.epoch()}
	if r.fnCount > 0 {
		fn := r.fnSum / float64(r.fnCount)
		r.lastEpochFN = &fn
		rec["fn_ratio_mean"] = fn
	}
	r.fnSum, r.fnCount = 0, 0
	if c, ok := r.smp.Sampler().(sampler.Coverer); ok {
		rec["coverage"] = c.Coverage()
	}
	if err := r.metrics.write(rec); err != nil {
		return err
	}
	// The sampler's cost per batch, a record of its own (a time is not
	// reproducible, epoch_end is): the time in Next over the epoch (the
	// refreshes' are the "refresh" events' build_seconds).
	ns := r.smp.NextSeconds()
	rec = map[string]any{"event": "sampler_time", "run": r.spec.ID(), "step": r.step, "epoch": r.epoch(), "next_seconds": ns - r.nextMark}
	r.nextMark = ns
	return r.metrics.write(rec)
}

// hookEvaluate scores the current encoder every train.eval_every epochs
// (the last epoch is scored by the run's final evaluation).
func hookEvaluate(r *run) error {
	epoch := r.epoch()
	if epoch%r.cfg.Train.EvalEvery != 0 || epoch >= r.cfg.Train.Epochs {
		return nil
	}
	sc, err := r.evaluate()
	if cancelledBy(r.ctx, err) {
		return errEvalInterrupted
	}
	if err != nil {
		return r.diverged(err)
	}
	r.evals = append(r.evals, EvalRecord{Step: r.step, Epoch: epoch, Metric: sc.Metric, Value: sc.Value, Std: sc.Std})
	r.obs.logf("%s: epoch %d %s %.2f", r.spec.ID(), epoch, sc.Metric, sc.Value)
	return r.metrics.write(map[string]any{"event": "eval", "run": r.spec.ID(), "step": r.step, "epoch": epoch, "metric": sc.Metric, "value": sc.Value, "std": sc.Std})
}

// evaluate embeds the training split with the current encoder and scores it.
func (r *run) evaluate() (Score, error) {
	env, err := r.evalEnv()
	if err != nil {
		return Score{}, err
	}
	return r.protocol.Evaluate(env)
}

// evalEnv embeds the training split for an evaluation that stops when the
// run's context is cancelled and reports its progress to Observer.Eval.
func (r *run) evalEnv() (EvalEnv, error) {
	env := EvalEnv{Cfg: r.cfg, Data: r.data, Method: r.method, Seed: r.spec.Seed, Ctx: r.ctx, Progress: r.evalProgress()}
	emb, err := env.Embed("train", "encoder")
	if err != nil {
		return EvalEnv{}, fmt.Errorf("embed for evaluation: %w", err)
	}
	env.Train = emb
	return env, nil
}

// evalProgress returns the Progress of one evaluation, which forwards to
// Observer.Eval with the time elapsed in the current phase (a phase begins
// when the total changes or the count goes back; its clock starts at the
// end of the previous phase).
func (r *run) evalProgress() func(done, total int) {
	if r.obs.Eval == nil {
		return nil
	}
	var mu sync.Mutex
	start := time.Now()
	last, lastDone, lastTotal := start, 0, 0
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if total != lastTotal || done < lastDone {
			start = last
		}
		last, lastDone, lastTotal = now, done, total
		r.obs.Eval(r.spec.ID(), done, total, now.Sub(start))
	}
}

// diverged rewrites the error of non-finite embeddings (EvalEnv.Embed) as
// the run's diagnosis; other errors are returned unchanged.
func (r *run) diverged(err error) error {
	var nf *nonFiniteError
	if !errors.As(err, &nf) {
		return err
	}
	return fmt.Errorf("%s contain %v after step %d (the encoder diverged: lower train.lr)", nf.what(), nf.value, r.step)
}

// selectHook is model selection on a development set (SimCSE's protocol):
// every eval.select_every steps and at the last step it scores the dev set
// (the protocol's DevScorer) and keeps a copy of the method's parameters
// when the score is the best so far. The final evaluation then reports the
// selected parameters. Its state (the copy and its step) is checkpointed.
type selectHook struct {
	every  int
	dev    DevScorer
	params []*model.Param
	best   [][]float32
	step   int // of best; -1: none yet
	score  float64
	scored bool // score is valid (after a resume it is recomputed)
}

func newSelectHook(every int, dev DevScorer, params []*model.Param) *selectHook {
	s := &selectHook{every: every, dev: dev, params: params, step: -1}
	for _, p := range params {
		s.best = append(s.best, make([]float32, p.Value.DataSize()))
	}
	return s
}

func (s *selectHook) afterStep(r *run) error {
	if r.step%s.every != 0 && r.step != r.total {
		return nil
	}
	env := EvalEnv{Cfg: r.cfg, Data: r.data, Method: r.method, Seed: r.spec.Seed}
	dev, err := s.dev.DevScore(env)
	if err != nil {
		return fmt.Errorf("dev score at step %d: %w", r.step, r.diverged(err))
	}
	better := s.step < 0
	if !better {
		if !s.scored {
			s.swap()
			bd, err := s.dev.DevScore(env)
			s.swap()
			if err != nil {
				return fmt.Errorf("dev score of the selected parameters (step %d): %w", s.step, err)
			}
			s.score, s.scored = bd, true
		}
		better = dev > s.score
	}
	if better {
		s.score, s.scored, s.step = dev, true, r.step
		for i, p := range s.params {
			copy(s.best[i], p.Value.Float32s())
		}
	}
	return r.metrics.write(map[string]any{"event": "dev_eval", "run": r.spec.ID(), "step": r.step, "dev": dev, "best_dev": s.score, "best_step": s.step})
}

// swap exchanges the method's parameter values with the selected copy.
func (s *selectHook) swap() {
	for i, p := range s.params {
		v, b := p.Value.Float32s(), s.best[i]
		for k, x := range b {
			v[k], b[k] = x, v[k]
		}
	}
}

// MarshalBinary saves the selected step and parameter values.
func (s *selectHook) MarshalBinary() ([]byte, error) {
	return encodeFloatState(int64(s.step), s.best), nil
}

// UnmarshalBinary restores a state written by MarshalBinary.
func (s *selectHook) UnmarshalBinary(b []byte) error {
	step, err := decodeFloatState(b, s.best)
	if err != nil {
		return fmt.Errorf("selected parameters: %w", err)
	}
	s.step, s.scored = int(step), false
	return nil
}

package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"codeberg.org/sbinet/npyio"
	"gonum.org/v1/gonum/mat"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// Options control where and how an experiment runs.
type Options struct {
	// OutDir is the run directory.
	OutDir string
	// Resume continues the runs found in OutDir instead of refusing to
	// reuse a directory that already holds a run.
	Resume bool
	// Observer watches the runs (progress, log lines).
	Observer Observer
	// Parallel is the number of runs trained and evaluated at once (0 or 1:
	// one after the other, in the config's order). Results do not depend on
	// it: every run draws from its own seeded sources, and the run files
	// (result.json, the runs' and the directory's metrics.jsonl) are those
	// of the runs made one at a time, apart from their timings and memory
	// peaks, which then include the runs sharing the cores and the process
	// (TrainSeconds and EvalSeconds are wall times; MaxRSS and HeapPeak are
	// the process's).
	// On 2 cores, 2 graph runs at once use the core a GIN step leaves idle.
	// The Observer then follows one run at a time (see Run).
	Parallel int
	// DirReady, when set, is called once the run directory exists and Run
	// holds its lock, before anything is trained (cmd/train prints the
	// directory then, not before a validation that may fail).
	DirReady func(dir string)
}

// Observer lets the caller watch a run (progress bar, log lines) without
// the library printing anything itself. Nil functions are skipped.
type Observer struct {
	RunStart func(run string, startStep, totalSteps int)
	Step     func(StepInfo)
	Log      func(msg string)
	RunEnd   func(run string)
	// Eval reports the progress of an evaluation (the final one and those
	// of train.eval_every): done of total units of work (SVM fits, L-BFGS
	// iterations, kNN blocks), elapsed since the current phase of the
	// evaluation began. A protocol may have several phases, each counting
	// from 1 again (the linear probe: the kNN monitor, then the probe). It
	// is called from the evaluation's goroutines, one call at a time and
	// never concurrently with the other functions.
	Eval func(run string, done, total int, elapsed time.Duration)
}

func (o Observer) logf(format string, a ...any) {
	if o.Log != nil {
		o.Log(fmt.Sprintf(format, a...))
	}
}

func (o Observer) runStart(run string, start, total int) {
	if o.RunStart != nil {
		o.RunStart(run, start, total)
	}
}

// StepInfo is passed to Observer.Step after every optimisation step.
type StepInfo struct {
	Run string
	// RunIndex is the run's place in the experiment (1-based) of Runs.
	RunIndex, Runs int
	// SoFar is the experiment's time in this process; Left estimates the
	// training time still to come from the share of steps done (runs
	// finished earlier count as done; evaluations are not included).
	SoFar, Left time.Duration
	Step        int // 1-based count of finished steps
	TotalSteps  int
	Epoch       int // 1-based
	Loss        float64
	Elapsed     time.Duration
}

// EvalRecord is one evaluation during or at the end of a run.
type EvalRecord struct {
	Step   int     `json:"step"`
	Epoch  int     `json:"epoch"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Std    float64 `json:"std"`
}

// RunResult is the outcome of one finished run.
type RunResult struct {
	ID             string       `json:"id"`
	Sampler        string       `json:"sampler"`
	Seed           uint64       `json:"seed"`
	Steps          int          `json:"steps"`
	Metric         string       `json:"metric"`
	Value          float64      `json:"value"`
	FoldStd        float64      `json:"fold_std"`
	TrainSeconds   float64      `json:"train_seconds"`
	SamplerSeconds float64      `json:"sampler_seconds"`
	EvalSeconds    float64      `json:"eval_seconds"`
	FinalFNRatio   *float64     `json:"final_fn_ratio,omitempty"` // nil without labels
	FinalCoverage  float64      `json:"final_coverage,omitempty"`
	Evals          []EvalRecord `json:"evals,omitempty"`
	Detail         any          `json:"detail,omitempty"`
	// MaxRSS is the process peak RSS at the end of this run, in bytes:
	// Linux's getrusage(RUSAGE_SELF) ru_maxrss, read after the final
	// evaluation. It is the peak of the whole process, which only grows: it
	// includes the data loading, the runs before this one in the same
	// process, and what the method computed once and shares with them
	// (MVGRL's views). A resumed run reports the peak of the process that
	// finished it; an evaluation (Evaluate) that of the evaluating process.
	// 0 (omitted): unknown (not Linux, or written before this field).
	MaxRSS uint64 `json:"max_rss,omitempty"`
	// HeapPeak is the Go heap's high-water mark during this run, in bytes:
	// the largest size of the heap's objects (live and not yet swept,
	// runtime/metrics /memory/classes/heap/objects:bytes) among the samples
	// taken when the run was built, after every training step and after
	// the final evaluation (see memTracker). A resumed run reports the
	// samples of the process that finished it (its steps after the
	// checkpoint); an evaluation those of the evaluating process. 0
	// (omitted): unknown.
	HeapPeak uint64 `json:"heap_peak,omitempty"`
	// SamplerM and SamplerK are the M and K a BatchSampler ran with (0,
	// omitted, for the other kinds): the config's m and k, or N − 1 when
	// the dataset has fewer other instances (a node's candidates are drawn
	// from the others without replacement; see Results.Notes). config.yaml
	// keeps the config as given.
	SamplerM int `json:"sampler_m,omitempty"`
	SamplerK int `json:"sampler_k,omitempty"`
}

// samplerMK fills the M and K the run's BatchSampler ran with.
func (rr *RunResult) samplerMK(r *run) {
	if bs, ok := r.smp.Sampler().(*sampler.BatchSampler); ok {
		c := bs.Config()
		rr.SamplerM, rr.SamplerK = c.M, c.K
	}
}

// clampNotes says, for every BatchSampler of cfg whose m or k the dataset
// ds cannot hold (more than its N − 1 other instances), what it runs
// with instead.
func clampNotes(cfg *Config, ds Dataset) []string {
	var notes []string
	n := ds.NumInstances()
	for _, sc := range cfg.SamplerList() {
		if sc.Kind != sampler.KindBatchSampler {
			continue
		}
		smp, err := sc.New(n, cfg.Train.BatchSize, 0)
		if err != nil {
			continue // newRun reports it
		}
		bs, ok := smp.(*sampler.BatchSampler)
		if !ok {
			continue
		}
		if c := bs.Config(); c.M != sc.M || c.K != sc.K {
			notes = append(notes, fmt.Sprintf("%s: m = %d and k = %d in the config; it ran with M = %d and K = %d, as dataset %s has N = %d instances and a node's candidates are the N − 1 others",
				sc.DisplayName(), sc.M, sc.K, c.M, c.K, ds.Name(), n))
		}
	}
	return notes
}

// Run trains every (sampler, seed) pair of cfg, evaluates each, and writes
// the run directory. Finished runs found in OutDir are not trained again.
// Run holds the directory's lock (LockRunDir) while it works there: when
// another process holds it, Run fails with ErrRunDirLocked before it
// writes anything.
//
// With opt.Parallel > 1 that many runs go at once. The first run to fail
// stops the others (each saves a checkpoint, as on an interruption) and
// its error is returned. The Observer's calls then come one at a time;
// Log comes from every run, while RunStart, Step, Eval and RunEnd follow
// one run, the earliest started of those still going, and pass to the
// next when it ends (with a RunStart at that run's current step).
func Run(ctx context.Context, cfg Config, opt Options) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Method = cfg.method()
	if cfg.Sweep != nil {
		return nil, fmt.Errorf("config %s has a sweep: section: it is one experiment per point; run it with package sweep (go run ./cmd/train -config FILE does)", cfg.Name)
	}
	dir := opt.OutDir
	rd := &runDirLock{dir: dir, resume: opt.Resume, obs: opt.Observer}
	if err := rd.checkFresh(); err != nil {
		return nil, err
	}
	// The run directory is locked (LockRunDir) for as long as Run works in
	// it: at once when it exists, so that a second process is refused
	// before it loads the data, else as soon as it is made.
	defer rd.release()
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		if err := rd.lock(); err != nil {
			return nil, err
		}
	}
	// Load the data first: a bad dataset leaves no half-made run directory.
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		return nil, err
	}
	if err := checkData(&cfg, ds); err != nil {
		return nil, err
	}
	if err := rd.create(); err != nil {
		return nil, err
	}
	prov, notes, err := startRunDir(&cfg, ds, opt)
	if err != nil {
		return nil, err
	}
	specs := runSpecs(&cfg)
	runMetrics, err := resetRunMetrics(dir, specs)
	if err != nil {
		return nil, err
	}
	results, err := runAll(ctx, &cfg, ds, specs, dir, opt)
	if err != nil {
		return nil, err
	}
	if opt.Parallel > 1 {
		// The runs' lines went to DIR/metrics.jsonl as they came; write
		// them again in the config's order, as a run made one at a time
		// leaves them.
		if err := concatFiles(filepath.Join(dir, "metrics.jsonl"), runMetrics); err != nil {
			return nil, err
		}
	}
	return finishRunDir(&cfg, ds, results, dir, prov, notes, opt.Observer)
}

// runDirLock is the lock of a run directory (LockRunDir) that Run holds
// while it works there, and the check that the directory holds no other
// run.
type runDirLock struct {
	dir    string
	resume bool // the directory may hold the run to continue
	obs    Observer
	unlock func() // nil until the lock is held
}

// checkFresh refuses a directory that already holds a run (a config.yaml)
// unless the run is resumed.
func (l *runDirLock) checkFresh() error {
	if _, err := os.Stat(filepath.Join(l.dir, "config.yaml")); err == nil && !l.resume {
		return fmt.Errorf("%s already holds a run (config.yaml exists): continue it with -resume %s, or choose another -out", l.dir, l.dir)
	}
	return nil
}

// lock takes the lock unless it is held. Where locks are not supported it
// warns and goes on without.
func (l *runDirLock) lock() error {
	if l.unlock != nil {
		return nil
	}
	u, err := LockRunDir(l.dir)
	if errors.Is(err, errLockUnsupported) {
		l.obs.logf("warning: %v; running without a lock: make sure no other process writes %s", err, l.dir)
		u, err = func() {}, nil
	}
	l.unlock = u
	return err
}

// create makes the directory and its runs/ subdirectory, takes the lock
// and checks again, under it, that no other process started a run there
// since checkFresh.
func (l *runDirLock) create() error {
	if err := os.MkdirAll(filepath.Join(l.dir, "runs"), 0o755); err != nil {
		return err
	}
	if err := l.lock(); err != nil {
		return err
	}
	return l.checkFresh()
}

// release drops the lock if it is held.
func (l *runDirLock) release() {
	if l.unlock != nil {
		l.unlock()
	}
}

// startRunDir announces the run directory (opt.DirReady), writes its
// config.yaml (unless resuming) and appends this process's provenance, and
// logs the dataset and the clamped samplers. It returns the provenance and
// the notes of the clamped samplers, for the results.
func startRunDir(cfg *Config, ds Dataset, opt Options) (Provenance, []string, error) {
	dir := opt.OutDir
	if opt.DirReady != nil {
		opt.DirReady(dir)
	}
	if !opt.Resume {
		var y bytes.Buffer
		if err := WriteConfig(&y, cfg); err != nil {
			return Provenance{}, nil, err
		}
		if err := writeFileAtomic(filepath.Join(dir, "config.yaml"), y.Bytes()); err != nil {
			return Provenance{}, nil, err
		}
	}
	prov := currentProvenance()
	if err := appendProvenance(filepath.Join(dir, "provenance.json"), prov); err != nil {
		return Provenance{}, nil, err
	}
	opt.Observer.logf("dataset %s: %d instances, %d classes", ds.Name(), ds.NumInstances(), ds.NumClasses())
	notes := clampNotes(cfg, ds)
	for _, n := range notes {
		opt.Observer.logf("%s (recorded as sampler_m and sampler_k in the runs' results)", n)
	}
	return prov, notes, nil
}

// runSpecs lists the runs of cfg: every sampler with every seed, in the
// config's order.
func runSpecs(cfg *Config) []RunSpec {
	var specs []RunSpec
	for _, sc := range cfg.SamplerList() {
		for _, s := range cfg.Seeds {
			specs = append(specs, RunSpec{Sampler: sc, Seed: s})
		}
	}
	return specs
}

// resetRunMetrics brings the metrics file of every unfinished run in dir
// back to its last checkpoint (removing it when there is none) and rebuilds
// DIR/metrics.jsonl from them, so that a resumed run logs each step once.
// It returns the runs' metrics files in order.
func resetRunMetrics(dir string, specs []RunSpec) ([]string, error) {
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
	return runMetrics, nil
}

// finishRunDir summarizes the runs' results and writes results.json,
// results.md, metrics.csv and the plots into dir (a failure to plot is
// logged, not returned).
func finishRunDir(cfg *Config, ds Dataset, results []RunResult, dir string, prov Provenance, notes []string, obs Observer) (*Results, error) {
	res := summarize(cfg, ds, results)
	res.Provenance = &prov
	res.Notes = notes
	res.FNRatioChance = fnRatioChance(ds.Labels())
	if err := writeResults(dir, res); err != nil {
		return nil, err
	}
	if err := writeMetricsCSV(dir); err != nil {
		return nil, fmt.Errorf("metrics.csv: %w", err)
	}
	if err := writePlots(dir); err != nil && !errors.Is(err, ErrNothingToPlot) {
		obs.logf("plots: %v", err)
	}
	return res, nil
}

// newRun builds one run: the method, its optimizer, the sampler and its
// driver, the protocol and the hooks. It does not restore a checkpoint.
func newRun(cfg *Config, ds Dataset, sp RunSpec, rdir string, obs Observer) (*run, map[string]any, error) {
	ms, err := methodFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	ps, err := protocolFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	method, err := ms.New(cfg, ds, subSeed(sp.Seed, "model"))
	if err != nil {
		return nil, nil, err
	}
	protocol := ps.New(cfg)
	var untrained map[string]any
	if us, ok := protocol.(UntrainedScorer); ok {
		if untrained, err = us.Untrained(EvalEnv{Cfg: cfg, Data: ds, Method: method, Seed: sp.Seed}); err != nil {
			return nil, nil, fmt.Errorf("%s: score the untrained networks: %w", sp.ID(), err)
		}
	}
	smp, err := samplerSpec(cfg, sp.Sampler).New(ds.NumInstances(), cfg.Train.BatchSize, subSeed(sp.Seed, "sampler"))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", sp.ID(), err)
	}
	driver, err := sampler.NewDriver(smp, sampler.DriverOptions{
		Embedding: sp.Sampler.Effective().Embedding, Labels: ds.Labels(),
		Embed: func(which string) (sampler.Embeddings, error) { return method.Embed("train", which) },
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", sp.ID(), err)
	}
	oc := cfg.Optim
	oc.LR = cfg.Train.LR
	opt, err := optim.New(oc, optimParams(method.Params()))
	if err != nil {
		return nil, nil, fmt.Errorf("optim: %w", err)
	}
	bpe := smp.BatchesPerEpoch()
	sched, err := oc.Schedule.Resolve(oc.LR, bpe)
	if err != nil {
		return nil, nil, fmt.Errorf("optim.%w", err)
	}
	augSrc := rand.NewPCG(subSeed(sp.Seed, "augment"), 1)
	r := &run{
		cfg: cfg, spec: sp, dir: rdir, data: ds, method: method, protocol: protocol,
		smp: driver, opt: opt, sched: sched, augSrc: augSrc, aug: rand.New(augSrc), obs: obs,
		labels: ds.Labels(), bpe: bpe, total: cfg.Train.Epochs * bpe,
		statefulHooks: map[string]Stateful{}, ckptStep: -1,
	}
	var sel *selectHook
	if cfg.Eval.SelectEvery > 0 {
		dev, ok := protocol.(DevScorer)
		if !ok {
			return nil, nil, fmt.Errorf("eval.select_every: eval.kind %s has no development set to select on", cfg.Eval.Kind)
		}
		sel = newSelectHook(cfg.Eval.SelectEvery, dev, method.Params())
		r.statefulHooks["select"] = sel
	}
	r.addHooks(sel)
	r.sel = sel
	return r, untrained, nil
}

// optimParams are the trainable parameters of a method as the optimizer
// sees them: one-dimensional ones (biases, normalisation scale and shift)
// are excluded from weight decay and LARS adaptation, as MoCo v3 does.
func optimParams(ps []*model.Param) []optim.Param {
	var out []optim.Param
	for _, p := range ps {
		if p == nil || !p.Trainable {
			continue
		}
		out = append(out, optim.Param{Name: p.Name, Value: p.Value.Float32s(), NoDecay: p.Value.Dims() == 1})
	}
	return out
}

// runOne trains and evaluates run index (0-based) of the experiment, or
// loads its result if it finished; prog is where the experiment stands.
func runOne(ctx context.Context, cfg *Config, ds Dataset, sp RunSpec, index int, dir string, obs Observer, prog *progress) (*RunResult, error) {
	rdir := filepath.Join(dir, "runs", sp.ID())
	resPath := filepath.Join(rdir, "result.json")
	var done RunResult
	if err := readJSON(resPath, &done); err == nil {
		obs.logf("%s: finished earlier, %s %.2f", sp.ID(), done.Metric, done.Value)
		prog.finished(index)
		return &done, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	r, untrained, err := openRun(cfg, ds, sp, dir, obs)
	if err != nil {
		return nil, err
	}
	defer r.metrics.close()
	r.prog, r.runIndex = prog, index
	if err := r.train(ctx); err != nil {
		return nil, err
	}
	// From here on a checkpoint of the finished training exists: an
	// interrupted evaluation leaves no result, and -resume evaluates again.
	sc, evalSec, err := r.finalEvaluation(ctx, untrained)
	if err != nil {
		return nil, err
	}
	if cfg.ExportEmbeddings {
		if err := r.exportEmbeddings(filepath.Join(dir, "embeddings")); err != nil {
			return nil, err
		}
	}
	rr, err := r.record(sc, evalSec, resPath)
	if err != nil {
		return nil, err
	}
	prog.finished(index)
	if obs.RunEnd != nil {
		obs.RunEnd(sp.ID())
	}
	return rr, nil
}

// openRun builds run sp of the experiment in dir (newRun), opens its
// metrics files and restores its checkpoint if it has one. The caller
// closes r.metrics.
func openRun(cfg *Config, ds Dataset, sp RunSpec, dir string, obs Observer) (r *run, untrained map[string]any, err error) {
	rdir := filepath.Join(dir, "runs", sp.ID())
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return nil, nil, err
	}
	r, untrained, err = newRun(cfg, ds, sp, rdir, obs)
	if err != nil {
		return nil, nil, err
	}
	r.mem = newMemTracker()
	mw, err := openMetrics(filepath.Join(rdir, "metrics.jsonl"), filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	r.metrics = mw
	if c, err := loadCheckpoint(r.ckptPath()); err == nil {
		if err := r.restore(c); err != nil {
			mw.close()
			return nil, nil, fmt.Errorf("%s: resume: %w", sp.ID(), err)
		}
		obs.logf("%s: resuming at step %d", sp.ID(), r.step)
	} else if !os.IsNotExist(err) {
		mw.close()
		return nil, nil, err
	}
	return r, untrained, nil
}

// finalEvaluation scores the trained run (finalScore) and returns the score
// and the seconds it took. An interruption is reported as such: the
// finished training is saved and -resume evaluates again.
func (r *run) finalEvaluation(ctx context.Context, untrained map[string]any) (Score, float64, error) {
	id := r.spec.ID()
	r.obs.logf("%s: evaluating (eval.kind %s)", id, r.cfg.Eval.Kind)
	t0 := time.Now()
	sc, err := r.finalScore(untrained)
	if err != nil {
		if cancelledBy(ctx, err) {
			r.obs.logf("%s: interrupted during evaluation; the finished training is saved in %s", id, r.ckptPath())
			return Score{}, 0, &interruptError{msg: fmt.Sprintf("%s: interrupted during evaluation (training is finished and saved; -resume evaluates again)", id), cause: ctx.Err()}
		}
		return Score{}, 0, fmt.Errorf("%s: %w", id, r.diverged(err))
	}
	evalSec := time.Since(t0).Seconds()
	r.mem.observe()
	return sc, evalSec, nil
}

// exportEmbeddings writes the encoder's embeddings of the training set and
// its labels into the directory out (exportNPY).
func (r *run) exportEmbeddings(out string) error {
	emb, err := r.method.Embed("train", "encoder")
	if err != nil {
		return fmt.Errorf("%s: export embeddings: %w", r.spec.ID(), err)
	}
	return exportNPY(out, r.spec.ID(), emb.Data, emb.N, emb.D, r.data.Labels())
}

// record makes the result of the finished run from its final score sc,
// logs it as the run's "final" metrics event, writes it to resPath
// (result.json) and returns it.
func (r *run) record(sc Score, evalSec float64, resPath string) (*RunResult, error) {
	sp := r.spec
	rr := &RunResult{
		ID: sp.ID(), Sampler: sp.Sampler.DisplayName(), Seed: sp.Seed, Steps: r.step,
		Metric: sc.Metric, Value: sc.Value, FoldStd: sc.Std,
		TrainSeconds: r.trainSeconds, SamplerSeconds: r.smp.SamplerSeconds(), EvalSeconds: evalSec,
		FinalFNRatio: r.lastEpochFN, Evals: r.evals, Detail: sc.Detail,
		MaxRSS: processMaxRSS(), HeapPeak: r.mem.Peak(),
	}
	rr.samplerMK(r)
	if c, ok := r.smp.Sampler().(sampler.Coverer); ok {
		rr.FinalCoverage = c.Coverage()
	}
	if err := r.metrics.write(map[string]any{"event": "final", "run": sp.ID(), "step": r.step, "metric": sc.Metric, "value": sc.Value, "std": sc.Std, "eval_seconds": evalSec}); err != nil {
		return nil, err
	}
	if err := writeJSON(resPath, rr); err != nil {
		return nil, err
	}
	spread := ""
	if sc.Std > 0 {
		spread = fmt.Sprintf(" ± %.2f over folds", sc.Std)
	}
	r.obs.logf("%s: %s %.2f%s (train %.1fs, eval %.1fs)", sp.ID(), sc.Metric, sc.Value, spread, r.trainSeconds, evalSec)
	return rr, nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
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

// appendProvenance adds p to the list in path (one entry per process that
// worked on the run directory).
func appendProvenance(path string, p Provenance) error {
	var list []Provenance
	if err := readJSON(path, &list); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return writeJSON(path, append(list, p))
}

// samplerSpec is the spec a run builds its sampler from: a spectral or
// osgd sampler without a temperature of its own scores at the loss's.
func samplerSpec(cfg *Config, s sampler.Spec) sampler.Spec {
	if s.Temperature == 0 && (s.Kind == sampler.KindSpectral || s.Kind == sampler.KindOSGD) {
		s.Temperature = cfg.Loss.Temperature
	}
	return s
}

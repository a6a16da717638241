package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// ErrInterrupted is returned when the context is cancelled (Ctrl-C); a
// checkpoint of the current step has been written and -resume continues.
var ErrInterrupted = errors.New("training interrupted")

// RunSpec identifies one training run of an experiment.
type RunSpec struct {
	Sampler SamplerConfig
	Seed    uint64
}

// ID is the run's name in the run directory, e.g. "batchsampler-seed3".
func (r RunSpec) ID() string {
	name := strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' {
			return c
		}
		return '_'
	}, r.Sampler.DisplayName())
	return fmt.Sprintf("%s-seed%d", name, r.Seed)
}

// subSeed derives an independent seed for one purpose from a run seed.
func subSeed(seed uint64, purpose string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, purpose)
	return h.Sum64()
}

// EvalRecord is one evaluation during or at the end of a run.
type EvalRecord struct {
	Step   int     `json:"step"`
	Epoch  int     `json:"epoch"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
	Std    float64 `json:"std"`
}

// StepInfo is passed to the Step hook after every optimisation step.
type StepInfo struct {
	Run        string
	Step       int // 1-based count of finished steps
	TotalSteps int
	Epoch      int // 1-based
	Loss       float64
	Elapsed    time.Duration
}

// Hooks let the caller watch a run (progress bar, log lines) without the
// library printing anything itself. Nil hooks are skipped.
type Hooks struct {
	RunStart func(run string, startStep, totalSteps int)
	Step     func(StepInfo)
	Log      func(msg string)
	RunEnd   func(run string)
}

func (h Hooks) logf(format string, a ...any) {
	if h.Log != nil {
		h.Log(fmt.Sprintf(format, a...))
	}
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
}

// runner holds the state of one run.
type runner struct {
	cfg    *Config
	spec   RunSpec
	dir    string // DIR/runs/<id>
	mod    Modality
	smp    sampler.Sampler
	opt    *model.Adam
	augSrc *rand.PCG
	aug    *rand.Rand
	hooks  Hooks
	labels []int

	step           int
	trainSeconds   float64
	samplerSeconds float64
	evals          []EvalRecord
	metrics        *metricsWriter
	fnSum          float64 // false-negative ratio summed over the current epoch
	fnCount        int
	lastEpochFN    *float64
	refreshed      bool // a refresh happened before the current step
	// cache holds the latest training-time projection of every instance
	// (sampler embedding "cached").
	cache sampler.Embeddings
}

// updateCache stores the first view's projections of the batch.
func (r *runner) updateCache(idx []int, res StepResult) {
	if r.cache.Data == nil || res.ProjDim != r.cache.D {
		return
	}
	for i, j := range idx {
		copy(r.cache.Row(j), res.Proj[i*res.ProjDim:(i+1)*res.ProjDim])
	}
}

// histBins is the number of bins of the logged in-batch cosine histograms.
const histBins = 20

func (r *runner) ckptPath() string { return filepath.Join(r.dir, "checkpoint.gob") }

func (r *runner) checkpointNow() error {
	c := &checkpoint{
		Version: checkpointVersion, RunID: r.spec.ID(), Step: r.step,
		Params:       map[string][]float32{},
		TrainSeconds: r.trainSeconds, SamplerSeconds: r.samplerSeconds,
		Evals: r.evals, MetricsOffset: r.metrics.offset(),
	}
	for _, p := range r.mod.Params() {
		c.Params[p.Name] = append([]float32(nil), p.Value.Data().([]float32)...)
	}
	var err error
	if c.Adam, err = r.opt.MarshalBinary(); err != nil {
		return fmt.Errorf("save optimiser state: %w", err)
	}
	if c.Sampler, err = r.smp.MarshalBinary(); err != nil {
		return fmt.Errorf("save sampler state: %w", err)
	}
	c.Cache, c.CacheDim = r.cache.Data, r.cache.D
	if c.AugRNG, err = r.augSrc.MarshalBinary(); err != nil {
		return fmt.Errorf("save rng state: %w", err)
	}
	if err := r.metrics.sync(); err != nil {
		return err
	}
	return saveCheckpoint(r.ckptPath(), c)
}

func (r *runner) restore(c *checkpoint) error {
	if c.RunID != r.spec.ID() {
		return fmt.Errorf("checkpoint belongs to run %s, not %s", c.RunID, r.spec.ID())
	}
	for _, p := range r.mod.Params() {
		v, ok := c.Params[p.Name]
		dst := p.Value.Data().([]float32)
		if !ok || len(v) != len(dst) {
			return fmt.Errorf("checkpoint has no parameter %s of size %d (the config changed?)", p.Name, len(dst))
		}
		copy(dst, v)
	}
	if err := r.opt.UnmarshalBinary(c.Adam); err != nil {
		return fmt.Errorf("restore optimiser: %w", err)
	}
	if err := r.smp.UnmarshalBinary(c.Sampler); err != nil {
		return fmt.Errorf("restore sampler: %w", err)
	}
	if err := r.augSrc.UnmarshalBinary(c.AugRNG); err != nil {
		return fmt.Errorf("restore rng: %w", err)
	}
	r.step, r.trainSeconds, r.samplerSeconds, r.evals = c.Step, c.TrainSeconds, c.SamplerSeconds, c.Evals
	if c.Cache != nil {
		r.cache = sampler.Embeddings{N: len(c.Cache) / c.CacheDim, D: c.CacheDim, Data: c.Cache}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// refreshIfDue hands fresh embeddings to a Refresher before step r.step.
func (r *runner) refreshIfDue() error {
	rf, ok := r.smp.(sampler.Refresher)
	if !ok {
		return nil
	}
	t := rf.RefreshEvery()
	if !(r.step == 0 || (t > 0 && r.step%t == 0)) {
		return nil
	}
	which := r.spec.Sampler.Embedding
	t0 := time.Now()
	var emb sampler.Embeddings
	if which == "cached" && r.cache.Data != nil {
		emb = r.cache
	} else {
		if which == "" || which == "cached" {
			which = "projection"
		}
		var err error
		if emb, err = r.mod.Embed(which); err != nil {
			return fmt.Errorf("refresh at step %d: %w", r.step, err)
		}
		if r.spec.Sampler.Embedding == "cached" {
			r.cache = sampler.Embeddings{N: emb.N, D: emb.D, Data: append([]float32(nil), emb.Data...)}
		}
	}
	t1 := time.Now()
	if err := rf.Refresh(emb); err != nil {
		return fmt.Errorf("refresh at step %d: %w", r.step, err)
	}
	t2 := time.Now()
	rec := map[string]any{"event": "refresh", "step": r.step, "embed_seconds": t1.Sub(t0).Seconds(), "build_seconds": t2.Sub(t1).Seconds()}
	if gs, ok := r.smp.(interface{ Graph() *sampler.Graph }); ok && gs.Graph() != nil {
		if st, err := sampler.NeighbourStats(gs.Graph(), emb, r.labels); err == nil {
			rec["graph_neighbour_cos"] = st.MeanCosine
			rec["graph_label_agreement"] = st.LabelAgreement
			rec["graph_zero_in_degree"] = st.ZeroInDegree
			rec["graph_max_in_degree"] = st.MaxInDegree
		}
	}
	// The diagnostics (N·K cosines) are counted as sampler time too.
	rec["diag_seconds"] = time.Since(t2).Seconds()
	r.samplerSeconds += time.Since(t0).Seconds()
	r.refreshed = true
	return r.metrics.write(rec)
}

// train runs the loop from r.step to the end. ctx cancellation saves a
// checkpoint and returns ErrInterrupted.
func (r *runner) train(ctx context.Context) error {
	bpe := r.smp.BatchesPerEpoch()
	total := r.cfg.Train.Epochs * bpe
	if r.hooks.RunStart != nil {
		r.hooks.RunStart(r.spec.ID(), r.step, total)
	}
	trainable := 0
	for _, p := range r.mod.Params() {
		if p.Trainable {
			trainable++
		}
	}
	start := time.Now()
	base := r.trainSeconds
	for r.step < total {
		if ctx.Err() != nil {
			r.trainSeconds = base + time.Since(start).Seconds()
			if err := r.checkpointNow(); err != nil {
				return fmt.Errorf("%w; and saving the checkpoint failed: %v", ErrInterrupted, err)
			}
			r.hooks.logf("%s: interrupted at step %d/%d; checkpoint saved to %s", r.spec.ID(), r.step, total, r.ckptPath())
			return ErrInterrupted
		}
		if sc, ok := r.smp.(sampler.Scheduled); ok {
			sc.SetProgress(r.step, total)
		}
		if err := r.refreshIfDue(); err != nil {
			return err
		}
		t0 := time.Now()
		idx := r.smp.Next()
		r.samplerSeconds += time.Since(t0).Seconds()
		res, err := r.mod.Step(idx, r.aug)
		if err != nil {
			return fmt.Errorf("%s step %d: %w", r.spec.ID(), r.step+1, err)
		}
		if !finite(res.Loss) {
			return fmt.Errorf("%s: loss is %v at step %d (epoch %d); stopped without saving this state — the last good checkpoint is %s (lower train.lr or check the data)",
				r.spec.ID(), res.Loss, r.step+1, r.step/bpe+1, r.ckptPath())
		}
		if len(res.Grads) != trainable {
			return fmt.Errorf("%s: step returned %d gradients for %d trainable parameters", r.spec.ID(), len(res.Grads), trainable)
		}
		r.updateCache(idx, res)
		if err := r.opt.Step(res.Grads); err != nil {
			return fmt.Errorf("%s step %d: optimiser: %w", r.spec.ID(), r.step+1, err)
		}
		r.step++
		if as, ok := r.mod.(AfterStepper); ok {
			recs, err := as.AfterStep(r.step, total)
			if err != nil {
				return fmt.Errorf("%s after step %d: %w", r.spec.ID(), r.step, err)
			}
			for _, rec := range recs {
				rec["run"] = r.spec.ID()
				if err := r.metrics.write(rec); err != nil {
					return err
				}
			}
		}
		epoch := (r.step-1)/bpe + 1
		fn := math.NaN() // no labels: no false-negative ratio
		if r.labels != nil {
			fn = sampler.FalseNegativeRatio(idx, r.labels)
			r.fnSum += fn
			r.fnCount++
		}
		elapsed := base + time.Since(start).Seconds()
		if r.step%r.cfg.Train.LogEvery == 0 || r.step == total {
			rec := map[string]any{
				"run": r.spec.ID(), "sampler": r.spec.Sampler.DisplayName(), "seed": r.spec.Seed,
				"step": r.step, "epoch": epoch, "loss": res.Loss, "seconds": elapsed,
				"fn_ratio": fn, "batch_cos": sampler.MeanCosine(seq(len(idx)), sampler.Embeddings{N: len(idx), D: res.ProjDim, Data: res.Proj}),
			}
			if a, ok := r.smp.(interface{ Alpha() float64 }); ok {
				rec["alpha"] = a.Alpha()
			}
			if err := r.metrics.write(rec); err != nil {
				return err
			}
		}
		if r.refreshed || (r.step-1)%bpe == 0 {
			// The in-batch cosine similarity histogram of this batch (first
			// view's projections by the model being trained), at the start of
			// every epoch and after every refresh: the paper's Figures 4-5.
			h := sampler.CosineHistogram(seq(len(idx)), sampler.Embeddings{N: len(idx), D: res.ProjDim, Data: res.Proj}, histBins)
			if h != nil {
				if err := r.metrics.write(map[string]any{"event": "cos_hist", "run": r.spec.ID(), "sampler": r.spec.Sampler.DisplayName(), "step": r.step, "epoch": epoch, "hist": h}); err != nil {
					return err
				}
			}
			r.refreshed = false
		}
		if r.hooks.Step != nil {
			r.hooks.Step(StepInfo{Run: r.spec.ID(), Step: r.step, TotalSteps: total, Epoch: epoch, Loss: res.Loss, Elapsed: time.Duration(elapsed * float64(time.Second))})
		}
		if r.step%bpe == 0 { // end of an epoch
			if err := r.endEpoch(epoch); err != nil {
				return err
			}
			r.trainSeconds = base + time.Since(start).Seconds()
			if r.cfg.Train.Checkpoint {
				if err := r.checkpointNow(); err != nil {
					return err
				}
			}
		}
	}
	r.trainSeconds = base + time.Since(start).Seconds()
	return nil
}

func (r *runner) endEpoch(epoch int) error {
	rec := map[string]any{"event": "epoch_end", "run": r.spec.ID(), "step": r.step, "epoch": epoch}
	if r.fnCount > 0 {
		fn := r.fnSum / float64(r.fnCount)
		r.lastEpochFN = &fn
		rec["fn_ratio_mean"] = fn
	}
	r.fnSum, r.fnCount = 0, 0
	if c, ok := r.smp.(interface{ Coverage() float64 }); ok {
		rec["coverage"] = c.Coverage()
	}
	if err := r.metrics.write(rec); err != nil {
		return err
	}
	if k := r.cfg.Train.EvalEvery; k > 0 && epoch%k == 0 && epoch < r.cfg.Train.Epochs {
		sc, err := r.evaluate()
		if err != nil {
			return err
		}
		er := EvalRecord{Step: r.step, Epoch: epoch, Metric: sc.Metric, Value: sc.Value, Std: sc.Std}
		r.evals = append(r.evals, er)
		r.hooks.logf("%s: epoch %d %s %.2f", r.spec.ID(), epoch, sc.Metric, sc.Value)
		return r.metrics.write(map[string]any{"event": "eval", "run": r.spec.ID(), "step": r.step, "epoch": epoch, "metric": sc.Metric, "value": sc.Value, "std": sc.Std})
	}
	return nil
}

func (r *runner) evaluate() (Score, error) {
	emb, err := r.mod.Embed("encoder")
	if err != nil {
		return Score{}, err
	}
	return r.mod.Evaluate(emb, r.spec.Seed)
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// newSampler builds the sampler a run uses.
func newSampler(sc SamplerConfig, n, b int, seed uint64) (sampler.Sampler, error) {
	switch sc.Kind {
	case "uniform":
		return sampler.NewUniform(n, b, seed)
	}
	return newEmbeddingSampler(sc, n, b, seed)
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

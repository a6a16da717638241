package train

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// ErrInterrupted is returned when the context is cancelled (Ctrl-C); a
// checkpoint of the current step has been written and -resume continues.
// An interruption during an evaluation is reported by an error for which
// errors.Is(err, ErrInterrupted) holds too.
var ErrInterrupted = errors.New("training interrupted")

// interruptError is an interruption with its own message; it matches
// ErrInterrupted and the context's error.
type interruptError struct {
	msg   string
	cause error
}

func (e *interruptError) Error() string   { return e.msg }
func (e *interruptError) Unwrap() []error { return []error{ErrInterrupted, e.cause} }

// errEvalInterrupted is returned by a hook whose evaluation was stopped by
// the cancellation of the run's context.
var errEvalInterrupted = errors.New("evaluation interrupted")

// cancelledBy reports whether err was caused by the cancellation of ctx.
func cancelledBy(ctx context.Context, err error) bool {
	return ctx != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// RunSpec identifies one training run of an experiment.
type RunSpec struct {
	Sampler sampler.Spec
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

// hookPoint is the point of the loop at which a hook runs.
type hookPoint int

const (
	// beforeStep hooks run before the sampler draws the batch of step
	// r.step (0-based).
	beforeStep hookPoint = iota
	// afterStep hooks run after the optimizer's update; r.step is then the
	// number of finished steps and r.idx, r.res describe the step.
	afterStep
	// epochEnd hooks run after the last step of an epoch.
	epochEnd
)

// hook is one named piece of work of the loop. Hooks run in the order they
// were added; an error names the run, the step and the hook.
type hook struct {
	name string
	when hookPoint
	fn   func(r *run) error
}

// run is the state of one training run: what the loop and its hooks share.
type run struct {
	cfg      *Config
	spec     RunSpec
	dir      string // DIR/runs/<id>
	data     Dataset
	method   Method
	protocol Protocol
	smp      *sampler.Driver
	opt      optim.Optimizer
	sched    optim.Schedule
	augSrc   *rand.PCG
	aug      *rand.Rand
	obs      Observer
	labels   []int
	metrics  *metricsWriter
	hooks    []hook
	ctx      context.Context // of train; evaluations stop when it is cancelled
	// statefulHooks are the hooks whose state a checkpoint keeps, by name.
	statefulHooks map[string]Stateful
	sel           *selectHook // model selection (eval.select_every), or nil
	prog          *progress   // where the experiment stands, or nil
	runIndex      int         // the run's place in the experiment (0-based), with prog
	mem           *memTracker // the heap's high-water mark, or nil

	step, total, bpe int
	idx              []int      // the batch of the last step
	res              StepResult // the outcome of the last step
	// ckptStep is the step of the last checkpoint written or restored (-1:
	// none).
	ckptStep int
	// pendingHook names the epochEnd hook that an interruption stopped at
	// step (it and the epochEnd hooks after it run first on resume); "" when
	// none.
	pendingHook string

	trainSeconds float64
	start        time.Time // of this process's part of the run
	base         float64   // trainSeconds at start
	evals        []EvalRecord

	fnSum       float64 // false-negative ratio summed over the current epoch
	fnCount     int
	lastEpochFN *float64
	// nextMark is the sampler's Next time (Driver.NextSeconds) at the end
	// of the previous epoch (0 after a resume: the epoch then counts from
	// the resumed step).
	nextMark float64
}

// add appends a hook.
func (r *run) add(name string, when hookPoint, fn func(r *run) error) {
	r.hooks = append(r.hooks, hook{name: name, when: when, fn: fn})
}

func (r *run) runHooks(when hookPoint) error { return r.runHooksFrom(when, "") }

// runHooksFrom runs the hooks of when, starting at the one named from (all
// when from is ""). A hook stopped by an interruption (errEvalInterrupted)
// is recorded as r.pendingHook, to run again on resume.
func (r *run) runHooksFrom(when hookPoint, from string) error {
	started := from == ""
	for _, h := range r.hooks {
		if h.when != when {
			continue
		}
		if !started && h.name != from {
			continue
		}
		started = true
		if err := h.fn(r); err != nil {
			if errors.Is(err, errEvalInterrupted) {
				r.pendingHook = h.name
				return err
			}
			return fmt.Errorf("run %s, step %d, hook %s: %w", r.spec.ID(), r.step, h.name, err)
		}
	}
	if !started {
		return fmt.Errorf("run %s, step %d: the checkpoint asks to run hook %s first, and this run has no such hook (the config changed?)", r.spec.ID(), r.step, from)
	}
	return nil
}

// elapsed is the run's training time so far, over all its processes.
func (r *run) elapsed() float64 { return r.base + time.Since(r.start).Seconds() }

// epoch is the 1-based epoch of the last finished step (0 before the first
// step, also when there is none: train.epochs 0).
func (r *run) epoch() int {
	if r.step <= 0 || r.bpe <= 0 {
		return 0
	}
	return (r.step-1)/r.bpe + 1
}

// train runs the loop from r.step to the end and makes sure a checkpoint of
// the finished training exists (so that an interrupted final evaluation
// resumes without training again). ctx cancellation, also during an
// evaluation of the loop, saves a checkpoint and returns ErrInterrupted.
func (r *run) train(ctx context.Context) error {
	r.ctx = ctx
	r.obs.runStart(r.spec.ID(), r.step, r.total)
	if r.total == 0 {
		r.obs.logf("%s: train.epochs is 0: no training step; the protocol scores the initial encoder", r.spec.ID())
	}
	r.start, r.base = time.Now(), r.trainSeconds
	trainable := 0
	for _, p := range r.method.Params() {
		if p.Trainable {
			trainable++
		}
	}
	if from := r.pendingHook; from != "" {
		// The checkpoint was written by an interruption inside an epochEnd
		// hook: finish that epoch's end as the uninterrupted run did.
		r.pendingHook = ""
		if err := r.runHooksFrom(epochEnd, from); err != nil {
			if errors.Is(err, errEvalInterrupted) {
				return r.interrupted()
			}
			return err
		}
	}
	for r.step < r.total {
		if ctx.Err() != nil {
			return r.interrupted()
		}
		if err := r.runHooks(beforeStep); err != nil {
			return err
		}
		r.idx = r.smp.Next()
		res, err := r.method.Step(r.idx, r.aug)
		if err != nil {
			return fmt.Errorf("%s step %d: %w", r.spec.ID(), r.step+1, err)
		}
		if !finite(res.Loss) {
			return fmt.Errorf("%s: loss is %v at step %d (epoch %d); stopped without saving this state — the last good checkpoint is %s (lower train.lr or check the data)",
				r.spec.ID(), res.Loss, r.step+1, r.step/r.bpe+1, r.ckptPath())
		}
		if len(res.Grads) != trainable {
			return fmt.Errorf("%s: step returned %d gradients for %d trainable parameters", r.spec.ID(), len(res.Grads), trainable)
		}
		r.res = res
		if err := r.opt.Step(res.Grads); err != nil {
			return fmt.Errorf("%s step %d: optimizer: %w", r.spec.ID(), r.step+1, err)
		}
		r.step++
		r.mem.observe()
		if err := r.runHooks(afterStep); err != nil {
			return err
		}
		if r.step%r.bpe == 0 {
			if err := r.runHooks(epochEnd); err != nil {
				if errors.Is(err, errEvalInterrupted) {
					return r.interrupted()
				}
				return err
			}
		}
	}
	r.trainSeconds = r.elapsed()
	if r.ckptStep != r.step {
		// No checkpoint at the last step (train.checkpoint is false): save
		// the finished training before the final evaluation.
		if err := r.checkpointNow(); err != nil {
			return fmt.Errorf("%s: save the finished training: %w", r.spec.ID(), err)
		}
	}
	return nil
}

// interrupted saves a checkpoint of the current step and returns
// ErrInterrupted.
func (r *run) interrupted() error {
	r.trainSeconds = r.elapsed()
	if err := r.checkpointNow(); err != nil {
		return fmt.Errorf("%w; and saving the checkpoint failed: %v", ErrInterrupted, err)
	}
	during := ""
	if r.pendingHook != "" {
		during = fmt.Sprintf(" during hook %s of epoch %d (-resume runs it again)", r.pendingHook, r.epoch())
	}
	r.obs.logf("%s: interrupted at step %d/%d%s; checkpoint saved to %s", r.spec.ID(), r.step, r.total, during, r.ckptPath())
	return ErrInterrupted
}

func (r *run) ckptPath() string { return filepath.Join(r.dir, "checkpoint.gob") }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

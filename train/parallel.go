package train

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// runAll trains and evaluates the runs of specs, opt.Parallel at a time
// (one after the other when it is 0 or 1), and returns their results in
// the order of specs. The first run to fail cancels the others; the error
// returned is that of the earliest run in specs that failed on its own
// (not because a sibling's failure cancelled it), or, when every failure
// was an interruption, the earliest one.
func runAll(ctx context.Context, cfg *Config, ds Dataset, specs []RunSpec, dir string, opt Options) ([]RunResult, error) {
	prog := newProgress(len(specs))
	results := make([]RunResult, len(specs))
	par := min(max(opt.Parallel, 1), len(specs))
	if par <= 1 {
		for i, sp := range specs {
			rr, err := runOne(ctx, cfg, ds, sp, i, dir, opt.Observer, prog)
			if err != nil {
				return nil, err
			}
			results[i] = *rr
		}
		return results, nil
	}
	obs := followOne(opt.Observer)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(specs))
	eachIndex(len(specs), par, func(i int) bool {
		if rctx.Err() != nil {
			return false
		}
		rr, err := runOne(rctx, cfg, ds, specs[i], i, dir, obs, prog)
		if err != nil {
			errs[i] = err
			cancel()
			return false
		}
		results[i] = *rr
		return true
	})
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if first == nil {
			first = err
		}
		if ctx.Err() == nil && !errors.Is(err, ErrInterrupted) {
			return nil, err
		}
	}
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil { // cancelled between two runs
		return nil, &interruptError{msg: "interrupted before every run started", cause: err}
	}
	return results, nil
}

// eachIndex calls f(i) for every i in [0, n) on workers goroutines (at
// most n), each taking the next index not yet taken, until f returns
// false: no index is taken after that.
func eachIndex(n, workers int, f func(i int) bool) {
	var (
		next atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	for range max(1, min(workers, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if !f(i) {
					stop.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// progress is where an experiment stands, for the estimate of the time
// left: the finished steps of every run, counted since start. It is safe
// for concurrent use.
type progress struct {
	runs  int
	start time.Time

	mu    sync.Mutex
	steps []int // finished steps of each run; -1 once the run has finished
}

func newProgress(runs int) *progress {
	return &progress{runs: runs, start: time.Now(), steps: make([]int, runs)}
}

// finished records that run i (0-based) has finished (or had finished
// earlier).
func (p *progress) finished(i int) {
	p.mu.Lock()
	p.steps[i] = -1
	p.mu.Unlock()
}

// eta records step of total steps for run i (0-based) and returns the time
// so far and an estimate of the time left, from the share of all steps
// done (every run of an experiment has the same number of steps; finished
// runs count as done).
func (p *progress) eta(i, step, total int) (soFar, left time.Duration) {
	soFar = time.Since(p.start)
	p.mu.Lock()
	p.steps[i] = step
	sum := 0
	for _, s := range p.steps {
		if s < 0 {
			s = total
		}
		sum += s
	}
	p.mu.Unlock()
	done := float64(sum) / float64(p.runs*total)
	if !(done > 0) { // also no steps at all (train.epochs: 0): 0/0
		return soFar, 0
	}
	return soFar, time.Duration(float64(soFar) * (1 - done) / done)
}

// followOne makes an Observer for runs going at once out of one written
// for a run at a time: its calls come one at a time; Log passes from every
// run; RunStart, Step, Eval and RunEnd pass for one run only, the earliest
// started of those still going. When that run ends, the next one's
// RunStart is passed, at the step it has reached.
func followOne(o Observer) Observer {
	var (
		mu    sync.Mutex
		going []string              // runs started and not ended, in start order
		where = map[string][2]int{} // run → its last step and total steps
	)
	f := Observer{}
	if o.Log != nil {
		f.Log = func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			o.Log(msg)
		}
	}
	f.RunStart = func(run string, start, total int) {
		mu.Lock()
		defer mu.Unlock()
		going = append(going, run)
		where[run] = [2]int{start, total}
		if len(going) == 1 && o.RunStart != nil {
			o.RunStart(run, start, total)
		}
	}
	f.Step = func(s StepInfo) {
		mu.Lock()
		defer mu.Unlock()
		where[s.Run] = [2]int{s.Step, s.TotalSteps}
		if len(going) > 0 && going[0] == s.Run && o.Step != nil {
			o.Step(s)
		}
	}
	f.Eval = func(run string, done, total int, elapsed time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if len(going) > 0 && going[0] == run && o.Eval != nil {
			o.Eval(run, done, total, elapsed)
		}
	}
	f.RunEnd = func(run string) {
		mu.Lock()
		defer mu.Unlock()
		i := slices.Index(going, run)
		if i < 0 {
			return
		}
		going = slices.Delete(going, i, i+1)
		delete(where, run)
		if i > 0 {
			return
		}
		if o.RunEnd != nil {
			o.RunEnd(run)
		}
		if len(going) > 0 && o.RunStart != nil {
			w := where[going[0]]
			o.RunStart(going[0], w[0], w[1])
		}
	}
	return f
}

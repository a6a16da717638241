package eval

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"
)

// progressLog records the calls of a Progress callback.
type progressLog struct {
	mu    sync.Mutex
	done  []int
	total []int
}

func (p *progressLog) record(done, total int) {
	p.mu.Lock()
	p.done = append(p.done, done)
	p.total = append(p.total, total)
	p.mu.Unlock()
}

// check verifies that done counted 1, 2, … (one call per unit, none
// skipped or repeated) with a constant total.
func (p *progressLog) check(t *testing.T, total int) {
	t.Helper()
	for i, d := range p.done {
		if d != i+1 || p.total[i] != total {
			t.Fatalf("progress call %d: (%d, %d), want (%d, %d)", i, d, p.total[i], i+1, total)
		}
	}
}

// TestSVMCrossValidateProgressSameResult: a Progress callback and a live
// context change no bit of the result, and Progress counts every fit.
func TestSVMCrossValidateProgressSameResult(t *testing.T) {
	x, y := clusteredData(11, 240, 12, 3, 1)
	for _, cs := range [][]float64{nil, {10}} {
		base, err := SVMCrossValidate(x, 240, 12, y, SVMOptions{Seed: 5, Workers: 2, Cs: cs})
		if err != nil {
			t.Fatal(err)
		}
		var log progressLog
		ctx, cancel := context.WithCancel(context.Background())
		got, err := SVMCrossValidate(x, 240, 12, y, SVMOptions{Seed: 5, Workers: 2, Cs: cs, Context: ctx, Progress: log.record})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, base) {
			t.Errorf("Cs %v: result with Progress and Context differs:\n got %+v\nwant %+v", cs, got, base)
		}
		total := 10 * (5*len(GraphCLCs) + 1)
		if len(cs) == 1 {
			total = 10
		}
		log.check(t, total)
		if len(log.done) != total {
			t.Errorf("Cs %v: %d progress calls, want %d", cs, len(log.done), total)
		}
	}
}

// TestSVMCrossValidateCancel cancels from the Progress callback after the
// first fit: SVMCrossValidate must return promptly an error wrapping
// context.Canceled, without running the remaining fits.
func TestSVMCrossValidateCancel(t *testing.T) {
	const n, d = 1200, 32
	x, y := clusteredData(3, n, d, 2, 0.2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log progressLog
	var cancelled time.Time
	progress := func(done, total int) {
		log.record(done, total)
		if done == 1 {
			cancelled = time.Now()
			cancel()
		}
	}
	_, err := SVMCrossValidate(x, n, d, y, SVMOptions{Seed: 1, Workers: 2, Context: ctx, Progress: progress})
	stopped := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want an error wrapping context.Canceled, got %v", err)
	}
	total := 10 * (5*len(GraphCLCs) + 1)
	if len(log.done) == 0 || len(log.done) >= total/2 {
		t.Errorf("%d of %d fits reported after a cancellation at the first", len(log.done), total)
	}
	log.check(t, total)
	if stopped > 2*time.Second {
		t.Errorf("returned %v after the cancellation", stopped)
	}
	t.Logf("%d fits reported, returned %v after the cancellation: %v", len(log.done), stopped, err)

	// A context cancelled before the call stops it before any fit.
	_, err = SVMCrossValidate(x, n, d, y, SVMOptions{Context: ctx, Progress: func(int, int) { t.Error("progress after cancellation") }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before the call: %v", err)
	}
}

// TestSMOStops: the SMO solver polls its stop channel, so a single long fit
// does not delay a cancellation.
func TestSMOStops(t *testing.T) {
	const n, d = 1500, 8
	x, y := clusteredData(7, n, d, 2, 0.05) // heavily overlapping classes
	xf := make([]float64, len(x))
	for i, v := range x {
		xf[i] = float64(v)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	src := newDenseDist(xf, n, d, 1)
	p := trainParams{C: 1000, eps: DefaultSVCTol, shrinking: true, cacheBytes: DefaultCacheBytes}
	full, err := trainSVM(src, idx, y, scaleGamma(xf, d), p)
	if err != nil {
		t.Fatal(err)
	}
	if full.iter < 2000 {
		t.Skipf("the fit takes only %d iterations; the test needs more than 1000", full.iter)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.ctx = ctx
	_, err = trainSVM(src, idx, y, scaleGamma(xf, d), p)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled from a cancelled fit, got %v", err)
	}
	ys := make([]int8, n)
	for i, c := range y {
		ys[i] = int8(2*c - 1)
	}
	r := solveSMO(newKernelCache(src, idx, scaleGamma(xf, d), DefaultCacheBytes), idx, ys, 1000, DefaultSVCTol, true, 0, ctx.Done())
	if !r.cancelled || r.iter > 1000 {
		t.Errorf("solver with a closed stop channel: cancelled %v after %d iterations (full fit %d)", r.cancelled, r.iter, full.iter)
	}
}

// TestProbeProgressAndCancel: Progress and a live context leave the probe
// bit-identical; a cancellation stops it with context.Canceled.
func TestProbeProgressAndCancel(t *testing.T) {
	const n, d, classes = 600, 16, 4
	x, y := clusteredData(12, n, d, classes, 0.4)
	for _, opt := range []ProbeOptions{{}, {L2Grid: []float64{1e-3, 1}, Seed: 3}} {
		base, err := TrainProbe(x, n, d, y, classes, opt)
		if err != nil {
			t.Fatal(err)
		}
		var log progressLog
		o := opt
		o.Context, o.Progress = context.Background(), log.record
		got, err := TrainProbe(x, n, d, y, classes, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.W, base.W) || !slices.Equal(got.B, base.B) || got.Loss != base.Loss || got.Iterations != base.Iterations ||
			!reflect.DeepEqual(got.Selection, base.Selection) {
			t.Errorf("L2Grid %v: probe with Progress differs", opt.L2Grid)
		}
		fits := len(opt.L2Grid) + 1
		total := fits * DefaultProbeMaxIter
		if len(log.done) < fits || log.done[len(log.done)-1] != total || !slices.IsSorted(log.done) {
			t.Errorf("L2Grid %v: progress %v, want increasing up to %d", opt.L2Grid, log.done, total)
		}
		for _, tt := range log.total {
			if tt != total {
				t.Fatalf("progress total %d, want %d", tt, total)
			}
		}

		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		o.Context, o.Progress = ctx, func(int, int) { calls++; cancel() }
		_, err = TrainProbe(x, n, d, y, classes, o)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("L2Grid %v: cancelled probe: %v", opt.L2Grid, err)
		}
		if calls != 1 {
			t.Errorf("L2Grid %v: %d progress calls after cancelling at the first", opt.L2Grid, calls)
		}
	}
}

// TestKNNProgressAndCancel: the same for the kNN classifier.
func TestKNNProgressAndCancel(t *testing.T) {
	const nTrain, nTest, d, classes = 1500, 5*knnTestBlock + 5, 8, 3
	x, y := clusteredData(24, nTrain+nTest, d, classes, 0.5)
	train, yTrain, test, yTest := x[:nTrain*d], y[:nTrain], x[nTrain*d:], y[nTrain:]
	base, err := KNNPredict(train, yTrain, test, nTest, d, classes, KNNOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	var log progressLog
	got, err := KNNPredict(train, yTrain, test, nTest, d, classes, KNNOptions{Workers: 2, Context: context.Background(), Progress: log.record})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, base) {
		t.Error("predictions with Progress differ")
	}
	log.check(t, 6)
	if len(log.done) != 6 {
		t.Errorf("%d progress calls, want 6 blocks", len(log.done))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, err = KNNAccuracy(train, yTrain, test, yTest, d, classes, KNNOptions{Workers: 1, Context: ctx, Progress: func(int, int) { calls++; cancel() }})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancelled kNN: %d progress calls, error %v", calls, err)
	}
}

package train

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// timings matches the values of a run's files that are measured, not
// computed: they differ between any two runs.
var timings = regexp.MustCompile(`"([a-z_]*seconds|max_rss|heap_peak)":[^,}]*`)

// runFiles reads what a run directory holds that results depend on: every
// run's result.json and metrics.jsonl and DIR/metrics.jsonl, with the
// timings and memory peaks cut out, and results.json's per-run values.
func runFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	paths, err := filepath.Glob(filepath.Join(dir, "runs", "*", "*.json*"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, filepath.Join(dir, "metrics.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = timings.ReplaceAllString(string(b), "")
	}
	if len(out) < 3 {
		t.Fatalf("%s holds %d run files, want a result and metrics of every run", dir, len(out))
	}
	return out
}

// TestParallelRunsMatchOneAtATime: runs made two or three at a time leave
// the same results, metrics and DIR/metrics.jsonl (in the config's order)
// as runs made one at a time, for every kind of method, samplers whose
// embeddings are refreshed included.
func TestParallelRunsMatchOneAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("trains every config twice: skipped with -short")
	}
	bs := `samplers=[{kind: uniform}, {kind: batchsampler, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`
	cases := []struct {
		name     string
		cfg      func(t *testing.T) Config
		parallel int
	}{
		{"graphcl", func(t *testing.T) Config { return mustParse(t, tinySynthetic, bs) }, 3},
		{"mvgrl", func(t *testing.T) Config {
			return mustParse(t, tinySynthetic, append(slices.Clone(tinyMVGRL), bs, "train.epochs=2")...)
		}, 2},
		{"simclr", func(t *testing.T) Config { return mustParse(t, tinyImages, "seeds=[0, 1]", "train.epochs=1") }, 2},
		{"simcse", func(t *testing.T) Config {
			cfg, _ := tinyTextData(t, 120, tinyTextOptions...)
			cfg.Seeds = []uint64{0, 1}
			return cfg
		}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg(t)
			one, par := t.TempDir(), t.TempDir()
			r1, err := Run(context.Background(), cfg, Options{OutDir: one})
			if err != nil {
				t.Fatal(err)
			}
			var logs []string
			obs := Observer{Log: func(s string) { logs = append(logs, s) }} // not safe unless calls come one at a time
			r2, err := Run(context.Background(), cfg, Options{OutDir: par, Parallel: c.parallel, Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			if len(r1.Runs) < 2 || !reflect.DeepEqual(resultsOf(t, r1), resultsOf(t, r2)) {
				t.Errorf("results differ:\none at a time %v\n%d at a time %v", resultsOf(t, r1), c.parallel, resultsOf(t, r2))
			}
			a, b := runFiles(t, one), runFiles(t, par)
			for k, v := range a {
				if b[k] != v {
					t.Errorf("%s differs with %d runs at a time:\n%s\n%s", k, c.parallel, firstDiff(v, b[k]), firstDiff(b[k], v))
				}
			}
			if len(a) != len(b) {
				t.Errorf("%d run files, %d with %d runs at a time", len(a), len(b), c.parallel)
			}
			if len(logs) == 0 {
				t.Error("no log line reached the observer")
			}
		})
	}
}

// TestParallelRunFailureStopsTheOthers: when one of the runs going at once
// fails, the others stop with a checkpoint and the failure is returned,
// not the interruption it caused.
func TestParallelRunFailureStopsTheOthers(t *testing.T) {
	registerFake(t, "fake-nan-parallel", 7, false) // 40 instances, B=10: 4 steps per epoch
	// Every run diverges at its 7th step unless the first to diverge has
	// cancelled it before: the error returned must be a divergence, not
	// the interruption it caused.
	cfg := mustParse(t, "modality: fake-nan-parallel\ndata: {source: synthetic}\ntrain: {epochs: 3, batch_size: 10}\nseeds: [0, 1, 2]\n")
	dir := t.TempDir()
	_, err := Run(context.Background(), cfg, Options{OutDir: dir, Parallel: 3})
	if err == nil || !strings.Contains(err.Error(), "loss is NaN at step 7") {
		t.Fatalf("want the NaN error, got %v", err)
	}
	if errors.Is(err, ErrInterrupted) {
		t.Errorf("the error returned is an interruption: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err == nil {
		t.Error("a failed experiment wrote results.json")
	}
}

// TestParallelCancelIsAnInterruption: a cancelled context stops every run
// going at once with ErrInterrupted and checkpoints; the same call with
// Resume then finishes with the results of an uninterrupted run.
func TestParallelCancelIsAnInterruption(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the tiny config twice: skipped with -short")
	}
	cfg := mustParse(t, tinySynthetic, "train.epochs=4")
	ref, err := Run(context.Background(), cfg, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	obs := Observer{Step: func(StepInfo) {
		if steps++; steps == 5 {
			cancel()
		}
	}}
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Parallel: 2, Observer: obs}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled: want ErrInterrupted, got %v", err)
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Parallel: 2, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resultsOf(t, ref), resultsOf(t, got)) {
		t.Errorf("resumed after an interruption: %v, want %v", resultsOf(t, got), resultsOf(t, ref))
	}
}

// obsCall is one call an Observer received.
type obsCall struct {
	kind, run string
	a, b      int
}

func recorder(calls *[]obsCall) Observer {
	return Observer{
		Log:      func(msg string) { *calls = append(*calls, obsCall{kind: "log", run: msg}) },
		RunStart: func(run string, s, n int) { *calls = append(*calls, obsCall{"start", run, s, n}) },
		Step:     func(s StepInfo) { *calls = append(*calls, obsCall{"step", s.Run, s.Step, s.TotalSteps}) },
		Eval:     func(run string, d, n int, _ time.Duration) { *calls = append(*calls, obsCall{"eval", run, d, n}) },
		RunEnd:   func(run string) { *calls = append(*calls, obsCall{kind: "end", run: run}) },
	}
}

func TestFollowOne(t *testing.T) {
	var got []obsCall
	f := followOne(recorder(&got))
	f.RunStart("a", 0, 10)
	f.RunStart("b", 3, 10) // resumed at step 3
	f.Step(StepInfo{Run: "b", Step: 4, TotalSteps: 10})
	f.Step(StepInfo{Run: "a", Step: 1, TotalSteps: 10})
	f.Log("b says")
	f.Step(StepInfo{Run: "b", Step: 5, TotalSteps: 10})
	f.Eval("b", 1, 4, 0)
	f.RunStart("c", 0, 10)
	f.RunEnd("b") // not followed: passes nothing
	f.Eval("a", 2, 4, 0)
	f.RunEnd("a") // followed: ends, and c takes over where it stands
	f.Step(StepInfo{Run: "c", Step: 1, TotalSteps: 10})
	f.RunEnd("c")
	f.RunEnd("c") // twice: nothing
	want := []obsCall{
		{"start", "a", 0, 10},
		{"step", "a", 1, 10},
		{kind: "log", run: "b says"},
		{"eval", "a", 2, 4},
		{kind: "end", run: "a"},
		{"start", "c", 0, 10},
		{"step", "c", 1, 10},
		{kind: "end", run: "c"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls passed:\n%v\nwant\n%v", got, want)
	}
}

func TestProgressEta(t *testing.T) {
	tests := []struct {
		name     string
		finished []int
		steps    map[int]int // run → step recorded before the last call
		i, step  int
		wantDone float64
	}{
		{"first step", nil, nil, 0, 1, 1.0 / 40},
		{"second run, one at a time", []int{0}, nil, 1, 5, 15.0 / 40},
		{"two at once", nil, map[int]int{0: 6}, 1, 4, 10.0 / 40},
		{"last step", []int{0, 1, 2}, nil, 3, 10, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProgress(4)
			for _, i := range tc.finished {
				p.finished(i)
			}
			for i, s := range tc.steps {
				p.eta(i, s, 10)
			}
			p.start = time.Now().Add(-time.Second)
			soFar, left := p.eta(tc.i, tc.step, 10)
			// left = soFar·(1−done)/done: recover done from the two.
			done := soFar.Seconds() / (soFar.Seconds() + left.Seconds())
			if d := done - tc.wantDone; d > 1e-3 || d < -1e-3 {
				t.Errorf("share done %.4f, want %.4f (so far %v, left %v)", done, tc.wantDone, soFar, left)
			}
		})
	}
}

// TestParallelResultsJSONHasEveryRun: results.json of runs made at once
// lists them in the config's order.
func TestParallelResultsJSONHasEveryRun(t *testing.T) {
	registerFake(t, "fake-parallel-order", 0, false)
	cfg := mustParse(t, "modality: fake-parallel-order\ndata: {source: synthetic}\ntrain: {epochs: 2, batch_size: 10}\nseeds: [0, 1, 2, 3, 4]\n")
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir, Parallel: 4}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Runs []struct{ ID string } `json:"runs"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res.Runs {
		ids = append(ids, r.ID)
	}
	want := []string{"uniform-seed0", "uniform-seed1", "uniform-seed2", "uniform-seed3", "uniform-seed4"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("runs in results.json: %v, want %v", ids, want)
	}
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range la {
		if i >= len(lb) || la[i] != lb[i] {
			return la[i]
		}
	}
	return ""
}

func TestEachIndex(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 2}, {1, 4}, {1000, 3}, {7, 0}} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		eachIndex(tc.n, tc.workers, func(i int) bool {
			mu.Lock()
			seen[i]++
			mu.Unlock()
			return true
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n %d, workers %d: index %d called %d times", tc.n, tc.workers, i, c)
			}
		}
	}
	var got []int
	eachIndex(100, 1, func(i int) bool { got = append(got, i); return i < 10 })
	if !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("one worker stopping at 10 took %v", got)
	}
}

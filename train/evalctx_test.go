package train

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// runOutcome is a run's result without its timings and memory figures,
// which differ between processes, as JSON (so that float64 values compare bit for bit and maps
// compare by content).
func runOutcome(t *testing.T, r RunResult) string {
	t.Helper()
	r.TrainSeconds, r.SamplerSeconds, r.EvalSeconds = 0, 0, 0
	r.MaxRSS, r.HeapPeak = 0, 0
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameRuns fails unless two experiments' runs are equal but for timings.
func sameRuns(t *testing.T, got, want *Results) {
	t.Helper()
	if len(got.Runs) != len(want.Runs) {
		t.Fatalf("%d runs, want %d", len(got.Runs), len(want.Runs))
	}
	for i := range want.Runs {
		if g, w := runOutcome(t, got.Runs[i]), runOutcome(t, want.Runs[i]); g != w {
			t.Errorf("run %s:\n got %s\nwant %s", want.Runs[i].ID, g, w)
		}
	}
}

// TestInterruptDuringFinalEvaluation cancels the second run during its
// final evaluation (from the Observer's Eval callback, after the first SVM
// fit): Run must return ErrInterrupted promptly, leave no result.json for
// that run but a checkpoint of its finished training (also with
// train.checkpoint false), and -resume must evaluate without training again
// and report exactly what an uninterrupted run does.
func TestInterruptDuringFinalEvaluation(t *testing.T) {
	for _, ckpt := range []string{"true", "false"} {
		t.Run("train.checkpoint="+ckpt, func(t *testing.T) {
			cfg := mustParse(t, tinySynthetic, "train.checkpoint="+ckpt)
			ref := t.TempDir()
			var evalCalls []int
			want, err := Run(context.Background(), cfg, Options{OutDir: ref, Observer: Observer{
				Eval: func(run string, done, total int, elapsed time.Duration) {
					if run == "uniform-seed1" {
						evalCalls = append(evalCalls, done)
						if total != 3*(2*2+1) || elapsed < 0 {
							t.Errorf("Eval(%s, %d, %d, %v): want a total of 15 fits", run, done, total, elapsed)
						}
					}
				}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(evalCalls) != 15 || evalCalls[14] != 15 {
				t.Errorf("Eval calls %v, want 1 … 15", evalCalls)
			}
			wantLoss := readLosses(t, ref)

			dir := t.TempDir()
			rdir := filepath.Join(dir, "runs", "uniform-seed1")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			var logs []string
			obs := Observer{
				Eval: func(run string, done, total int, _ time.Duration) {
					if run == "uniform-seed1" {
						calls++
						cancel()
					}
				},
				Log: func(msg string) { logs = append(logs, msg) },
			}
			_, err = Run(ctx, cfg, Options{OutDir: dir, Observer: obs})
			if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
				t.Fatalf("want ErrInterrupted wrapping context.Canceled, got %v", err)
			}
			if !strings.Contains(err.Error(), "uniform-seed1: interrupted during evaluation") || !strings.Contains(err.Error(), "-resume evaluates again") {
				t.Errorf("message: %v", err)
			}
			// The folds run on parallel workers: a fit already under way when
			// the first call cancelled may still report; none starts after.
			if calls < 1 || calls > 1+runtime.GOMAXPROCS(0) {
				t.Errorf("%d Eval calls after the cancellation at the first, want at most %d (1 + the fits already under way)", calls, 1+runtime.GOMAXPROCS(0))
			}
			if _, err := os.Stat(filepath.Join(rdir, "result.json")); err == nil {
				t.Error("an interrupted evaluation wrote result.json")
			}
			if _, err := os.Stat(filepath.Join(dir, "runs", "uniform-seed0", "result.json")); err != nil {
				t.Error("the first run has no result")
			}
			c, err := loadCheckpoint(filepath.Join(rdir, "checkpoint.gob"))
			if err != nil {
				t.Fatalf("no checkpoint of the finished training: %v", err)
			}
			if c.Step != 9 || c.PendingHook != "" || c.LastEpochFN == nil {
				t.Errorf("checkpoint at step %d (pending %q, last-epoch FN %v), want the finished training, step 9", c.Step, c.PendingHook, c.LastEpochFN)
			}
			if !strings.Contains(strings.Join(logs, "\n"), "uniform-seed1: interrupted during evaluation") {
				t.Errorf("logs:\n%s", strings.Join(logs, "\n"))
			}

			steps := 0
			got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true, Observer: Observer{
				Step: func(StepInfo) { steps++ },
			}})
			if err != nil {
				t.Fatal(err)
			}
			if steps != 0 {
				t.Errorf("-resume trained %d steps again", steps)
			}
			sameRuns(t, got, want)
			sameLosses(t, wantLoss, readLosses(t, dir))
			sameEvents(t, dir, ref, "epoch_end")
		})
	}
}

// TestInterruptDuringPeriodicEvaluation cancels the evaluation of epoch 1
// (train.eval_every 1): the checkpoint records the pending evaluation, and
// -resume runs it, then the rest, as the uninterrupted run did.
func TestInterruptDuringPeriodicEvaluation(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "seeds=[0]", "train.eval_every=1")
	ref := t.TempDir()
	want, err := Run(context.Background(), cfg, Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Runs[0].Evals) != 2 {
		t.Fatalf("uninterrupted run: evals %+v, want epochs 1 and 2", want.Runs[0].Evals)
	}
	wantLoss := readLosses(t, ref)

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lastStep := 0
	obs := Observer{
		Step: func(s StepInfo) { lastStep = s.Step },
		Eval: func(string, int, int, time.Duration) { cancel() },
	}
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: obs}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	if lastStep != 3 {
		t.Errorf("stopped after step %d, want the end of epoch 1 (step 3)", lastStep)
	}
	c, err := loadCheckpoint(filepath.Join(dir, "runs", "uniform-seed0", "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Step != 3 || c.PendingHook != "evaluate" || len(c.Evals) != 0 {
		t.Errorf("checkpoint at step %d, pending %q, %d evals; want step 3, pending evaluate, none", c.Step, c.PendingHook, len(c.Evals))
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, got, want)
	sameLosses(t, wantLoss, readLosses(t, dir))
	sameEvents(t, dir, ref, "eval", "epoch_end")
}

// sameEvents fails unless the records of the given events in the
// DIR/metrics.jsonl of two run directories are the same lines.
func sameEvents(t *testing.T, dir, ref string, events ...string) {
	t.Helper()
	for _, ev := range events {
		if g, w := eventLines(t, dir, ev), eventLines(t, ref, ev); !reflect.DeepEqual(g, w) {
			t.Errorf("%s records:\n%s\nuninterrupted:\n%s", ev, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
	}
}

// eventLines returns the records of one event of DIR/metrics.jsonl.
func eventLines(t *testing.T, dir, event string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"event":"`+event+`"`) {
			out = append(out, l)
		}
	}
	return out
}

// TestDivergedEmbeddingsReportedByRun: NaN embeddings (lr 1e30) are
// reported by the run, with the step and the remedy, before the protocol
// sees them — at the final evaluation and at a periodic one.
func TestDivergedEmbeddingsReportedByRun(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "seeds=[0]", "train.lr=1e30")
	_, err := Run(context.Background(), cfg, Options{OutDir: t.TempDir()})
	want := "uniform-seed0: the encoder's embeddings contain NaN after step 9 (the encoder diverged: lower train.lr)"
	if err == nil || err.Error() != want {
		t.Errorf("final evaluation:\n got %v\nwant %s", err, want)
	}
	cfg = mustParse(t, tinySynthetic, "seeds=[0]", "train.lr=1e30", "train.eval_every=1")
	_, err = Run(context.Background(), cfg, Options{OutDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "hook evaluate: the encoder's embeddings contain NaN after step 3 (the encoder diverged: lower train.lr)") {
		t.Errorf("periodic evaluation: %v", err)
	}
}

// nanTestMethod embeds the test split with a NaN.
type nanTestMethod struct{ Method }

func (nanTestMethod) Embed(split, _ string) (sampler.Embeddings, error) {
	e := sampler.Embeddings{N: 2, D: 2, Data: []float32{1, 2, 3, 4}}
	if split == "test" {
		e.Data[3] = float32(math.Inf(-1))
	}
	return e, nil
}

// TestEvalEnvEmbedChecksFinite: the test split a protocol embeds through
// EvalEnv.Embed is checked too, and the run names it.
func TestEvalEnvEmbedChecksFinite(t *testing.T) {
	env := EvalEnv{Method: nanTestMethod{}}
	if _, err := env.Embed("train", "encoder"); err != nil {
		t.Fatal(err)
	}
	_, err := env.Embed("test", "encoder")
	r := &run{step: 40}
	want := "the encoder's embeddings of the test split contain -Inf after step 40 (the encoder diverged: lower train.lr)"
	if err == nil || r.diverged(err).Error() != want {
		t.Errorf("got %v, want %s", r.diverged(err), want)
	}
	_, err = env.Embed("test", "projection")
	if err == nil || !strings.HasPrefix(err.Error(), "the projection embeddings of the test split contain -Inf") {
		t.Errorf("projection: %v", err)
	}
}

// TestInterruptDuringProbeEvaluation: the linear-probe protocol reports its
// two phases (the kNN monitor's blocks, then the probe's L-BFGS
// iterations) and stops within the probe; -resume reports the uninterrupted
// result.
func TestInterruptDuringProbeEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("image training run: skipped with -short")
	}
	cfg := mustParse(t, tinyImages, "samplers=[{kind: uniform}]")
	ref := t.TempDir()
	var totals []int
	want, err := Run(context.Background(), cfg, Options{OutDir: ref, Observer: Observer{
		Eval: func(_ string, done, total int, _ time.Duration) {
			if len(totals) == 0 || totals[len(totals)-1] != total {
				totals = append(totals, total)
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(totals, []int{1, eval.DefaultProbeMaxIter}) {
		t.Errorf("progress phases with totals %v, want the kNN block then the probe's iterations", totals)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = Run(ctx, cfg, Options{OutDir: dir, Observer: Observer{
		Eval: func(_ string, done, total int, _ time.Duration) {
			if total == eval.DefaultProbeMaxIter && done == 3 {
				cancel()
			}
		}}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	sameRuns(t, got, want)
	sameLosses(t, readLosses(t, ref), readLosses(t, dir))
}

package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
	"gonum.org/v1/gonum/mat"
)

const tinySynthetic = `
name: tiny
modality: graph
data:
  source: synthetic
  synthetic: {graphs: 90, classes: 3, min_nodes: 8, max_nodes: 14, node_labels: 2, noise: 0.1, seed: 3}
model: {kind: gin, hidden: 8, layers: 2}
loss: {kind: infonce, form: graphcl, temperature: 0.2}
train: {epochs: 3, batch_size: 32, lr: 0.01}
eval: {kind: svm, folds: 3, inner_folds: 2, cs: [0.1, 10]}
seeds: [0, 1]
`

func mustParse(t *testing.T, y string, sets ...string) Config {
	t.Helper()
	c, err := ParseConfig([]byte(y), sets)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readLosses returns run → step → loss from DIR/metrics.jsonl, and fails
// the test when a (run, step) appears twice.
func readLosses(t *testing.T, dir string) map[string]map[int]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[int]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("metrics line %q: %v", sc.Text(), err)
		}
		if m["event"] != nil {
			continue
		}
		for _, k := range []string{"step", "epoch", "loss", "seconds", "run", "fn_ratio", "batch_cos"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("metrics line lacks %q: %s", k, sc.Text())
			}
		}
		run := m["run"].(string)
		step := int(m["step"].(float64))
		if out[run] == nil {
			out[run] = map[int]float64{}
		}
		if _, dup := out[run][step]; dup {
			t.Fatalf("run %s step %d logged twice", run, step)
		}
		out[run][step] = m["loss"].(float64)
	}
	return out
}

func TestRunWritesTheRunContract(t *testing.T) {
	dir := t.TempDir()
	cfg := mustParse(t, tinySynthetic, "export_embeddings=true")
	var logs []string
	res, err := Run(context.Background(), cfg, Options{OutDir: dir, Observer: Observer{Log: func(s string) { logs = append(logs, s) }}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config.yaml", "metrics.jsonl", "results.json", "results.md", "plots/loss.png", "plots/fn_ratio.png",
		"embeddings/uniform-seed0_embeddings.npy", "embeddings/uniform-seed1_labels.npy"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	// The saved config reproduces the run's config.
	saved, err := LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Train != cfg.Train || len(saved.Seeds) != 2 || !reflect.DeepEqual(saved, cfg) {
		t.Errorf("saved config differs:\n%+v\n%+v", saved, cfg)
	}
	// It holds only the sections and keys that apply to a graph run.
	savedYAML, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	for _, k := range []string{"image:", "arch:", "knn_k:", "corpus:", "dropout:"} {
		if strings.Contains(string(savedYAML), k) {
			t.Errorf("config.yaml of a graph run has %q:\n%s", k, savedYAML)
		}
	}
	losses := readLosses(t, dir)
	if len(losses) != 2 || len(losses["uniform-seed0"]) != 9 {
		t.Errorf("want 2 runs × 9 steps in metrics.jsonl, got %d runs, %d steps", len(losses), len(losses["uniform-seed0"]))
	}
	var rj struct {
		Results []map[string]any `json:"results"`
	}
	if err := readJSON(filepath.Join(dir, "results.json"), &rj); err != nil {
		t.Fatal(err)
	}
	if len(rj.Results) != 1 {
		t.Fatalf("results: %v", rj.Results)
	}
	for _, k := range []string{"dataset", "modality", "sampler", "loss", "metric", "per_seed", "mean", "std", "train_seconds"} {
		if _, ok := rj.Results[0][k]; !ok {
			t.Errorf("results.json entry lacks %q", k)
		}
	}
	if e := res.Results[0]; len(e.PerSeed) != 2 || e.Mean < 20 || e.Mean > 100 {
		t.Errorf("implausible result %+v", e)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "±") || !strings.Contains(string(md), "synthetic") {
		t.Errorf("results.md:\n%s", md)
	}
	f, err := os.Open(filepath.Join(dir, "embeddings", "uniform-seed0_embeddings.npy"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var m mat.Dense
	if err := npyio.Read(f, &m); err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 90 || c != 16 {
		t.Errorf("embeddings shape %d×%d, want 90×16", r, c)
	}
	// metrics.csv: the step records, one column per scalar.
	csvb, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	csvLines := strings.Split(strings.TrimSpace(string(csvb)), "\n")
	if !strings.HasPrefix(csvLines[0], "run,sampler,seed,step,epoch,loss,lr,alpha,fn_ratio,batch_cos,seconds") && !strings.HasPrefix(csvLines[0], "run,sampler,seed,step,epoch,loss,lr,fn_ratio,batch_cos,seconds") {
		t.Errorf("metrics.csv header %q", csvLines[0])
	}
	if len(csvLines) != 1+2*9 || !strings.HasPrefix(csvLines[1], "uniform-seed0,uniform,0,1,1,") {
		t.Errorf("metrics.csv: %d lines, first row %q; want a header and 18 step rows", len(csvLines), csvLines[1])
	}
	// The run directory records what produced it.
	var prov []Provenance
	if err := readJSON(filepath.Join(dir, "provenance.json"), &prov); err != nil {
		t.Fatal(err)
	}
	if len(prov) != 1 || prov[0].GoVersion != runtime.Version() || prov[0].Commit == "" || prov[0].GOMAXPROCS < 1 {
		t.Errorf("provenance.json: %+v", prov)
	}
	if res.Provenance == nil || res.Provenance.GoVersion != runtime.Version() {
		t.Errorf("results.json provenance: %+v", res.Provenance)
	}
	// A second Run into the same directory without Resume is refused.
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err == nil || !strings.Contains(err.Error(), "-resume") {
		t.Errorf("reusing a run directory: %v", err)
	}
}

func resultsOf(t *testing.T, res *Results) map[string]float64 {
	out := map[string]float64{}
	for _, r := range res.Runs {
		out[r.ID] = r.Value
	}
	return out
}

// interruptAt runs cfg into dir and cancels it once step of run (any run
// when run is "") has been logged: Run must return ErrInterrupted.
func interruptAt(t *testing.T, cfg Config, dir, run string, step int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := Observer{Step: func(s StepInfo) {
		if (run == "" || s.Run == run) && s.Step == step {
			cancel()
		}
	}}
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: obs}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
}

// sameCheckpoints loads the checkpoints of run in refDir and in dir and
// checks that every parameter of the first for which keep is true (every
// one when keep is nil) is the same in the second. It returns the first.
func sameCheckpoints(t *testing.T, refDir, dir, run string, keep func(name string) bool) *checkpoint {
	t.Helper()
	a, err := loadCheckpoint(filepath.Join(refDir, "runs", run, "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadCheckpoint(filepath.Join(dir, "runs", run, "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range a.Params {
		if (keep == nil || keep(name)) && !slices.Equal(v, b.Params[name]) {
			t.Errorf("%s differs after resuming", name)
		}
	}
	return a
}

func sameLosses(t *testing.T, a, b map[string]map[int]float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("runs differ: %d vs %d", len(a), len(b))
	}
	for run, steps := range a {
		if len(steps) != len(b[run]) {
			t.Fatalf("%s: %d vs %d logged steps", run, len(steps), len(b[run]))
		}
		for s, l := range steps {
			if b[run][s] != l {
				t.Fatalf("%s step %d: loss %v vs %v", run, s, l, b[run][s])
			}
		}
	}
}

// resumeSamplers makes the resume test cover every kind of sampler state:
// Uniform's permutation, BatchSampler's graph and walk position (refreshed
// every 2 steps, so a restore lands between refreshes), and the cache of
// training-time embeddings.
const resumeSamplers = `samplers=[{kind: uniform},
  {kind: batchsampler, label: bs, m: 30, k: 5, alpha: {start: 0.5, end: 0.1}, refresh_every: 2},
  {kind: batchsampler, label: bs-cached, m: 30, k: 5, alpha: 0.3, refresh_every: 2, embedding: cached},
  {kind: knn, refresh_every: 4}]`

func TestResumeEqualsUninterrupted(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, resumeSamplers)
	ref := t.TempDir()
	want, err := Run(context.Background(), cfg, Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	wantLoss := readLosses(t, ref)

	t.Run("interrupted mid-epoch (Ctrl-C)", func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		hooks := Observer{Step: func(s StepInfo) {
			if s.Run == "bs-cached-seed1" && s.Step == 5 {
				cancel()
			}
		}}
		_, err := Run(ctx, cfg, Options{OutDir: dir, Observer: hooks})
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("want ErrInterrupted, got %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "runs", "bs-cached-seed1", "checkpoint.gob")); err != nil {
			t.Fatal("no checkpoint after interrupt")
		}
		got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := resultsOf(t, got), resultsOf(t, want); !maps.Equal(g, w) {
			t.Errorf("resumed results %v, uninterrupted %v", g, w)
		}
		sameLosses(t, wantLoss, readLosses(t, dir))
		sameRuns(t, got, want)
		sameEvents(t, dir, ref, "epoch_end")
	})

	t.Run("crash after an epoch checkpoint", func(t *testing.T) {
		dir := t.TempDir()
		// Stop the second run right after its first epoch's checkpoint, then
		// make the directory look as if the process had died two steps later:
		// metrics lines past the checkpoint exist, no newer checkpoint.
		ctx, cancel := context.WithCancel(context.Background())
		var saved []byte
		ck := filepath.Join(dir, "runs", "bs-seed1", "checkpoint.gob")
		hooks := Observer{Step: func(s StepInfo) {
			if s.Run != "bs-seed1" {
				return
			}
			if s.Step == 4 { // the epoch-1 checkpoint was written at step 3
				saved, _ = os.ReadFile(ck)
			}
			if s.Step == 5 {
				cancel()
			}
		}}
		if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: hooks}); !errors.Is(err, ErrInterrupted) {
			t.Fatalf("want ErrInterrupted, got %v", err)
		}
		if len(saved) == 0 {
			t.Fatal("epoch checkpoint not found")
		}
		if err := os.WriteFile(ck, saved, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := resultsOf(t, got), resultsOf(t, want); !maps.Equal(g, w) {
			t.Errorf("resumed %v, uninterrupted %v", g, w)
		}
		sameLosses(t, wantLoss, readLosses(t, dir))
		sameRuns(t, got, want)
		sameEvents(t, dir, ref, "epoch_end")
	})
}

// TestDamagedCheckpointIsRefused overwrites eight bytes in the middle of a
// checkpoint: -resume must refuse it with a message that says what to do,
// instead of continuing from corrupted parameters, and leave it in place.
func TestDamagedCheckpointIsRefused(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "seeds=[0]")
	dir := t.TempDir()
	interruptAt(t, cfg, dir, "", 4)
	ck := filepath.Join(dir, "runs", "uniform-seed0", "checkpoint.gob")
	b, err := os.ReadFile(ck)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[len(b)/2:], "DAMAGED!")
	if err := os.WriteFile(ck, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "checkpoint.gob is damaged (checksum mismatch)") || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("resuming from a damaged checkpoint: %v", err)
	}
	if after, _ := os.ReadFile(ck); !bytes.Equal(after, b) {
		t.Error("the damaged checkpoint was changed")
	}
}

// TestObserverSeesWhereTheExperimentStands: every step reports its run's
// place among the runs, and the estimate of the time left reaches 0 at the
// last step of the last run.
func TestObserverSeesWhereTheExperimentStands(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, `samplers=[{kind: uniform}, {kind: knn, refresh_every: 2}]`)
	var seen []StepInfo
	obs := Observer{Step: func(s StepInfo) { seen = append(seen, s) }}
	if _, err := Run(context.Background(), cfg, Options{OutDir: t.TempDir(), Observer: obs}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4*9 {
		t.Fatalf("%d steps observed, want 36", len(seen))
	}
	for i, s := range seen {
		if want := i/9 + 1; s.RunIndex != want || s.Runs != 4 {
			t.Fatalf("step %d: run %d of %d, want %d of 4", i, s.RunIndex, s.Runs, want)
		}
		if s.SoFar < 0 || s.Left < 0 {
			t.Fatalf("step %d: so far %v, left %v", i, s.SoFar, s.Left)
		}
	}
	if last := seen[len(seen)-1]; last.Left != 0 {
		t.Errorf("time left at the last step: %v", last.Left)
	}
}

// TestBatchNodesLogged: graph methods log the nodes of each logged step's
// graphs as sampled (batch_nodes); with every graph of 10 nodes and full
// batches that is 10·B, for GraphCL (whose second view is augmented) and
// MVGRL alike, and metrics.csv carries the column.
func TestBatchNodesLogged(t *testing.T) {
	if testing.Short() {
		t.Skip("training runs: skipped with -short")
	}
	sets := []string{"data.synthetic.min_nodes=10", "data.synthetic.max_nodes=10", "train.epochs=1",
		"data.synthetic.graphs=96", "train.log_every=1", "seeds=[0]", "samplers=[{kind: uniform}]"} // 3 full batches an epoch
	for _, m := range []struct {
		name string
		sets []string
	}{{"graphcl", nil}, {"mvgrl", tinyMVGRL}} {
		t.Run(m.name, func(t *testing.T) {
			cfg := mustParse(t, tinySynthetic, append(slices.Clone(sets), m.sets...)...)
			dir := t.TempDir()
			if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			steps := 0
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				if rec["event"] != nil {
					continue
				}
				steps++
				if got, want := rec["batch_nodes"], float64(10*cfg.Train.BatchSize); got != want {
					t.Fatalf("step %v: batch_nodes %v, want %v", rec["step"], got, want)
				}
			}
			if steps == 0 {
				t.Fatal("no step records")
			}
			csvText, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if header, _, _ := strings.Cut(string(csvText), "\n"); !strings.Contains(header, "batch_nodes") {
				t.Errorf("metrics.csv header %q lacks batch_nodes", header)
			}
		})
	}
}

package train

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
	"codeberg.org/sbinet/npyio/npy"
)

// evalSamplers are two samplers for the evaluation tests: Uniform, and a
// BatchSampler whose state (its graph) goes into the checkpoint.
const evalSamplers = `samplers=[{kind: uniform}, {kind: batchsampler, label: bs, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`

// treeSums returns the SHA-256 of every file under dir by relative path,
// leaving out the subdirectory skip.
func treeSums(t *testing.T, dir, skip string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == skip {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = sha256.Sum256(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// asJSON is v through a JSON round trip (what results.json holds).
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameScores fails unless the runs of got have the metric, value, fold
// spread and detail of the runs of want.
func sameScores(t *testing.T, got, want []RunResult) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d runs, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.Metric != w.Metric || g.Value != w.Value || g.FoldStd != w.FoldStd || g.Steps != w.Steps {
			t.Errorf("run %s: %s %v ± %v at step %d, recorded %s %s %v ± %v at step %d", g.ID, g.Metric, g.Value, g.FoldStd, g.Steps, w.ID, w.Metric, w.Value, w.FoldStd, w.Steps)
		}
		if gd, wd := asJSON(t, g.Detail), asJSON(t, w.Detail); !reflect.DeepEqual(gd, wd) {
			t.Errorf("run %s: detail %v, recorded %v", g.ID, gd, wd)
		}
	}
}

// recordedRuns reads the runs of DIR/results.json.
func recordedRuns(t *testing.T, dir string) []RunResult {
	t.Helper()
	var res Results
	if err := readJSON(filepath.Join(dir, "results.json"), &res); err != nil {
		t.Fatal(err)
	}
	return res.Runs
}

// TestUntrainedEncoderIsEvaluated: train.epochs: 0 trains no step, and the
// protocol scores the initial encoder of each seed (the same for every
// sampler); the run directory is complete and -resume and Evaluate agree.
func TestUntrainedEncoderIsEvaluated(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "train.epochs=0", evalSamplers)
	dir := t.TempDir()
	var logs []string
	var starts [][2]int
	obs := Observer{
		Log:      func(s string) { logs = append(logs, s) },
		RunStart: func(_ string, start, total int) { starts = append(starts, [2]int{start, total}) },
		Step:     func(s StepInfo) { t.Errorf("step observed: %+v", s) },
	}
	res, err := Run(context.Background(), cfg, Options{OutDir: dir, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	for _, rr := range res.Runs {
		if rr.Steps != 0 || math.IsNaN(rr.Value) || rr.Value <= 0 || rr.FinalFNRatio != nil {
			t.Errorf("%s: %+v", rr.ID, rr)
		}
	}
	// No training step, no curve: no plots, and WritePlots says why.
	if _, err := os.Stat(filepath.Join(dir, "plots")); !os.IsNotExist(err) {
		t.Errorf("plots of an untrained run: %v", err)
	}
	if err := WritePlots(dir); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("WritePlots: %v, want ErrNothingToPlot", err)
	}
	// Same seed, same initial encoder, same folds: the samplers agree.
	if res.Runs[0].Value != res.Runs[2].Value || res.Runs[1].Value != res.Runs[3].Value {
		t.Errorf("uniform %v, %v; batchsampler %v, %v", res.Runs[0].Value, res.Runs[1].Value, res.Runs[2].Value, res.Runs[3].Value)
	}
	// And they are the protocol's score of a fresh method of the seed.
	ds, err := dataSpecs["graph"].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := methodSpecs["graphcl"].New(&cfg, ds, subSeed(1, "model"))
	if err != nil {
		t.Fatal(err)
	}
	env := EvalEnv{Cfg: &cfg, Data: ds, Method: m, Seed: 1}
	if env.Train, err = env.Embed("train", "encoder"); err != nil {
		t.Fatal(err)
	}
	sc, err := protocolSpecs["svm"].New(&cfg).Evaluate(env)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Value != res.Runs[1].Value {
		t.Errorf("uniform-seed1 %v, fresh encoder of seed 1 %v", res.Runs[1].Value, sc.Value)
	}
	for _, s := range starts {
		if s != [2]int{0, 0} {
			t.Errorf("RunStart(%d, %d)", s[0], s[1])
		}
	}
	if !slices.ContainsFunc(logs, func(s string) bool { return strings.Contains(s, "train.epochs is 0") }) {
		t.Errorf("no log line about train.epochs 0: %q", logs)
	}
	for _, f := range []string{"config.yaml", "results.json", "results.md", "metrics.csv", "runs/bs-seed0/checkpoint.gob"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	if l := readLosses(t, dir); len(l) != 0 {
		t.Errorf("step lines in metrics.jsonl: %v", l)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "No training step (train.epochs: 0)") || strings.Contains(string(md), "NaN") {
		t.Errorf("results.md:\n%s", md)
	}
	// -resume finds every run finished; with the results gone it evaluates
	// the step-0 checkpoints again, to the same values.
	for _, id := range []string{"uniform-seed0", "bs-seed1"} {
		os.Remove(filepath.Join(dir, "runs", id, "result.json"))
	}
	again, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, again.Runs, res.Runs)
	ev, err := Evaluate(context.Background(), dir, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, ev.Runs, res.Runs)
}

// TestEvaluateGivesTheRecordedScores: Evaluate restores every run from its
// checkpoint and gives exactly the scores recorded at the end of training
// (same seed, same folds), writes only its own directory, and takes eval.*
// overrides.
func TestEvaluateGivesTheRecordedScores(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, evalSamplers)
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	before := treeSums(t, dir, "evaluations")
	recorded := recordedRuns(t, dir)

	out := filepath.Join(dir, "evaluations", "a")
	var ended []string
	res, err := Evaluate(context.Background(), dir, nil, Options{OutDir: out, Observer: Observer{RunEnd: func(run string) { ended = append(ended, run) }}})
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, res.Runs, recorded)
	if want := []string{"uniform-seed0", "uniform-seed1", "bs-seed0", "bs-seed1"}; !slices.Equal(ended, want) {
		t.Errorf("RunEnd for %v, want %v", ended, want)
	}
	for _, rr := range res.Runs {
		if rr.Steps != 9 || rr.TrainSeconds <= 0 {
			t.Errorf("%s: steps %d, train seconds %v", rr.ID, rr.Steps, rr.TrainSeconds)
		}
	}
	if !maps.Equal(treeSums(t, dir, "evaluations"), before) {
		t.Error("Evaluate changed the run directory")
	}
	for _, f := range []string{"config.yaml", "results.json", "results.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	sameScores(t, recordedRuns(t, out), recorded)

	t.Run("eval overrides", func(t *testing.T) {
		res, err := Evaluate(context.Background(), dir, []string{"eval.folds=2", "eval.cs=[1]"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range res.Runs {
			d := rr.Detail.(map[string]any)
			if accs, ok := d["fold_accuracy"].([]float64); !ok || len(accs) != 2 {
				t.Errorf("%s: %d folds, want 2: %v", rr.ID, len(accs), d)
			}
		}
		if reflect.DeepEqual(asJSON(t, res.Runs[0].Detail), asJSON(t, recorded[0].Detail)) {
			t.Error("eval.folds=2 gave the recorded detail")
		}
	})

	t.Run("errors", func(t *testing.T) {
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		for _, tc := range []struct {
			name string
			ctx  context.Context
			sets []string
			out  string
			want []string
		}{
			{name: "model override", sets: []string{"model.hidden=4"}, want: []string{"-set model.hidden=4", "eval.*"}},
			{name: "select_every", sets: []string{"eval.select_every=2"}, want: []string{"eval.select_every"}},
			{name: "into the run directory", out: dir, want: []string{"is the run directory"}},
			{name: "existing results", out: out, want: []string{out, "already holds results"}},
			{name: "not a run directory", want: []string{"not a run directory", "config.yaml"}},
			{name: "interrupted", ctx: cancelled, out: filepath.Join(dir, "evaluations", "b"), want: []string{"interrupted", "nothing was written"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx, d := tc.ctx, dir
				if ctx == nil {
					ctx = context.Background()
				}
				if tc.name == "not a run directory" {
					d = t.TempDir()
				}
				_, err := Evaluate(ctx, d, tc.sets, Options{OutDir: tc.out})
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if tc.ctx != nil {
					if !errors.Is(err, ErrInterrupted) {
						t.Errorf("%v is not ErrInterrupted", err)
					}
					if _, err := os.Stat(tc.out); !os.IsNotExist(err) {
						t.Errorf("interrupted evaluation wrote %s", tc.out)
					}
				}
			})
		}
		// A run without a checkpoint has not trained.
		ck := filepath.Join(dir, "runs", "bs-seed1", "checkpoint.gob")
		if err := os.Rename(ck, ck+".away"); err != nil {
			t.Fatal(err)
		}
		defer os.Rename(ck+".away", ck)
		_, err := Evaluate(context.Background(), dir, nil, Options{})
		if err == nil || !strings.Contains(err.Error(), ck) || !strings.Contains(err.Error(), "-resume") {
			t.Errorf("missing checkpoint: %v", err)
		}
	})
}

// TestEvaluateWithModelSelection: a text run with model selection on STS
// dev reports the selected parameters; Evaluate does the same.
func TestEvaluateWithModelSelection(t *testing.T) {
	data := t.TempDir()
	writeTextFixture(t, data, 320)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + data, "data.text.vectors_cache=",
		"samplers=[{kind: uniform}]", "eval.select_every=4"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Run(context.Background(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Runs[0].Detail.(map[string]any); d["best_step"] == nil {
		t.Fatalf("no model selection: %v", d)
	}
	ev, err := Evaluate(context.Background(), dir, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, ev.Runs, recordedRuns(t, dir))

	// Embed the STS dev sentences with the bag representation.
	e, err := Embed(filepath.Join(dir, "runs", "uniform-seed0"), EmbedOptions{Split: "sts-dev.1", Repr: "bag"})
	if err != nil {
		t.Fatal(err)
	}
	if e.N != 80 || e.D != 8 || e.Labels != nil {
		t.Errorf("sts-dev.1 bag: %d×%d, labels %v", e.N, e.D, e.Labels)
	}
	if _, err := Embed(dir, EmbedOptions{Sets: []string{"data.text.corpus=[other.txt]"}}); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("another corpus: %v", err)
	}
}

// readNPY returns the shape, dtype and float64 values of a .npy file.
func readNPY(t *testing.T, path string) ([]int, string, []float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := npy.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var v []float64
	dtype := strings.Trim(r.Header.Descr.Type, "'")
	if dtype == "<f4" {
		var v32 []float32
		err = r.Read(&v32)
		for _, x := range v32 {
			v = append(v, float64(x))
		}
	} else {
		err = r.Read(&v)
	}
	if err != nil {
		t.Fatalf("%s (%+v): %v", path, r.Header, err)
	}
	return r.Header.Descr.Shape, dtype, v
}

// TestEmbedARun: Embed restores a run's encoder and gives the embeddings the
// run evaluated (export_embeddings), also of another dataset of the same
// feature dimension; a dataset that does not fit is a clear error.
func TestEmbedARun(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "export_embeddings=true")
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "runs", "uniform-seed1")
	e, err := Embed(run, EmbedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e.N != 90 || e.D != 16 || e.Run != "uniform-seed1" || e.Step != 9 || len(e.Labels) != 90 {
		t.Fatalf("embedding %d×%d of %s at step %d, %d labels", e.N, e.D, e.Run, e.Step, len(e.Labels))
	}
	out := filepath.Join(t.TempDir(), "emb.npy")
	written, err := e.WriteNPY(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{out, LabelsPath(out)}; !slices.Equal(written, want) || !strings.HasSuffix(want[1], "emb_labels.npy") {
		t.Errorf("wrote %v, want %v", written, want)
	}
	shape, dtype, got := readNPY(t, out)
	if !slices.Equal(shape, []int{90, 16}) || dtype != "<f4" {
		t.Errorf("shape %v, dtype %s", shape, dtype)
	}
	// The run's exported evaluation embeddings, bit for bit.
	_, _, exported := readNPY(t, filepath.Join(dir, "embeddings", "uniform-seed1_embeddings.npy"))
	if !slices.Equal(got, exported) {
		t.Error("embeddings differ from the run's exported ones")
	}
	var labels, exportedLabels []int64
	for p, dst := range map[string]*[]int64{LabelsPath(out): &labels, filepath.Join(dir, "embeddings", "uniform-seed1_labels.npy"): &exportedLabels} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := npyio.Read(f, dst); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if len(labels) != 90 || !slices.Equal(labels, exportedLabels) {
		t.Errorf("labels %v, exported %v", labels, exportedLabels)
	}

	proj, err := Embed(run, EmbedOptions{Repr: "projection"})
	if err != nil {
		t.Fatal(err)
	}
	if proj.N != 90 || proj.D == 0 || slices.Equal(proj.Data, e.Data) {
		t.Errorf("projection %d×%d", proj.N, proj.D)
	}
	// Another dataset of the same modality and feature dimension.
	other, err := Embed(run, EmbedOptions{Sets: []string{"data.synthetic.graphs=40", "data.synthetic.seed=7", "data.name=other"}})
	if err != nil {
		t.Fatal(err)
	}
	if other.N != 40 || other.D != 16 || other.Dataset != "other" || len(other.Labels) != 40 {
		t.Errorf("other dataset: %d×%d %s, %d labels", other.N, other.D, other.Dataset, len(other.Labels))
	}

	for _, tc := range []struct {
		name string
		path string
		opt  EmbedOptions
		want []string
	}{
		{"feature dimension", run, EmbedOptions{Sets: []string{"data.synthetic.node_labels=5"}},
			[]string{"does not fit the encoder", "checkpoint.gob", "gin.0.mlp.0.weight", "input dimension 5, trained on 2", "node features"}},
		{"split", run, EmbedOptions{Split: "test"}, []string{`split "test"`, "train"}},
		{"representation", run, EmbedOptions{Repr: "bag"}, []string{`"bag"`, "encoder, projection"}},
		{"model override", run, EmbedOptions{Sets: []string{"model.hidden=4"}}, []string{"-set model.hidden=4", "data.*"}},
		{"experiment of several runs", dir, EmbedOptions{}, []string{"holds 2 runs", "uniform-seed0"}},
		{"unknown run", filepath.Join(dir, "runs", "knn-seed0"), EmbedOptions{}, []string{"knn-seed0 is not a run", "uniform-seed0, uniform-seed1"}},
		{"not a run directory", t.TempDir(), EmbedOptions{}, []string{"not a run directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Embed(tc.path, tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	// A single run's experiment directory names its run; a run without a
	// checkpoint is an error naming the file.
	single := t.TempDir()
	if _, err := Run(context.Background(), mustParse(t, tinySynthetic, "seeds=[3]", "train.epochs=1"), Options{OutDir: single}); err != nil {
		t.Fatal(err)
	}
	if e, err := Embed(single, EmbedOptions{}); err != nil || e.Run != "uniform-seed3" {
		t.Fatalf("single run: %v", err)
	}
	ck := filepath.Join(single, "runs", "uniform-seed3", "checkpoint.gob")
	os.Remove(ck)
	if _, err := Embed(single, EmbedOptions{}); err == nil || !strings.Contains(err.Error(), ck) {
		t.Errorf("missing checkpoint: %v", err)
	}
}

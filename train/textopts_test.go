package train

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

func TestTextOptionsErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct{ yaml, key string }{
		{"modality: text\ntext: {weighting: tfidf}\n", "text.weighting"},
		{"modality: text\ntext: {sif_a: 0.01}\n", "text.sif_a"}, // without weighting sif
		{"modality: text\ntext: {weighting: sif, sif_a: -1}\n", "text.sif_a"},
		{"modality: text\ntext: {remove_pc: 301}\n", "text.remove_pc"},
		{"modality: text\ntext: {word_dropout: 1}\n", "text.word_dropout"},
		{"modality: text\ntext: {input_dropout: -0.1}\n", "text.input_dropout"},
		{"modality: text\ntext: {table_optimizer: sgd}\n", "text.table_optimizer"},
		{"modality: text\nmodel: {train_embeddings: false}\ntext: {table_optimizer: sparse}\n", "text.table_optimizer"},
		{"modality: text\ntext: {table_lr: 0.01}\n", "text.table_lr"}, // without an own table optimiser
		{"modality: text\ntext: {eval_repr: cls}\n", "text.eval_repr"},
		{"modality: text\neval: {select_every: -1}\n", "eval.select_every"},
		{"modality: text\ntext: {residual: true}\n", "text.residual"}, // hidden 512 ≠ dim 300
		{"modality: text\ntext: {word_dropuot: 0.1}\n", "text.word_dropuot"},
		{tinySynthetic + "text: {word_dropout: 0.1}\n", "text (line 12): only for modality text"},
	} {
		_, err := ParseConfig([]byte(tc.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
	ok := "modality: text\nmodel: {hidden: 300}\ntext: {weighting: sif, sif_a: 0.0001, remove_pc: 2, residual: true, word_dropout: 0.3, input_dropout: 0.1, table_optimizer: sparse, table_lr: 0.0005, eval_repr: bag}\neval: {select_every: 250}\n"
	c, err := ParseConfig([]byte(ok), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := TextOptions{Weighting: "sif", SIFA: 1e-4, RemovePC: 2, Residual: true, WordDropout: 0.3, InputDropout: 0.1, TableOptimizer: "sparse", TableLR: 5e-4, EvalRepr: "bag"}
	if c.Text != want || c.Eval.SelectEvery != 250 {
		t.Errorf("decoded %+v, want %+v", c.Text, want)
	}
}

// tinyTextOptions are the options of the tuned config on the tiny fixture
// (residual needs model.hidden = data.text.dim = 8).
var tinyTextOptions = []string{
	"model.hidden=8", "text.weighting=sif", "text.remove_pc=1", "text.residual=true",
	"text.word_dropout=0.3", "text.table_optimizer=sparse", "eval.select_every=3",
}

// TestTextDevSelectionAndSparseTable runs the tiny fixture with every text
// option: dev is scored every 3 steps and at the last step, the reported
// score is that of the best dev step, Evaluate leaves the model as it was,
// and the table is stepped by the sparse optimiser (only rows of words
// that occur in the corpus move).
func TestTextDevSelectionAndSparseTable(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 320)
	sets := append([]string{"data.root=" + dir, "data.text.vectors_cache=", "samplers=[{kind: uniform}]"}, tinyTextOptions...)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), sets)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	res, err := Run(context.Background(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	rr := res.Runs[0]
	d := rr.Detail.(map[string]any)
	// The dev curve in metrics.jsonl: steps 3, 6, …, 18 and the last (20).
	f, err := os.Open(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []int
	bestDev, bestStep := -1000.0, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] != "dev_eval" {
			continue
		}
		step, dev := int(m["step"].(float64)), m["dev"].(float64)
		steps = append(steps, step)
		if dev > bestDev {
			bestDev, bestStep = dev, step
		}
		if m["best_dev"].(float64) != bestDev || int(m["best_step"].(float64)) != bestStep || m["run"] != rr.ID {
			t.Errorf("dev record %v: running best %v at step %d", m, bestDev, bestStep)
		}
	}
	if want := []int{3, 6, 9, 12, 15, 18, 20}; !slices.Equal(steps, want) {
		t.Errorf("dev evaluated at steps %v, want %v", steps, want)
	}
	if d["dev"] != bestDev || int(d["best_step"].(int)) != bestStep {
		t.Errorf("reported dev %v at step %v, want the best of the curve %v at step %d", d["dev"], d["best_step"], bestDev, bestStep)
	}
	if d["test"] != rr.Value {
		t.Errorf("detail test %v, result %v", d["test"], rr.Value)
	}
	for _, k := range []string{"baseline_bag_dev", "baseline_bag_test", "baseline_tfidf_vocab_test", "dev_untrained", "test_final"} {
		if v, ok := d[k].(float64); !ok || !(v > -100 && v <= 100) {
			t.Errorf("detail %s = %v", k, d[k])
		}
	}
	// A residual encoder starts as its bag.
	if d["baseline_bag_test"] != d["test_untrained"] {
		t.Errorf("untrained residual encoder %v, bag baseline %v: want equal", d["test_untrained"], d["baseline_bag_test"])
	}
}

// TestTextSparseTableStep checks the modality's own table optimiser: the
// loop sees the table as a buffer, Step returns gradients for the MLP only,
// and AfterStep moves exactly the rows of the batch's words.
func TestTextSparseTableStep(t *testing.T) {
	cfg, ds := tinyTextData(t, 120, tinyTextOptions...)
	mod, err := newSimCSE(&cfg, ds, 7)
	if err != nil {
		t.Fatal(err)
	}
	tm := mod.(*simCSE)
	trainable, names := 0, map[string]bool{}
	for _, p := range mod.Params() {
		names[p.Name] = true
		if p.Trainable {
			trainable++
		}
	}
	if trainable != 8 || !names["embedding.weight"] || !names["embedding.weight.adam_m"] || !names["embedding.weight.adam_step"] {
		t.Fatalf("params: %d trainable, names %v; want 8 (the MLP and head) and the table with its optimiser state", trainable, names)
	}
	idx := []int{0, 5, 9}
	res, err := mod.Step(idx, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grads) != 8 {
		t.Fatalf("%d gradients, want 8", len(res.Grads))
	}
	table := tm.m.Params()[0].Value.Float32s()
	before := slices.Clone(table)
	rows := slices.Clone(tm.pendingRows)
	if len(rows) == 0 {
		t.Fatal("no table rows pending after Step")
	}
	if _, err := tm.AfterStep(1, 10); err != nil {
		t.Fatal(err)
	}
	dim := tm.m.Config().EmbDim
	for r := 0; r < len(table)/dim; r++ {
		moved := !slices.Equal(table[r*dim:(r+1)*dim], before[r*dim:(r+1)*dim])
		if moved != slices.Contains(rows, int32(r)) {
			t.Errorf("row %d moved=%v, in the batch's rows %v", r, moved, rows)
		}
	}
	// The moved rows are exactly the known words of the step's views.
	td := ds.(*textDataset)
	seen := map[int32]bool{}
	for _, j := range idx {
		for _, id := range td.tokens[j] {
			seen[id] = true
		}
	}
	for _, r := range rows {
		if !seen[r] || r == model.UnkID {
			t.Errorf("row %d updated but not a known word of the batch", r)
		}
	}
}

// TestTextWeightedBaselines checks the weighted bag baseline against an
// independent computation from the word vectors.
func TestTextWeightedBaselines(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 200)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + dir, "data.text.vectors_cache=", "text.weighting=sif"})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := loadText(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	td := ds.(*textDataset)
	w, err := wordvec.SIFWeights(td.vecs.Vocab, wordvec.DefaultSIFA)
	if err != nil {
		t.Fatal(err)
	}
	d := td.vecs.Dim
	embed := func(batch [][]int32) ([]float32, error) {
		out := make([]float32, len(batch)*d)
		for i, s := range batch {
			var tot float64
			acc := make([]float64, d)
			for _, id := range s {
				if id == model.UnkID {
					continue
				}
				tot += float64(w[id])
				for j, x := range td.vecs.Row(id) {
					acc[j] += float64(w[id]) * float64(x)
				}
			}
			for j := range acc {
				if tot > 0 {
					out[i*d+j] = float32(acc[j] / tot)
				}
			}
		}
		return out, nil
	}
	want, err := stsOf(embed, td.test, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := td.baselines["bag_test"]; got < want-1e-6 || got > want+1e-6 {
		t.Errorf("bag baseline %v, independent %v", got, want)
	}
	if _, ok := td.baselines["tfidf_vocab_test"]; !ok {
		t.Error("no in-vocabulary TF-IDF baseline")
	}
}

// TestTextResumeKeepsDevSelection interrupts a run with dev selection after
// its best dev step and resumes it: the dev-selected parameters are in the
// checkpoint, so the resumed run reports what the uninterrupted one does.
func TestTextResumeKeepsDevSelection(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 320)
	sets := append([]string{"data.root=" + dir, "data.text.vectors_cache=", "samplers=[{kind: uniform}]"}, tinyTextOptions...)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), sets)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Run(context.Background(), cfg, Options{OutDir: filepath.Join(dir, "ref")})
	if err != nil {
		t.Fatal(err)
	}
	wd := want.Runs[0].Detail.(map[string]any)
	for _, stop := range []int{7, 13} {
		out := filepath.Join(dir, fmt.Sprintf("stop%d", stop))
		ctx, cancel := context.WithCancel(context.Background())
		hooks := Observer{Step: func(s StepInfo) {
			if s.Step == stop {
				cancel()
			}
		}}
		if _, err := Run(ctx, cfg, Options{OutDir: out, Observer: hooks}); !errors.Is(err, ErrInterrupted) {
			t.Fatalf("stop at %d: want ErrInterrupted, got %v", stop, err)
		}
		got, err := Run(context.Background(), cfg, Options{OutDir: out, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		gd := got.Runs[0].Detail.(map[string]any)
		if got.Runs[0].Value != want.Runs[0].Value || gd["best_step"] != wd["best_step"] || gd["dev"] != wd["dev"] {
			t.Errorf("stop at %d: resumed test %v (best step %v, dev %v), uninterrupted %v (best step %v, dev %v)",
				stop, got.Runs[0].Value, gd["best_step"], gd["dev"], want.Runs[0].Value, wd["best_step"], wd["dev"])
		}
	}
}

package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/eval"
)

// smallestClass returns the smallest class of a dataset's labels and its size.
func smallestClass(t *testing.T, ds Dataset) (label, count int) {
	t.Helper()
	c := map[int]int{}
	for _, y := range ds.Labels() {
		c[y]++
	}
	label, count = 0, -1
	for y, k := range c {
		if count < 0 || k < count || k == count && y < label {
			label, count = y, k
		}
	}
	return label, count
}

// A batch size larger than the dataset fails in Run before anything is
// written or trained, naming train.batch_size and N.
func TestCheckDataBatchSizeLargerThanDataset(t *testing.T) {
	for _, b := range []string{"600", "91"} {
		dir := t.TempDir()
		cfg := mustParse(t, tinySynthetic, "train.batch_size="+b)
		_, err := Run(context.Background(), cfg, Options{OutDir: dir})
		if err == nil {
			t.Fatalf("batch size %s for 90 graphs accepted", b)
		}
		for _, want := range []string{"train.batch_size", b + " is larger than the dataset", "N = 90"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
			t.Error("the run directory was made before the check")
		}
	}
	// B = N is allowed (one batch an epoch).
	cfg := mustParse(t, tinySynthetic, "train.batch_size=90")
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkData(&cfg, ds); err != nil {
		t.Errorf("B = N rejected: %v", err)
	}
	cfg.Train.BatchSize = 1
	if err := checkData(&cfg, ds); err == nil || !strings.Contains(err.Error(), "train.batch_size: must be at least 2") {
		t.Errorf("B = 1: %v", err)
	}
}

// More folds than the smallest class has instances fail at once (before
// training, not after it), naming eval.folds, the class and its size; the
// inner folds likewise against the smallest class's share of an outer
// training part. The limits are exact: SVMCrossValidate succeeds at them and
// fails one above.
func TestCheckDataFolds(t *testing.T) {
	cfg := mustParse(t, tinySynthetic)
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	small, m := smallestClass(t, ds)
	t.Logf("smallest class %d has %d of %d graphs", small, m, ds.NumInstances())
	labels := ds.Labels()
	x := make([]float32, len(labels)*3)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	svm := func(folds, inner int, cs []float64) error {
		_, err := eval.SVMCrossValidate(x, len(labels), 3, labels, eval.SVMOptions{Folds: folds, InnerFolds: inner, Cs: cs, Seed: 1, Workers: 1})
		return err
	}
	check := func(folds, inner int, cs []float64) error {
		c := cfg
		c.Eval.Folds, c.Eval.InnerFolds, c.Eval.Cs = folds, inner, cs
		return checkData(&c, ds)
	}
	twoCs := []float64{0.1, 10}

	// outer folds
	if err := check(m, 2, twoCs); err != nil {
		t.Errorf("eval.folds = %d (the smallest class's size) rejected: %v", m, err)
	}
	err = check(m+1, 2, twoCs)
	for _, want := range []string{"eval.folds", fmt.Sprintf("smallest class, %d, has %d", small, m)} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("eval.folds = %d: error %v does not say %q", m+1, err, want)
		}
	}
	if svm(m+1, 2, twoCs) == nil {
		t.Errorf("SVMCrossValidate accepts %d folds: the check is stricter than needed", m+1)
	}

	// inner folds, with 3 outer folds
	left := m - (m+2)/3
	if err := check(3, left, twoCs); err != nil {
		t.Errorf("eval.inner_folds = %d rejected: %v", left, err)
	}
	if err := svm(3, left, twoCs); err != nil {
		t.Errorf("SVMCrossValidate fails with inner_folds = %d, which the check accepts: %v", left, err)
	}
	err = check(3, left+1, twoCs)
	for _, want := range []string{"eval.inner_folds", fmt.Sprintf("smallest class, %d (%d instances), keeps only %d", small, m, left)} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("eval.inner_folds = %d: error %v does not say %q", left+1, err, want)
		}
	}
	if svm(3, left+1, twoCs) == nil {
		t.Errorf("SVMCrossValidate accepts inner_folds = %d: the check is stricter than needed", left+1)
	}
	// With a single C there is no inner search.
	if err := check(3, left+1, []float64{1}); err != nil {
		t.Errorf("inner folds checked without an inner search: %v", err)
	}

	// And Run stops before training.
	dir := t.TempDir()
	_, err = Run(context.Background(), mustParse(t, tinySynthetic, fmt.Sprintf("eval.folds=%d", m+1)), Options{OutDir: dir})
	if err == nil || !strings.Contains(err.Error(), "eval.folds") {
		t.Errorf("Run with eval.folds = %d: %v", m+1, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); err == nil {
		t.Error("Run made the run directory before the check")
	}
}

// With N mod B = 1 (90 graphs, B = 89) every sampler runs to the end: an
// epoch is one batch of all 90 graphs (the leftover one merged into it)
// instead of a batch of 89 and a batch of one that the loss rejects.
func TestShortLastBatchRunsEndToEnd(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "train.batch_size=89", "train.epochs=2", "seeds=[0]",
		"samplers=[{kind: uniform}, {kind: knn, refresh_every: 1}, {kind: batchsampler, m: 30, k: 5, alpha: 0.3, refresh_every: 1}]")
	res, err := Run(context.Background(), cfg, Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs, want 3", len(res.Runs))
	}
	for _, r := range res.Runs {
		if r.Steps != 2 {
			t.Errorf("%s: %d steps, want 2 epochs × ⌊90/89⌋ = 2", r.ID, r.Steps)
		}
		if math.IsNaN(r.Value) || r.Value <= 0 || r.Value > 100 {
			t.Errorf("%s: result %v", r.ID, r.Value)
		}
	}
}

// A dataset whose labels hold a single class is refused before step 1 by
// every protocol that scores a classifier of the classes (svm, knn,
// linear_probe), naming the data, the class count and what is needed;
// before, it trained fully and failed in the evaluation.
func TestCheckDataSingleClass(t *testing.T) {
	toy := t.TempDir()
	copyTU(t, filepath.Join("..", "data", "testdata", "tu", "TOY"), filepath.Join(toy, "tu", "TOY"))
	labels := filepath.Join(toy, "tu", "TOY", "TOY_graph_labels.txt")
	if err := os.WriteFile(labels, []byte("5\n5\n5\n5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  string
		sets []string
		want []string
	}{
		{"graph svm, generated", tinySynthetic, []string{"data.synthetic.classes=1"}, []string{"data.synthetic.classes = 1", "eval.kind svm"}},
		{"graph svm, TU file", minimalTU, []string{"data.root=" + toy, "data.name=TOY", "data.path=tu/TOY", "train.batch_size=2", "eval.folds=2", "eval.inner_folds=2"},
			[]string{labels, "eval.kind svm"}},
		{"image linear_probe", tinyImages, []string{"data.image.classes=1"}, []string{"data.image.classes = 1", "eval.kind linear_probe"}},
		{"image knn", tinyImages, []string{"data.image.classes=1", "eval.kind=knn"}, []string{"data.image.classes = 1", "eval.kind knn"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tc.cfg, tc.sets...)
			dir := filepath.Join(t.TempDir(), "run")
			_, err := Run(context.Background(), cfg, Options{OutDir: dir})
			if err == nil {
				t.Fatal("a single-class dataset was accepted")
			}
			for _, want := range append(tc.want, "1 class", "at least 2 classes") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "metrics.jsonl")); err == nil {
				t.Error("training started")
			}
		})
	}
	// sts reads no classes: a text config is not concerned (its dataset has
	// no labels), and a two-class graph dataset passes.
	cfg := mustParse(t, tinySynthetic, "data.synthetic.classes=2")
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkData(&cfg, ds); err != nil {
		t.Errorf("two classes refused: %v", err)
	}
}

// copyTU copies the files of a TU dataset directory.
func copyTU(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

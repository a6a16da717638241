package train

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// textTopics are the generated corpus's topics: a sentence mixes words of
// one topic with shared function words, so PPMI-SVD vectors separate the
// topics and an STS pair of one topic is "similar".
var textTopics = [][]string{
	{"cat", "dog", "horse", "cow", "sheep", "goat", "pig", "hen"},
	{"car", "bus", "train", "truck", "bike", "tram", "plane", "ship"},
	{"apple", "pear", "plum", "grape", "melon", "lemon", "peach", "cherry"},
	{"rain", "snow", "wind", "storm", "cloud", "fog", "hail", "frost"},
}

var textFunction = []string{"the", "a", "is", "and", "with", "near", "of"}

func textSentence(r *rand.Rand, topic int) string {
	n := 4 + r.IntN(5)
	w := make([]string, n)
	for i := range w {
		if r.IntN(3) == 0 {
			w[i] = textFunction[r.IntN(len(textFunction))]
		} else {
			w[i] = textTopics[topic][r.IntN(len(textTopics[topic]))]
		}
	}
	return strings.Join(w, " ") + "."
}

// tinyTextData writes the text fixture of the given number of sentences
// into a temporary data root and returns testdata/text-tiny.yaml on it
// (vectors not cached, sets applied after) and its loaded dataset.
func tinyTextData(t *testing.T, sentences int, sets ...string) (Config, Dataset) {
	t.Helper()
	dir := t.TempDir()
	writeTextFixture(t, dir, sentences)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), append([]string{"data.root=" + dir, "data.text.vectors_cache="}, sets...))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := loadText(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, ds
}

// writeTextFixture writes corpus.txt, sts-dev.csv and sts-test.csv into dir.
func writeTextFixture(t *testing.T, dir string, sentences int) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for i := range sentences {
		b.WriteString(textSentence(r, i%len(textTopics)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sts-dev.csv", "sts-test.csv"} {
		var s strings.Builder
		for i := range 80 {
			t1 := r.IntN(len(textTopics))
			t2, score := t1, 4+r.Float64()
			if i%2 == 1 {
				t2, score = (t1+1+r.IntN(len(textTopics)-1))%len(textTopics), r.Float64()
			}
			fmt.Fprintf(&s, "main-captions\tgen\t2026\t%04d\t%.3f\t%s\t%s\n", i, score, textSentence(r, t1), textSentence(r, t2))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTextRunEndToEnd(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 320)
	cache := filepath.Join(dir, "cache")
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + dir, "data.text.vectors_cache=" + cache})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	res, err := Run(context.Background(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs, want 3 (uniform, knn, batchsampler)", len(res.Runs))
	}
	for _, rr := range res.Runs {
		t.Logf("%s: STS test Spearman %.2f, detail %v", rr.ID, rr.Value, rr.Detail)
		if rr.Metric != "sts_test_spearman" {
			t.Errorf("%s: metric %q", rr.ID, rr.Metric)
		}
		// The topics are separable by the corpus's own word vectors, so a
		// working encoder and a correctly aligned evaluation rank the
		// same-topic pairs above the others.
		if !(rr.Value > 50 && rr.Value <= 100) {
			t.Errorf("%s: STS test Spearman %v, want in (50, 100]", rr.ID, rr.Value)
		}
		d, ok := rr.Detail.(map[string]any)
		if !ok || d["dev"] == nil || d["test"] != rr.Value {
			t.Errorf("%s: detail %v", rr.ID, rr.Detail)
		}
		for _, k := range []string{"baseline_avg_wordvec_dev", "baseline_avg_wordvec_test", "baseline_tfidf_dev", "baseline_tfidf_test"} {
			if v, ok := d[k].(float64); !ok || !(v > -100 && v <= 100) {
				t.Errorf("%s: detail %s = %v", rr.ID, k, d[k])
			}
		}
		if rr.FinalFNRatio != nil {
			t.Errorf("%s: false-negative ratio without labels", rr.ID)
		}
		if rr.Steps != 2*10 {
			t.Errorf("%s: %d steps, want 2 epochs × 10", rr.ID, rr.Steps)
		}
	}
	losses := readLosses(t, out)
	for run, ls := range losses {
		for step, l := range ls {
			if math.IsNaN(l) || l <= 0 {
				t.Errorf("%s step %d: loss %v", run, step, l)
			}
		}
	}
	// The word vectors were cached; a second Load reuses them.
	files, _ := filepath.Glob(filepath.Join(cache, "wordvec-*.bin"))
	if len(files) != 1 {
		t.Fatalf("vectors cache holds %v, want one file", files)
	}
	ds1, err := loadText(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	td := ds1.(*textDataset)
	if !td.cached || td.vectorsPath != files[0] {
		t.Errorf("second load: cached=%v path %s, want the cache file %s", td.cached, td.vectorsPath, files[0])
	}
	cfg2 := cfg
	cfg2.Data.Text.VectorsCache = ""
	ds2, err := loadText(&cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ds2.(*textDataset).vecs.Data, td.vecs.Data) {
		t.Error("cached vectors differ from freshly built ones")
	}
	// A different window is a different cache entry.
	cfg3 := cfg
	cfg3.Data.Text.Window = 2
	ds3, err := loadText(&cfg3)
	if err != nil {
		t.Fatal(err)
	}
	if ds3.(*textDataset).cached {
		t.Error("a different window reused the cache")
	}
}

func TestTextStepDeterministic(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 120)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + dir, "data.text.vectors_cache="})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := loadText(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	step := func(seed uint64) StepResult {
		m, err := newSimCSE(&cfg, ds, 7)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Step([]int{0, 5, 9, 17, 30, 44}, rand.New(rand.NewPCG(seed, 0)))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Grads) != 9 || res.ProjDim != 8 || len(res.Proj) != 6*8 {
			t.Fatalf("step: %d grads, proj %d×%d", len(res.Grads), len(res.Proj)/max(res.ProjDim, 1), res.ProjDim)
		}
		return res
	}
	a, b, c := step(1), step(1), step(2)
	if a.Loss != b.Loss || !slices.Equal(a.Grads[1], b.Grads[1]) {
		t.Error("the same rng seed gave different steps")
	}
	if a.Loss == c.Loss {
		t.Error("different dropout seeds gave the same loss")
	}
}

func TestTextConfigDefaultsAndErrors(t *testing.T) {
	c := mustParse(t, "modality: text\n")
	if c.Loss.Form != "simcse" || c.Loss.Temperature != 0.05 || c.Model.Kind != "mlp" || c.Eval.Kind != "sts" ||
		c.Data.Source != "corpus" || c.Train.BatchSize != 64 || c.Model.Dropout != 0.1 || len(c.Data.Text.Corpus) != 2 {
		t.Errorf("text defaults: %+v", c)
	}
	// The graph defaults are unchanged.
	g := mustParse(t, tinySynthetic)
	if g.Loss.Temperature != 0.2 || g.Model.Kind != "gin" || g.Eval.Kind != "svm" {
		t.Errorf("graph defaults changed: %+v", g)
	}
	for _, tc := range []struct{ yaml, key string }{
		{"modality: text\nmodel: {kind: gin}\n", "model.kind"},
		{"modality: text\ndata: {source: tu}\n", "data.source"},
		{"modality: text\ndata: {text: {dim: 0}}\n", "data.text.dim"},
		{"modality: text\ndata: {text: {corpus: []}}\n", "data.text.corpus"},
		{"modality: text\ndata: {text: {max_sentences: -1}}\n", "data.text.max_sentences"},
		{"modality: text\nmodel: {dropout: 1}\n", "model.dropout"},
		{"modality: text\neval: {kind: svm}\n", "eval.kind"},
		{"modality: text\ndata: {text: {windw: 3}}\n", "data.text.windw"},
	} {
		_, err := ParseConfig([]byte(tc.yaml), nil)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%q: error %v, want one naming %s", tc.yaml, err, tc.key)
		}
	}
}

func TestTextLoadErrorsNameTheKey(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 60)
	for _, tc := range []struct {
		set []string
		key string
	}{
		{[]string{"data.text.corpus=[missing.txt]"}, "data.text.corpus[0]"},
		{[]string{"data.text.sts_dir=nowhere"}, "data.text.sts_dir"},
		{[]string{"data.text.dim=500"}, "word vectors"},
	} {
		cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), append([]string{"data.root=" + dir, "data.text.vectors_cache="}, tc.set...))
		if err != nil {
			t.Fatal(err)
		}
		_, err = loadText(&cfg)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%v: error %v, want one naming %s", tc.set, err, tc.key)
		}
	}
}

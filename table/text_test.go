package table

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/train"
)

func ExamplePaperText() {
	for _, smp := range Samplers {
		r, _ := PaperText(BackboneBERT, BlockSimCSE, smp, "STS-B")
		avg, _ := PaperText(BackboneBERT, BlockSimCSE, smp, TextAvg)
		fmt.Printf("%-12s STS-B %s  Avg. %s\n", smp, r, avg)
	}
	// Output:
	// uniform      STS-B 77.79  Avg. 75.60
	// knn          STS-B 74.73  Avg. 72.31
	// batchsampler STS-B 77.54  Avg. 76.69
}

// TestPaperTextParses: every row of both of the paper's text tables has
// the seven tasks and the average, all numbers; each printed average is
// the mean of its row to the printed precision, except HCL-RoBERTa's
// (75.49 printed, 75.476 computed: the paper's own slip, kept as printed).
func TestPaperTextParses(t *testing.T) {
	for _, bb := range []string{BackboneBERT, BackboneRoBERTa} {
		if len(paperTextRows[bb]) != len(TextBlocks) {
			t.Errorf("%s: %d blocks, want %d", bb, len(paperTextRows[bb]), len(TextBlocks))
		}
		for _, blk := range TextBlocks {
			for _, smp := range Samplers {
				var sum float64
				for _, task := range TextTasks {
					r, ok := PaperText(bb, blk, smp, task)
					if !ok || r.Std >= 0 || r.Mean < 50 || r.Mean > 90 {
						t.Errorf("%s/%s/%s/%s: %v %v", bb, blk, smp, task, r, ok)
					}
					sum += r.Mean
				}
				avg, ok := PaperText(bb, blk, smp, TextAvg)
				tol := 0.006
				if bb == BackboneRoBERTa && blk == BlockHCL && smp == "uniform" {
					tol = 0.015
				}
				if !ok || math.Abs(avg.Mean-sum/7) > tol {
					t.Errorf("%s/%s/%s: Avg. %v, mean of the row %.3f", bb, blk, smp, avg.Mean, sum/7)
				}
				if n := len(strings.Fields(paperTextRows[bb][blk][smp])); n != len(TextTasks)+1 {
					t.Errorf("%s/%s/%s: %d cells, want %d", bb, blk, smp, n, len(TextTasks)+1)
				}
			}
		}
	}
	for _, tt := range []struct {
		bb, blk, smp, col string
		want              string // "" = none
	}{
		{BackboneBERT, BlockSimCSE, "uniform", "STS12", "68.62"},
		{BackboneBERT, BlockDCL, "knn", "STS14", "72.60"},
		{BackboneBERT, BlockHCL, "batchsampler", "SICK-R", "70.89"},
		{BackboneBERT, BlockHCL, "batchsampler", TextAvg, "75.16"},
		{BackboneRoBERTa, BlockDCL, "knn", "SICK-R", "64.39"},
		{BackboneRoBERTa, BlockSimCSE, "batchsampler", "STS-B", "80.77"},
		{BackboneBERT, BlockSimCSE, "uniform", "MR", ""},
		{BackboneBERT, BlockGraphCL, "uniform", "STS12", ""},
		{BackboneBERT, BlockSimCSE, "random", "STS12", ""},
		{"gpt", BlockSimCSE, "uniform", "STS12", ""},
	} {
		r, ok := PaperText(tt.bb, tt.blk, tt.smp, tt.col)
		if tt.want == "" {
			if ok {
				t.Errorf("%v: got %v, want none", tt, r)
			}
		} else if !ok || r.String() != tt.want {
			t.Errorf("%v: got %v (%v), want %s", tt, r, ok, tt.want)
		}
	}
}

// TestTextConfigsAreShipped: each cell's config is the shipped config as
// it is (so its Uniform and BatchSampler rows are the recorded runs'),
// with the paper's text sampler settings.
func TestTextConfigsAreShipped(t *testing.T) {
	for _, blk := range TextBlocks {
		got, err := TextConfig(blk, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := train.LoadConfig(filepath.Join("..", "configs", TextConfigFiles[blk]), nil)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := train.WriteConfig(&a, &got); err != nil {
			t.Fatal(err)
		}
		if err := train.WriteConfig(&b, &want); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("%s differs from configs/%s:\n%s\nvs\n%s", blk, TextConfigFiles[blk], a.String(), b.String())
		}
		var kinds []string
		for _, s := range got.SamplerList() {
			kinds = append(kinds, s.DisplayName())
			if s.Kind != "uniform" && s.RefreshEvery != 0 {
				t.Errorf("%s/%s: refresh_every %d, want 0 (graph built once)", blk, s.Kind, s.RefreshEvery)
			}
			if s.Kind == "batchsampler" && (s.M != 1000 || s.K != 500 || !s.Alpha.Constant || s.Alpha.Start != 0.7) {
				t.Errorf("%s: BatchSampler %+v, want M 1000, K 500, α 0.7", blk, s)
			}
		}
		if !reflect.DeepEqual(kinds, Samplers) || len(got.Seeds) != 3 {
			t.Errorf("%s: samplers %v, %d seeds", blk, kinds, len(got.Seeds))
		}
	}
	if c, err := TextConfig(BlockDCL, "/data/x y", []string{"train.epochs=2"}); err != nil || c.Data.Root != "/data/x y" || c.Train.Epochs != 2 || c.Loss.Kind != "dcl" {
		t.Errorf("root and sets: root %q epochs %d loss %q: %v", c.Data.Root, c.Train.Epochs, c.Loss.Kind, err)
	}
	if _, err := TextConfig("mvgrl", "", nil); err == nil || !strings.Contains(err.Error(), "simcse, dcl, hcl") {
		t.Errorf("unknown block: %v", err)
	}
	if _, err := TextConfig(BlockHCL, "", []string{"train.bogus=1"}); err == nil || !strings.Contains(err.Error(), "configs/simcse-stsb-hcl.yaml") || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("bad override: %v", err)
	}
}

// textTopics are the generated corpus's topics: PPMI-SVD vectors of the
// corpus separate them, and an STS pair of one topic is "similar".
var textTopics = [][]string{
	{"cat", "dog", "horse", "cow", "sheep", "goat", "pig", "hen"},
	{"car", "bus", "train", "truck", "bike", "tram", "plane", "ship"},
	{"apple", "pear", "plum", "grape", "melon", "lemon", "peach", "cherry"},
	{"rain", "snow", "wind", "storm", "cloud", "fog", "hail", "frost"},
}

func textSentence(r *rand.Rand, topic int) string {
	fn := []string{"the", "a", "is", "and", "with", "near", "of"}
	w := make([]string, 4+r.IntN(5))
	for i := range w {
		if r.IntN(3) == 0 {
			w[i] = fn[r.IntN(len(fn))]
		} else {
			w[i] = textTopics[topic][r.IntN(len(textTopics[topic]))]
		}
	}
	return strings.Join(w, " ") + "."
}

// textPair is a generated STS pair: same topic with a high score, or two
// topics with a low one.
func textPair(r *rand.Rand) (s1, s2 string, score float64) {
	t1 := r.IntN(len(textTopics))
	t2, score := t1, 4+r.Float64()
	if r.IntN(2) == 1 {
		t2, score = (t1+1+r.IntN(len(textTopics)-1))%len(textTopics), r.Float64()
	}
	return textSentence(r, t1), textSentence(r, t2), score
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// textRoot makes a data root in the layout configs/simcse-stsb.yaml reads
// (text/gutenberg_sentences.txt and text/wiki_sentences.txt, sts/sts-dev.csv
// and sts-test.csv), generated, with the SentEval STS years named in years
// under senteval/.
func textRoot(t *testing.T, years ...string) string {
	t.Helper()
	root := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for _, f := range []string{"gutenberg_sentences.txt", "wiki_sentences.txt"} {
		var b strings.Builder
		for i := range 160 {
			b.WriteString(textSentence(r, i%len(textTopics)) + "\n")
		}
		writeFile(t, filepath.Join(root, "text", f), b.String())
	}
	for _, f := range []string{"sts-dev.csv", "sts-test.csv"} {
		var b strings.Builder
		for i := range 60 {
			s1, s2, score := textPair(r)
			fmt.Fprintf(&b, "main-captions\tgen\t2026\t%04d\t%.3f\t%s\t%s\n", i, score, s1, s2)
		}
		writeFile(t, filepath.Join(root, "sts", f), b.String())
	}
	for _, y := range data.STSYears {
		if !slices.Contains(years, y.Name) {
			continue
		}
		for _, sub := range y.Subsets {
			var in, gs strings.Builder
			for range 12 {
				s1, s2, score := textPair(r)
				fmt.Fprintf(&in, "%s\t%s\n", s1, s2)
				fmt.Fprintf(&gs, "%.2f\n", score)
			}
			inPath, gsPath := data.STSSubsetFiles(y.Path(filepath.Join(root, "senteval")), sub)
			writeFile(t, inPath, in.String())
			writeFile(t, gsPath, gs.String())
		}
	}
	return root
}

func TestPlanText(t *testing.T) {
	root := textRoot(t, "STS13")
	p, err := PlanText(PlanOptions{Root: root}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, c := range p.Cells {
		blocks = append(blocks, c.Block)
		if c.Dataset != TextDataset || c.Dir != c.Block || c.Config.Data.Root != root {
			t.Errorf("cell %+v: root %q", c, c.Config.Data.Root)
		}
	}
	if !reflect.DeepEqual(blocks, TextBlocks) || p.Root != root {
		t.Errorf("blocks %v, root %q", blocks, p.Root)
	}
	// Every task but STS13 and STS-B is absent, with the command that fetches it.
	var absent []string
	for _, s := range p.Skipped {
		name, rest, _ := strings.Cut(s, ":")
		absent = append(absent, name)
		if !strings.Contains(rest, "cmd/download -dataset "+strings.TrimSuffix(strings.ToLower(name), "-r")) {
			t.Errorf("absent line %q lacks its download command", s)
		}
	}
	if want := []string{"STS12", "STS14", "STS15", "STS16", "SICK-R"}; !reflect.DeepEqual(absent, want) {
		t.Errorf("absent %v, want %v", absent, want)
	}
	// The default root is used when -root is not given, and not written.
	p, err = PlanText(PlanOptions{Blocks: []string{BlockHCL}}, root)
	if err != nil || len(p.Cells) != 1 || p.Cells[0].Config.Data.Root != "" || p.Root != root {
		t.Errorf("default root: %+v %v", p, err)
	}
	for _, tt := range []struct {
		opt  PlanOptions
		want string
	}{
		{PlanOptions{Root: root, Datasets: []string{"MUTAG"}}, "no datasets to choose"},
		{PlanOptions{Root: root, Blocks: []string{"mvgrl"}}, `"mvgrl": expected one of simcse, dcl, hcl`},
		{PlanOptions{Root: root, Sets: []string{"train.bogus=1"}}, "bogus"},
		{PlanOptions{Root: t.TempDir()}, "text/gutenberg_sentences.txt (data.text.corpus[0]): not found"},
		{PlanOptions{Root: root, Sets: []string{"data.text.sts_dir=nope"}}, `sts-test.csv (data.text.sts_dir "nope"): not found; get STS-B with go run ./cmd/download -dataset sts`},
	} {
		if _, err := PlanText(tt.opt, "unused"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.opt, err, tt.want)
		}
	}
	p, err = PlanText(PlanOptions{Root: root, Sets: []string{`data.text.senteval_dir=""`}}, "unused")
	if err != nil || len(p.Skipped) != 6 || !strings.Contains(p.Skipped[0], "senteval_dir is empty") {
		t.Errorf("no senteval_dir: %q %v", p.Skipped, err)
	}
}

// fakeRun is a run of a fake cell: STS-B its score, tasks the other
// tasks of its senteval detail.
func fakeRun(smp string, seed uint64, stsb float64, tasks map[string]float64) train.RunResult {
	s := train.SentEvalScores{Tasks: slices.Clone(TextTasks), Spearman: map[string]float64{"STS-B": stsb}, Pairs: map[string]int{}, Absent: []string{}}
	for k, v := range tasks {
		if k != "STS-B" {
			s.Spearman[k] = v
		}
	}
	var sum float64
	for _, task := range TextTasks {
		if v, ok := s.Spearman[task]; ok {
			sum += v
			s.AvgTasks++
		} else {
			s.Absent = append(s.Absent, task)
		}
	}
	s.Avg, s.AvgPartial = sum/float64(s.AvgTasks), len(s.Absent) > 0
	u := train.SentEvalScores{Tasks: slices.Clone(TextTasks), Spearman: map[string]float64{"STS-B": 60 + float64(seed)/10}, AvgTasks: 1, Avg: 60 + float64(seed)/10, AvgPartial: true}
	return train.RunResult{Sampler: smp, Seed: seed, Metric: stsMetric, Value: stsb, TrainSeconds: 10, EvalSeconds: 2,
		Detail: map[string]any{"senteval": s, "senteval_untrained": u, "test_untrained": u.Avg, "baseline_tfidf_test": 69.04}}
}

// fakeResults are a cell's results as results.json holds them (through
// JSON), with one ResultEntry per sampler.
func fakeResults(t *testing.T, runs []train.RunResult) *train.Results {
	t.Helper()
	res := &train.Results{Runs: runs, Provenance: &train.Provenance{Commit: "abc123"}}
	for _, smp := range Samplers {
		e := train.ResultEntry{Sampler: smp, Metric: stsMetric, TrainSeconds: 10, EvalSeconds: 2}
		for _, r := range runs {
			if r.Sampler == smp {
				e.Seeds, e.PerSeed = append(e.Seeds, r.Seed), append(e.PerSeed, r.Value)
			}
		}
		res.Results = append(res.Results, e)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back train.Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// TestAssembleTextFake assembles hand-made results: the SimCSE cell has
// STS12 and STS-B in every seed and SICK-R in two (so its average covers
// 2 of 7 tasks), and its kNN runs in another seed order (pairing is by
// seed); the DCL cell has all seven tasks (full average, paired Avg.); the
// HCL cell failed.
func TestAssembleTextFake(t *testing.T) {
	stsb := map[string][]float64{"uniform": {61, 62, 63}, "knn": {61.5, 62.1, 64}, "batchsampler": {60, 61.9, 62}}
	var simcse, dcl []train.RunResult
	for _, smp := range Samplers {
		order := []uint64{0, 1, 2}
		if smp == "knn" {
			order = []uint64{2, 0, 1}
		}
		for _, seed := range order {
			v := stsb[smp][seed]
			tasks := map[string]float64{"STS12": v - 10}
			if seed < 2 {
				tasks["SICK-R"] = v + 1
			}
			simcse = append(simcse, fakeRun(smp, seed, v, tasks))
			all := map[string]float64{}
			for i, task := range TextTasks {
				all[task] = v + float64(i) + float64(seed)*0.1*float64(samplerIndex(smp))
			}
			dcl = append(dcl, fakeRun(smp, seed, v+1, all))
		}
	}
	plan := &Plan{Skipped: []string{"STS13: absent (no …)"}}
	sts := []cellrun.Status{
		{Cell: cellrun.Cell{Dataset: TextDataset, Block: BlockSimCSE, Dir: BlockSimCSE}, Results: fakeResults(t, simcse)},
		{Cell: cellrun.Cell{Dataset: TextDataset, Block: BlockDCL, Dir: BlockDCL}, Results: fakeResults(t, dcl)},
		{Cell: cellrun.Cell{Dataset: TextDataset, Block: BlockHCL, Dir: BlockHCL}, Err: errors.New("boom")},
	}
	tab := AssembleText(sts, plan, []string{"seeds=[0,1,2]"}, 0)
	if !reflect.DeepEqual(tab.Blocks, TextBlocks) || len(tab.Rows) != 6 || len(tab.Failed) != 1 || !strings.Contains(tab.Failed[0], "hcl: boom") {
		t.Fatalf("blocks %v, %d rows, failed %q", tab.Blocks, len(tab.Rows), tab.Failed)
	}
	knn := tab.row(BlockSimCSE, "knn")
	if knn == nil || !reflect.DeepEqual(knn.Seeds, []uint64{2, 0, 1}) {
		t.Fatalf("knn row %+v", knn)
	}
	// STS-B: the runs' scores; pairing by seed.
	if s := knn.Tasks["STS-B"]; !reflect.DeepEqual(s.PerSeed, []float64{64, 61.5, 62.1}) {
		t.Errorf("knn STS-B %v", s.PerSeed)
	}
	tv, p, _ := eval.PairedTTest([]float64{61.5, 62.1, 64}, []float64{61, 62, 63})
	if c := knn.PairedSTSB; c == nil || c.N != 3 || math.Abs(c.MeanDiff-(0.5+0.1+1)/3) > 1e-12 || c.T != tv || c.P != p || c.Baseline != "uniform" {
		t.Errorf("knn paired STS-B %+v, want t %v p %v", c, tv, p)
	}
	// SICK-R in seeds 0 and 1 only: shown, not in the average; the others absent.
	if s := knn.Tasks["SICK-R"]; s == nil || !reflect.DeepEqual(s.Seeds, []uint64{0, 1}) {
		t.Errorf("knn SICK-R %+v", s)
	}
	if want := []string{"STS13", "STS14", "STS15", "STS16"}; !reflect.DeepEqual(knn.Absent, want) {
		t.Errorf("absent %v, want %v", knn.Absent, want)
	}
	if knn.AvgTasks != 2 || !knn.AvgPartial || knn.PairedAvg != nil || knn.Avg.PerSeed[0] != (64+54)/2.0 {
		t.Errorf("knn avg %+v, %d tasks, partial %v, paired %+v", knn.Avg, knn.AvgTasks, knn.AvgPartial, knn.PairedAvg)
	}
	if tab.row(BlockSimCSE, "uniform").PairedSTSB != nil {
		t.Error("the Uniform row is paired with itself")
	}
	// DCL: all seven present, the average is the runs' own and paired too.
	bs := tab.row(BlockDCL, "batchsampler")
	if bs.AvgPartial || bs.AvgTasks != 7 || len(bs.Absent) != 0 || bs.PairedAvg == nil || bs.PairedSTSB == nil {
		t.Fatalf("dcl batchsampler: %+v", bs)
	}
	for i, r := range dcl[6:] {
		s, _ := train.SentEvalScoresOf(r.Detail, "senteval")
		if bs.Avg.PerSeed[i] != s.Avg {
			t.Errorf("seed %d: avg %v, the run's %v", r.Seed, bs.Avg.PerSeed[i], s.Avg)
		}
	}
	if bs.Paper["STS-B"] != 75.43 || bs.Paper[TextAvg] != 74.79 || bs.PaperRoBERTa["STS-B"] != 77.75 || bs.Dir != BlockDCL || bs.Commit != "abc123" || bs.ComputeSeconds != 36 {
		t.Errorf("dcl batchsampler paper %v roberta %v dir %q commit %q compute %v", bs.Paper, bs.PaperRoBERTa, bs.Dir, bs.Commit, bs.ComputeSeconds)
	}
	// References: the untrained encoder per seed, TF-IDF on STS-B only.
	if len(tab.References) != 2 {
		t.Fatalf("references %+v", tab.References)
	}
	u, tf := tab.References[0], tab.References[1]
	if u.Sampler != "untrained" || !reflect.DeepEqual(u.Seeds, []uint64{0, 1, 2}) || !reflect.DeepEqual(u.Tasks["STS-B"].PerSeed, []float64{60, 60.1, 60.2}) || u.AvgTasks != 1 {
		t.Errorf("untrained %+v", u)
	}
	if tf.Sampler != "tfidf" || tf.Tasks["STS-B"].Mean != 69.04 || tf.Avg != nil || len(tf.Tasks) != 1 {
		t.Errorf("tfidf %+v", tf)
	}

	md := tab.Markdown()
	for _, s := range []string{
		"| Method | STS12 | STS13 | STS14 | STS15 | STS16 | STS-B | SICK-R | Avg. | vs method alone |",
		"| SimCSE | 52.00±0.82 [68.62] | absent [80.89] |",
		"62.00±0.82 [77.79] | 62.50±0.50 (2 of 3 seeds) [69.64] | 57.00±0.82 (2/7) [75.60] |  |",
		"| w/ kNN Sampler |", "STS-B +0.53, p ", "| SimCSE + DCL |", "Avg. +",
		"| SimCSE + HCL | – [62.57] |", "– [75.16] |  |",
		"| untrained encoder (reference) | absent | absent |", "60.10±0.08 |",
		"| TF-IDF cosine (reference, STS-B only) | – | – | – | – | – | 69.04 | – | – |",
		"- hcl: boom", "- STS13: absent", "Overrides applied to every cell: `seeds=[0,1,2]`", "commit(s) abc123",
		"| SimCSE | 1.8 min | 1.5 min | 18 s | 9 |", "| SimCSE + HCL | – | – | – | 0 |",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("table.md lacks %q:\n%s", s, md)
		}
	}
	// table.json holds what Markdown shows and reads back.
	dir := t.TempDir()
	if err := tab.Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "table.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back TextTable
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Markdown() != md {
		t.Errorf("table.json does not read back to the same table")
	}

	// A cell of another protocol is listed as failed, not read.
	other := fakeResults(t, simcse[:1])
	other.Results[0].Metric = "svm_accuracy"
	tab = AssembleText([]cellrun.Status{{Cell: cellrun.Cell{Block: BlockSimCSE}, Results: other}}, &Plan{}, nil, 0)
	if len(tab.Rows) != 0 || len(tab.Failed) != 1 || !strings.Contains(tab.Failed[0], `metric "svm_accuracy", expected sts_test_spearman`) {
		t.Errorf("other metric: rows %d, failed %q", len(tab.Rows), tab.Failed)
	}
}

// tinyText are the overrides that make a text cell a few seconds on
// textRoot's corpus: 16-d word vectors and MLP, small graphs, two
// seeds.
var tinyText = []string{"seeds=[0, 1]", "data.text.min_count=2", "data.text.max_vocab=0", "data.text.window=3", "data.text.dim=16",
	"data.text.vectors_cache=", "model.hidden=16", "model.proj_dim=8", "train.batch_size=32", "eval.select_every=4",
	"samplers=[{kind: uniform}, {kind: knn, refresh_every: 0}, {kind: batchsampler, m: 60, k: 10, walk: rwr, graph: proximity, alpha: 0.7, refresh_every: 0}]"}

// TestTextRunResumeAssemble runs two tiny text cells through cellrun.Run,
// interrupted in the first and continued: the same per-seed scores as an
// uninterrupted table, the finished cell not run again, a changed config
// refused; then the table of the real results (STS13 and STS-B present).
func TestTextRunResumeAssemble(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 12 tiny text runs twice")
	}
	root := textRoot(t, "STS13")
	plan, err := PlanText(PlanOptions{Root: root, Blocks: []string{BlockSimCSE, BlockHCL}, Sets: tinyText}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	ref := t.TempDir()
	sts, err := cellrun.Run(context.Background(), plan.Cells, cellrun.Options{Dir: ref})
	if err != nil {
		t.Fatal(err)
	}
	want := AssembleText(sts, plan, tinyText, 0)
	if len(want.Failed) != 0 || len(want.Rows) != 6 {
		t.Fatalf("reference table: %d rows, failed %q", len(want.Rows), want.Failed)
	}
	s, ok := train.SentEvalScoresOf(sts[0].Results.Runs[0].Detail, "senteval")
	if !ok || !reflect.DeepEqual(s.Tasks, TextTasks) {
		t.Errorf("the runs' tasks %v, the table's %v", s.Tasks, TextTasks)
	}
	for _, r := range want.Rows {
		if len(r.Seeds) != 2 || r.Tasks["STS13"] == nil || r.Tasks["STS-B"] == nil || r.AvgTasks != 2 || !r.AvgPartial ||
			(r.Sampler != "uniform") != (r.PairedSTSB != nil) || r.PairedAvg != nil {
			t.Errorf("row %s/%s: %+v", r.Block, r.Sampler, r)
		}
	}
	if len(want.References) != 2 || want.References[0].Tasks["STS13"] == nil || want.References[1].Tasks["STS-B"] == nil {
		t.Errorf("references %+v", want.References)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	obs := train.Observer{Step: func(train.StepInfo) {
		if steps++; steps == 3 {
			cancel()
		}
	}}
	if _, err := cellrun.Run(ctx, plan.Cells, cellrun.Options{Dir: dir, Observer: obs}); !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("interrupted table: %v", err)
	}
	if sts, err := cellrun.Run(context.Background(), plan.Cells[:1], cellrun.Options{Dir: dir}); err != nil || !sts[0].Ran {
		t.Fatalf("resume: %v", err)
	}
	var logs []string
	sts, err = cellrun.Run(context.Background(), plan.Cells, cellrun.Options{Dir: dir, Log: func(m string) { logs = append(logs, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if sts[0].Ran || !sts[1].Ran || !strings.Contains(logs[0], "cell 1/2 text/simcse: finished earlier") {
		t.Errorf("second pass: ran %v %v, log %q", sts[0].Ran, sts[1].Ran, logs)
	}
	got := AssembleText(sts, plan, tinyText, 0)
	for i := range want.Rows {
		w, g := want.Rows[i], got.Rows[i]
		for _, task := range []string{"STS13", "STS-B"} {
			if !reflect.DeepEqual(w.Tasks[task].PerSeed, g.Tasks[task].PerSeed) {
				t.Errorf("%s/%s %s: resumed %v, uninterrupted %v", g.Block, g.Sampler, task, g.Tasks[task].PerSeed, w.Tasks[task].PerSeed)
			}
		}
	}

	// Another config in the same directory: refused, cell by cell.
	plan2, err := PlanText(PlanOptions{Root: root, Blocks: []string{BlockSimCSE, BlockHCL}, Sets: append(slices.Clone(tinyText), "train.lr=0.002")}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	sts, err = cellrun.Run(context.Background(), plan2.Cells, cellrun.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if !errors.Is(st.Err, cellrun.ErrConfigChanged) || st.Ran {
			t.Errorf("%s: %v (ran %v), want ErrConfigChanged", st.Dir, st.Err, st.Ran)
		}
	}
	if tab := AssembleText(sts, plan2, nil, 0); len(tab.Failed) != 2 || !strings.Contains(tab.Failed[0], "holds a run of another config") {
		t.Errorf("changed config: failed %q", tab.Failed)
	}
}

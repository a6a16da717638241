package train

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

// sentEvalPair is one scored pair of the generated SentEval fixture.
type sentEvalPair struct {
	s1, s2 string
	gold   float64
}

// writeSentEvalFixture writes, under dir, SentEval's layout of the STS
// years and SICK-R named in tasks: STS/STS12-en-test/STS.input.*.txt and
// STS.gs.*.txt (tab-separated pairs, some with extra source columns, CRLF
// in one subset, an empty gold line every seventh pair, integer gold scores
// so that they tie, and repeated pairs so that the cosines tie), and
// SICK/SICK_test_annotated.txt. It returns every task's scored pairs in the
// order SentEval concatenates them.
func writeSentEvalFixture(t *testing.T, dir string, tasks ...string) map[string][]sentEvalPair {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	pair := func() sentEvalPair {
		t1 := r.IntN(len(textTopics))
		t2, gold := t1, float64(3+r.IntN(3))
		if r.IntN(2) == 1 {
			t2, gold = (t1+1+r.IntN(len(textTopics)-1))%len(textTopics), float64(r.IntN(3))
		}
		return sentEvalPair{textSentence(r, t1), textSentence(r, t2), gold}
	}
	out := map[string][]sentEvalPair{}
	for _, y := range data.STSYears {
		if !slices.Contains(tasks, y.Name) {
			continue
		}
		ydir := y.Path(dir)
		if err := os.MkdirAll(ydir, 0o755); err != nil {
			t.Fatal(err)
		}
		for si, sub := range y.Subsets {
			var in, gs strings.Builder
			eol := "\n"
			if si == 1 {
				eol = "\r\n"
			}
			var prev sentEvalPair
			for i := range 12 + 3*si {
				p := pair()
				if i%5 == 4 {
					p = prev // a repeated pair: tied cosines
				}
				prev = p
				fmt.Fprintf(&in, "%s\t%s", p.s1, p.s2)
				if si == 2 {
					in.WriteString("\tsource-a\tsource-b") // as the 2016 files
				}
				in.WriteString(eol)
				if i%7 == 3 {
					gs.WriteString(eol) // unscored
					continue
				}
				fmt.Fprintf(&gs, "%g%s", p.gold, eol)
				out[y.Name] = append(out[y.Name], p)
			}
			inPath, gsPath := data.STSSubsetFiles(ydir, sub)
			if err := os.WriteFile(inPath, []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(gsPath, []byte(gs.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if slices.Contains(tasks, "SICK-R") {
		var b strings.Builder
		b.WriteString("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n")
		for i := range 40 {
			p := pair()
			p.gold = 1 + float64(int(p.gold)%5)
			fmt.Fprintf(&b, "%d\t%s\t%s\t%g\tNEUTRAL\n", i+1, p.s1, p.s2, p.gold)
			out["SICK-R"] = append(out["SICK-R"], p)
		}
		path := filepath.Join(dir, filepath.FromSlash(data.SICKTestPath))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// naiveSpearman is an independent Spearman correlation: average ranks by
// counting (rank = 1 + #smaller + (#equal - 1)/2), then Pearson's formula
// in float64.
func naiveSpearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		r := make([]float64, len(v))
		for i := range v {
			less, equal := 0, 0
			for j := range v {
				switch {
				case v[j] < v[i]:
					less++
				case v[j] == v[i]:
					equal++
				}
			}
			r[i] = float64(less) + float64(equal+1)/2
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	n := float64(len(x))
	var mx, my float64
	for i := range rx {
		mx += rx[i] / n
		my += ry[i] / n
	}
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// naiveCosine is the cosine of two float32 vectors in float64 (0 when one
// is zero).
func naiveCosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na) / math.Sqrt(nb)
}

// TestSentEvalTasksSpearmanReference checks the sts protocol's score of
// every task against an independent computation: the test's own record of
// the generated pairs (a year's subsets concatenated, unscored pairs left
// out), their embeddings one sentence at a time, naive cosines and a naive
// tie-averaging Spearman correlation.
func TestSentEvalTasksSpearmanReference(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 320)
	want := writeSentEvalFixture(t, filepath.Join(dir, "senteval"), stsTaskNames...)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + dir, "data.text.vectors_cache="})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataSpecs["text"].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := methodFor(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	method, err := ms.New(&cfg, ds, 3)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := stsProtocol{}.Evaluate(EvalEnv{Cfg: &cfg, Data: ds, Method: method})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := SentEvalScoresOf(sc.Detail, "senteval")
	if !ok {
		t.Fatalf("no senteval report in %v", sc.Detail)
	}
	if !slices.Equal(got.Tasks, stsTaskNames) || len(got.Absent) != 0 || got.AvgPartial || got.AvgTasks != 7 {
		t.Fatalf("report %+v: want all seven tasks present", got)
	}
	if got.Spearman[stsBName] != sc.Value {
		t.Errorf("STS-B %v, run score %v: want the same value", got.Spearman[stsBName], sc.Value)
	}
	td := ds.(*textDataset)
	m := method.(*simCSE).m
	embed := func(s string) []float32 {
		e, err := m.Embed([][]int32{td.vecs.Vocab.Encode(s)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var sum float64
	for _, name := range stsTaskNames {
		sum += got.Spearman[name]
		if name == stsBName {
			continue
		}
		pairs := want[name]
		sims, gold := make([]float64, len(pairs)), make([]float64, len(pairs))
		for i, p := range pairs {
			sims[i], gold[i] = naiveCosine(embed(p.s1), embed(p.s2)), p.gold
		}
		ref := 100 * naiveSpearman(sims, gold)
		if g := got.Spearman[name]; math.Abs(g-ref) > 1e-9 || got.Pairs[name] != len(pairs) {
			t.Errorf("%s: %v over %d pairs, reference %v over %d", name, g, got.Pairs[name], ref, len(pairs))
		}
		if math.IsNaN(ref) || ref == 0 {
			t.Errorf("%s: degenerate reference %v", name, ref)
		}
	}
	if avg := sum / 7; math.Abs(got.Avg-avg) > 1e-12 {
		t.Errorf("avg %v, want %v", got.Avg, avg)
	}
	// The splits of the tasks are embeddable by name (cmd/train -embed).
	for _, s := range []string{"sts12.1", "sts16.2", "sick-r.1"} {
		if !slices.Contains(ds.Splits(), s) {
			t.Errorf("split %s missing from %v", s, ds.Splits())
		}
	}
}

// TestSentEvalTasksReport runs a short training with some or none of the
// SentEval tasks present and checks what results.json and results.md say.
func TestSentEvalTasksReport(t *testing.T) {
	cases := []struct {
		name    string
		present []string
		sets    []string
		absent  []string
	}{
		{"all present", stsTaskNames, nil, []string{}},
		{"some absent", []string{"STS12", "STS13", "STS15", "STS16"}, nil, []string{"STS14", "SICK-R"}},
		{"none", nil, nil, []string{"STS12", "STS13", "STS14", "STS15", "STS16", "SICK-R"}},
		{"senteval_dir empty", stsTaskNames, []string{"data.text.senteval_dir="}, []string{"STS12", "STS13", "STS14", "STS15", "STS16", "SICK-R"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTextFixture(t, dir, 160)
			if len(c.present) > 0 {
				writeSentEvalFixture(t, filepath.Join(dir, "senteval"), c.present...)
			}
			sets := append([]string{"data.root=" + dir, "data.text.vectors_cache=", "samplers=[{kind: uniform}]", "train.epochs=1", "eval.select_every=3"}, c.sets...)
			cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), sets)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if _, err := Run(context.Background(), cfg, Options{OutDir: out}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(out, "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res Results
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			rr := res.Runs[0]
			for _, key := range []string{"senteval", "senteval_final", "senteval_untrained"} {
				s, ok := SentEvalScoresOf(rr.Detail, key)
				if !ok {
					t.Fatalf("results.json: no %s in %v", key, rr.Detail)
				}
				n := 7 - len(c.absent)
				if !slices.Equal(s.Absent, c.absent) || s.AvgPartial != (len(c.absent) > 0) || s.AvgTasks != n || len(s.Spearman) != n || len(s.Pairs) != n {
					t.Errorf("%s: %+v; want absent %v", key, s, c.absent)
				}
				for _, a := range c.absent {
					if _, ok := s.Spearman[a]; ok {
						t.Errorf("%s: absent %s has a score", key, a)
					}
				}
				var sum float64
				for _, v := range s.Spearman {
					sum += v
				}
				if math.Abs(s.Avg-sum/float64(n)) > 1e-9 {
					t.Errorf("%s: avg %v, want %v", key, s.Avg, sum/float64(n))
				}
				if key == "senteval" && s.Spearman[stsBName] != rr.Value {
					t.Errorf("STS-B %v, run score %v", s.Spearman[stsBName], rr.Value)
				}
			}
			md, err := os.ReadFile(filepath.Join(out, "results.md"))
			if err != nil {
				t.Fatal(err)
			}
			wantMD := []string{"| Sampler | STS12 | STS13 | STS14 | STS15 | STS16 | STS-B | SICK-R | Avg. |", "| untrained encoder |"}
			if len(c.absent) > 0 {
				wantMD = append(wantMD, fmt.Sprintf("(%d of 7 tasks) |", 7-len(c.absent)), "The average is partial")
			}
			for _, w := range wantMD {
				if !strings.Contains(string(md), w) {
					t.Errorf("results.md lacks %q:\n%s", w, md)
				}
			}
			if strings.Count(string(md), "absent |") < len(c.absent) {
				t.Errorf("results.md does not mark %v absent:\n%s", c.absent, md)
			}
		})
	}
}

// TestSentEvalTasksBadData checks that a SentEval folder that is there but
// incomplete or malformed stops the run with the file (and line) at fault.
func TestSentEvalTasksBadData(t *testing.T) {
	cases := []struct {
		name  string
		spoil func(t *testing.T, root string)
		want  []string
	}{
		{"missing subset", func(t *testing.T, root string) {
			y, _ := data.LookupSTSYear("STS13")
			in, _ := data.STSSubsetFiles(y.Path(root), "OnWN")
			if err := os.Remove(in); err != nil {
				t.Fatal(err)
			}
		}, []string{"data.text.senteval_dir", "STS.input.OnWN.txt", "STS13", "FNWN, headlines, OnWN"}},
		{"gold not a number", func(t *testing.T, root string) {
			y, _ := data.LookupSTSYear("STS15")
			_, gs := data.STSSubsetFiles(y.Path(root), "belief")
			if err := os.WriteFile(gs, []byte("1\nx\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"STS.gs.belief.txt line 2", `"x": expected a number`}},
		{"line counts differ", func(t *testing.T, root string) {
			y, _ := data.LookupSTSYear("STS12")
			in, gs := data.STSSubsetFiles(y.Path(root), "MSRvid")
			if err := os.WriteFile(gs, []byte("1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(in, []byte("a b\tc d\ne f\tg h\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"STS.gs.MSRvid.txt: 1 lines, but", "STS.input.MSRvid.txt has 2"}},
		{"SICK without scores", func(t *testing.T, root string) {
			p := filepath.Join(root, filepath.FromSlash(data.SICKTestPath))
			if err := os.WriteFile(p, []byte("pair_ID\tsentence_A\tsentence_B\n1\ta\tb\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"SICK-R", "SICK_test_annotated.txt", "relatedness_score"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTextFixture(t, dir, 160)
			root := filepath.Join(dir, "senteval")
			writeSentEvalFixture(t, root, stsTaskNames...)
			c.spoil(t, root)
			cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + dir, "data.text.vectors_cache="})
			if err != nil {
				t.Fatal(err)
			}
			_, err = dataSpecs["text"].Load(&cfg)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestEvaluateScoresSentEvalTasksLater checks that a run trained before the
// SentEval tasks were there can be scored on them afterwards: -evaluate
// with -set data.text.senteval_dir, with STS-B's score unchanged.
func TestEvaluateScoresSentEvalTasksLater(t *testing.T) {
	dir := t.TempDir()
	writeTextFixture(t, dir, 160)
	cfg, err := LoadConfig(filepath.Join("testdata", "text-tiny.yaml"), []string{"data.root=" + dir, "data.text.vectors_cache=", "samplers=[{kind: uniform}]", "train.epochs=1"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	res, err := Run(context.Background(), cfg, Options{OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := SentEvalScoresOf(res.Runs[0].Detail, "senteval"); !ok || s.AvgTasks != 1 {
		t.Fatalf("trained without SentEval data: report %+v", s)
	}
	se := filepath.Join(dir, "elsewhere")
	writeSentEvalFixture(t, se, "STS16", "SICK-R")
	ev, err := Evaluate(context.Background(), out, []string{"data.text.senteval_dir=" + se}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := SentEvalScoresOf(ev.Runs[0].Detail, "senteval")
	if !ok || s.AvgTasks != 3 || !slices.Equal(s.Absent, []string{"STS12", "STS13", "STS14", "STS15"}) {
		t.Fatalf("evaluated with SentEval data: report %+v", s)
	}
	if ev.Runs[0].Value != res.Runs[0].Value {
		t.Errorf("STS-B %v, trained run's %v", ev.Runs[0].Value, res.Runs[0].Value)
	}
	if _, err := Evaluate(context.Background(), out, []string{"data.text.corpus=[x.txt]"}, Options{}); err == nil || !strings.Contains(err.Error(), "data.text.senteval_dir") {
		t.Errorf("-set data.text.corpus: error %v", err)
	}
}

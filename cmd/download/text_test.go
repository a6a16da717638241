package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/train"
)

// textWords are the words of the generated sentences and corpus: two
// topics, so that the sentences' embeddings differ.
var textWords = [][]string{
	{"cat", "dog", "horse", "cow", "sheep", "goat", "the", "a", "is"},
	{"car", "bus", "train", "truck", "bike", "tram", "the", "a", "is"},
}

// textSentence returns a sentence of topic k.
func textSentence(r *rand.Rand, k int) string {
	w := make([]string, 4+r.IntN(4))
	for i := range w {
		w[i] = textWords[k][r.IntN(len(textWords[k]))]
	}
	return strings.Join(w, " ") + "."
}

// textPairs returns n pairs "s1\ts2" with their integer gold scores in
// [lo, lo+4].
func textPairs(r *rand.Rand, n int, lo int) (pairs []string, gold []int) {
	for range n {
		k1, k2 := r.IntN(2), r.IntN(2)
		g := lo + r.IntN(2)
		if k1 == k2 {
			g += 3
		}
		pairs = append(pairs, textSentence(r, k1)+"\t"+textSentence(r, k2))
		gold = append(gold, g)
	}
	return pairs, gold
}

// stsYearZip returns the zip of year y in the layout of the real one: the
// folder y.ZipDir with y.ZipPrefix.input.SUBSET.txt (four columns in 2016,
// with the sentences' sources) and y.ZipPrefix.gs.SUBSET.txt (an empty
// gold line for an unscored pair), and a readme. Subsets named in skip are
// left out.
func stsYearZip(t *testing.T, y data.STSYear, skip ...string) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(len(y.Name)), uint64(y.Name[4])))
	files := map[string][]byte{y.ZipDir + "/00-readme.txt": []byte("STS " + y.Name + " test data\n")}
	for _, s := range y.Subsets {
		if slices.Contains(skip, s) {
			continue
		}
		pairs, gold := textPairs(r, 9, 0)
		var in, gs strings.Builder
		for i, p := range pairs {
			in.WriteString(p)
			if y.ZipPrefix != "STS" {
				in.WriteString("\tsource-1\tsource-2")
			}
			in.WriteString("\n")
			if i == 4 {
				gs.WriteString("\n")
			} else {
				fmt.Fprintf(&gs, "%d.000\n", gold[i])
			}
		}
		files[y.ZipDir+"/"+y.ZipPrefix+".input."+s+".txt"] = []byte(in.String())
		files[y.ZipDir+"/"+y.ZipPrefix+".gs."+s+".txt"] = []byte(gs.String())
	}
	return zipFiles(t, files)
}

// sickZip returns a zip like sick_test_annotated.zip: SICK_test_annotated.txt
// (with its header) and readme.txt at the top level.
func sickZip(t *testing.T) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	pairs, gold := textPairs(r, 12, 1)
	var b strings.Builder
	b.WriteString("pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n")
	for i, p := range pairs {
		fmt.Fprintf(&b, "%d\t%s\t%d.0\tNEUTRAL\n", i+6, p, gold[i])
	}
	return zipFiles(t, map[string][]byte{"SICK_test_annotated.txt": []byte(b.String()), "readme.txt": []byte("SICK\n")})
}

// tarGz packs members (name → content; a name ending in "/" is a
// directory, a content starting with "->" a symlink to the rest).
func tarGz(t *testing.T, members map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		body := members[n]
		h := &tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}
		switch {
		case strings.HasSuffix(n, "/"):
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		case strings.HasPrefix(body, "->"):
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, body[2:], 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// stsBMembers are the members of Stsbenchmark.tar.gz: stsbenchmark/ with
// sts-{train,dev,test}.csv (7 tab-separated fields, some lines 9) and a
// readme.
func stsBMembers() map[string]string {
	r := rand.New(rand.NewPCG(5, 6))
	m := map[string]string{"stsbenchmark/": "", "stsbenchmark/readme.txt": "STS Benchmark\n"}
	for _, split := range []string{"train", "dev", "test"} {
		pairs, gold := textPairs(r, 16, 0)
		var b strings.Builder
		for i, p := range pairs {
			fmt.Fprintf(&b, "main-captions\tMSRvid\t2012test\t%04d\t%d.000\t%s", i, gold[i], p)
			if i%5 == 0 {
				b.WriteString("\tsrc\tsrc")
			}
			b.WriteString("\n")
		}
		m["stsbenchmark/sts-"+split+".csv"] = b.String()
	}
	return m
}

// serveFiles answers "/NAME" with files[NAME] and 404 otherwise.
func serveFiles(t *testing.T, files map[string][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// textArchives returns the generated archives of every text set by
// canonical name, and points textURLs at a local server holding them under
// the real archives' file names (restored when the test ends).
func textArchives(t *testing.T, override map[string][]byte) map[string][]byte {
	t.Helper()
	arch := map[string][]byte{"sts": tarGz(t, stsBMembers()), "sick": sickZip(t)}
	for _, y := range data.STSYears {
		arch[y.Name] = stsYearZip(t, y)
	}
	for k, v := range override {
		arch[k] = v
	}
	served := map[string][]byte{}
	urls := map[string]string{}
	srv := serveFiles(t, served)
	for name, b := range arch {
		base := path.Base(textURLs[name])
		served[base] = b
		urls[name] = srv.URL + "/" + base
	}
	old := textURLs
	textURLs = urls
	t.Cleanup(func() { textURLs = old })
	return arch
}

// checkTextSet checks that root holds the set name in the layout the text
// modality reads.
func checkTextSet(t *testing.T, root, name string) {
	t.Helper()
	switch name {
	case "sts":
		for _, split := range []string{"train", "dev", "test"} {
			if pairs, err := data.ReadSTS(filepath.Join(root, "sts", "sts-"+split+".csv")); err != nil || len(pairs) != 16 {
				t.Errorf("sts-%s.csv: %d pairs, %v", split, len(pairs), err)
			}
		}
	case "sick":
		if pairs, err := data.ReadSICK(filepath.Join(root, "senteval", filepath.FromSlash(data.SICKTestPath))); err != nil || len(pairs) != 12 {
			t.Errorf("SICK: %d pairs, %v", len(pairs), err)
		}
	default:
		y, _ := data.LookupSTSYear(name)
		dir := y.Path(filepath.Join(root, "senteval"))
		subs, err := data.ReadSTSYear(dir, y)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			if len(s.Pairs) != 8 || s.Unscored != 1 {
				t.Errorf("%s %s: %d pairs, %d unscored", name, s.Name, len(s.Pairs), s.Unscored)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "STS2016.*")); len(left) > 0 {
			t.Errorf("%s: files not renamed: %v", name, left)
		}
	}
}

func TestDownloadTextSets(t *testing.T) {
	arch := textArchives(t, nil)
	cases := []struct {
		dataset, name string
		where         string
		summary       string
	}{
		{"sts", "sts", "sts", "STS Benchmark, pairs: 16 train, 16 dev, 16 test"},
		{"STS-B", "sts", "sts", "STS Benchmark"},
		{"sick", "sick", "senteval/SICK", "SICK-R test, 12 pairs"},
		{"sts12", "STS12", "senteval/STS/STS12-en-test", "STS12, 5 subsets, 40 scored pairs (5 unscored)"},
		{"STS13", "STS13", "senteval/STS/STS13-en-test", "STS13, 3 subsets, 24 scored pairs (3 unscored)"},
		{"sts14", "STS14", "senteval/STS/STS14-en-test", "STS14, 6 subsets"},
		{"sts15", "STS15", "senteval/STS/STS15-en-test", "STS15, 5 subsets"},
		{"sts16", "STS16", "senteval/STS/STS16-en-test", "STS16, 5 subsets, 40 scored pairs (5 unscored)"},
	}
	for _, c := range cases {
		for _, pinned := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s pinned=%v", c.dataset, pinned), func(t *testing.T) {
				root := filepath.Join(t.TempDir(), "root")
				sum, verdict := sha256Hex(arch[c.name]), "checksum verified against -sha256"
				if !pinned {
					sum, verdict = "any", "checksum not verified (-sha256 any); pin it with -dataset "+strings.ToLower(c.name)+" -sha256 "+sha256Hex(arch[c.name])
				}
				var out, errOut bytes.Buffer
				if err := run(context.Background(), []string{"-dataset", c.dataset, "-root", root, "-sha256", sum}, &out, &errOut); err != nil {
					t.Fatalf("%v\n%s", err, out.String())
				}
				for _, w := range []string{
					"sha256 " + sha256Hex(arch[c.name]) + "  " + textURLs[c.name], verdict,
					filepath.Join(root, filepath.FromSlash(c.where)) + ": " + c.summary,
					"train with: go run ./cmd/train -config configs/simcse-stsb.yaml -set data.root=" + root + "\n",
				} {
					if !strings.Contains(out.String(), w) {
						t.Errorf("output lacks %q:\n%s", w, out.String())
					}
				}
				checkTextSet(t, root, c.name)
				// Nothing but the set (no archive, no staging directory).
				for _, p := range listTree(t, root) {
					if !strings.HasPrefix(p+"/", c.where+"/") && !strings.HasPrefix(c.where, p+"/") {
						t.Errorf("unexpected %s in the data root", p)
					}
				}
			})
		}
	}
}

// TestDownloadSentEvalThenTrain fetches every text set with senteval-sts,
// then trains on a generated corpus in the same data root: the sts protocol
// finds all seven tasks where download put them, with the default keys.
func TestDownloadSentEvalThenTrain(t *testing.T) {
	arch := textArchives(t, nil)
	root := filepath.Join(t.TempDir(), "root")
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-dataset", "senteval-sts", "-root", root, "-sha256", "any"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for name := range arch {
		checkTextSet(t, root, name)
		if !strings.Contains(out.String(), "sha256 "+sha256Hex(arch[name])) {
			t.Errorf("output lacks the sha256 of %s:\n%s", name, out.String())
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	var corpus strings.Builder
	for i := range 200 {
		corpus.WriteString(textSentence(r, i%2) + "\n")
	}
	if err := os.WriteFile(filepath.Join(root, "corpus.txt"), []byte(corpus.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := train.ParseConfig([]byte(`
name: download-text
modality: text
data:
  source: corpus
  text: {corpus: [corpus.txt], min_count: 2, max_vocab: 0, window: 3, dim: 8, vectors_cache: ""}
model: {kind: mlp, hidden: 16, proj_dim: 8, dropout: 0.1, train_embeddings: true}
loss: {kind: infonce, form: simcse, temperature: 0.05}
train: {epochs: 1, batch_size: 32, lr: 0.001, checkpoint: false}
eval: {kind: sts}
seeds: [0]
`), []string{"data.root=" + root})
	if err != nil {
		t.Fatal(err)
	}
	res, err := train.Run(context.Background(), cfg, train.Options{OutDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := train.SentEvalScoresOf(res.Runs[0].Detail, "senteval")
	if !ok || s.AvgTasks != 7 || s.AvgPartial || len(s.Absent) != 0 {
		t.Fatalf("SentEval report %+v", s)
	}
	want := map[string]int{"STS12": 40, "STS13": 24, "STS14": 48, "STS15": 40, "STS16": 40, "STS-B": 16, "SICK-R": 12}
	for k, n := range want {
		if s.Pairs[k] != n {
			t.Errorf("%s: %d pairs, want %d", k, s.Pairs[k], n)
		}
	}
}

func TestDownloadTextErrors(t *testing.T) {
	y13, _ := data.LookupSTSYear("STS13")
	evilZip := zipFiles(t, map[string][]byte{"test-gold/STS.input.MSRpar.txt": []byte("a\tb\n"), "../evil.txt": []byte("x")})
	arch := textArchives(t, map[string][]byte{
		"STS12": evilZip,
		"STS13": stsYearZip(t, y13, "OnWN"),
		"sts":   tarGz(t, map[string]string{"stsbenchmark/sts-test.csv": "x", "/etc/evil": "x"}),
		"sick":  zipFiles(t, map[string][]byte{"readme.txt": []byte("no data")}),
	})
	symlinkTar := tarGz(t, map[string]string{"stsbenchmark/": "", "stsbenchmark/sts-test.csv": "->/etc/passwd"})
	srv := serveFiles(t, map[string][]byte{"Stsbenchmark.tar.gz": symlinkTar, "good.zip": stsYearZip(t, y13)})
	zeros := strings.Repeat("0", 64)
	cases := []struct {
		name  string
		args  []string
		usage bool
		want  []string
	}{
		{"no checksum", []string{"-dataset", "sts14"}, true, []string{"-dataset sts14 needs -sha256 HEX or -sha256 any", "prints the sha256 received"}},
		{"md5", []string{"-dataset", "sts", "-md5", "any"}, true, []string{"checked with -sha256"}},
		{"all with one sha256", []string{"-dataset", "senteval-sts", "-sha256", sha256Hex(arch["STS14"])}, true, []string{"fetches 7 archives: it takes -sha256 any"}},
		{"all with -url", []string{"-dataset", "senteval-sts", "-sha256", "any", "-url", srv.URL + "/good.zip"}, true, []string{"-url replaces one address"}},
		{"checksum mismatch", []string{"-dataset", "sts14", "-sha256", zeros}, false,
			[]string{"checksum mismatch: expected sha256 " + zeros + ", received sha256 " + sha256Hex(arch["STS14"]), "pin it with -sha256 " + sha256Hex(arch["STS14"])}},
		{"path traversal in a zip", []string{"-dataset", "sts12", "-sha256", "any"}, false, []string{`"../evil.txt" has a ".." element`, "not a usable archive"}},
		{"absolute path in a tar.gz", []string{"-dataset", "sts", "-sha256", "any"}, false, []string{`"/etc/evil" is an absolute path`}},
		{"symlink in a tar.gz", []string{"-dataset", "sts", "-sha256", "any", "-url", srv.URL + "/Stsbenchmark.tar.gz"}, false, []string{"is a symlink"}},
		{"missing subset", []string{"-dataset", "sts13", "-sha256", sha256Hex(arch["STS13"])}, false, []string{"STS.input.OnWN.txt", "STS13"}},
		{"no SICK file", []string{"-dataset", "sick", "-sha256", "any"}, false, []string{"holds no SICK_test_annotated.txt"}},
		{"not found", []string{"-dataset", "sts15", "-sha256", "any", "-url", srv.URL + "/none.zip"}, false, []string{"404"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "new", "root")
			var out, errOut bytes.Buffer
			err := run(context.Background(), append(c.args, "-root", root), &out, &errOut)
			if err == nil {
				t.Fatalf("no error; output\n%s", out.String())
			}
			if got := errors.As(err, new(usageError)); got != c.usage {
				t.Errorf("usage error %v, want %v: %v", got, c.usage, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// Nothing is left behind: no data root, no escaped file.
			if _, err := os.Stat(filepath.Join(base, "new")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("failed download left %v", listTree(t, base))
			}
			filepath.WalkDir(filepath.Dir(base), func(p string, d fs.DirEntry, err error) error {
				if err == nil && (d.Name() == "evil.txt" || d.Name() == "evil") {
					t.Errorf("%s escaped the archive", p)
				}
				return nil
			})
		})
	}
}

func TestHelpText(t *testing.T) {
	var out, errOut bytes.Buffer
	run(context.Background(), []string{"-h"}, &out, &errOut)
	want := []string{"DIR/sts/sts-{train,dev,test}.csv", "DIR/senteval/SICK/SICK_test_annotated.txt", "DIR/senteval/STS/STS12-en-test/",
		"senteval-sts", data.STSBenchmarkURL, data.SICKTestURL, "no built-in checksum", "-sha256 HEX or -sha256 any"}
	for _, y := range data.STSYears {
		want = append(want, strings.ToLower(y.Name), y.URL)
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("help lacks %q", w)
		}
	}
}

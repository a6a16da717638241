package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// TestHelpExitsZero runs the binary with -h for the command and every
// subcommand.
func TestHelpExitsZero(t *testing.T) {
	bin := buildBinary(t)
	for _, args := range [][]string{{"-h"}, {"help"}, {"graph", "-h"}, {"merge", "-h"}, {"batches", "-h"}, {"serve", "-h"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("batchsampler %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "usage: batchsampler") {
			t.Errorf("batchsampler %s printed no usage:\n%s", strings.Join(args, " "), out)
		}
	}
	if out, err := exec.Command(bin, "frobnicate").CombinedOutput(); err == nil || !strings.Contains(string(out), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %v\n%s", err, out)
	}
}

// readGraph reads a neighbour table file.
func readGraph(t *testing.T, path string) npy.Int32Matrix {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := npy.ReadInt32Matrix(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGraphShardsMerge checks that graph builds the graph of
// BatchSampler's build-th refresh, and that row shards merged in any order
// give the same file.
func TestGraphShardsMerge(t *testing.T) {
	e := mixture(t, 500, 8, 0)
	for _, tc := range []struct {
		kind       string
		build      uint64
		candidates string
		m          int
	}{
		{"proximity", 1, sampler.CandidatesWithoutReplacement, 60},
		{"proximity", 2, sampler.CandidatesWithoutReplacement, 60},
		{"knn", 1, sampler.CandidatesWithoutReplacement, 60},
		{"proximity", 2, sampler.CandidatesWithReplacement, 60},
		{"proximity", 1, sampler.CandidatesWithReplacement, 700}, // M > N: not clamped
	} {
		t.Run(fmt.Sprintf("%s-build%d-%s-m%d", tc.kind, tc.build, tc.candidates, tc.m), func(t *testing.T) {
			dir := t.TempDir()
			emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
			common := []string{"-emb", emb, "-m", fmt.Sprint(tc.m), "-k", "6", "-graph-kind", tc.kind, "-seed", "9", "-build", fmt.Sprint(tc.build), "-candidates", tc.candidates}
			whole := filepath.Join(dir, "g.npy")
			mustRun(t, append([]string{"graph", "-out", whole}, common...)...)
			if m, err := readMeta(whole); err != nil || (m.Candidates != "") != (tc.candidates == sampler.CandidatesWithReplacement) || (tc.kind == "proximity" && tc.candidates == sampler.CandidatesWithReplacement && m.M != tc.m) {
				t.Fatalf("sidecar %+v (%v): want candidates and M recorded for %s", m, err, tc.candidates)
			}
			bs, err := sampler.NewBatchSampler(sampler.Config{BatchSize: 16, M: tc.m, K: 6, Graph: tc.kind, Candidates: tc.candidates}, e.N, 9)
			if err != nil {
				t.Fatal(err)
			}
			for i := uint64(0); i < tc.build; i++ {
				if err := bs.Refresh(e); err != nil {
					t.Fatal(err)
				}
			}
			g := readGraph(t, whole)
			if g.Rows != e.N || g.Cols != 6 || !slices.Equal(g.Data, bs.Graph().Adj) {
				t.Fatalf("graph file (%d×%d) differs from the sampler's refresh %d", g.Rows, g.Cols, tc.build)
			}
			var parts []string
			for i, r := range []string{"300:", ":120", "120:300"} {
				p := filepath.Join(dir, fmt.Sprintf("part%d.npy", i))
				mustRun(t, append([]string{"graph", "-out", p, "-rows", r, "-workers", fmt.Sprint(1 + i)}, common...)...)
				parts = append(parts, p)
			}
			merged := filepath.Join(dir, "m.npy")
			mustRun(t, append([]string{"merge", "-out", merged}, parts...)...)
			a, _ := os.ReadFile(whole)
			b, _ := os.ReadFile(merged)
			if !bytes.Equal(a, b) {
				t.Fatal("merged shards differ from the whole graph")
			}
			ma, _ := readMeta(whole)
			mb, _ := readMeta(merged)
			if ma.CRC32C != mb.CRC32C || mb.Rows != [2]int{0, e.N} {
				t.Fatalf("merged sidecar %+v, whole %+v", mb, ma)
			}
		})
	}
}

func TestMergeErrors(t *testing.T) {
	e := mixture(t, 300, 8, 0)
	dir := t.TempDir()
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
	shard := func(name, rows string, extra ...string) string {
		p := filepath.Join(dir, name)
		mustRun(t, append([]string{"graph", "-emb", emb, "-out", p, "-m", "40", "-k", "5", "-rows", rows}, extra...)...)
		return p
	}
	a, b, c := shard("a.npy", ":100", "-seed", "1"), shard("b.npy", "100:", "-seed", "1"), shard("c.npy", "50:", "-seed", "1")
	other := shard("o.npy", "100:", "-seed", "2")
	otherDraw := shard("w.npy", "100:", "-seed", "1", "-candidates", "with_replacement")
	damaged := filepath.Join(dir, "d.npy")
	raw, _ := os.ReadFile(b)
	raw[len(raw)-1] ^= 1
	writeTemp(t, dir, "d.npy", raw)
	meta, _ := os.ReadFile(metaPath(b))
	writeTemp(t, dir, "d.npy.json", meta)
	bare := writeTemp(t, dir, "bare.npy", raw)
	out := filepath.Join(dir, "m.npy")
	for _, tc := range []struct {
		name  string
		parts []string
		want  string
	}{
		{"missing rows", []string{a}, "rows [100, 300) are missing"},
		{"gap", []string{b}, "rows [0, 100) are missing"},
		{"overlap", []string{a, c, b}, "overlaps"},
		{"other seed", []string{a, other}, "is of another graph"},
		{"other candidate draw", []string{a, otherDraw}, "is of another graph"},
		{"damaged", []string{a, damaged}, "checksum mismatch"},
		{"no sidecar", []string{a, bare}, "needs the sidecar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCmd(t, append([]string{"merge", "-out", out}, tc.parts...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a failed merge left an output file")
			}
		})
	}
}

// TestBatchesMatchDriver checks that batches, run once or as a sequence of
// runs through a state file, gives the Go Driver's batches.
func TestBatchesMatchDriver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  sampler.Spec
		flags []string
		n, b  int
		steps []int // steps per run (0: to the end of the epoch)
		t     int   // T
	}{
		{"rwr-linear", sampler.Spec{Kind: "batchsampler", M: 80, K: 8, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.05}},
			[]string{"-m", "80", "-k", "8", "-alpha", "0.2:0.05", "-epochs", "3"}, 480, 32, []int{0, 0, 0}, 45},
		{"rwr-refresh", sampler.Spec{Kind: "batchsampler", M: 80, K: 8, RefreshEvery: 10, Alpha: sampler.AlphaSchedule{Start: 0.3, End: 0.3, Constant: true}},
			[]string{"-m", "80", "-k", "8", "-alpha", "0.3", "-refresh-every", "10"}, 480, 32, []int{7, 9, 20}, 0},
		{"bfs-knn-graph", sampler.Spec{Kind: "batchsampler", M: 80, K: 8, Walk: "bfs", Graph: "knn", Alpha: sampler.AlphaSchedule{Start: 0.1, End: 0.1, Constant: true}},
			[]string{"-m", "80", "-k", "8", "-walk", "bfs", "-graph-kind", "knn", "-alpha", "0.1"}, 480, 32, []int{5, 0}, 0},
		{"n-mod-b-1", sampler.Spec{Kind: "batchsampler", M: 80, K: 8, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}},
			[]string{"-m", "80", "-k", "8", "-alpha", "0.2"}, 481, 32, []int{0, 0}, 0},
		{"knn", sampler.Spec{Kind: "knn", RefreshEvery: 4},
			[]string{"-kind", "knn", "-refresh-every", "4"}, 300, 25, []int{3, 0}, 0},
		{"uniform-short-last", sampler.Spec{Kind: "uniform"},
			[]string{"-kind", "uniform", "-n", "300"}, 300, 32, []int{0, 0}, 0},
		// The global batch samplers: a state saved mid-round (7, 9 batches)
		// continues the Driver's batches; -k is GCBS's only when given.
		{"gcbs", sampler.Spec{Kind: "gcbs", RefreshEvery: 6},
			[]string{"-kind", "gcbs", "-refresh-every", "6"}, 300, 25, []int{7, 9, 0}, 0},
		{"gcbs-k", sampler.Spec{Kind: "gcbs", K: 4},
			[]string{"-kind", "gcbs", "-k", "4"}, 300, 25, []int{7, 0}, 0},
		{"spectral", sampler.Spec{Kind: "spectral", Draw: 3, Temperature: 0.2, RefreshEvery: 5},
			[]string{"-kind", "spectral", "-draw", "3", "-temperature", "0.2", "-refresh-every", "5"}, 300, 25, []int{7, 9, 0}, 0},
		{"osgd", sampler.Spec{Kind: "osgd", Draw: 4, Keep: 3, Temperature: 0.5},
			[]string{"-kind", "osgd", "-draw", "4", "-q", "3", "-temperature", "0.5"}, 300, 25, []int{7, 9, 0}, 0},
		{"kmeans", sampler.Spec{Kind: "kmeans", Clusters: 6},
			[]string{"-kind", "kmeans", "-clusters", "6"}, 301, 25, []int{7, 9, 0}, 0},
		{"antikmeans", sampler.Spec{Kind: "antikmeans"},
			[]string{"-kind", "antikmeans"}, 310, 25, []int{7, 9, 0}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			e := mixture(t, tc.n, 8, 0)
			emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
			state := filepath.Join(dir, "state.bin")
			var got [][]int
			for i, st := range tc.steps {
				out := filepath.Join(dir, fmt.Sprintf("b%d.npy", i))
				args := append([]string{"batches", "-b", fmt.Sprint(tc.b), "-seed", "4", "-state", state, "-out", out, "-steps", fmt.Sprint(st)}, tc.flags...)
				if tc.spec.Kind != "uniform" {
					args = append(args, "-emb", emb)
				}
				mustRun(t, args...)
				got = append(got, readBatches(t, out)...)
			}
			total := tc.t
			want := reference(t, tc.spec, tc.n, tc.b, 4, total, []sampler.Embeddings{e}, len(got))
			if !equalBatches(got, want) {
				t.Fatalf("%d batches differ from the Driver's", len(got))
			}
			if tc.name == "n-mod-b-1" && len(got[14]) != 33 {
				t.Fatalf("the last batch of an epoch has %d instances, want B+1 = 33", len(got[14]))
			}
			if tc.name == "uniform-short-last" && len(got[9]) != 300-9*32 {
				t.Fatalf("the last batch of an epoch has %d instances, want %d", len(got[9]), 300-9*32)
			}
		})
	}
}

// TestBatchesGraphEqualsEmbeddings: graph then batches -graph gives the
// batches of batches -emb (the graph is the sampler's first refresh).
func TestBatchesGraphEqualsEmbeddings(t *testing.T) {
	dir := t.TempDir()
	e := mixture(t, 400, 8, 0)
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
	g := filepath.Join(dir, "g.npy")
	mustRun(t, "graph", "-emb", emb, "-out", g, "-m", "50", "-k", "7", "-seed", "3")
	common := []string{"batches", "-m", "50", "-k", "7", "-seed", "3", "-b", "20", "-alpha", "0.25", "-steps", "40"}
	a, b := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy")
	mustRun(t, append(common, "-emb", emb, "-out", a)...)
	mustRun(t, append(common, "-graph", g, "-out", b)...)
	if !equalBatches(readBatches(t, a), readBatches(t, b)) {
		t.Fatal("batches from the graph file differ from batches from the embeddings")
	}
}

func TestBatchesErrors(t *testing.T) {
	dir := t.TempDir()
	e := mixture(t, 200, 8, 0)
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
	nan := sampler.Embeddings{N: e.N, D: e.D, Data: slices.Clone(e.Data)}
	nan.Data[5*8+3] = float32(nanValue())
	nanPath := writeTemp(t, dir, "nan.npy", npyBytes(t, nan))
	vec := writeTemp(t, dir, "vec.npy", func() []byte {
		var b bytes.Buffer
		npy.WriteFloat32s(&b, []int{4}, []float32{1, 2, 3, 4})
		return b.Bytes()
	}())
	g := filepath.Join(dir, "g.npy")
	mustRun(t, "graph", "-emb", emb, "-out", g, "-m", "40", "-k", "5")
	shard := filepath.Join(dir, "s.npy")
	mustRun(t, "graph", "-emb", emb, "-out", shard, "-m", "40", "-k", "5", "-rows", ":50")
	state := filepath.Join(dir, "st.bin")
	mustRun(t, "batches", "-emb", emb, "-m", "40", "-k", "5", "-b", "20", "-alpha", "0.2", "-refresh-every", "5", "-steps", "5", "-state", state, "-out", filepath.Join(dir, "o.npy"))
	damaged := writeTemp(t, dir, "damaged.bin", func() []byte { b, _ := os.ReadFile(state); b[len(b)/2] ^= 0xff; return b }())
	out := filepath.Join(dir, "x.npy")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"-emb", emb}, "-out is required"},
		{"both inputs", []string{"-emb", emb, "-graph", g, "-out", out}, "not both"},
		{"no input", []string{"-alpha", "0.2", "-out", out}, "N is not known"},
		{"linear alpha without T", []string{"-emb", emb, "-out", out}, "-alpha 0.2:0.05 (the default) decays α linearly over the T training steps, and T is not given: give -total-steps T or -epochs E"},
		{"nan row", []string{"-emb", nanPath, "-alpha", "0.2", "-out", out}, "row 5 column 3 is NaN"},
		{"1-D", []string{"-emb", vec, "-alpha", "0.2", "-out", out}, "shape (4,): want a 2-D array"},
		{"shard as graph", []string{"-graph", shard, "-m", "40", "-k", "5", "-alpha", "0.2", "-out", out}, "merge the shards first"},
		{"graph K", []string{"-graph", g, "-b", "20", "-k", "6", "-alpha", "0.2", "-out", out}, "want K = 6"},
		{"refresh due", []string{"-m", "40", "-k", "5", "-b", "20", "-alpha", "0.2", "-refresh-every", "5", "-state", state, "-out", out}, "refresh due before step 5: give -emb"},
		{"state mismatch", []string{"-emb", emb, "-m", "41", "-k", "5", "-alpha", "0.2", "-refresh-every", "5", "-state", state, "-out", out}, "-m 41 differs from"},
		{"damaged state", []string{"-emb", emb, "-alpha", "0.2", "-state", damaged, "-out", out}, "checksum mismatch"},
		{"bad alpha", []string{"-emb", emb, "-alpha", "x", "-out", out}, `-alpha "x"`},
		{"alpha range", []string{"-emb", emb, "-alpha", "1.5", "-out", out}, "-alpha (start): must be in [0, 1]"},
		{"b > n", []string{"-emb", emb, "-alpha", "0.2", "-b", "500", "-out", out}, "want 2 ≤ B ≤ N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCmd(t, append([]string{"batches"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func nanValue() float64 { return zero() / zero() }

func zero() float64 { return 0 }

func TestGraphErrors(t *testing.T) {
	dir := t.TempDir()
	e := mixture(t, 100, 4, 0)
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
	trunc := writeTemp(t, dir, "t.npy", npyBytes(t, e)[:300])
	out := filepath.Join(dir, "g.npy")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no emb", []string{"-out", out}, "-emb and -out are required"},
		{"rows", []string{"-emb", emb, "-out", out, "-rows", "5:200"}, "want 0 ≤ a ≤ b ≤ N = 100"},
		{"rows syntax", []string{"-emb", emb, "-out", out, "-rows", "5"}, "want a:b"},
		{"m < k", []string{"-emb", emb, "-out", out, "-m", "5", "-k", "10"}, "want M ≥ K"},
		{"truncated", []string{"-emb", trunc, "-out", out}, "data truncated"},
		{"missing file", []string{"-emb", filepath.Join(dir, "nope.npy"), "-out", out}, "no such file"},
		{"kind", []string{"-emb", emb, "-out", out, "-graph-kind", "full"}, `graph kind "full"`},
		{"candidates", []string{"-emb", emb, "-out", out, "-candidates", "some"}, `-candidates "some": want one of without_replacement, with_replacement`},
		{"candidates knn", []string{"-emb", emb, "-out", out, "-graph-kind", "knn", "-candidates", "with_replacement"}, "only for -graph-kind proximity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCmd(t, append([]string{"graph"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := runCmd(t, "graph", "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("graph -h: %v, want flag.ErrHelp", err)
	}
}

// TestSpecFile: a YAML sampler entry (the training configs' schema) gives
// the batches of the same settings as flags, and flags override it.
func TestSpecFile(t *testing.T) {
	dir := t.TempDir()
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, mixture(t, 300, 8, 0)))
	spec := writeTemp(t, dir, "s.yaml", []byte("kind: batchsampler\nm: 60\nk: 6\nwalk: rw\nalpha: 0.3\nrefresh_every: 7\n"))
	a, b, c := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy"), filepath.Join(dir, "c.npy")
	mustRun(t, "batches", "-spec", spec, "-emb", emb, "-b", "20", "-out", a, "-steps", "20")
	mustRun(t, "batches", "-m", "60", "-k", "6", "-walk", "rw", "-alpha", "0.3", "-refresh-every", "7", "-emb", emb, "-b", "20", "-out", b, "-steps", "20")
	mustRun(t, "batches", "-spec", spec, "-walk", "rwr", "-emb", emb, "-b", "20", "-out", c, "-steps", "20")
	if !equalBatches(readBatches(t, a), readBatches(t, b)) {
		t.Fatal("-spec and the same flags give different batches")
	}
	if equalBatches(readBatches(t, a), readBatches(t, c)) {
		t.Fatal("-walk did not override the spec file's walk")
	}
	bad := writeTemp(t, dir, "bad.yaml", []byte("kind: batchsampler\nmm: 60\n"))
	if _, err := runCmd(t, "batches", "-spec", bad, "-emb", emb, "-out", a); err == nil || !strings.Contains(err.Error(), "field mm not found") {
		t.Fatalf("unknown key: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyToy copies the TU fixture of the data package into dir/tu/TOY.
func copyToy(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join("..", "..", "data", "testdata", "tu", "TOY")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "tu", "TOY")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dst, e.Name()), string(b))
	}
	return dst
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	toy := copyToy(t, dir)
	good := "data: {source: tu, name: TOY, path: tu/TOY, root: " + dir + "}\n"
	cases := []struct {
		name   string
		config string
		args   []string
		setup  func()
		want   []string
	}{
		{name: "bad key", config: good + "trian: {epochs: 2}\n", want: []string{"trian", "unknown key", "allowed keys", "train"}},
		{name: "bad nested key", config: good + "train: {epochs: 2, bach_size: 3}\n", want: []string{"train.bach_size", "line 2", "batch_size"}},
		{name: "bad set key", config: good, args: []string{"-set", "model.hiden=3"}, want: []string{"model.hiden", "unknown key", "hidden"}},
		{name: "bad value", config: good + "loss: {kind: infonce, form: graphcl, temperature: -1}\n", want: []string{"loss.temperature"}},
		{name: "missing config", args: []string{"-config", filepath.Join(dir, "nope.yaml")}, want: []string{"nope.yaml", "no such file"}},
		{name: "missing dataset dir", config: "data: {source: tu, name: TOY, path: tu/NOPE, root: " + dir + "}\n", want: []string{"NOPE", "TOY_"}},
		{name: "truncated dataset file", config: good, setup: func() {
			// Cut the graph indicator: fewer lines than nodes in A.txt / node labels.
			p := filepath.Join(toy, "TOY_graph_indicator.txt")
			b, _ := os.ReadFile(p)
			lines := strings.SplitAfter(string(b), "\n")
			writeFile(t, p, strings.Join(lines[:4], ""))
		}, want: []string{"TOY_", "line"}},
		{name: "resume with config", args: []string{"-resume", dir, "-config", "x.yaml"}, want: []string{"-resume"}},
		{name: "no runs at once", config: good, args: []string{"-parallel", "0"}, want: []string{"-parallel 0", "at least 1"}},
		{name: "shard of a run", config: good, args: []string{"-shard", "0/2"}, want: []string{"-shard go with a config that has a sweep: section", "cmd/table -shard"}},
		{name: "bad shard", config: good, args: []string{"-shard", "2/2"}, want: []string{`-shard "2/2"`, "0 ≤ i < n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			args := tc.args
			if tc.config != "" {
				p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".yaml")
				writeFile(t, p, tc.config)
				args = append([]string{"-config", p, "-out", filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "_"))}, args...)
			}
			err := run(args)
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestEmbeddedDefaultConfigParses(t *testing.T) {
	dir := t.TempDir()
	// -print-config exercises the embedded default without training.
	old := os.Stdout
	f, err := os.Create(filepath.Join(dir, "out.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout = f
	err = run([]string{"-print-config"})
	os.Stdout = old
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.yaml"))
	if !strings.Contains(string(b), "source: synthetic") {
		t.Errorf("printed config:\n%s", b)
	}
}

// TestHelpAndPlots: -h is not an error, and -plots redraws the plots of a
// run directory from its metrics (and names the directory when it has none).
func TestHelpAndPlots(t *testing.T) {
	if err := run([]string{"-h"}); err != nil {
		t.Errorf("-h: %v", err)
	}
	dir := t.TempDir()
	if err := run([]string{"-plots", dir}); err == nil || !strings.Contains(err.Error(), "metrics.jsonl") {
		t.Errorf("-plots on a directory without metrics: %v", err)
	}
	writeFile(t, filepath.Join(dir, "metrics.jsonl"), `{"run":"uniform-seed0","sampler":"uniform","step":1,"epoch":1,"loss":2.5,"fn_ratio":0.5}
{"event":"epoch_end","run":"uniform-seed0","step":1,"epoch":1,"fn_ratio_mean":0.5}
`)
	if err := run([]string{"-plots", dir}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"loss.png", "fn_ratio.png", "similarity_hist.png"} {
		if st, err := os.Stat(filepath.Join(dir, "plots", f)); err != nil || st.Size() == 0 {
			t.Errorf("plots/%s: %v", f, err)
		}
	}
}

// TestProfiles: -cpuprofile and -memprofile write profiles that pprof can
// read, and an unwritable profile path is an error naming the flag.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	if err := run([]string{"-print-config", "-cpuprofile", cpu, "-memprofile", mem}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// A pprof profile is a gzipped protocol buffer.
		if len(b) < 20 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, not a gzipped profile", p, len(b))
		}
	}
	bad := filepath.Join(dir, "no-such-dir", "cpu.pprof")
	if err := run([]string{"-print-config", "-cpuprofile", bad}); err == nil || !strings.Contains(err.Error(), "-cpuprofile") {
		t.Errorf("unwritable -cpuprofile: error %v, want one naming -cpuprofile", err)
	}
	if err := run([]string{"-print-config", "-memprofile", bad}); err == nil || !strings.Contains(err.Error(), "-memprofile") {
		t.Errorf("unwritable -memprofile: error %v, want one naming -memprofile", err)
	}
}

// A config with a sweep: section runs as a sweep: -plan runs nothing, the
// sweep writes sweep.md, -resume DIR and -assemble read it again, and the
// sweep flags are refused with an ordinary config.
func TestSweepCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 6 tiny runs")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "sweep.yaml")
	writeFile(t, cfg, `name: tiny-sweep
modality: graph
data:
  source: synthetic
  synthetic: {graphs: 90, classes: 3, min_nodes: 8, max_nodes: 14, node_labels: 2, noise: 0.1, seed: 3}
model: {kind: gin, hidden: 8, layers: 2}
loss: {kind: infonce, form: graphcl, temperature: 0.2}
samplers:
  - {kind: uniform}
  - {kind: batchsampler, m: 40, k: 10, alpha: {start: 0.2, end: 0.05}, refresh_every: 3}
train: {epochs: 2, batch_size: 32, lr: 0.01}
eval: {kind: svm, folds: 3, inner_folds: 2, cs: [0.1, 10]}
seeds: [0, 1]
sweep:
  baseline: uniform
  axes:
    - key: samplers[1].refresh_every
      name: t
      values: [2, 4]
`)
	out := filepath.Join(dir, "out")
	if err := run([]string{"-config", cfg, "-out", out, "-plan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("-plan made the sweep directory")
	}
	if err := run([]string{"-config", cfg, "-out", out}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "sweep.md"))
	if err != nil || !strings.Contains(string(md), "| t | 2 | 4 |") {
		t.Fatalf("sweep.md (%v):\n%s", err, md)
	}
	for _, d := range []string{"baseline", "points/t=2", "points/t=4"} {
		if _, err := os.Stat(filepath.Join(out, d, "results.json")); err != nil {
			t.Errorf("cell %s: %v", d, err)
		}
	}
	os.Remove(filepath.Join(out, "sweep.md"))
	if err := run([]string{"-resume", out}); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(out, "sweep.md"))
	cut := func(b []byte) string { s, _, _ := strings.Cut(string(b), "### Compute"); return s }
	if err != nil || cut(again) != cut(md) {
		t.Errorf("-resume of a finished sweep changed sweep.md (%v):\n%s\nvs\n%s", err, again, md)
	}
	if err := run([]string{"-config", cfg, "-out", out, "-assemble"}); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-config", cfg, "-out", out, "-set", "train.lr=0.02"}); err == nil || !strings.Contains(err.Error(), "-rerun") {
		t.Errorf("a changed config: %v", err)
	}
	if err := run([]string{"-plan"}); err == nil || !strings.Contains(err.Error(), "go with a config that has a sweep: section") {
		t.Errorf("-plan with the embedded default: %v", err)
	}
}

// TestExportTU: -export-tu writes the config's graph dataset in the TU
// format (the embedded default's 600 generated graphs; the TOY fixture read
// through a config), and refuses other modalities and -resume.
func TestExportTU(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"-export-tu", filepath.Join(dir, "gen")}); err != nil {
		t.Fatal(err)
	}
	s, err := data.ReadTU(filepath.Join(dir, "gen", "synthetic"), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Graphs) != 600 || s.NumClasses != 3 || s.NumNodeLabels != 3 {
		t.Errorf("exported %d graphs, %d classes, %d node labels; want 600, 3, 3", len(s.Graphs), s.NumClasses, s.NumNodeLabels)
	}

	toy := copyToy(t, dir)
	want, err := data.ReadTU(toy, "TOY")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "toy.yaml")
	writeFile(t, cfg, "name: toy\nmodality: graph\ndata: {source: tu, name: TOY, path: tu/TOY, root: "+dir+"}\n")
	if err := run([]string{"-config", cfg, "-export-tu", filepath.Join(dir, "out")}); err != nil {
		t.Fatal(err)
	}
	got, err := data.ReadTU(filepath.Join(dir, "out", "TOY"), "TOY")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Graphs) != len(want.Graphs) || got.Graphs[1].NumNodes != want.Graphs[1].NumNodes || len(got.Graphs[1].Edges) != len(want.Graphs[1].Edges) {
		t.Errorf("TOY exported as %d graphs, want %d", len(got.Graphs), len(want.Graphs))
	}

	img := filepath.Join(dir, "img.yaml")
	writeFile(t, img, "name: img\nmodality: image\ndata: {source: synthetic}\n")
	if err := run([]string{"-config", img, "-export-tu", dir}); err == nil || !strings.Contains(err.Error(), "only a graph dataset") {
		t.Errorf("image config: %v, want an error naming the graph-only export", err)
	}
	if err := run([]string{"-resume", dir, "-export-tu", dir}); err == nil || !strings.Contains(err.Error(), "not -resume") {
		t.Errorf("-resume with -export-tu: %v, want an error naming -resume", err)
	}
}

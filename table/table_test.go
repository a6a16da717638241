package table

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/paper"
	"github.com/batchsampler-go/batchsampler/train"
)

func TestPaperGraph(t *testing.T) {
	tests := []struct {
		block, sampler, dataset string
		want                    string // "" = none
	}{
		{BlockGraphCL, "uniform", "IMDB-BINARY", "70.90±0.53"},
		{BlockGraphCL, "batchsampler", "MUTAG", "87.78±0.93"},
		{BlockDCL, "knn", "REDDIT-BINARY", "90.26±1.03"},
		{BlockHCL, "batchsampler", "NCI1", "79.17±0.27"},
		{BlockMVGRL, "batchsampler", "MUTAG", "91.13±0.81"},
		{BlockMVGRL, "knn", "IMDB-MULTI", "50.70±0.36"},
		{BlockMVGRL, "uniform", "COLLAB", ""},
		{BlockMVGRL, "uniform", "NCI1", ""},
		{BlockGraphCL, "uniform", "ENZYMES", ""},
		{"simclr", "uniform", "MUTAG", ""},
	}
	for _, tt := range tests {
		got, ok := PaperGraph(tt.block, tt.sampler, tt.dataset)
		if tt.want == "" {
			if ok {
				t.Errorf("%s/%s/%s: got %v, want none", tt.block, tt.sampler, tt.dataset, got)
			}
			continue
		}
		if !ok || got.String() != tt.want {
			t.Errorf("%s/%s/%s: got %v (%v), want %s", tt.block, tt.sampler, tt.dataset, got, ok, tt.want)
		}
	}
	// Every row has one entry per dataset of the paper.
	for blk, rows := range paperGraphRows {
		for smp, row := range rows {
			if n := len(strings.Fields(row)); n != len(paper.GraphDatasets) {
				t.Errorf("%s/%s: %d cells, want %d", blk, smp, n, len(paper.GraphDatasets))
			}
		}
	}
}

// TestGraphConfigsMatchShippedConfigs: on the datasets of the shipped
// configs, the table's cells are those configs with the kNN row added (so
// their Uniform and BatchSampler rows reproduce the recorded results).
func TestGraphConfigsMatchShippedConfigs(t *testing.T) {
	tu := func(name string) GraphData { return GraphData{Name: name, Source: "tu", Path: "tu/" + name} }
	tests := []struct {
		file, block string
		d           GraphData
		n           int
		sets        []string // applied to the shipped config before comparing
	}{
		{"graphcl-mutag.yaml", BlockGraphCL, tu("MUTAG"), 188, nil},
		{"graphcl-dcl-mutag.yaml", BlockDCL, tu("MUTAG"), 188, nil},
		{"graphcl-hcl-mutag.yaml", BlockHCL, tu("MUTAG"), 188, nil},
		{"graphcl-imdb-b.yaml", BlockGraphCL, tu("IMDB-BINARY"), 1000, nil},
		{"graphcl-dcl-imdb-b.yaml", BlockDCL, tu("IMDB-BINARY"), 1000, nil},
		{"graphcl-hcl-imdb-b.yaml", BlockHCL, tu("IMDB-BINARY"), 1000, nil},
		{"graphcl-nci1.yaml", BlockGraphCL, tu("NCI1"), 4110, nil},
		{"graphcl-collab.yaml", BlockGraphCL, GraphData{Name: "COLLAB", Source: "gin", Path: "tu_gin_format/COLLAB/COLLAB.txt.gz"}, 5000, nil},
		{"mvgrl-mutag.yaml", BlockMVGRL, tu("MUTAG"), 188, []string{"data.features=auto-degree"}},
		// IMDB-BINARY has neither node labels nor attributes: auto-degree
		// is the config's degree (data's TestSetFeaturesErrors checks it).
		{"mvgrl-imdb-b.yaml", BlockMVGRL, tu("IMDB-BINARY"), 1000, []string{"data.features=auto-degree"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := GraphConfig(tt.block, tt.d, tt.n, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := train.LoadConfig(filepath.Join("..", "configs", tt.file), tt.sets)
			if err != nil {
				t.Fatal(err)
			}
			// The shipped config without the kNN row: compare its rows with
			// the cell's Uniform and BatchSampler rows.
			var cellRows []string
			for _, s := range got.SamplerList() {
				if s.Kind != "knn" {
					cellRows = append(cellRows, fmt.Sprintf("%+v", s))
				}
			}
			var shipped []string
			for _, s := range want.SamplerList() {
				if s.Kind != "knn" {
					shipped = append(shipped, fmt.Sprintf("%+v", s))
				}
			}
			if !reflect.DeepEqual(cellRows, shipped) {
				t.Errorf("samplers:\ncell    %v\nshipped %v", cellRows, shipped)
			}
			want.Name, want.Samplers, want.Sampler = got.Name, got.Samplers, got.Sampler
			var a, b bytes.Buffer
			if err := train.WriteConfig(&a, &got); err != nil {
				t.Fatal(err)
			}
			if err := train.WriteConfig(&b, &want); err != nil {
				t.Fatal(err)
			}
			if a.String() != b.String() {
				t.Errorf("cell config differs from %s:\n--- cell\n%s--- shipped\n%s", tt.file, a.String(), b.String())
			}
		})
	}
}

func TestSettingsAndEpochs(t *testing.T) {
	for _, d := range paper.GraphDatasets {
		if _, ok := SettingsFor(d); !ok {
			t.Errorf("%s: no appendix settings", d)
		}
	}
	// The appendix's settings with MVGRL's caps where graphs are large or
	// dense, as they were written out before paper.GraphAppendix held them.
	for d, want := range map[string][7]int{ // B, epochs, t, M, K, top-k, max degree
		"IMDB-BINARY":   {256, 100, 25, 500, 100, 0, 0},
		"IMDB-MULTI":    {128, 50, 25, 500, 100, 0, 0},
		"COLLAB":        {128, 20, 50, 1000, 100, DefaultDiffusionTopK, 0},
		"REDDIT-BINARY": {128, 50, 50, 500, 100, DefaultDiffusionTopK, DefaultMVGRLMaxDegree},
		"PROTEINS":      {128, 20, 50, 500, 100, DefaultDiffusionTopK, 0},
		"MUTAG":         {128, 20, 50, 100, 50, 0, 0},
		"NCI1":          {128, 20, 50, 1000, 100, 0, 0},
	} {
		s, _ := SettingsFor(d)
		if got := [7]int{s.BatchSize, s.Epochs, s.RefreshEvery, s.M, s.K, s.DiffusionTopK, s.MVGRLMaxDegree}; got != want {
			t.Errorf("%s: settings %v, want %v", d, got, want)
		}
	}
	if s, ok := SettingsFor("ENZYMES"); ok || s != DefaultGraphSettings {
		t.Errorf("ENZYMES: %+v %v, want the defaults", s, ok)
	}
	for _, tt := range []struct{ n, b, want int }{{188, 128, 100}, {256, 128, 100}, {257, 128, 20}, {1000, 128, 20}} {
		if got := MVGRLEpochs(tt.n, tt.b); got != tt.want {
			t.Errorf("MVGRLEpochs(%d, %d) = %d, want %d", tt.n, tt.b, got, tt.want)
		}
	}
	// MVGRL's one-hot degrees are capped where they would not fit in memory
	// (REDDIT-BINARY, unnamed datasets) and nowhere else; GIN's features
	// never are.
	for _, tt := range []struct {
		block, name string
		want        int
	}{
		{BlockMVGRL, "REDDIT-BINARY", DefaultMVGRLMaxDegree},
		{BlockMVGRL, "ENZYMES", DefaultMVGRLMaxDegree},
		{BlockMVGRL, "COLLAB", 0},
		{BlockMVGRL, "IMDB-BINARY", 0},
		{BlockGraphCL, "REDDIT-BINARY", 0},
	} {
		cfg, err := GraphConfig(tt.block, GraphData{Name: tt.name, Source: "gin", Path: "tu_gin_format/" + tt.name + "/" + tt.name + ".txt"}, 2000, "", nil)
		if err != nil {
			t.Fatalf("%s on %s: %v", tt.block, tt.name, err)
		}
		if cfg.Data.MaxDegree != tt.want {
			t.Errorf("%s on %s: data.max_degree %d, want %d", tt.block, tt.name, cfg.Data.MaxDegree, tt.want)
		}
	}
	if _, err := GraphConfigYAML("simclr", GraphData{Name: "MUTAG", Source: "tu", Path: "tu/MUTAG"}, 188, ""); err == nil || !strings.Contains(err.Error(), "graphcl, dcl, hcl, mvgrl") {
		t.Errorf("unknown block: %v", err)
	}
}

// writeGIN writes s in the GIN text format to path (gzipped for .gz).
func writeGIN(t *testing.T, s *data.GraphSet, path string) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n", len(s.Graphs))
	for _, g := range s.Graphs {
		fmt.Fprintf(&b, "%d %d\n", g.NumNodes, g.Label)
		nb := make([][]int32, g.NumNodes)
		for _, e := range g.Edges {
			nb[e[0]] = append(nb[e[0]], e[1])
			if e[0] != e[1] {
				nb[e[1]] = append(nb[e[1]], e[0])
			}
		}
		for v := range g.NumNodes {
			fmt.Fprintf(&b, "0 %d", len(nb[v]))
			for _, u := range nb[v] {
				fmt.Fprintf(&b, " %d", u)
			}
			b.WriteString("\n")
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	if strings.HasSuffix(path, ".gz") {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(out)
		w.Close()
		out = z.Bytes()
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testRoot makes a data root with a generated dataset GEN (GIN format,
// 60 noisy graphs, 3 classes) and the TU test fixture TOY.
func testRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	s, err := data.GenerateGraphs(data.SynthConfig{Graphs: 60, Classes: 3, MinNodes: 6, MaxNodes: 14, Noise: 0.7}, 5)
	if err != nil {
		t.Fatal(err)
	}
	writeGIN(t, s, filepath.Join(root, "tu_gin_format", "GEN", "GEN.txt.gz"))
	toy := filepath.Join(root, "tu", "TOY")
	if err := os.MkdirAll(toy, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join("..", "data", "testdata", "tu", "TOY", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(toy, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLocateDiscoverCount(t *testing.T) {
	root := testRoot(t)
	if got := DiscoverGraphs(root); !reflect.DeepEqual(got, []string{"GEN", "TOY"}) {
		t.Errorf("discover: %v", got)
	}
	d, err := LocateGraphs(root, "GEN")
	if err != nil || d.Source != "gin" || d.Path != "tu_gin_format/GEN/GEN.txt.gz" {
		t.Fatalf("GEN: %+v %v", d, err)
	}
	if n, err := CountGraphs(root, d); n != 60 || err != nil {
		t.Errorf("GEN: %d graphs, %v", n, err)
	}
	d, err = LocateGraphs(root, "TOY")
	if err != nil || d.Source != "tu" || d.Path != "tu/TOY" {
		t.Fatalf("TOY: %+v %v", d, err)
	}
	if n, err := CountGraphs(root, d); n != 4 || err != nil { // its file ends with a blank line
		t.Errorf("TOY: %d graphs, %v", n, err)
	}
	for _, name := range []string{"PROTEINS", "../tu", ""} {
		if _, err := LocateGraphs(root, name); err == nil {
			t.Errorf("%q: found", name)
		}
	}
	_, err = LocateGraphs(root, "PROTEINS")
	if !strings.Contains(err.Error(), "cmd/download -dataset PROTEINS") {
		t.Errorf("missing dataset error: %v", err)
	}
	// A dataset directory linked into a root is found like one in place,
	// in either layout; a link to nothing is not a dataset.
	linked := t.TempDir()
	for _, sub := range []string{"tu", "tu_gin_format"} {
		if err := os.MkdirAll(filepath.Join(linked, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range [][2]string{{"tu/TOY", "tu/TOY"}, {"tu_gin_format/GEN", "tu_gin_format/GEN"}, {"tu/NONE", "tu/NONE"}} {
		if err := os.Symlink(filepath.Join(root, l[0]), filepath.Join(linked, l[1])); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	if got := DiscoverGraphs(linked); !reflect.DeepEqual(got, []string{"GEN", "TOY"}) {
		t.Errorf("discover through links: %v", got)
	}
	// A truncated GIN file says which file and line.
	bad := filepath.Join(root, "tu_gin_format", "BAD", "BAD.txt")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("many\n"), 0o644)
	if _, err := CountGraphs(root, GraphData{Name: "BAD", Source: "gin", Path: "tu_gin_format/BAD/BAD.txt"}); err == nil || !strings.Contains(err.Error(), "BAD.txt line 1") {
		t.Errorf("bad count: %v", err)
	}
}

// quick are the overrides that make a cell take a second or two.
var quick = []string{"seeds=[0, 1]", "train.epochs=2", "train.batch_size=16", "eval.folds=3", "eval.inner_folds=2",
	"model.hidden=8", "samplers=[{kind: uniform}, {kind: knn, refresh_every: 2}, {kind: batchsampler, m: 20, k: 5, walk: rwr, graph: proximity, alpha: {start: 0.2, end: 0.05}, refresh_every: 2}]"}

func TestRunResumeAssemble(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 12 small runs")
	}
	root := testRoot(t)
	plan, err := PlanGraphs(PlanOptions{Root: root, Datasets: []string{"GEN", "PROTEINS"}, Blocks: []string{BlockGraphCL, BlockMVGRL}, Sets: quick}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Cells) != 2 || len(plan.Skipped) != 1 || !strings.Contains(plan.Skipped[0], "PROTEINS") {
		t.Fatalf("plan: %d cells, skipped %q", len(plan.Cells), plan.Skipped)
	}
	if c := plan.Cells[1].Config; c.Method != "mvgrl" || c.Data.Features != "auto-degree" || c.Model.Diffusion.TopK != DefaultDiffusionTopK || c.Data.Root != root {
		t.Errorf("mvgrl cell: method %q features %q top_k %d root %q", c.Method, c.Data.Features, c.Model.Diffusion.TopK, c.Data.Root)
	}

	// Reference: the whole table in one go.
	ref := t.TempDir()
	sts, err := cellrun.Run(context.Background(), plan.Cells, cellrun.Options{Dir: ref})
	if err != nil {
		t.Fatal(err)
	}
	want := AssembleGraphs(sts, plan, quick, 0)
	if len(want.Failed) != 0 || len(want.Entries) != 6 {
		t.Fatalf("reference table: %d entries, failed %q", len(want.Entries), want.Failed)
	}
	for _, e := range want.Entries {
		if len(e.PerSeed) != 2 || e.Mean <= 0 || (e.Sampler != "uniform") != (e.Paired != nil) {
			t.Errorf("entry %+v", e)
		}
	}

	// Interrupted after the first cell's third step, then continued: same
	// numbers, and the finished cell is not run again.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	obs := train.Observer{Step: func(train.StepInfo) {
		if steps++; steps == 3 {
			cancel()
		}
	}}
	_, err = cellrun.Run(ctx, plan.Cells, cellrun.Options{Dir: dir, Observer: obs})
	if !errors.Is(err, train.ErrInterrupted) {
		t.Fatalf("interrupted table: %v", err)
	}
	sts, err = cellrun.Run(context.Background(), plan.Cells[:1], cellrun.Options{Dir: dir})
	if err != nil || !sts[0].Ran {
		t.Fatalf("resume: %v, ran %v", err, sts[0].Ran)
	}
	var logs []string
	sts, err = cellrun.Run(context.Background(), plan.Cells, cellrun.Options{Dir: dir, Log: func(m string) { logs = append(logs, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if sts[0].Ran || !sts[1].Ran || !strings.Contains(logs[0], "finished earlier") {
		t.Errorf("second pass: ran %v %v, log %q", sts[0].Ran, sts[1].Ran, logs)
	}
	got := AssembleGraphs(sts, plan, quick, 0)
	for i := range want.Entries {
		w, g := want.Entries[i], got.Entries[i]
		if !reflect.DeepEqual(w.PerSeed, g.PerSeed) || w.Sampler != g.Sampler || w.Block != g.Block {
			t.Errorf("entry %d: resumed %s/%s %v, uninterrupted %s/%s %v", i, g.Block, g.Sampler, g.PerSeed, w.Block, w.Sampler, w.PerSeed)
		}
	}
	if err := got.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "table.md"))
	for _, s := range []string{"| Method | GEN |", "| GraphCL |", "| w/ kNN Sampler |", "| w/ BatchSampler |", "| MVGRL |", "PROTEINS: not under", "Overrides applied to every cell"} {
		if !bytes.Contains(md, []byte(s)) {
			t.Errorf("table.md lacks %q:\n%s", s, md)
		}
	}

	// A cell whose directory holds another config fails alone; cellrun.Read
	// reports it too.
	plan2, err := PlanGraphs(PlanOptions{Root: root, Datasets: []string{"GEN"}, Blocks: []string{BlockGraphCL, BlockMVGRL}, Sets: append(quick[:len(quick):len(quick)], "train.lr=0.02")}, "unused")
	if err != nil {
		t.Fatal(err)
	}
	read := cellrun.Read(plan2.Cells, dir)
	for _, st := range read {
		if !errors.Is(st.Err, cellrun.ErrConfigChanged) {
			t.Errorf("%s: %v, want ErrConfigChanged", st.Dir, st.Err)
		}
	}
	if read := cellrun.Read(plan.Cells, dir); read[0].Err != nil || read[1].Err != nil || read[0].Results == nil {
		t.Errorf("read finished cells: %v %v", read[0].Err, read[1].Err)
	}
}

func TestPlanErrors(t *testing.T) {
	root := testRoot(t)
	if _, err := PlanGraphs(PlanOptions{Root: root, Blocks: []string{"simclr"}}, ""); err == nil || !strings.Contains(err.Error(), `"simclr"`) {
		t.Errorf("bad block: %v", err)
	}
	if _, err := PlanGraphs(PlanOptions{Root: root, Datasets: []string{"NOPE"}}, ""); err == nil || !strings.Contains(err.Error(), "NOPE: not under") {
		t.Errorf("no dataset: %v", err)
	}
	if _, err := PlanGraphs(PlanOptions{Root: t.TempDir()}, ""); err == nil || !strings.Contains(err.Error(), "no TU dataset under") {
		t.Errorf("empty root: %v", err)
	}
	if _, err := PlanGraphs(PlanOptions{Root: root, Datasets: []string{"GEN"}, Sets: []string{"train.bogus=1"}}, ""); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("bad override: %v", err)
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/table"
	"github.com/batchsampler-go/batchsampler/train"
)

// sharedRoot is the shared data root, or skips.
func sharedRoot(t *testing.T) string {
	t.Helper()
	root := os.Getenv("BATCHSAMPLER_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	if _, err := os.Stat(filepath.Join(root, "tu", "MUTAG", "MUTAG_A.txt")); err != nil {
		t.Skipf("MUTAG not under %s (set $BATCHSAMPLER_DATA): %v", root, err)
	}
	return root
}

// TestConfigsForCmdTrain: -configs writes one config per cell, and each is
// a valid cmd/train config with the cell's settings.
func TestConfigsForCmdTrain(t *testing.T) {
	root := sharedRoot(t)
	dir := t.TempDir()
	if err := run([]string{"-root", root, "-datasets", "MUTAG,NOPE", "-configs", dir}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"graphcl", "dcl", "hcl", "mvgrl"} {
		cfg, err := train.LoadConfig(filepath.Join(dir, "MUTAG-"+m+".yaml"), nil)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if len(cfg.SamplerList()) != 3 || len(cfg.Seeds) != 5 || cfg.Data.Root != root {
			t.Errorf("%s: %d samplers, %d seeds, root %q", m, len(cfg.SamplerList()), len(cfg.Seeds), cfg.Data.Root)
		}
	}
	if err := run([]string{"-root", root, "-datasets", "NOPE"}); err == nil || !strings.Contains(err.Error(), "NOPE: not under") {
		t.Errorf("only a missing dataset: %v", err)
	}
	if err := run([]string{"-root", root, "-methods", "simclr", "-plan"}); err == nil || !strings.Contains(err.Error(), `"simclr"`) {
		t.Errorf("bad method: %v", err)
	}
}

// TestTableOnMUTAG runs a shortened GraphCL block on MUTAG through the
// command, then assembles it again with -assemble.
func TestTableOnMUTAG(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 6 runs on MUTAG")
	}
	root := sharedRoot(t)
	out := t.TempDir()
	args := []string{"-root", root, "-datasets", "MUTAG", "-methods", "graphcl", "-out", out,
		"-set", "seeds=[0,1]", "-set", "train.epochs=2", "-set", "eval.folds=3", "-set", "eval.inner_folds=2"}
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| Method | MUTAG |", "[86.80±1.34]", "[87.78±0.93]", "w/ kNN Sampler"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("table.md lacks %q:\n%s", s, md)
		}
	}
	os.Remove(filepath.Join(out, "table.md"))
	if err := run(append(args, "-assemble")); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	cut := func(b []byte) string { s, _, _ := strings.Cut(string(b), "### Cost"); return s }
	if cut(again) != cut(md) {
		t.Errorf("-assemble changed the table:\n%s\nvs\n%s", again, md)
	}
}

// TestCompare: -compare reads DIR/table.json and the record, says how many
// runs agree, and fails (exit status 1) when one differs; bad files and
// the text table get errors that name them.
func TestCompare(t *testing.T) {
	rec := &table.GraphTable{Entries: []table.Entry{
		{Dataset: "MUTAG", Block: "graphcl", Sampler: "uniform", Seeds: []uint64{0, 1}, PerSeed: []float64{87.5, 86.25}},
		{Dataset: "MUTAG", Block: "mvgrl", Sampler: "uniform", Seeds: []uint64{0, 1}, PerSeed: []float64{85, 86}},
	}}
	recDir, out := t.TempDir(), t.TempDir()
	if err := rec.Write(recDir); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(recDir, "table.json")
	got := &table.GraphTable{Entries: rec.Entries[:1]}
	if err := got.Write(out); err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	if err := compareTables(&w, record, filepath.Join(out, "table.json")); err != nil {
		t.Fatalf("same runs: %v", err)
	}
	for _, s := range []string{"2 runs in both tables, 2 with the record's accuracy to the last bit", "in the record, not in this table: MUTAG mvgrl (uniform)"} {
		if !strings.Contains(w.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, w.String())
		}
	}
	if err := run([]string{"-compare", record, "-out", out}); err != nil {
		t.Fatalf("through the flags: %v", err)
	}
	got.Entries[0].PerSeed[1] = 86.0
	if err := got.Write(out); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	err := compareTables(&w, record, filepath.Join(out, "table.json"))
	if err == nil || !strings.Contains(err.Error(), "1 differences from "+record) || !strings.Contains(w.String(), "MUTAG graphcl uniform seed 1: accuracy 86, recorded 86.25") {
		t.Errorf("a differing run: %v\n%s", err, w.String())
	}
	disjoint := t.TempDir()
	other := &table.GraphTable{Entries: []table.Entry{{Dataset: "NCI1", Block: "graphcl", Sampler: "uniform", Seeds: []uint64{0}, PerSeed: []float64{79}}}}
	if err := other.Write(disjoint); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-compare", filepath.Join(recDir, "nope.json"), "-out", out}, "nope.json"},
		{[]string{"-compare", record, "-out", recDir + "/absent"}, filepath.Join(recDir, "absent", "table.json")},
		{[]string{"-compare", record, "-modality", "text"}, "graph tables only"},
		{[]string{"-compare", record, "-out", disjoint}, "no run in common"},
	} {
		if err := run(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

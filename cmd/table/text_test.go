package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/train"
)

// textRoot is the shared data root with the text corpora and STS-B, or
// skips.
func textRoot(t *testing.T) string {
	t.Helper()
	root := os.Getenv("BATCHSAMPLER_DATA")
	if root == "" {
		root = filepath.Join("..", "..", "..", "shared", "data")
	}
	for _, f := range []string{"text/gutenberg_sentences.txt", "text/wiki_sentences.txt", "sts/sts-test.csv"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Skipf("%s not under %s (set $BATCHSAMPLER_DATA): %v", f, root, err)
		}
	}
	return root
}

// stdout runs f with os.Stdout captured.
func stdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdout")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = file
	err = f()
	os.Stdout = old
	file.Close()
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	return string(b), err
}

// TestTextFlagErrors: what -modality text refuses, and the missing data
// root, each with an error saying what was expected.
func TestTextFlagErrors(t *testing.T) {
	root := textRoot(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-modality", "audio", "-plan"}, `-modality "audio": expected graph, text or image`},
		{[]string{"-modality", "text", "-root", root, "-datasets", "MUTAG", "-plan"}, "the text table has no datasets to choose"},
		{[]string{"-modality", "text", "-root", root, "-methods", "mvgrl", "-plan"}, `method "mvgrl": expected one of simcse, dcl, hcl`},
		{[]string{"-modality", "graph", "-root", root, "-methods", "simcse", "-plan"}, `method "simcse": expected one of graphcl, dcl, hcl, mvgrl`},
		{[]string{"-modality", "text", "-root", t.TempDir(), "-plan"}, "text/gutenberg_sentences.txt (data.text.corpus[0]): not found"},
		{[]string{"-modality", "text", "-root", root, "-set", "train.bogus=1", "-plan"}, "bogus"},
		{[]string{"-modality", "text", "extra"}, "expected flags only"},
		{[]string{"-parallel", "-1", "-plan"}, "-parallel -1: want at least 1"},
	} {
		if err := run(tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestTextPlanAndConfigs: -plan lists the three cells with their settings
// and the tasks found; -configs writes them for cmd/train.
func TestTextPlanAndConfigs(t *testing.T) {
	root := textRoot(t)
	out, err := stdout(t, func() error { return run([]string{"-modality", "text", "-root", root, "-plan"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"data root: " + root,
		"| simcse | configs/simcse-stsb.yaml | infonce/simcse(τ=0.05) | 64 | 1 | uniform; knn built once before training; batchsampler (M 1000, K 500, α 0.7) built once before training | 3 |",
		"| dcl | configs/simcse-stsb-dcl.yaml | dcl/simcse(τ=0.05,τ⁺=0.1) |",
		"| hcl | configs/simcse-stsb-hcl.yaml | hcl/simcse(τ=0.05,τ⁺=0.1,β=1) |",
		"STS tasks under the data root: ", "STS-B", "3 cells, ", "27 runs, about 25 minutes",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("-plan lacks %q:\n%s", s, out)
		}
	}
	dir := t.TempDir()
	if err := run([]string{"-modality", "text", "-root", root, "-methods", "dcl", "-configs", dir}); err != nil {
		t.Fatal(err)
	}
	cfg, err := train.LoadConfig(filepath.Join(dir, "text-dcl.yaml"), nil)
	if err != nil || cfg.Loss.Kind != "dcl" || cfg.Data.Root != root || len(cfg.SamplerList()) != 3 {
		t.Errorf("text-dcl.yaml: loss %q root %q: %v", cfg.Loss.Kind, cfg.Data.Root, err)
	}
}

// TestTextTableCommand runs a shortened SimCSE cell on the shared corpora
// through the command (the first 1,500 sentences, 16-d vectors), then
// assembles it again with -assemble.
func TestTextTableCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 6 small text runs")
	}
	root := textRoot(t)
	out := t.TempDir()
	args := []string{"-modality", "text", "-root", root, "-methods", "simcse", "-out", out,
		"-set", "seeds=[0,1]", "-set", "data.text.max_sentences=1500", "-set", "data.text.max_vocab=2000", "-set", "data.text.dim=16",
		"-set", "data.text.vectors_cache=", "-set", "model.hidden=16", "-set", "model.proj_dim=16", "-set", "eval.select_every=10",
		"-set", "samplers[2].m=200", "-set", "samplers[2].k=50"}
	if _, err := stdout(t, func() error { return run(args) }); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| Method | STS12 |", "| SimCSE |", "[77.79]", "| w/ kNN Sampler |", "| w/ BatchSampler |", "STS-B ", ", p ",
		"| untrained encoder (reference) |", "| TF-IDF cosine (reference, STS-B only) |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("table.md lacks %q:\n%s", s, md)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "simcse", "results.json")); err != nil {
		t.Errorf("the cell's run directory: %v", err)
	}
	os.Remove(filepath.Join(out, "table.md"))
	if _, err := stdout(t, func() error { return run(append(args, "-assemble")) }); err != nil {
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

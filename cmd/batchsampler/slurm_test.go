package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// TestSlurmGraphArray submits scripts/slurm/graph-array.sbatch to a real
// Slurm cluster as an array of 4 tasks (graph -rows of a quarter of N
// each), then merges the shards: the .npy is byte for byte the graph of
// one build, and the sidecars agree but for build_seconds. It skips
// without sbatch or a cluster that is up (scripts/slurm-local.sh start;
// .ci/run starts one).
func TestSlurmGraphArray(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: submits a Slurm job array")
	}
	env := testenv.Slurm(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	const n = 3001 // not a multiple of 4: unequal shards
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, mixture(t, n, 16, 7)))
	flags := []string{"-m", "120", "-k", "9", "-seed", "5"}
	whole := filepath.Join(dir, "whole.npy")
	mustRun(t, append([]string{"graph", "-emb", emb, "-out", whole}, flags...)...)
	script, err := filepath.Abs("../../scripts/slurm/graph-array.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	parts := filepath.Join(dir, "parts")
	testenv.Sbatch(t, append(env, "BATCHSAMPLER="+bin, "EMB="+emb, "OUT="+parts, fmt.Sprintf("N=%d", n)), 10*time.Minute,
		filepath.Join(dir, "task-*.out"),
		append([]string{"--array=0-3", "--cpus-per-task=1", "--chdir=" + dir, "--output=" + filepath.Join(dir, "task-%a.out"), script}, flags...)...)
	files, err := filepath.Glob(filepath.Join(parts, "part-*.npy"))
	if err != nil || len(files) != 4 {
		t.Fatalf("the array wrote %d shards (%v), want 4", len(files), err)
	}
	merged := filepath.Join(dir, "merged.npy")
	mustRun(t, append([]string{"merge", "-out", merged}, files...)...)
	a, _ := os.ReadFile(whole)
	b, _ := os.ReadFile(merged)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the merged graph of the Slurm array (%d bytes) differs from one build's (%d bytes)", len(b), len(a))
	}
	side := func(p string) map[string]any {
		raw, err := os.ReadFile(p + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "build_seconds")
		return m
	}
	if sa, sb := side(whole), side(merged); fmt.Sprint(sa) != fmt.Sprint(sb) {
		t.Fatalf("sidecars differ:\n%v\n%v", sa, sb)
	}
}

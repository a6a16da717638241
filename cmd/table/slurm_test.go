package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// TestSlurmTableArray submits scripts/slurm/table-array.sbatch to a real
// Slurm cluster as an array of 4 tasks over the 3 cells of a tiny table
// (task 3 has none), then assembles the table: the results part of
// table.md is byte for byte, and every run's accuracy to the last bit
// (-compare), that of one process. It skips without sbatch or a cluster
// that is up (scripts/slurm-local.sh start; .ci/run starts one).
func TestSlurmTableArray(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: submits a Slurm job array")
	}
	root, err := filepath.Abs(sharedRoot(t)) // the tasks run in another directory
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Slurm(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "table")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	one, arr := filepath.Join(dir, "one"), filepath.Join(dir, "array")
	if err := run(tinyTable(root, one)); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../scripts/slurm/table-array.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	flags := tinyTable(root, arr)
	var noOut []string // the script gives -out $OUT
	for i := 0; i < len(flags); i++ {
		if flags[i] == "-out" {
			i++
			continue
		}
		noOut = append(noOut, flags[i])
	}
	logs := filepath.Join(dir, "task-%a.out")
	testenv.Sbatch(t, append(env, "TABLE="+bin, "OUT="+arr), 10*time.Minute, filepath.Join(dir, "task-*.out"),
		append([]string{"--array=0-3", "--cpus-per-task=1", "--chdir=" + dir, "--output=" + logs, script}, noOut...)...)
	var all strings.Builder
	for i := range 4 {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("task-%d.out", i)))
		if err != nil {
			t.Fatalf("task %d wrote no output: %v", i, err)
		}
		all.Write(b)
	}
	for _, want := range []string{"shard 0/4: 1 of 1 cells finished", "shard 1/4: 1 of 1 cells finished", "shard 2/4: 1 of 1 cells finished", "shard 3/4: no cell (the table has 3)"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the tasks' output lacks %q:\n%s", want, all.String())
		}
	}
	if err := run(append(tinyTable(root, arr), "-assemble")); err != nil {
		t.Fatal(err)
	}
	if got, want := resultsPart(t, arr), resultsPart(t, one); got != want {
		t.Fatalf("the table of the Slurm array differs from one process's:\n%s\nvs\n%s", got, want)
	}
	var cmp strings.Builder
	if err := compareTables(&cmp, filepath.Join(one, "table.json"), filepath.Join(arr, "table.json")); err != nil || !strings.Contains(cmp.String(), "9 runs in both tables, 9 with the record's accuracy to the last bit") {
		t.Fatalf("-compare: %v\n%s", err, cmp.String())
	}
}

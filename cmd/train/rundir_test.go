package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/train"
)

const tinyGraphs = `name: tiny
modality: graph
data:
  source: synthetic
  synthetic: {graphs: 60, classes: 3, min_nodes: 8, max_nodes: 12, node_labels: 2, noise: 0.1, seed: 3}
model: {kind: gin, hidden: 8, layers: 2}
loss: {kind: infonce, form: graphcl, temperature: 0.2}
train: {epochs: 1, batch_size: 20, lr: 0.01}
eval: {kind: svm, folds: 3, inner_folds: 2, cs: [0.1, 10]}
seeds: [0]
`

// captureStderr runs f with the command's stderr going to a buffer.
func captureStderr(t *testing.T, f func() error) (string, error) {
	t.Helper()
	var b bytes.Buffer
	old := stderr
	stderr = &b
	defer func() { stderr = old }()
	err := f()
	return b.String(), err
}

// Two `train -resume DIR` at once: the second is refused, naming the
// directory and the process holding it, and changes nothing there.
func TestResumeOfAHeldRunDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	writeFile(t, cfg, tinyGraphs)
	out := filepath.Join(dir, "run")
	if _, err := captureStderr(t, func() error { return run([]string{"-config", cfg, "-out", out}) }); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := train.LockRunDir(out) // the first process, still running
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	msg, err := captureStderr(t, func() error { return run([]string{"-resume", out}) })
	if !errors.Is(err, train.ErrRunDirLocked) {
		t.Fatalf("second -resume: %v, want ErrRunDirLocked", err)
	}
	for _, want := range []string{out, fmt.Sprintf("pid %d", os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(msg, "run directory:") {
		t.Errorf("the refused run printed %q", msg)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "metrics.jsonl")); !bytes.Equal(after, before) {
		t.Error("the refused -resume changed metrics.jsonl")
	}
}

// "run directory: X" is printed once X exists, not when the config fails
// before anything is made.
func TestRunDirectoryPrintedOnlyOnceMade(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tiny.yaml")
	writeFile(t, cfg, tinyGraphs)
	out := filepath.Join(dir, "never")
	msg, err := captureStderr(t, func() error {
		return run([]string{"-config", cfg, "-out", out, "-set", "train.batch_size=500"})
	})
	if err == nil || !strings.Contains(err.Error(), "train.batch_size") {
		t.Fatalf("batch larger than the dataset: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("%s was made", out)
	}
	if strings.Contains(msg, "run directory") {
		t.Errorf("printed %q for a directory that was never made", msg)
	}
}

package cellrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
	"github.com/batchsampler-go/batchsampler/train"
)

func TestPartialNote(t *testing.T) {
	cfg := &train.Config{
		Samplers: []sampler.Spec{{Kind: sampler.KindUniform}, {Kind: sampler.KindKNN}},
		Seeds:    []uint64{0, 1, 2},
	}
	write := func(dir, id, body string) {
		t.Helper()
		p := filepath.Join(dir, "runs", id)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if body != "" {
			if err := os.WriteFile(filepath.Join(p, "result.json"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"no runs", func(string) {}, ""},
		{"a run without result", func(d string) { write(d, "uniform-seed0", "") }, ""},
		{"damaged result", func(d string) { write(d, "uniform-seed0", `{"metric": "linear_probe_accuracy", "val`) }, ""},
		{"two samplers", func(d string) {
			write(d, "uniform-seed0", `{"sampler": "uniform", "seed": 0, "metric": "linear_probe_accuracy", "value": 84.00999999999999}`)
			write(d, "uniform-seed1", `{"sampler": "uniform", "seed": 1, "metric": "linear_probe_accuracy", "value": 84.64}`)
			write(d, "knn-seed0", `{"sampler": "knn", "seed": 0, "metric": "linear_probe_accuracy", "value": 80.5}`)
			write(d, "knn-seed1", "")
		}, "3 of 6 runs finished, linear_probe_accuracy: uniform 84.01 (seed 0), 84.64 (seed 1); knn 80.50 (seed 0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(dir)
			if got := partialNote(cfg, dir); got != tc.want {
				t.Errorf("partialNote = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadNotStarted(t *testing.T) {
	c := Cell{Dir: "nowhere/simclr", Config: train.Config{Seeds: []uint64{0}}}
	st := Read([]Cell{c}, t.TempDir())
	if st[0].Err == nil || !strings.Contains(st[0].Err.Error(), "not started (no directory ") {
		t.Errorf("absent cell: %v", st[0].Err)
	}
}

package train

import (
	"path/filepath"
	"testing"
)

// TestShippedConfigsParse loads every config under configs/ that the
// training command reads (all but the sampler demo's) with the strict
// parser, so that a typo in a shipped config fails here, not an hour into a
// run.
func TestShippedConfigsParse(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "demo-sampler.yaml" { // cmd/samplerdemo's format
			continue
		}
		n++
		if _, err := LoadConfig(f, nil); err != nil {
			t.Errorf("%v", err)
		}
	}
	if n < 10 {
		t.Fatalf("found only %d configs", n)
	}
}

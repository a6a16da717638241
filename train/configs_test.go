package train

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
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

var updateWritten = flag.Bool("update-written", false, "rewrite train/testdata/written/*.yaml from WriteConfig as it stands")

// TestWriteConfigPinned pins the config.yaml that WriteConfig writes for
// every shipped config (testdata/written/NAME.yaml), byte for byte: a run
// directory is resumed, and a table cell recognised (table's sameConfig),
// only when its config.yaml is the one the code writes now, so moving a
// config field must not change a byte of it. Regenerate the files (only for
// an intended change of the format, in its own commit) with
//
//	go test ./train -run TestWriteConfigPinned -update-written
func TestWriteConfigPinned(t *testing.T) {
	files := shippedConfigs(t)
	if len(files) < 10 {
		t.Fatalf("found only %d configs", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if filepath.Base(filepath.Dir(f)) == "train" {
			name = "cmd-train-default"
		}
		t.Run(name, func(t *testing.T) {
			cfg, err := LoadConfig(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteConfig(&got, &cfg); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "written", name+".yaml")
			want := testenv.GoldenFile(t, path, got.Bytes(), *updateWritten, "-update-written")
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("WriteConfig of %s differs from %s:\n%s", f, path, lineDiff(string(want), got.String()))
			}
			// What is written reads back as the same config, and writes
			// the same bytes again.
			back, err := ParseNamedConfig(got.Bytes(), path, nil)
			if err != nil {
				t.Fatalf("read back: %v", err)
			}
			var again bytes.Buffer
			if err := WriteConfig(&again, &back); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), got.Bytes()) {
				t.Errorf("written, read back and written again, %s changes:\n%s", f, lineDiff(got.String(), again.String()))
			}
		})
	}
}

// lineDiff lists the lines where want and got first differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(w), len(g)) && n < 8; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d: want %q\n         got %q\n", i+1, wl, gl)
			n++
		}
	}
	return b.String()
}

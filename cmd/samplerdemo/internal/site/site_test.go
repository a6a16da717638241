package site

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModuleDir: the checkout is found from a directory below it; a
// foreign module or no module is an error that says where to run.
func TestModuleDir(t *testing.T) {
	d, err := ModuleDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(d, "cmd", "samplerdemo", "wasm", "main.go")); err != nil {
		t.Errorf("ModuleDir(.) = %s, which has no cmd/samplerdemo/wasm: %v", d, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(other, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ModuleDir(sub); err == nil || !strings.Contains(err.Error(), `"example.com/other"`) || !strings.Contains(err.Error(), "checkout of batchsampler-go") {
		t.Errorf("ModuleDir in another module: %v", err)
	}
}

func TestFiles(t *testing.T) {
	f, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"index.html", "app.js", "style.css", FileWasm, FileWasmJS, FileExec, FileBuild} {
		if !slices.Contains(f, want) {
			t.Errorf("Files() = %v lacks %s", f, want)
		}
	}
}

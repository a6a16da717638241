package cellrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchsampler-go/batchsampler/internal/tempfile"
)

// WriteAtomic writes a file through a temporary file and a rename, so an
// interrupted write leaves the old file. The temporary file has a name of
// its own (internal/tempfile), so processes writing the same path at once
// (shards of one table or sweep) do not write into each other's.
func WriteAtomic(path string, b []byte) error {
	f, err := tempfile.Create(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteReport writes an assembled grid to dir as NAME.json (v, indented)
// and NAME.md (markdown), each with WriteAtomic.
func WriteReport(dir, name string, v any, markdown string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s.json: %w", name, err)
	}
	if err := WriteAtomic(filepath.Join(dir, name+".json"), append(b, '\n')); err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, name+".md"), []byte(markdown))
}

package cellrun

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestWriteAtomicConcurrent: processes writing one path at once (the shards
// of a table or sweep writing its sweep.yaml) each get a whole file in place
// and leave no temporary file behind; with one temporary name shared by all
// writers, a rename would fail or publish a mixture.
func TestWriteAtomicConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sweep.yaml")
	const writers, writes = 8, 40
	contents := make([][]byte, writers)
	for w := range contents {
		contents[w] = bytes.Repeat([]byte(fmt.Sprintf("writer %d\n", w)), 200*(w+1))
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range writes {
				if err := WriteAtomic(path, contents[w]); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("WriteAtomic: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := false
	for _, c := range contents {
		whole = whole || bytes.Equal(got, c)
	}
	if !whole {
		t.Fatalf("%s holds %d bytes that are no writer's whole file", path, len(got))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("left in %s: %v, want only sweep.yaml", dir, names)
	}
}

// TestWriteReport: NAME.json holds the value, indented, with a final
// newline; NAME.md the markdown; a value JSON cannot encode is an error
// naming the file.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	v := struct {
		A int    `json:"a"`
		B string `json:"b"`
	}{1, "x"}
	if err := WriteReport(dir, "table", v, "# T\n"); err != nil {
		t.Fatal(err)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "table.json"))
	md, _ := os.ReadFile(filepath.Join(dir, "table.md"))
	if string(js) != "{\n  \"a\": 1,\n  \"b\": \"x\"\n}\n" || string(md) != "# T\n" {
		t.Errorf("table.json %q, table.md %q", js, md)
	}
	if err := WriteReport(dir, "sweep", func() {}, ""); err == nil || !strings.HasPrefix(err.Error(), "sweep.json: ") {
		t.Errorf("a func value: %v, want an error naming sweep.json", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sweep.md")); !os.IsNotExist(err) {
		t.Errorf("sweep.md written after the JSON failed (%v)", err)
	}
}

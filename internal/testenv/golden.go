package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// GoldenFile returns the contents of the golden file at path for a test to
// compare got with. When update is true (the package's -update flag, named
// by flagName) it first writes got there, making its directory, so the
// comparison passes and the file records what the code does now. A
// missing file is fatal, with the hint to create it with flagName.
func GoldenFile(t testing.TB, path string, got []byte, update bool, flagName string) []byte {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with %s)", err, flagName)
	}
	return want
}

//go:build unix

package tempfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Create's files have mode 0666 less the umask, are new, and follow the
// pattern.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		old := syscall.Umask(tc.umask)
		f, err := Create(dir, "x.npy.tmp*")
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != tc.want {
			t.Errorf("umask %03o: mode %03o, want %03o", tc.umask, st.Mode().Perm(), tc.want)
		}
		if b := filepath.Base(f.Name()); !strings.HasPrefix(b, "x.npy.tmp") || len(b) == len("x.npy.tmp") {
			t.Errorf("name %s", b)
		}
	}
	seen := map[string]bool{}
	for range 100 {
		f, err := Create(dir, ".a*.b")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if seen[f.Name()] || !strings.HasSuffix(f.Name(), ".b") {
			t.Fatalf("name %s (again: %v)", f.Name(), seen[f.Name()])
		}
		seen[f.Name()] = true
	}
	if _, err := Create(dir, "a/b*"); err == nil {
		t.Error("a pattern with a separator was accepted")
	}
}

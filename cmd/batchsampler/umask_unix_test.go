//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// graph, merge and batches create their files as other programs do: mode
// 0666 less the umask (0644 under the usual 022, 0600 under 077), not
// os.CreateTemp's 0600 whatever the umask.
func TestOutputFilesHonourTheUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		old := syscall.Umask(tc.umask)
		dir := t.TempDir()
		emb := writeTemp(t, dir, "e.npy", npyBytes(t, mixture(t, 200, 8, 0)))
		common := []string{"-emb", emb, "-m", "40", "-k", "5", "-seed", "3"}
		g := filepath.Join(dir, "g.npy")
		mustRun(t, append([]string{"graph", "-out", g}, common...)...)
		var parts []string
		for i, r := range []string{":90", "90:"} {
			p := filepath.Join(dir, "part"+string(rune('0'+i))+".npy")
			mustRun(t, append([]string{"graph", "-out", p, "-rows", r}, common...)...)
			parts = append(parts, p)
		}
		m := filepath.Join(dir, "m.npy")
		mustRun(t, append([]string{"merge", "-out", m}, parts...)...)
		o, s := filepath.Join(dir, "o.npy"), filepath.Join(dir, "s.bin")
		mustRun(t, "batches", "-graph", g, "-m", "40", "-k", "5", "-b", "20", "-alpha", "0.2", "-state", s, "-out", o)
		syscall.Umask(old)
		for _, f := range []string{g, g + ".json", m, m + ".json", o, s} {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != tc.want {
				t.Errorf("umask %03o: %s has mode %03o, want %03o", tc.umask, filepath.Base(f), got, tc.want)
			}
		}
	}
}

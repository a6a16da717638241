package data

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestStaging(t *testing.T) {
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("abandoned", func(t *testing.T) {
		base := t.TempDir()
		target := filepath.Join(base, "root", "tu", "X")
		s, err := NewStaging(target)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(s.Dir()) != filepath.Dir(target) {
			t.Fatalf("staging directory %s is not beside %s", s.Dir(), target)
		}
		write(filepath.Join(s.Dir(), "new", "f"), "new")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if ents, err := os.ReadDir(base); err != nil || len(ents) != 0 {
			t.Fatalf("left %v (%v) in %s", ents, err, base)
		}
	})
	t.Run("abandoned, parent in use", func(t *testing.T) {
		base := t.TempDir()
		target := filepath.Join(base, "root", "tu", "X")
		s, err := NewStaging(target)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(base, "root", "other"), "someone else's") // root/ is no longer empty
		s.Close()
		if _, err := os.Stat(filepath.Join(base, "root", "tu")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("root/tu: %v", err)
		}
		if read(filepath.Join(base, "root", "other")) != "someone else's" {
			t.Fatal("other file changed")
		}
	})
	t.Run("commit, then replace", func(t *testing.T) {
		base := t.TempDir()
		target := filepath.Join(base, "tu", "X")
		for _, content := range []string{"first", "second"} {
			s, err := NewStaging(target)
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(s.Dir(), "new")
			write(filepath.Join(src, "f"), content)
			if content == "first" {
				write(filepath.Join(src, "only-first"), "")
			}
			if err := s.Commit(src); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if read(filepath.Join(target, "f")) != content {
				t.Fatalf("target holds %q, want %q", read(filepath.Join(target, "f")), content)
			}
		}
		ents, _ := os.ReadDir(target)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"f"}) {
			t.Fatalf("target holds %v: the previous copy was not replaced", names)
		}
		if ents, _ := os.ReadDir(filepath.Join(base, "tu")); len(ents) != 1 {
			t.Fatalf("tu/ holds %d entries: staging directory left?", len(ents))
		}
	})
}

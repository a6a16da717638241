package train

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// TestProcessVCSKeepsFirstCommit: a process's runs record the commit the
// tree had when it recorded its first one, not the commit a later run
// starts at (a long `go run ./cmd/table` keeps one binary while the tree
// moves on); gitVCS itself follows the tree.
func TestProcessVCSKeepsFirstCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found: the fallback commit needs it")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("one")
	git("add", "f.txt")
	git("commit", "-q", "-m", "one")
	t.Chdir(dir)

	vcs := sync.OnceValues(gitVCS)
	first, modified := vcs()
	if len(first) != 40 || modified {
		t.Fatalf("first call: commit %q modified %v, want a 40-hex commit of a clean tree", first, modified)
	}
	write("two")
	if c, m := gitVCS(); c != first || !m {
		t.Fatalf("gitVCS with an uncommitted change: %q %v, want %q true", c, m, first)
	}
	git("commit", "-q", "-am", "two")
	now, _ := gitVCS()
	if now == first {
		t.Fatal("gitVCS did not follow the new commit")
	}
	if c, m := vcs(); c != first || m {
		t.Errorf("the process's commit after the tree moved: %q %v, want the first %q false", c, m, first)
	}
}

// TestGitVCSOutsideCheckout: outside a git checkout there is no commit
// (currentProvenance then says "unknown").
func TestGitVCSOutsideCheckout(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(t.TempDir()))
	if c, m := gitVCS(); c != "" || m {
		t.Errorf("gitVCS outside a checkout: %q %v, want \"\" false", c, m)
	}
}

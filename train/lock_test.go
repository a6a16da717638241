package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/filelock/filelocktest"
)

// A second LockRunDir of a held directory fails with ErrRunDirLocked,
// naming the directory and the holder's pid and host; once released, the
// directory can be locked again.
func TestLockRunDirRefusesASecondHolder(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockRunDir(dir)
	if !errors.Is(err, ErrRunDirLocked) {
		t.Fatalf("second lock: got %v, want ErrRunDirLocked", err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{dir, fmt.Sprintf("pid %d", os.Getpid()), host} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %q", err, want)
		}
	}
	var le *RunDirLockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Dir != dir {
		t.Errorf("errors.As: %+v", le)
	}
	unlock()
	unlock() // idempotent
	unlock2, err := LockRunDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func TestMain(m *testing.M) {
	// A holder process (filelocktest.Hold) locks a run directory as a run does.
	filelocktest.Main(func(dir string) error { _, err := LockRunDir(dir); return err })
	stop := startTestGCTuner()
	code := m.Run()
	stop()
	os.Exit(code)
}

// A process killed while it holds the lock does not leave it stuck, and
// while it holds it the error names its pid.
func TestLockRunDirReleasedWhenTheHolderDies(t *testing.T) {
	if !lockReleasedOnExit {
		t.Skip("this platform's fallback lock is a file that a killed process leaves behind")
	}
	dir := t.TempDir()
	cmd := filelocktest.Hold(t, dir)
	_, err := LockRunDir(dir)
	var le *RunDirLockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Errorf("while the helper holds it: got %v, want the helper's pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill() // SIGKILL: no chance to clean up
	cmd.Wait()
	unlock, err := LockRunDir(dir)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	unlock()
}

// Run refuses a run directory another process holds, before touching its
// files: the second `train -resume DIR` of two at once.
func TestRunRefusesALockedRunDirectory(t *testing.T) {
	dir := t.TempDir()
	cfg := mustParse(t, tinySynthetic, "seeds=[0]", "train.epochs=1")
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := LockRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	_, err = Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if !errors.Is(err, ErrRunDirLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Run on a held directory: got %v, want ErrRunDirLocked naming %s", err, dir)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "metrics.jsonl"))
	if string(after) != string(before) {
		t.Error("the refused Run changed metrics.jsonl")
	}
	// A fresh run into a directory another process is creating is refused too.
	fresh := filepath.Join(t.TempDir(), "new")
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	unlockFresh, err := LockRunDir(fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer unlockFresh()
	if _, err := Run(context.Background(), cfg, Options{OutDir: fresh}); !errors.Is(err, ErrRunDirLocked) {
		t.Fatalf("Run into a held new directory: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "config.yaml")); err == nil {
		t.Error("the refused Run wrote config.yaml")
	}
}

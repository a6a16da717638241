package filelock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/filelock/filelocktest"
)

func TestMain(m *testing.M) {
	filelocktest.Main(func(path string) error {
		_, _, err := Acquire(path)
		return err
	})
	os.Exit(m.Run())
}

// TestAcquireTwice: a lock this process holds is held for a second
// Acquire; released (twice: the second does nothing), it is free again.
func TestAcquireTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	f, held, err := Acquire(path)
	if err != nil || held || f == nil {
		t.Fatalf("first Acquire: f %v, held %v, err %v", f, held, err)
	}
	g, held, err := Acquire(path)
	if err != nil || !held || g != nil {
		t.Fatalf("second Acquire while held: f %v, held %v, err %v; want held", g, held, err)
	}
	Release(f, path)
	f, held, err = Acquire(path)
	if err != nil || held {
		t.Fatalf("Acquire after Release: held %v, err %v", held, err)
	}
	Release(f, path)
}

// TestHeldByAnotherProcess: a lock another process holds is held here; once
// that process is killed (no chance to clean up) it is free, where the
// lock goes with its process (ReleasedOnExit).
func TestHeldByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	holder := filelocktest.Hold(t, path)
	g, held, err := Acquire(path)
	if err != nil || !held || g != nil {
		t.Fatalf("Acquire while another process holds it: f %v, held %v, err %v; want held", g, held, err)
	}
	holder.Process.Kill() // SIGKILL: the holder crashed
	holder.Wait()
	if !ReleasedOnExit {
		t.Skip("this platform's fallback lock is a file that a killed process leaves behind")
	}
	f, held, err := Acquire(path)
	if err != nil || held {
		t.Fatalf("Acquire after the holder was killed: held %v, err %v; want it free", held, err)
	}
	Release(f, path)
}

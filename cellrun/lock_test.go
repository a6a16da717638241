package cellrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/filelock/filelocktest"
)

func TestMain(m *testing.M) {
	// A holder process (filelocktest.Hold) locks a cell the way a task does.
	filelocktest.Main(func(dir string) error { _, err := lockCell(dir); return err })
	os.Exit(m.Run())
}

// TestLockCell: a held cell is ErrBusy naming the holder, in this process
// and from another (the record lockCell writes); released, or its holder
// killed (a crashed task submitted again), it is free.
func TestLockCell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "MUTAG", "graphcl")
	unlock, err := lockCell(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockCell(dir)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("locked by pid %d", os.Getpid())) {
		t.Fatalf("second lock in the same process: %v, want ErrBusy naming pid %d", err, os.Getpid())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("locking the cell made its run directory (%v): the lock lives beside it", err)
	}
	unlock()
	unlock() // again: nothing
	again, err := lockCell(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()

	holder := filelocktest.Hold(t, dir)
	_, err = lockCell(dir)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), fmt.Sprintf("locked by pid %d", holder.Process.Pid)) {
		t.Fatalf("a cell another process holds: %v, want ErrBusy naming pid %d", err, holder.Process.Pid)
	}
	holder.Process.Kill() // SIGKILL: the task crashed
	holder.Wait()
	taken, err := lockCell(dir)
	if err != nil {
		t.Fatalf("the lock of a killed holder: %v, want it free", err)
	}
	taken()
}

package cellrun

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lockHolderEnv makes the test binary a process that holds a cell's lock
// (TestMain): it prints "locked" and waits to be killed.
const lockHolderEnv = "CELLRUN_TEST_HOLD_LOCK"

func TestMain(m *testing.M) {
	if dir := os.Getenv(lockHolderEnv); dir != "" {
		if _, err := lockCell(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdLock starts a process that holds the lock of cell dir.
func holdLock(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("the holder process says %q", line)
	}
	return cmd
}

// TestLockCell: a held cell is ErrBusy naming the holder, in this
// process and from another; released, or its holder killed, it is free.
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

	holder := holdLock(t, dir)
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

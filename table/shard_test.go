package table

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"0/4", Shard{0, 4}, false},
		{"3/4", Shard{3, 4}, false},
		{" 1 / 2 ", Shard{1, 2}, false},
		{"0/1", Shard{0, 1}, false},
		{"4/4", Shard{}, true},
		{"-1/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"2", Shard{}, true},
		{"a/b", Shard{}, true},
		{"", Shard{}, true},
	} {
		got, err := ParseShard(tc.in)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "want i/n with 0 ≤ i < n") {
				t.Errorf("ParseShard(%q) = %v, %v; want an error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestShardSelect: the shards of n are disjoint, cover the plan and deal
// it round-robin; 0/1 and the zero Shard are the whole plan.
func TestShardSelect(t *testing.T) {
	var cells []Cell
	for i := range 11 {
		cells = append(cells, Cell{Dir: fmt.Sprint(i)})
	}
	for _, n := range []int{1, 2, 3, 4, 11, 15} {
		seen := map[string]int{}
		for i := range n {
			sel := Shard{i, n}.Select(cells)
			for k, c := range sel {
				seen[c.Dir]++
				if want := fmt.Sprint(i + k*n); c.Dir != want {
					t.Errorf("shard %d/%d cell %d is %s, want %s", i, n, k, c.Dir, want)
				}
			}
		}
		if len(seen) != len(cells) {
			t.Errorf("n = %d: the shards cover %d of %d cells", n, len(seen), len(cells))
		}
		for d, k := range seen {
			if k != 1 {
				t.Errorf("n = %d: cell %s in %d shards", n, d, k)
			}
		}
	}
	if got := (Shard{}).Select(cells); !slices.Equal(dirs(got), dirs(cells)) {
		t.Error("the zero Shard is not the whole plan")
	}
}

func dirs(cs []Cell) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Dir)
	}
	return out
}

// lockHolderEnv makes the test binary a process that holds a cell's lock
// (TestMain): it prints "locked" and waits to be killed.
const lockHolderEnv = "TABLE_TEST_HOLD_LOCK"

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

// TestLockCell: a held cell is ErrCellBusy naming the holder, in this
// process and from another; released, or its holder killed, it is free.
func TestLockCell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "MUTAG", "graphcl")
	unlock, err := lockCell(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockCell(dir)
	if !errors.Is(err, ErrCellBusy) || !strings.Contains(err.Error(), fmt.Sprintf("locked by pid %d", os.Getpid())) {
		t.Fatalf("second lock in the same process: %v, want ErrCellBusy naming pid %d", err, os.Getpid())
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
	if !errors.Is(err, ErrCellBusy) || !strings.Contains(err.Error(), fmt.Sprintf("locked by pid %d", holder.Process.Pid)) {
		t.Fatalf("a cell another process holds: %v, want ErrCellBusy naming pid %d", err, holder.Process.Pid)
	}
	holder.Process.Kill() // SIGKILL: the task crashed
	holder.Wait()
	taken, err := lockCell(dir)
	if err != nil {
		t.Fatalf("the lock of a killed holder: %v, want it free", err)
	}
	taken()
}

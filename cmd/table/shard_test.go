package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// mainEnv makes the test binary run the command with its arguments
// (TestMain): the shards of the tests are separate processes, as the tasks
// of an array job are.
const mainEnv = "TABLE_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// tableProc starts the command in a process; its stderr goes to the
// returned buffer.
func tableProc(t *testing.T, args ...string) (*exec.Cmd, *syncBuf) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	var buf syncBuf
	cmd.Stderr = &buf
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &buf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tinyTable is a table of 3 cells (GraphCL, DCL, HCL on MUTAG), 1 seed,
// 1 epoch: about a second of compute.
func tinyTable(root, out string) []string {
	return []string{"-root", root, "-datasets", "MUTAG", "-methods", "graphcl,dcl,hcl", "-out", out,
		"-set", "seeds=[0]", "-set", "train.epochs=1", "-set", "eval.folds=3", "-set", "eval.inner_folds=2"}
}

// resultsPart is table.md before its cost section (which holds times).
func resultsPart(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, ok := strings.Cut(string(b), "### Cost")
	if !ok {
		t.Fatalf("%s/table.md has no cost section:\n%s", dir, b)
	}
	return s
}

// TestShardsShareADirectory: four processes (-shard 0/2, 1/2, and each of
// them again, as a resubmitted task still running would be) share one
// table directory; every cell is started by exactly one of them, no shard
// writes a table, and -assemble gives the table of one process, bit for
// bit (the results part of table.md, and -compare of table.json). Then a
// cell whose lock a crashed task held is skipped while the task lives and
// taken over once it is gone.
func TestShardsShareADirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 18 tiny runs on MUTAG in 6 processes")
	}
	root := sharedRoot(t)
	one, sharded := t.TempDir(), t.TempDir()
	if err := run(tinyTable(root, one)); err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	var logs []*syncBuf
	for _, s := range []string{"0/2", "1/2", "0/2", "1/2"} {
		p, l := tableProc(t, append(tinyTable(root, sharded), "-shard", s)...)
		procs, logs = append(procs, p), append(logs, l)
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("shard process %d: %v\n%s", i, err, logs[i])
		}
	}
	var all strings.Builder
	for _, l := range logs {
		all.WriteString(l.String())
	}
	for _, cell := range []string{"MUTAG/graphcl", "MUTAG/dcl", "MUTAG/hcl"} {
		if n := strings.Count(all.String(), cell+": starting"); n != 1 {
			t.Errorf("cell %s started %d times, want once:\n%s", cell, n, all.String())
		}
	}
	if _, err := os.Stat(filepath.Join(sharded, "table.md")); !os.IsNotExist(err) {
		t.Fatalf("a shard wrote table.md (%v): only -assemble writes the table", err)
	}
	if err := run(append(tinyTable(root, sharded), "-assemble")); err != nil {
		t.Fatal(err)
	}
	if got, want := resultsPart(t, sharded), resultsPart(t, one); got != want {
		t.Fatalf("the sharded table differs from one process's:\n%s\nvs\n%s", got, want)
	}
	var cmp strings.Builder
	if err := compareTables(&cmp, filepath.Join(one, "table.json"), filepath.Join(sharded, "table.json")); err != nil || !strings.Contains(cmp.String(), "9 runs in both tables, 9 with the record's accuracy to the last bit") {
		t.Fatalf("-compare: %v\n%s", err, cmp.String())
	}

	// A task running MUTAG/dcl (a longer cell: 60 epochs) holds its
	// lock: a second task of the same shard skips the cell, naming the
	// holder, and exits 0. Killed mid-cell (SIGKILL, as a node failure),
	// the holder leaves the lock free: the task submitted again takes the
	// cell over and resumes it from the crashed task's checkpoints.
	again := t.TempDir()
	long := append(tinyTable(root, again), "-methods", "dcl", "-set", "train.epochs=60", "-shard", "0/2")
	holder, hlog := tableProc(t, long...)
	defer func() { holder.Process.Kill(); holder.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(hlog.String(), "uniform-seed0: steps 1..") { // training: config.yaml is written
		if time.Now().After(deadline) {
			t.Fatalf("the holder did not start its cell:\n%s", hlog)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p, l := tableProc(t, long...)
	if err := p.Wait(); err != nil {
		t.Fatalf("a shard whose cell is held: %v\n%s", err, l)
	}
	if want := fmt.Sprintf("MUTAG/dcl: skipped, %s is locked by pid %d", filepath.Join(again, "MUTAG", "dcl"), holder.Process.Pid); !strings.Contains(l.String(), want) {
		t.Fatalf("log lacks %q:\n%s", want, l)
	}
	holder.Process.Kill()
	holder.Wait()
	if _, err := os.Stat(filepath.Join(again, "MUTAG", "dcl", "results.json")); err == nil {
		t.Fatalf("the holder finished its cell before it was killed: make the cell longer\n%s", hlog)
	}
	p, l = tableProc(t, long...)
	if err := p.Wait(); err != nil || !strings.Contains(l.String(), "MUTAG/dcl: resuming") || !strings.Contains(l.String(), "1 of 1 cells finished") {
		t.Fatalf("taking over the crashed task's cell: %v\n%s", err, l)
	}
	if _, err := os.Stat(filepath.Join(again, "MUTAG", "dcl", "results.json")); err != nil {
		t.Fatalf("the cell taken over has no results: %v", err)
	}
}

// TestShardFlag: -shard's errors name the flag; a task with no cell (more
// tasks than cells) does nothing and succeeds; -plan lists the task's
// cells only.
func TestShardFlag(t *testing.T) {
	root := sharedRoot(t)
	out := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-shard", "3/3"}, `-shard "3/3": want i/n with 0 ≤ i < n`},
		{[]string{"-shard", "x"}, `-shard "x"`},
		{[]string{"-shard", "0/2", "-assemble"}, "-shard 0/2 with -assemble: assemble once, without -shard"},
	} {
		if err := run(append(tinyTable(root, out), tc.args...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if err := run(append(tinyTable(root, out), "-shard", "5/8")); err != nil {
		t.Fatalf("a task without a cell: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a task without a cell wrote %d entries", len(entries))
	}
	cmd := exec.Command(os.Args[0], append(tinyTable(root, out), "-shard", "1/2", "-plan")...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	plan, err := cmd.Output()
	if err != nil {
		t.Fatalf("-plan -shard 1/2: %v", err)
	}
	if !strings.Contains(string(plan), "| MUTAG | dcl |") || strings.Contains(string(plan), "graphcl") || strings.Contains(string(plan), "| hcl |") {
		t.Errorf("-plan -shard 1/2 lists other cells than dcl:\n%s", plan)
	}
}

// Package filelocktest holds a file lock in another process for the tests
// of the lock's users (internal/filelock, cellrun, train): the test binary
// runs itself as a holder that takes the lock, says so and waits to be
// killed, so a test sees the lock held by another pid and then by a
// process killed without cleaning up.
package filelocktest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// holderEnv names, in a holder process, the path it is to lock.
const holderEnv = "BATCHSAMPLER_TEST_HOLD_LOCK"

// Main makes the test binary a holder when Hold started it: it calls
// lock(path), prints "locked" (or "error: …" and exits 1) and sleeps until
// it is killed. Otherwise it returns at once. Call it first in TestMain,
// with the package's own way of taking the lock (so the holder leaves the
// record the package writes).
func Main(lock func(path string) error) {
	path := os.Getenv(holderEnv)
	if path == "" {
		return
	}
	if err := lock(path); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// Hold starts the test binary as a process that holds the lock of path
// (see Main) and returns once it holds it. The process is killed at the
// end of the test; kill it earlier (cmd.Process.Kill, cmd.Wait) to
// simulate a crash.
func Hold(t testing.TB, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("the holder process says %q (%v)", line, err)
	}
	return cmd
}

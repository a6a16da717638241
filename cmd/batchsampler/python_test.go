package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// python is the interpreter of the client tests: the system one, which
// has numpy (and torch) on the project's machines.
const python = "/usr/bin/python3"

// pythonWith skips the test, saying why, unless /usr/bin/python3 imports
// the modules.
func pythonWith(t *testing.T, modules, install string) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		t.Skipf("%s not found: these tests need it with %s (apt-get install %s)", python, modules, install)
	}
	if out, err := exec.Command(python, "-c", "import "+modules).CombinedOutput(); err != nil {
		t.Skipf("%s cannot import %s (apt-get install %s): %v\n%s", python, modules, install, err, out)
	}
}

// runUnittest runs the Python tests of clients/python/tests matching
// pattern against this package's binary.
func runUnittest(t *testing.T, pattern string, timeout time.Duration) {
	t.Helper()
	bin := buildBinary(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-s", "clients/python/tests", "-p", pattern, "-v")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BATCHSAMPLER_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("python tests %s: %v", pattern, err)
	}
}

// TestPythonClient runs the Python client's unittest suite
// (clients/python/tests/test_client.py) against this package's binary. It
// skips, saying why, when /usr/bin/python3 or its numpy is missing.
func TestPythonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python client tests start servers and import torch")
	}
	pythonWith(t, "numpy", "python3-numpy; python3-torch for the DataLoader tests")
	runUnittest(t, "test_client.py", 5*time.Minute)
}

// TestDDPExample runs the acceptance test of
// clients/python/examples/ddp_simclr.py (clients/python/tests/test_ddp.py):
// the server and the example as 2 processes of one gloo process group,
// its losses and gradients against one process, a killed and restarted
// job against an uninterrupted one, a world-size mismatch: about 24 s of
// CPU (7 Python processes importing torch), 32-46 s on 2 busy cores, 3
// minutes at a load average of 20. It skips only when torch (or numpy) is
// absent.
func TestDDPExample(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the DDP example starts 7 Python processes with torch")
	}
	pythonWith(t, "numpy, torch, torch.distributed", "python3-numpy python3-torch")
	runUnittest(t, "test_ddp.py", 15*time.Minute)
}

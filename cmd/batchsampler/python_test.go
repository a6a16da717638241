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

// TestPythonClient runs the Python client's unittest suite
// (clients/python/tests) against this package's binary. It skips, saying
// why, when /usr/bin/python3 or its numpy is missing.
func TestPythonClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Python client tests start servers and import torch")
	}
	if _, err := os.Stat(python); err != nil {
		t.Skipf("%s not found: the Python client tests need it with numpy (apt-get install python3-numpy; python3-torch for the DataLoader tests)", python)
	}
	if out, err := exec.Command(python, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("%s has no numpy (apt-get install python3-numpy): %v\n%s", python, err, out)
	}
	bin := buildBinary(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-s", "clients/python/tests", "-v")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "BATCHSAMPLER_BIN="+bin, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("python client tests: %v", err)
	}
}

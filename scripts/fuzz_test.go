// Package scripts_test checks the shell scripts of scripts/ that CI runs.
package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// raceOutput is what go1.26's `go test -fuzz` printed in CI when its
// coordinator reported the end of -fuzztime as a failure (golang/go#75804).
const raceOutput = `fuzz: elapsed: 3s, execs: 11678 (3892/sec), new interesting: 0 (total: 45)
--- FAIL: FuzzA (4.01s)
    context deadline exceeded
FAIL
exit status 1
FAIL	example/pkg	4.023s
`

// crashOutput is a real finding: go writes the input to the corpus.
const crashOutput = `--- FAIL: FuzzA (0.10s)
    --- FAIL: FuzzA (0.00s)
        x_test.go:5: boom

    Failing input written to testdata/fuzz/FuzzA/0123456789abcdef
    To re-run:
    go test -run=FuzzA/0123456789abcdef
FAIL
exit status 1
`

// fakeGo writes an executable that answers its n-th call (1-based) with
// the n-th of the replies ("pass", "race" or "crash"; the last repeats),
// and returns its path and the file counting its calls.
func fakeGo(t *testing.T, dir string, replies ...string) (string, string) {
	t.Helper()
	calls := filepath.Join(dir, "calls")
	var sb strings.Builder
	sb.WriteString("#!/usr/bin/env bash\n")
	sb.WriteString("echo x >> " + calls + "\n")
	sb.WriteString("n=$(wc -l < " + calls + ")\n")
	for i, r := range replies {
		cond := "[ \"$n\" -eq " + strconv.Itoa(i+1) + " ]"
		if i == len(replies)-1 {
			cond = "true"
		}
		sb.WriteString("if " + cond + "; then\n")
		switch r {
		case "pass":
			sb.WriteString("echo PASS; exit 0\n")
		case "race":
			sb.WriteString("cat <<'OUT'\n" + raceOutput + "OUT\nexit 1\n")
		case "crash":
			sb.WriteString("mkdir -p pkg/testdata/fuzz/FuzzA && echo 'go test fuzz v1' > pkg/testdata/fuzz/FuzzA/0123456789abcdef\n")
			sb.WriteString("cat <<'OUT'\n" + crashOutput + "OUT\nexit 1\n")
		default:
			t.Fatalf("unknown reply %q", r)
		}
		sb.WriteString("fi\n")
	}
	path := filepath.Join(dir, "fakego")
	if err := os.WriteFile(path, []byte(sb.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, calls
}

func TestFuzzScriptCoordinatorRace(t *testing.T) {
	script, err := os.ReadFile("fuzz.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		replies   []string
		wantOK    bool
		wantCalls int
		wantText  string
	}{
		{"pass", []string{"pass"}, true, 1, "all 1 targets held"},
		{"race then pass", []string{"race", "pass"}, true, 2, "again (1 of 2)"},
		{"race every time", []string{"race"}, true, 3, "1 cut short by Go's race"},
		{"crash", []string{"crash"}, false, 1, "1 of 1 targets failed"},
		{"race then crash", []string{"race", "crash"}, false, 2, "1 of 1 targets failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range []string{"scripts", "pkg"} {
				if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(root, "scripts", "fuzz.sh"), script, 0o755); err != nil {
				t.Fatal(err)
			}
			src := "package pkg\n\nimport \"testing\"\n\nfunc FuzzA(f *testing.F) {}\n"
			if err := os.WriteFile(filepath.Join(root, "pkg", "x_test.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			goPath, calls := fakeGo(t, t.TempDir(), tc.replies...)
			cmd := exec.Command("bash", filepath.Join(root, "scripts", "fuzz.sh"), "1s")
			cmd.Env = append(os.Environ(), "GO="+goPath)
			out, err := cmd.CombinedOutput()
			if ok := err == nil; ok != tc.wantOK {
				t.Fatalf("script succeeded = %v, want %v (err %v); output:\n%s", ok, tc.wantOK, err, out)
			}
			n, err := os.ReadFile(calls)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(n), "\n"); got != tc.wantCalls {
				t.Errorf("go test ran %d times, want %d; output:\n%s", got, tc.wantCalls, out)
			}
			if !strings.Contains(string(out), tc.wantText) {
				t.Errorf("output lacks %q:\n%s", tc.wantText, out)
			}
		})
	}
}

package train

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
)

// Provenance records what produced a run directory: the source commit, the
// Go version, the machine and the command line. It is written to
// DIR/provenance.json when a run starts (and again, with the time, when a
// resumed run continues) and copied into results.json.
type Provenance struct {
	// Commit is the VCS revision of the binary (from its build information,
	// stamped by `go build -buildvcs=true`), else — for `go run` and `go
	// test`, which do not stamp it — `git rev-parse HEAD` in the working
	// directory when the process recorded its first run (processVCS: a
	// table's or sweep's later runs, made by the same binary, keep it
	// whatever the tree became meanwhile). Modified says that the source
	// had uncommitted changes (in the fallback: the working tree then).
	Commit     string `json:"commit"`
	Modified   bool   `json:"modified"`
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	CPU        string `json:"cpu,omitempty"`
	GEMM       string `json:"gemm_backend"`
	Command    string `json:"command"`
	Started    string `json:"started"`
}

// CurrentProvenance describes this process: the commit and Go version that
// built it, the machine and the command line.
func CurrentProvenance() Provenance { return currentProvenance() }

// currentProvenance describes this process.
func currentProvenance() Provenance {
	p := Provenance{
		GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0), CPU: cpuModel(), GEMM: gemm.Backend(),
		Command: strings.Join(os.Args, " "), Started: time.Now().UTC().Format(time.RFC3339),
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				p.Commit = s.Value
			case "vcs.modified":
				p.Modified = s.Value == "true"
			}
		}
	}
	if p.Commit == "" { // go run and go test do not stamp the revision
		p.Commit, p.Modified = processVCS()
	}
	if p.Commit == "" {
		p.Commit = "unknown"
	}
	return p
}

// processVCS is gitVCS the first time it is called, and that answer
// again on every later call: the commit of a process that `go run` built is
// the tree's when it started its work, not when a later run of a long
// table begins (the tree may have moved on; the binary did not).
var processVCS = sync.OnceValues(gitVCS)

// gitVCS returns `git rev-parse HEAD` in the working directory and whether
// the working tree has uncommitted changes to tracked files ("" and false
// outside a git checkout or without git).
func gitVCS() (commit string, modified bool) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		modified = len(strings.TrimSpace(string(st))) > 0
	}
	return strings.TrimSpace(string(out)), modified
}

// cpuModel returns the CPU's model name on Linux ("" elsewhere).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

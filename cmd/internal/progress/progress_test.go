package progress

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEvalProgressLines: without a terminal, an evaluation logs one line per
// tenth with the time left, at most one per evalLogEvery, none at the end;
// a new phase (another total) counts again.
func TestEvalProgressLines(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = f
	h := Observer(false, "")
	// 360 fits of 1s each: a tenth every 36s.
	for i := 1; i <= 360; i++ {
		h.Eval("uniform-seed0", i, 360, time.Duration(i)*time.Second)
	}
	// A fast phase of 100 units of 0.1s: every tenth is 1s apart, so only
	// every fifth can be logged.
	for i := 1; i <= 100; i++ {
		h.Eval("uniform-seed0", i, 100, time.Duration(i)*100*time.Millisecond)
	}
	os.Stderr = old
	f.Close()
	b, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		_, msg, _ := strings.Cut(l, " ") // drop the time of day
		lines = append(lines, msg)
	}
	if len(lines) != 10 || lines[0] != "uniform-seed0: evaluating, 10% (36/360), ~5m24s left" ||
		lines[8] != "uniform-seed0: evaluating, 90% (324/360), ~36s left" ||
		lines[9] != "uniform-seed0: evaluating, 50% (50/100), ~5s left" {
		t.Errorf("progress lines:\n%s", strings.Join(lines, "\n"))
	}
}

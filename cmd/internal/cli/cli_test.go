package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/batchsampler-go/batchsampler/train"
)

func TestStringsRepeats(t *testing.T) {
	var s Strings
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(&s, "set", "")
	if err := fs.Parse([]string{"-set", "a=1", "-set", "b=2"}); err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0] != "a=1" || s[1] != "b=2" {
		t.Fatalf("Strings = %q, want [a=1 b=2]", []string(s))
	}
	if got := s.String(); got != "a=1 b=2" {
		t.Errorf("String() = %q, want %q", got, "a=1 b=2")
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("bad flag"), 1},
		{train.ErrInterrupted, 130},
		{fmt.Errorf("cell MUTAG/graphcl: %w", train.ErrInterrupted), 130},
	} {
		if got := Status(tc.err); got != tc.want {
			t.Errorf("Status(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestReport(t *testing.T) {
	var b bytes.Buffer
	report(&b, "table", errors.New("no datasets"))
	if got, want := b.String(), "table: no datasets\n"; got != want {
		t.Errorf("report wrote %q, want %q", got, want)
	}
}

// gcPercent reads the GC percent (setting it back at once).
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestTuneGC: without GOGC the GC percent is tuned (a small live heap
// under the 256 MB headroom gets 100, from the 50 set here) and restored by
// stop; with GOGC set it is left alone.
func TestTuneGC(t *testing.T) {
	const orig = 50
	defer debug.SetGCPercent(debug.SetGCPercent(orig))
	t.Setenv("GOGC", "")
	stop := TuneGC()
	if p := gcPercent(); p != 100 {
		t.Errorf("GC percent %d while tuning a small heap, want 100", p)
	}
	stop()
	if p := gcPercent(); p != orig {
		t.Errorf("GC percent %d after stop, want %d restored", p, orig)
	}
	t.Setenv("GOGC", "100")
	stop = TuneGC()
	if p := gcPercent(); p != orig {
		t.Errorf("GC percent %d with GOGC set, want %d untouched", p, orig)
	}
	stop()
}

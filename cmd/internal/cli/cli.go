// Package cli holds what the training commands (cmd/train, cmd/table)
// share around their runs: a repeatable string flag, the collector's
// tuning and the exit of main, with the status of an interrupted run.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/batchsampler-go/batchsampler/internal/gctune"
	"github.com/batchsampler-go/batchsampler/train"
)

// Strings is a repeatable string flag (flag.Value): every use appends its
// value, in order (as -set KEY=VALUE given several times).
type Strings []string

// String returns the values joined by spaces.
func (s *Strings) String() string { return strings.Join(*s, " ") }

// Set appends v.
func (s *Strings) Set(v string) error { *s = append(*s, v); return nil }

// Status is the exit status of a command that returned err: 0 for nil,
// 130 (as after SIGINT) for a run stopped by a signal
// (train.ErrInterrupted), 1 for any other error.
func Status(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, train.ErrInterrupted):
		return 130
	default:
		return 1
	}
}

// Exit ends the command name after its run returned err: nothing for nil,
// otherwise "name: err" on standard error and os.Exit(Status(err)).
func Exit(name string, err error) {
	if err == nil {
		return
	}
	report(os.Stderr, name, err)
	os.Exit(Status(err))
}

// report writes the line Exit writes for err.
func report(w io.Writer, name string, err error) { fmt.Fprintln(w, name+":", err) }

// TuneGC caps the collector's headroom (internal/gctune) unless GOGC says
// otherwise: a run with gigabytes live peaks at about its live heap plus
// 256 MB instead of twice its live heap. stop ends the tuning and restores
// the GC percent (defer TuneGC()()).
func TuneGC() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	return gctune.Default().Start(context.Background())
}

package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/batchsampler-go/batchsampler/internal/filelock"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// LockFileName is the file in a run directory that LockRunDir locks. It
// stays after the lock is released (removing it would let two processes
// lock two different files of the same name); what it holds is the last
// holder's record, which means nothing unless the lock is held.
const LockFileName = ".lock"

// ErrRunDirLocked is the error of LockRunDir, and of Run, when another
// process (or another LockRunDir in this one) holds the run directory.
// Test for it with errors.Is; errors.As with a *RunDirLockedError gives
// the directory and the holder.
var ErrRunDirLocked = errors.New("run directory locked")

// errLockUnsupported wraps the failure of a file system that has no
// advisory locks (some network file systems): Run then goes on unlocked,
// saying so in its log.
var errLockUnsupported = filelock.ErrUnsupported

// lockReleasedOnExit says whether the lock goes with the process.
const lockReleasedOnExit = filelock.ReleasedOnExit

// RunDirLockedError is the error of a held run directory: which one, and
// the holder as its lock file records it (PID 0 and Host "" when the
// holder has not written its record yet).
type RunDirLockedError struct {
	Dir   string
	PID   int
	Host  string
	Since time.Time
	// Command is the holder's program name and arguments (shortened).
	Command string
}

func (e *RunDirLockedError) Error() string {
	who := "another process"
	if e.PID != 0 {
		who = fmt.Sprintf("pid %d on host %s", e.PID, e.Host)
		if !e.Since.IsZero() {
			who += " since " + e.Since.Local().Format("2006-01-02 15:04:05")
		}
		if e.Command != "" {
			who += fmt.Sprintf(" (%s)", e.Command)
		}
	}
	msg := fmt.Sprintf("run directory %s is in use by %s: two processes must not write one run directory; wait until it ends (or stop it), then run again", e.Dir, who)
	if !lockReleasedOnExit {
		msg += fmt.Sprintf(" (if that process is gone, remove %s)", filepath.Join(e.Dir, LockFileName))
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrRunDirLocked) true.
func (e *RunDirLockedError) Unwrap() error { return ErrRunDirLocked }

// lockRecord is what a holder writes into its lock file.
type lockRecord struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Since   time.Time `json:"since"`
	Command string    `json:"command,omitempty"`
}

// LockRunDir takes the lock of run directory dir, which must exist, for
// this process: an advisory lock on dir/.lock (flock on Unix, LockFileEx
// on Windows) that the operating system releases when the process ends,
// however it ends, so a crashed run leaves no stale lock. It does not
// wait: when another process, or an earlier LockRunDir of this process
// not yet released, holds dir, it returns a *RunDirLockedError (errors.Is
// ErrRunDirLocked) naming dir and the holder's pid, host, start time and
// command, which the holder writes into the lock file.
//
// unlock releases the lock; calling it again does nothing. Run locks its
// run directory for as long as it works in it, so that two `train -resume
// DIR` at once, or two table processes meeting in one cell, cannot both
// write it: the second is refused. A caller that shares a directory of
// run directories between processes (table shards, say) can skip a cell
// whose Run fails with ErrRunDirLocked, or take the lock itself to test
// it and release it before calling Run.
//
// On platforms without either lock (neither Unix nor Windows) the lock is
// the file's exclusive creation, which a killed process leaves behind:
// the error then says to remove it once no process holds it.
func LockRunDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, LockFileName)
	f, held, err := filelock.Acquire(path)
	if err != nil {
		return nil, fmt.Errorf("lock run directory %s: %w", dir, err)
	}
	if held {
		le := &RunDirLockedError{Dir: dir}
		if b, err := os.ReadFile(path); err == nil {
			var rec lockRecord
			if json.Unmarshal(b, &rec) == nil {
				le.PID, le.Host, le.Since, le.Command = rec.PID, rec.Host, rec.Since, rec.Command
			}
		}
		return nil, le
	}
	host, _ := os.Hostname()
	rec := lockRecord{PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second), Command: commandLine()}
	b, _ := json.Marshal(rec)
	// One write at offset 0 after the truncation: a reader sees an empty
	// file or the whole record, not a torn one, in practice.
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.Truncate(0) // while still held: the record is this holder's
			filelock.Release(f, path)
		})
	}, nil
}

// commandLine is the program's base name and arguments, shortened.
func commandLine() string {
	if len(os.Args) == 0 {
		return ""
	}
	s := strings.Join(append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}

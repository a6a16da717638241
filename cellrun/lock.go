package cellrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/batchsampler-go/batchsampler/internal/filelock"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrBusy is the error (wrapped) of a cell another process is running:
// Run skips it (Status.Busy) and goes on with the next cell.
var ErrBusy = errors.New("cell busy")

// cellLockPath is the lock file of the cell whose run directory is dir:
// beside it (DIR/DATASET/BLOCK.lock), not in it, so that it is never part
// of the run directory and does not meet a lock the run itself takes.
func cellLockPath(dir string) string { return filepath.Clean(dir) + ".lock" }

// lockHolder is what a holder writes into its lock file.
type lockHolder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// lockCell takes the lock of the cell with run directory dir without
// waiting: an advisory lock (flock on Unix) on dir's lock file, which the
// operating system releases when the process ends however it ends, so the
// cell of a crashed or killed task is taken over when the task is
// submitted again. When another process (or another lockCell of this
// one) holds it, the error wraps ErrBusy and names the holder.
func lockCell(dir string) (unlock func(), err error) {
	path := cellLockPath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock cell %s: %w", dir, err)
	}
	f, held, err := filelock.Acquire(path)
	if err != nil {
		return nil, fmt.Errorf("lock cell %s: %w", dir, err)
	}
	if held {
		who := "another process"
		var h lockHolder
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &h) == nil && h.PID != 0 {
			who = fmt.Sprintf("pid %d on %s since %s", h.PID, h.Host, h.Since.Local().Format("2006-01-02 15:04:05"))
		}
		return nil, fmt.Errorf("%s is locked by %s (%s): %w", dir, who, path, ErrBusy)
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(lockHolder{PID: os.Getpid(), Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.Truncate(0)
			filelock.Release(f, path)
		})
	}, nil
}

//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || windows)

package filelock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ReleasedOnExit: the fallback lock is a file a killed process leaves.
const ReleasedOnExit = false

// Acquire creates path exclusively (the fallback where no advisory
// lock is known): held reports that it exists. A process that dies
// holding it leaves it behind, to be removed by hand.
func Acquire(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	switch {
	case err == nil:
		return f, false, nil
	case errors.Is(err, fs.ErrExist):
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("create %s: %w", path, err)
}

// Release closes f and removes the lock file.
func Release(f *os.File, path string) {
	f.Close()
	os.Remove(path)
}

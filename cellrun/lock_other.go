//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris)

package cellrun

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// acquireFileLock creates path exclusively where no advisory lock is
// used: held reports that it exists. A process that dies holding it
// leaves it behind, to be removed by hand.
func acquireFileLock(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	switch {
	case err == nil:
		return f, false, nil
	case errors.Is(err, fs.ErrExist):
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("create %s: %w (remove it if no process runs the cell)", path, err)
}

// releaseFileLock closes f and removes the lock file.
func releaseFileLock(f *os.File, path string) {
	f.Close()
	os.Remove(path)
}

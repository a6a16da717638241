//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris

package cellrun

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// acquireFileLock opens path and takes an exclusive flock on it without
// waiting; held reports that someone else has it (f is then nil). flock
// locks belong to the open file, so a second acquireFileLock in the same
// process is refused too. On NFS, Linux maps flock to POSIX byte-range
// locks, which the server arbitrates between hosts.
func acquireFileLock(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, false, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return f, false, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		f.Close()
		return nil, true, nil
	}
	f.Close()
	return nil, false, fmt.Errorf("flock %s: %w (the file system must support locks for shards to share a table directory)", path, err)
}

// releaseFileLock drops the lock and closes f.
func releaseFileLock(f *os.File, _ string) {
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
}

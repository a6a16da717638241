//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris

package filelock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ReleasedOnExit: flock locks go with the process.
const ReleasedOnExit = true

// Acquire opens path and takes an exclusive flock on it without
// waiting; held reports that someone else has it (f is then nil). flock
// locks belong to the open file, so a second Acquire in the same
// process is refused too.
func Acquire(path string) (f *os.File, held bool, err error) {
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
	case errors.Is(err, unix.EWOULDBLOCK), errors.Is(err, unix.EAGAIN):
		f.Close()
		return nil, true, nil
	case errors.Is(err, unix.ENOLCK), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOSYS):
		f.Close()
		return nil, false, fmt.Errorf("flock %s: %w (%w)", path, ErrUnsupported, err)
	}
	f.Close()
	return nil, false, fmt.Errorf("flock %s: %w", path, err)
}

// Release drops the lock and closes f.
func Release(f *os.File, _ string) {
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
}

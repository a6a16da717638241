//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris

package train

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockReleasedOnExit: flock locks go with the process.
const lockReleasedOnExit = true

// acquireLock opens path and takes an exclusive flock on it without
// waiting; held reports that someone else has it (f is then nil). flock
// locks belong to the open file, so a second acquireLock in the same
// process is refused too.
func acquireLock(path string) (f *os.File, held bool, err error) {
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
		return nil, false, fmt.Errorf("flock %s: %w (%w)", path, errLockUnsupported, err)
	}
	f.Close()
	return nil, false, fmt.Errorf("flock %s: %w", path, err)
}

// releaseLock drops the lock and closes f.
func releaseLock(f *os.File, _ string) {
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	f.Close()
}

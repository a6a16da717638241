//go:build windows

package filelock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// ReleasedOnExit: Windows releases a process's file locks when it ends.
const ReleasedOnExit = true

// lockOffsetHigh places the locked byte at 2^32, past the holder's record,
// which other processes then can still read (a locked range cannot be).
const lockOffsetHigh = 1

// Acquire opens path and locks one byte of it exclusively without
// waiting (LockFileEx); held reports that someone else has it.
func Acquire(path string) (f *os.File, held bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, false, err
	}
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case err == nil:
		return f, false, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		f.Close()
		return nil, true, nil
	}
	f.Close()
	return nil, false, fmt.Errorf("LockFileEx %s: %w", path, err)
}

// Release drops the lock and closes f.
func Release(f *os.File, _ string) {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
	f.Close()
}

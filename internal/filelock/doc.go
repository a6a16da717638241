// Package filelock takes an exclusive, non-blocking lock on a file (flock
// on Unix, LockFileEx on Windows, an O_EXCL lock file elsewhere): the one
// mechanism behind train's run-directory lock and cellrun's per-cell lock.
package filelock

import "errors"

// ErrUnsupported wraps the failure of a file system that has no locks.
var ErrUnsupported = errors.New("the file system does not support locks")

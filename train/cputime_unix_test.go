//go:build unix

package train

import (
	"syscall"
	"time"
)

// processCPU is the process's user and system CPU time so far, for
// benchmarks that report CPU time beside wall time (on a shared machine
// wall time counts the other jobs' time slices, CPU time mostly not).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

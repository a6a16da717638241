//go:build unix

package sampler

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the process so far, so that
// benchmarks can report CPU seconds next to wall time on a shared machine.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

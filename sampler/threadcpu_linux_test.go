//go:build linux

package sampler

import "syscall"

// threadCPUTime is the calling thread's CPU time (user and system) in
// nanoseconds, for benchmarks on a loaded machine: wall time there counts
// the other processes' slices, CPU time mostly not (see reportCPUTime).
func threadCPUTime() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}

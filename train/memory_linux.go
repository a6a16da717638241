//go:build linux

package train

import "syscall"

// processMaxRSS returns the peak resident set size of this process so far,
// in bytes: getrusage(RUSAGE_SELF).ru_maxrss, which Linux reports in KiB.
// It is process-wide (every run, the data loading and the other goroutines
// of the process count) and never decreases. 0 means unknown (getrusage
// failed).
func processMaxRSS() uint64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || ru.Maxrss < 0 {
		return 0
	}
	return uint64(ru.Maxrss) * 1024
}

//go:build !linux

package train

// processMaxRSS returns 0 (unknown): the peak RSS is read from Linux's
// getrusage only (other systems report ru_maxrss in other units, or not at
// all).
func processMaxRSS() uint64 { return 0 }

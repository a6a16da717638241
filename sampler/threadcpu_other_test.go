//go:build !linux

package sampler

// threadCPUTime is not available here.
func threadCPUTime() (int64, bool) { return 0, false }

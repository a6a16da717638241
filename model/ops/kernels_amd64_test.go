//go:build amd64 && !purego

package ops

import "golang.org/x/sys/cpu"

// setKernels turns the AVX-512 kernels on or off (tests and benchmarks
// compare both paths).
func setKernels(on bool) { haveKernels = on && cpu.X86.HasAVX512F }

//go:build amd64 && !purego

package half

import "golang.org/x/sys/cpu"

// haveKernel: the CPU has F16C (CPUID.1:ECX bit 29; golang.org/x/sys/cpu
// does not report it) and AVX with the OS saving the YMM registers.
var haveKernel = cpu.X86.HasAVX && func() bool {
	_, _, c, _ := cpuid(1, 0)
	return c&(1<<29) != 0
}()

// cpuid is the CPUID instruction (half_amd64.s).
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// scaledKernel is ToFloat32Scaled on the first n values (n a positive
// multiple of 4), in half_amd64.s: VCVTPH2PS, VCVTPS2PD, VMULPD,
// VCVTPD2PS.
//
//go:noescape
func scaledKernel(dst *float32, src *uint16, n int, scale float64)

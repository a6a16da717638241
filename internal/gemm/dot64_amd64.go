//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// haveDot64 reports whether dot64x4x8 can run here (AVX-512 F).
var haveDot64 = cpu.X86.HasAVX512F

// dot64x4x8 is in dot64_amd64.s: the 4×8 tile of dot products of four rows
// of A with an 8-column panel, stored in C (mode 0), added to C times alpha
// (mode 1) or stored times alpha (mode 2).
//
//go:noescape
func dot64x4x8(kb int, a *float64, lda int, bp *float64, c *float64, ldc int, alpha float64, mode int)

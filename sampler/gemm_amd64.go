//go:build amd64 && !purego

package sampler

import "golang.org/x/sys/cpu"

// kern6x16AVX2 is the AVX2+FMA micro-kernel in gemm_amd64.s; see kern6x16Go
// for its contract.
//
//go:noescape
func kern6x16AVX2(k int, a *float32, lda int, b *float32, c *float32, ldc int)

// haveAVX2 reports whether the assembly micro-kernel can run on this CPU.
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func kern6x16Asm(k int, a []float32, lda int, p []float32, c []float32, ldc int) {
	kern6x16AVX2(k, &a[0], lda, &p[0], &c[0], ldc)
}

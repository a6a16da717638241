//go:build !amd64 || purego

package sampler

// haveAVX2 is false without the assembly micro-kernel (other architectures,
// or the purego build tag).
var haveAVX2 = false

func kern6x16Asm(k int, a []float32, lda int, p []float32, c []float32, ldc int) {
	kern6x16Go(k, a, lda, p, c, ldc)
}

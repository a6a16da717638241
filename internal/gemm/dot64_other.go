//go:build !amd64 || purego

package gemm

// Without the assembly kernel DgemmNT and DsyrkUpper call gonum.
const haveDot64 = false

func dot64x4x8(kb int, a *float64, lda int, bp *float64, c *float64, ldc int, alpha float64, mode int) {
	panic("gemm: dot64x4x8 without AVX-512")
}

//go:build !amd64 || purego

package data

const havePPRKernel = false

func pprTermAVX512(rows *int32, nrows int, rowptr, col *int32, w, x, next, acc, am, norm *float64) {
	panic("data: pprTermAVX512 without AVX-512")
}

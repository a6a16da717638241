//go:build !amd64 || purego

package ops

const haveRowKernels = false

func wspmmRow32(out, x *float32, col *int32, val *float32, nnz, f int) {
	panic("ops: wspmmRow32 without AVX-512")
}

func spmmRow32(out, x *float32, col *int32, val *float32, nnz, f int) {
	panic("ops: spmmRow32 without AVX-512")
}

func setRowKernels(bool) {}

func preluShared32(out, x, v *float32, n int, a float32) {
	panic("ops: preluShared32 without AVX-512")
}

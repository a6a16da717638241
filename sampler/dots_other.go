//go:build !amd64 || purego

package sampler

var haveDots16 = false

func dots16F64(d int, ri *float64, base *float32, offs *int32, out *float64, groups int) {
	panic("sampler: dots16F64 without AVX-512")
}

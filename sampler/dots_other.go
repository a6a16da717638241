//go:build !amd64 || purego

package sampler

var haveDots16 = false

func dots16F64(d int, ri, base *float32, offs *int32, out *float64) {
	panic("sampler: dots16F64 without AVX-512")
}

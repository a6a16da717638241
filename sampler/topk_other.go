//go:build !amd64 || purego

package sampler

// haveTopKAsm is false: topK runs its Go loops.
const haveTopKAsm = false

func filterKeysAsm(seg []float32, buf []int64, n int, base, thr int32) int {
	panic("sampler: filterKeysAsm without AVX-512")
}

func partitionAsm(v []int64, i, m int, pk int64, n int, q []int64, hd, tl int) (int, int, int) {
	panic("sampler: partitionAsm without AVX-512")
}

// setTopKAsm does nothing: there are no kernels.
func setTopKAsm(t interface{ Cleanup(func()) }, on bool) {}

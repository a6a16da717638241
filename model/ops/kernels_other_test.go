//go:build !amd64 || purego

package ops

// setKernels: there are no kernels to turn on here.
func setKernels(bool) {}

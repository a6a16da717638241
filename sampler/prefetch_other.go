//go:build !amd64 || purego

package sampler

// prefetchLines does nothing here.
func prefetchLines(p *byte, lines int) {}

// haveGatherAsm is false: gatherRows runs its Go loop.
const haveGatherAsm = false

func gatherRows64(dst, base *byte, idx *int32, n, rowBytes int) {
	panic("sampler: gatherRows64 without AVX-512")
}

// setGatherAsm does nothing: there is no kernel.
func setGatherAsm(t interface{ Cleanup(func()) }, on bool) {}

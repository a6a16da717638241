//go:build amd64 && !purego && !amd64.v3

package loss

import "golang.org/x/sys/cpu"

// haveSoftplus8 reports whether softplusSigmoid8 runs: AVX-512 F, and
// FMA, with which math.Exp takes the fused path the kernel reproduces.
// (Built with GOAMD64=v3 the compiler fuses softplusSigmoid's own products
// and sums, which the kernel does not: that build has no kernel.) Tests
// turn it off.
var haveSoftplus8 = cpu.X86.HasAVX512F && cpu.X86.HasAVX && cpu.X86.HasFMA

// softplusSigmoid8 (softplus_amd64.s) is softplusSigmoid on n inputs (n a
// multiple of 8), 8 at a time; bit j of bad[q] set means lane j of group q
// was not computed and needs softplusSigmoid.
//
//go:noescape
func softplusSigmoid8(s *float64, n int, sp, sig *float64, bad *uint8)

// setSoftplus8 turns the kernel on or off for a test (restored after it).
func setSoftplus8(t interface{ Cleanup(func()) }, on bool) {
	old := haveSoftplus8
	haveSoftplus8 = on && old
	t.Cleanup(func() { haveSoftplus8 = old })
}

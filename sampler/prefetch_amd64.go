//go:build amd64 && !purego

package sampler

import "golang.org/x/sys/cpu"

// prefetchLines (prefetch_amd64.s) asks the CPU to load the lines cache
// lines of 64 bytes from p on into its caches (PREFETCHT0), without waiting
// for them. A hint: it neither faults nor changes memory.
//
//go:noescape
func prefetchLines(p *byte, lines int)

// haveGatherAsm: gatherRows64 can run (AVX-512 F). Tests turn it off.
var haveGatherAsm = cpu.X86.HasAVX512F

// gatherRows64 (prefetch_amd64.s) copies the n rows idx of rowBytes bytes
// (a multiple of 64) at base to dst, one after another, asking for the row
// 8 ahead of the one it copies (see gatherRows).
//
//go:noescape
func gatherRows64(dst, base *byte, idx *int32, n, rowBytes int)

// setGatherAsm turns gatherRows64 on or off for the test (restored after it).
func setGatherAsm(t interface{ Cleanup(func()) }, on bool) {
	old := haveGatherAsm
	haveGatherAsm = on && old
	t.Cleanup(func() { haveGatherAsm = old })
}

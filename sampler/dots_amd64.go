//go:build amd64 && !purego

package sampler

import "golang.org/x/sys/cpu"

// haveDots16: dots16F64 can run (AVX-512 F and VL). Tests turn it off.
var haveDots16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// dots16F64 (dots_amd64.s) computes 16·groups float64 dot products of
// float32 rows with one float64 row, each in order of the coordinates: see
// edgeDots.
//
//go:noescape
func dots16F64(d int, ri *float64, base *float32, offs *int32, out *float64, groups int)

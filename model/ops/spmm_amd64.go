//go:build amd64 && !purego

package ops

import "golang.org/x/sys/cpu"

// haveRowKernels: the AVX-512 row kernels of spmm_amd64.s can run.
var haveRowKernels = cpu.X86.HasAVX512F

// wspmmRow32 and spmmRow32 compute one output row of WSpMM and SpMM:
// out[0:f] = Σ_k val[k]·x[col[k]·f : col[k]·f+f] over k < nnz (val[k] = 1 for
// spmmRow32, which ignores val), bit-identical to the scalar loops.
//
//go:noescape
func wspmmRow32(out, x *float32, col *int32, val *float32, nnz, f int)

//go:noescape
func spmmRow32(out, x *float32, col *int32, val *float32, nnz, f int)

// setRowKernels turns the row kernels on or off (benchmarks compare both).
func setRowKernels(on bool) { haveRowKernels = on && cpu.X86.HasAVX512F }

// preluShared32 writes out[i] = v[i] where x[i] > 0 and a·v[i] elsewhere
// for i < n (prelu_amd64.s), bit-identical to the scalar loops.
//
//go:noescape
func preluShared32(out, x, v *float32, n int, a float32)

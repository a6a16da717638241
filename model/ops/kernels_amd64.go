//go:build amd64 && !purego

package ops

import "golang.org/x/sys/cpu"

// haveKernels: the AVX-512 kernels (spmm_amd64.s, prelu_amd64.s, bias_amd64.s,
// batchnorm_amd64.s, bnsums_amd64.s) can run.
var haveKernels = cpu.X86.HasAVX512F

// wspmmRow32 and spmmRow32 compute one output row of WSpMM and SpMM:
// out[0:f] = Σ_k val[k]·x[col[k]·f : col[k]·f+f] over k < nnz (val[k] = 1 for
// spmmRow32, which ignores val), bit-identical to the scalar loops.
//
//go:noescape
func wspmmRow32(out, x *float32, col *int32, val *float32, nnz, f int)

//go:noescape
func spmmRow32(out, x *float32, col *int32, val *float32, nnz, f int)

// preluShared32 writes out[i] = v[i] where x[i] > 0 and a·v[i] elsewhere
// for i < n (prelu_amd64.s), bit-identical to the scalar loops.
//
//go:noescape
func preluShared32(out, x, v *float32, n int, a float32)

// The BatchNorm passes of batchnorm_amd64.s over an n×c float32 matrix
// (rows in order, float64 statistics), bit-identical to bnForward's and
// bnBackward's scalar loops.
//
//go:noescape
func bnColSums32(sum *float64, x *float32, n, c int)

//go:noescape
func bnColSqDev32(sum, mean *float64, x *float32, n, c int)

//go:noescape
func bnAffine32(out, x, scale, shift *float32, n, c int)

//go:noescape
func bnBwdSums32(sdy, sdyx, mean, invStd *float64, x, dy *float32, n, c int)

//go:noescape
func bnBwdDx32(out, x, dy *float32, mean, invStd, k, sdy, sdyx *float64, n, c int)

// bnPlaneAffine32 and bnPlaneDx32 (batchnorm_amd64.s) are BatchNorm2D's
// element-wise passes over one channel plane of n float32 values, affine's
// and bn4Backward's scalar loops bit for bit.
//
//go:noescape
func bnPlaneAffine32(dst, src *float32, n int, m, scale, b float32, relu int)

//go:noescape
func bnPlaneDx32(dst, gv, x *float32, n int, m, is, m1, m2, k float32)

// reluInPlace32 and reluMask32 (bias_amd64.s) are reluInPlace and
// reluMask for float32 on n values, bit-identical.
//
//go:noescape
func reluInPlace32(v *float32, n int)

//go:noescape
func reluMask32(out, y, dy *float32, n int)

// reluAdd32 and reluCopy32 (bias_amd64.s) are reluTo's float32 loops with
// and without b on n values, bit-identical.
//
//go:noescape
func reluAdd32(dst, a, b *float32, n int)

//go:noescape
func reluCopy32(dst, a *float32, n int)

// colSum32 (bias_amd64.s) adds the n rows of the n×c matrix x into out, in
// row order: colSum's loop for float32, bit-identical.
//
//go:noescape
func colSum32(out, x *float32, n, c int)

// sumShifted4x32, sumProdDev4x32 and maskedSums4x32 (bnsums_amd64.s) do the
// first n &^ 3 elements of sumShifted64, sumProdDev64 and maskedSums for
// float32, leaving the four lanes of each sum in acc[0:4] and acc[4:8] in
// the bits of the scalar loops' accumulators.
//
//go:noescape
func sumShifted4x32(v *float32, n int, k float64, acc *float64)

//go:noescape
func sumProdDev4x32(gv, x *float32, n int, m float64, acc *float64)

//go:noescape
func maskedSums4x32(out, y, dy, x *float32, n int, m float64, acc *float64)

// split32 and even32 (deinterleave_amd64.s) are the stride-2 column splits:
// e[j], o[j] = row[2j], row[2j+1] for j < n (reading row[0:2n]), and
// dst[j] = src[2j] for j < n (reading src[0:2n−1]).
//
//go:noescape
func split32(e, o, row *float32, n int)

//go:noescape
func even32(dst, src *float32, n int)

// wgIn32, wgOut32 (winograd_amd64.s) and wgFill32 (deinterleave_amd64.s,
// beside split32, whose table it shares) are the Winograd
// F(2×2, 3×3) input and output transforms of rows tile rows and the split
// of image rows into even and odd padded columns: wgInGo's, wgOutGo's and
// wgFillGo's loops bit for bit.
//
//go:noescape
func wgIn32(v *float32, vs int, e, o *float32, rs, n, rows int)

//go:noescape
func wgOut32(y *float32, ys int, m *float32, ms, n, rows int)

//go:noescape
func wgFill32(dst, x *float32, rows, w, rs, aoff, boff int)

// wgDy32 (winograd_amd64.s) is the adjoint of the output transform for the
// weight gradient, wgDyGo's loop bit for bit.
//
//go:noescape
func wgDy32(dm *float32, ms int, e, o *float32, rs, n, rows int)

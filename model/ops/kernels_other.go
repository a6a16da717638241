//go:build !amd64 || purego

package ops

const haveKernels = false

func wspmmRow32(out, x *float32, col *int32, val *float32, nnz, f int) {
	panic("ops: wspmmRow32 without AVX-512")
}

func spmmRow32(out, x *float32, col *int32, val *float32, nnz, f int) {
	panic("ops: spmmRow32 without AVX-512")
}

func preluShared32(out, x, v *float32, n int, a float32) {
	panic("ops: preluShared32 without AVX-512")
}

func bnColSums32(sum *float64, x *float32, n, c int)        { panic("ops: no AVX-512") }
func bnColSqDev32(sum, mean *float64, x *float32, n, c int) { panic("ops: no AVX-512") }
func bnAffine32(out, x, scale, shift *float32, n, c int)    { panic("ops: no AVX-512") }
func bnBwdSums32(sdy, sdyx, mean, invStd *float64, x, dy *float32, n, c int) {
	panic("ops: no AVX-512")
}
func bnBwdDx32(out, x, dy *float32, mean, invStd, k, sdy, sdyx *float64, n, c int) {
	panic("ops: no AVX-512")
}

func bnPlaneAffine32(dst, src *float32, n int, m, scale, b float32, relu int) {
	panic("ops: no AVX-512")
}
func bnPlaneDx32(dst, gv, x *float32, n int, m, is, m1, m2, k float32) { panic("ops: no AVX-512") }

func reluInPlace32(v *float32, n int)       { panic("ops: no AVX-512") }
func reluMask32(out, y, dy *float32, n int) { panic("ops: no AVX-512") }
func reluAdd32(dst, a, b *float32, n int)   { panic("ops: no AVX-512") }
func reluCopy32(dst, a *float32, n int)     { panic("ops: no AVX-512") }

func colSum32(out, x *float32, n, c int) { panic("ops: no AVX-512") }

func sumShifted4x32(v *float32, n int, k float64, acc *float64)     { panic("ops: no AVX-512") }
func sumProdDev4x32(gv, x *float32, n int, m float64, acc *float64) { panic("ops: no AVX-512") }
func maskedSums4x32(out, y, dy, x *float32, n int, m float64, acc *float64) {
	panic("ops: no AVX-512")
}

func split32(e, o, row *float32, n int) { panic("ops: no AVX-512") }
func even32(dst, src *float32, n int)   { panic("ops: no AVX-512") }

func wgIn32(v *float32, vs int, e, o *float32, rs, n, rows int)  { panic("ops: no AVX-512") }
func wgOut32(y *float32, ys int, m *float32, ms, n, rows int)    { panic("ops: no AVX-512") }
func wgFill32(dst, x *float32, rows, w, rs, aoff, boff int)      { panic("ops: no AVX-512") }
func wgDy32(dm *float32, ms int, e, o *float32, rs, n, rows int) { panic("ops: no AVX-512") }

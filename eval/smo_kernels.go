package eval

import "math"

// The two O(active set) loops of an SMO iteration, which take most of the
// solver's time, are kernels with a scalar form here and an AVX-512 form in
// smo_amd64.s. Both give the same bits: every lane does the scalar
// arithmetic in the same order (no fused multiply-add), and the argmax and
// argmin with LIBSVM's ties (>= and <=: the last index attaining the
// extremum wins) are reduced across lanes as the scalar loop would find
// them.

// gradUpdateGo adds Ki[k]·dai + Kj[k]·daj to yG[k] for every k (the kernel
// rows in position order, see posRows) and
// returns the first loop of the next WSS2: the max of −yG over the
// positions flagged inUp and the last position attaining it (−Inf, −1 if
// none). It continues a scan that has already seen the maximum upMax at
// upIdx.
func gradUpdateGo(yG []float64, fl []uint8, Ki, Kj []float32, dai, daj, upMax float64, upIdx, off int) (float64, int) {
	Ki, Kj, fl = Ki[:len(yG)], Kj[:len(yG)], fl[:len(yG)]
	for k := range yG {
		g := yG[k] + (float64(Ki[k])*dai + float64(Kj[k])*daj)
		yG[k] = g
		if fl[k]&inUp != 0 && -g >= upMax {
			upMax, upIdx = -g, k+off
		}
	}
	return upMax, upIdx
}

// wss2Go is the second loop of WSS2 for the chosen i (its kernel row Ki in
// position order and
// Gmax = −yG_i): the max of yG over the positions flagged inLow, and among
// them with Gmax + yG_j > 0 the last position minimising
// −(Gmax + yG_j)²/(2 − 2K_ij). It continues a scan that has seen gmax2 and
// the minimum objMin at minIdx; off is the position of yG[0].
func wss2Go(yG []float64, fl []uint8, Ki []float32, Gmax, gmax2, objMin float64, minIdx, off int) (float64, float64, int) {
	Ki, fl = Ki[:len(yG)], fl[:len(yG)]
	for j, g := range yG {
		if fl[j]&inLow == 0 {
			continue
		}
		if g >= gmax2 {
			gmax2 = g
		}
		gradDiff := Gmax + g
		if gradDiff > 0 {
			if objDiff := wss2Obj(gradDiff, Ki[j]); objDiff <= objMin {
				minIdx = j + off
				objMin = objDiff
			}
		}
	}
	return gmax2, objMin, minIdx
}

// gradUpdate is gradUpdateGo over all of yG, on the vector kernel when the
// CPU has one.
func gradUpdate(yG []float64, fl []uint8, Ki, Kj []float32, dai, daj float64) (float64, int) {
	upMax, upIdx := math.Inf(-1), -1
	done := 0
	if haveSMOKernels && len(yG) >= 8 {
		done, upMax, upIdx = gradUpdateVec(yG, fl, Ki, Kj, dai, daj)
	}
	return gradUpdateGo(yG[done:], fl[done:], Ki[done:], Kj[done:], dai, daj, upMax, upIdx, done)
}

// wss2 is wss2Go over all of yG, on the vector kernel when the CPU has one.
func wss2(yG []float64, fl []uint8, Ki []float32, Gmax float64) (gmax2, objMin float64, minIdx int) {
	gmax2, objMin, minIdx = math.Inf(-1), math.Inf(1), -1
	done := 0
	if haveSMOKernels && len(yG) >= 8 {
		done, gmax2, objMin, minIdx = wss2Vec(yG, fl, Ki, Gmax)
	}
	return wss2Go(yG[done:], fl[done:], Ki[done:], Gmax, gmax2, objMin, minIdx, done)
}

// wss2Obj is WSS2's objective −(Gmax + yG_j)²/(2 − 2K_ij) of a candidate j
// (gradDiff = Gmax + yG_j > 0), with LIBSVM's τ for a non-positive
// denominator.
func wss2Obj(gradDiff float64, kij float32) float64 {
	quad := 2 - 2*float64(kij)
	if quad > 0 {
		return -(gradDiff * gradDiff) / quad
	}
	return -(gradDiff * gradDiff) / smoTau
}

// Bounds of the arguments the vector exp handles itself (math/exp_amd64.s:
// Overflow; below −700 math.Exp may take its denormal path).
const (
	expOverflow = 7.09782712893384e+02
	expLow      = -700
)

// expScaledInto sets dst[k] = math.Exp(scale*src[k]) for every k (dst may
// be src), with the bits math.Exp gives.
func expScaledInto(dst, src []float64, scale float64) {
	dst = dst[:len(src)]
	done := 0
	if haveExpKernel {
		done = expScaledVec(dst, src, scale)
	}
	for k := done; k < len(src); k++ {
		dst[k] = math.Exp(scale * src[k])
	}
}

// gatherF32 sets dst[k] = src[idx[k]] for every k < len(idx). The indices
// are not bounds-checked by the vector loop: the caller guarantees
// 0 ≤ idx[k] < len(src) (a solver's position → cache column map over a
// cache row).
func gatherF32(dst, src []float32, idx []int32) {
	dst = dst[:len(idx)]
	done := 0
	if haveSMOKernels {
		done = gatherVec(dst, src, idx)
	}
	for k := done; k < len(idx); k++ {
		dst[k] = src[idx[k]]
	}
}

// addScaledGather adds c·src[idx[k]] to dst[k] for every k < len(idx) (a
// multiply, then an add, as written), with gatherF32's precondition on idx.
func addScaledGather(dst []float64, src []float32, idx []int32, c float64) {
	dst = dst[:len(idx)]
	done := 0
	if haveSMOKernels {
		done = addScaledGatherVec(dst, src, idx, c)
	}
	for k := done; k < len(idx); k++ {
		dst[k] += c * float64(src[idx[k]])
	}
}

// addScaled adds c·src[k] to dst[k] for every k < len(dst) (a multiply,
// then an add, as written).
func addScaled(dst []float64, src []float32, c float64) {
	src = src[:len(dst)]
	done := 0
	if haveSMOKernels {
		done = addScaledVec(dst, src, c)
	}
	for k := done; k < len(dst); k++ {
		dst[k] += c * float64(src[k])
	}
}

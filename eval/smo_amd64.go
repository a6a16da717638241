//go:build amd64 && !purego

package eval

import (
	"math"
	mbits "math/bits"

	"golang.org/x/sys/cpu"
)

// haveSMOKernels: the AVX-512 F+VL+BW kernels of smo_amd64.s can run
// (golang.org/x/sys/cpu also checks that the OS saves the registers).
var haveSMOKernels = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512BW

// gradUpdate8 runs gradUpdateGo's loop over the first n positions (n a
// multiple of 8) in 16 lanes (lane l covers the positions ≡ l mod 16) and
// returns the last position attaining the max of −yG over inUp (−1 if
// none).
//
//go:noescape
func gradUpdate8(yG *float64, fl *uint8, ki, kj *float32, n int, dai, daj float64) (idx int)

// wss2x8 runs wss2Go's loop over the first n positions (n a multiple of 8)
// in 16 lanes and returns the max of yG over inLow (−Inf if none) and the
// last position attaining the min objective (−1 if none).
//
//go:noescape
func wss2x8(yG *float64, fl *uint8, ki *float32, n int, gmax float64) (max2 float64, idx int)

func gradUpdateVec(yG []float64, fl []uint8, Ki, Kj []float32, dai, daj float64) (done int, upMax float64, upIdx int) {
	n := len(yG) &^ 7
	_, _, _ = fl[n-1], Ki[n-1], Kj[n-1]
	upIdx = gradUpdate8(&yG[0], &fl[0], &Ki[0], &Kj[0], n, dai, daj)
	if upIdx < 0 {
		return n, math.Inf(-1), -1
	}
	// The scalar loop keeps −yG of the position it chose.
	return n, -yG[upIdx], upIdx
}

func wss2Vec(yG []float64, fl []uint8, Ki []float32, Gmax float64) (done int, gmax2, objMin float64, minIdx int) {
	n := len(yG) &^ 7
	_, _ = fl[n-1], Ki[n-1]
	gmax2, minIdx = wss2x8(&yG[0], &fl[0], &Ki[0], n, Gmax)
	if minIdx < 0 {
		return n, gmax2, math.Inf(1), -1
	}
	// The scalar loop keeps the objective of the position it chose.
	return n, gmax2, wss2Obj(Gmax+yG[minIdx], Ki[minIdx]), minIdx
}

// haveExpKernel: expScaled8 can run and gives math.Exp's bits, which on
// amd64 come from its FMA path whenever the CPU has AVX and FMA.
var haveExpKernel = haveSMOKernels && cpu.X86.HasAVX && cpu.X86.HasFMA

// expScaled8 is expScaledInto's vector loop (smo_amd64.s).
//
//go:noescape
func expScaled8(dst, src *float64, n int, scale float64, special *uint8) (any bool)

// expChunk is the number of values expScaledVec hands expScaled8 at a time
// (its map of special lanes lives on the stack).
const expChunk = 1024

func expScaledVec(dst, src []float64, scale float64) int {
	n := len(src) &^ 7
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	var special [expChunk / 8]uint8
	for c := 0; c < n; c += expChunk {
		m := min(expChunk, n-c)
		if !expScaled8(&dst[c], &src[c], m, scale, &special[0]) {
			continue
		}
		// The special lanes were not stored: src[k] is intact even when
		// dst is src.
		for b, bits := range special[:m/8] {
			for ; bits != 0; bits &= bits - 1 {
				k := c + 8*b + mbits.TrailingZeros8(bits)
				dst[k] = math.Exp(scale * src[k])
			}
		}
	}
	return n
}

// gather16 is gatherF32's vector loop (smo_amd64.s); every idx[k] must be a
// valid index of src.
//
//go:noescape
func gather16(dst, src *float32, idx *int32, n int)

// addScaledGather16 is addScaledGather's vector loop (smo_amd64.s); every
// idx[k] must be a valid index of src.
//
//go:noescape
func addScaledGather16(dst *float64, src *float32, idx *int32, n int, c float64)

func gatherVec(dst, src []float32, idx []int32) int {
	n := len(idx) &^ 15
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	gather16(&dst[0], &src[0], &idx[0], n)
	return n
}

func addScaledGatherVec(dst []float64, src []float32, idx []int32, c float64) int {
	n := len(idx) &^ 15
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	addScaledGather16(&dst[0], &src[0], &idx[0], n, c)
	return n
}

// addScaled16 is addScaled's vector loop (smo_amd64.s).
//
//go:noescape
func addScaled16(dst *float64, src *float32, n int, c float64)

func addScaledVec(dst []float64, src []float32, c float64) int {
	n := len(dst) &^ 15
	if n == 0 {
		return 0
	}
	_ = src[n-1]
	addScaled16(&dst[0], &src[0], n, c)
	return n
}

// kernelRow8 is kernelRowDense's vector loop (smo_amd64.s); every idx[k]
// must be a valid index of drow.
//
//go:noescape
func kernelRow8(dst *float32, drow *float64, idx *int, n int, scale float64) (special bool)

func kernelRowVec(dst []float32, drow []float64, idx []int, scale float64) int {
	n := len(idx) &^ 7
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	if kernelRow8(&dst[0], &drow[0], &idx[0], n, scale) {
		for k, i := range idx[:n] {
			if x := scale * drow[i]; !(x <= expOverflow) || x < expLow {
				dst[k] = float32(math.Exp(x))
			}
		}
	}
	return n
}

//go:build amd64 && !purego

package eval

import (
	"math"

	"golang.org/x/sys/cpu"
)

// haveSMOKernels: the AVX-512 F+VL kernels of smo_amd64.s can run
// (golang.org/x/sys/cpu also checks that the OS saves the registers).
var haveSMOKernels = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// gradUpdate8 runs gradUpdateGo's loop over the first n positions (n a
// multiple of 8) in 16 lanes: lane l covers the positions ≡ l mod 16;
// out[0:16] receive each lane's max of −yG over inUp (as float64 bits) and
// out[16:32] the last position attaining it (−1 if none).
//
//go:noescape
func gradUpdate8(yG *float64, fl *uint8, ki, kj *float32, n int, dai, daj float64, out *[32]uint64)

// wss2x8 runs wss2Go's loop over the first n positions (n a multiple of 8)
// in 16 lanes: out[0:16] the lanes' max of yG over inLow, out[16:32] their
// min objective, out[32:48] the last position attaining it (−1 if none).
//
//go:noescape
func wss2x8(yG *float64, fl *uint8, ki *float32, n int, gmax float64, out *[48]uint64)

func greater(a, b float64) bool { return a > b }
func less(a, b float64) bool    { return a < b }

func gradUpdateVec(yG []float64, fl []uint8, Ki, Kj []float32, dai, daj float64) (done int, upMax float64, upIdx int) {
	n := len(yG) &^ 7
	_, _, _ = fl[n-1], Ki[n-1], Kj[n-1]
	var out [32]uint64
	gradUpdate8(&yG[0], &fl[0], &Ki[0], &Kj[0], n, dai, daj, &out)
	var vals [16]float64
	var idx [16]int64
	for l := range 16 {
		vals[l] = math.Float64frombits(out[l])
		idx[l] = int64(out[16+l])
	}
	upMax, upIdx = lastArgmax(&vals, &idx, math.Inf(-1), greater)
	return n, upMax, upIdx
}

func wss2Vec(yG []float64, fl []uint8, Ki []float32, Gmax float64) (done int, gmax2, objMin float64, minIdx int) {
	n := len(yG) &^ 7
	_, _ = fl[n-1], Ki[n-1]
	var out [48]uint64
	wss2x8(&yG[0], &fl[0], &Ki[0], n, Gmax, &out)
	gmax2 = math.Inf(-1)
	var vals [16]float64
	var idx [16]int64
	for l := range 16 {
		if g := math.Float64frombits(out[l]); g >= gmax2 {
			gmax2 = g
		}
		vals[l] = math.Float64frombits(out[16+l])
		idx[l] = int64(out[32+l])
	}
	objMin, minIdx = lastArgmax(&vals, &idx, math.Inf(1), less)
	return n, gmax2, objMin, minIdx
}

// haveExpKernel: expScaled8 can run and gives math.Exp's bits, which on
// amd64 come from its FMA path whenever the CPU has AVX and FMA.
var haveExpKernel = haveSMOKernels && cpu.X86.HasAVX && cpu.X86.HasFMA

// expScaled8 is expScaledInto's vector loop (smo_amd64.s).
//
//go:noescape
func expScaled8(dst, src *float64, n int, scale float64) (special bool)

func expScaledVec(dst, src []float64, scale float64) int {
	n := len(src) &^ 7
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	if expScaled8(&dst[0], &src[0], n, scale) {
		for k := range n {
			if x := scale * src[k]; !(x <= expOverflow) || x < expLow {
				dst[k] = math.Exp(x)
			}
		}
	}
	return n
}

package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// smoKernelInput draws a solver state of n positions and two kernel rows in
// position order. Values come from a small set when ties is set, so that many
// positions share the extremum and the tie rule decides.
func smoKernelInput(r *rand.Rand, n int, ties bool) (yG []float64, fl []uint8, Ki, Kj []float32) {
	yG = make([]float64, n)
	fl = make([]uint8, n)
	Ki = make([]float32, n)
	Kj = make([]float32, n)
	for k := range n {
		if ties {
			yG[k] = float64(r.IntN(5)-2) * 0.5
			if r.IntN(10) == 0 {
				yG[k] = math.Copysign(0, float64(r.IntN(2)*2-1))
			}
		} else {
			yG[k] = r.NormFloat64()
		}
		fl[k] = uint8(r.IntN(4)) // none, inUp, inLow or both
	}
	for c := range n {
		if ties {
			Ki[c] = float32(r.IntN(3)) * 0.5 // 0, 0.5 and 1 (quad = 0 → tau)
			Kj[c] = float32(r.IntN(3)) * 0.25
		} else {
			Ki[c] = r.Float32()
			Kj[c] = r.Float32()
		}
	}
	return
}

// TestSMOKernelsMatchScalar: the vector kernels (where the CPU has them)
// give the scalar loops' results bit for bit, ties and signed zeros
// included, for lengths around the 8-lane blocks.
func TestSMOKernelsMatchScalar(t *testing.T) {
	if !haveSMOKernels {
		t.Skip("no vector SMO kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{8, 9, 15, 16, 17, 40, 48, 63, 64, 100, 1001} {
		for _, ties := range []bool{false, true} {
			for trial := range 20 {
				yG, fl, Ki, Kj := smoKernelInput(r, n, ties)
				dai, daj := r.NormFloat64(), r.NormFloat64()
				if ties && trial%2 == 0 {
					dai, daj = 0, 0 // leave yG as drawn: many equal −yG
				}
				want := append([]float64(nil), yG...)
				wMax, wIdx := gradUpdateGo(want, fl, Ki, Kj, dai, daj, math.Inf(-1), -1, 0)
				got := append([]float64(nil), yG...)
				gMax, gIdx := gradUpdate(got, fl, Ki, Kj, dai, daj)
				for k := range got {
					if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
						t.Fatalf("n=%d ties=%v: gradUpdate yG[%d] = %v, scalar %v", n, ties, k, got[k], want[k])
					}
				}
				if math.Float64bits(gMax) != math.Float64bits(wMax) || gIdx != wIdx {
					t.Fatalf("n=%d ties=%v: gradUpdate max (%v, %d), scalar (%v, %d)", n, ties, gMax, gIdx, wMax, wIdx)
				}

				Gmax := r.NormFloat64()
				if ties {
					Gmax = float64(r.IntN(3)) * 0.5
				}
				w2, wObj, wMin := wss2Go(want, fl, Ki, Gmax, math.Inf(-1), math.Inf(1), -1, 0)
				g2, gObj, gMin := wss2(want, fl, Ki, Gmax)
				if g2 != w2 || math.Float64bits(gObj) != math.Float64bits(wObj) || gMin != wMin {
					t.Fatalf("n=%d ties=%v: wss2 (%v, %v, %d), scalar (%v, %v, %d)", n, ties, g2, gObj, gMin, w2, wObj, wMin)
				}
			}
		}
	}
}

// TestSMOKernelsEmptySets: no position flagged gives the scalar loops'
// "none" answers (−Inf/−1 and −Inf, +Inf, −1).
func TestSMOKernelsEmptySets(t *testing.T) {
	for _, n := range []int{8, 24, 31} {
		yG := make([]float64, n)
		fl := make([]uint8, n)
		K := make([]float32, n)
		if m, i := gradUpdate(yG, fl, K, K, 1, 1); !math.IsInf(m, -1) || i != -1 {
			t.Errorf("n=%d: gradUpdate with no inUp = (%v, %d), want (-Inf, -1)", n, m, i)
		}
		if g2, obj, i := wss2(yG, fl, K, 1); !math.IsInf(g2, -1) || !math.IsInf(obj, 1) || i != -1 {
			t.Errorf("n=%d: wss2 with no inLow = (%v, %v, %d), want (-Inf, +Inf, -1)", n, g2, obj, i)
		}
	}
}

func BenchmarkSMOKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 3000
	yG, fl, Ki, Kj := smoKernelInput(r, n, false)
	b.Run("gradUpdate/vec", func(b *testing.B) {
		for b.Loop() {
			gradUpdate(yG, fl, Ki, Kj, 1e-9, -1e-9)
		}
	})
	b.Run("gradUpdate/go", func(b *testing.B) {
		for b.Loop() {
			gradUpdateGo(yG, fl, Ki, Kj, 1e-9, -1e-9, math.Inf(-1), -1, 0)
		}
	})
	b.Run("wss2/vec", func(b *testing.B) {
		for b.Loop() {
			wss2(yG, fl, Ki, 0.5)
		}
	})
	b.Run("wss2/go", func(b *testing.B) {
		for b.Loop() {
			wss2Go(yG, fl, Ki, 0.5, math.Inf(-1), math.Inf(1), -1, 0)
		}
	})
}

// TestExpScaledMatchesMathExp: the vector exp gives math.Exp's bits for
// every argument, over the kernel's range (scale·d² for γ > 0, d² ≥ 0, and
// the small negative d² of rounding) and at the special values.
func TestExpScaledMatchesMathExp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var src []float64
	for range 200_000 {
		switch r.IntN(4) {
		case 0:
			src = append(src, r.Float64()*4)
		case 1:
			src = append(src, r.Float64()*800)
		case 2:
			src = append(src, -r.Float64()*1e-6)
		default:
			src = append(src, math.Float64frombits(r.Uint64()))
		}
	}
	src = append(src, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		700, 700.0000001, 708.39, 745.2, 746, 1e300, -1e300, -0.5, 1e-320)
	for _, scale := range []float64{-1, -0.013, -1.7, 1} {
		for _, inPlace := range []bool{false, true} {
			// In place (dst is src) is how the kernel rows call it: the
			// special arguments must still be there for math.Exp.
			got := make([]float64, len(src))
			if inPlace {
				copy(got, src)
				expScaledInto(got, got, scale)
			} else {
				expScaledInto(got, src, scale)
			}
			for k, v := range src {
				want := math.Exp(scale * v)
				if math.Float64bits(got[k]) != math.Float64bits(want) && !(math.IsNaN(got[k]) && math.IsNaN(want)) {
					t.Fatalf("scale %v, in place %v: exp(%v·%v) = %v (%#x), math.Exp %v (%#x)", scale, inPlace, scale, v, got[k], math.Float64bits(got[k]), want, math.Float64bits(want))
				}
			}
		}
	}
}

func BenchmarkExpScaled(b *testing.B) {
	src := make([]float64, 3000)
	for k := range src {
		src[k] = float64(k) / 300
	}
	dst := make([]float64, len(src))
	b.Run("vec", func(b *testing.B) {
		for b.Loop() {
			expScaledInto(dst, src, -0.5)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for k, v := range src {
				dst[k] = math.Exp(-0.5 * v)
			}
		}
	})
}

// TestWSS2NearTies: objectives that differ by far less than the 2^-14 error
// of a reciprocal-based division filter (one that would divide only in
// blocks where some lane may beat its minimum; two such filters were tried
// and were slower, see wss2Filter) still give the scalar loop's choice, the
// last of equal objectives included.
func TestWSS2NearTies(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, n := range []int{16, 64, 1001, 4096} {
		for _, spread := range []float64{0, 1e-15, 1e-12, 1e-8, 1e-5} {
			for trial := range 10 {
				yG := make([]float64, n)
				fl := make([]uint8, n)
				Ki := make([]float32, n)
				for k := range n {
					yG[k] = 0.5 * (1 + spread*r.Float64())
					fl[k] = 2 | uint8(r.IntN(2)) // inLow
					Ki[k] = float32(0.25 * (1 + spread*r.Float64()))
				}
				if trial%2 == 1 { // the best objective near the end: records late in the scan
					for k := range n {
						yG[k] *= 1 + spread*float64(k)/float64(n)
					}
				}
				w2, wObj, wMin := wss2Go(yG, fl, Ki, 0.5, math.Inf(-1), math.Inf(1), -1, 0)
				g2, gObj, gMin := wss2(yG, fl, Ki, 0.5)
				if g2 != w2 || math.Float64bits(gObj) != math.Float64bits(wObj) || gMin != wMin {
					t.Fatalf("n=%d spread=%g trial %d: wss2 (%v, %v, %d), scalar (%v, %v, %d)", n, spread, trial, g2, gObj, gMin, w2, wObj, wMin)
				}
			}
		}
	}
}

// TestGatherKernelsMatchScalar: gatherF32, addScaledGather and addScaled give the
// scalar loops' bits for lengths around the 16-lane blocks, with repeated
// and permuted indices.
func TestGatherKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 100, 1001} {
		src := make([]float32, n+7)
		for k := range src {
			src[k] = r.Float32()
			if k%5 == 0 {
				src[k] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
			}
		}
		idx := make([]int32, n)
		for k := range idx {
			idx[k] = int32(r.IntN(len(src)))
		}
		got := make([]float32, n)
		gatherF32(got, src, idx)
		for k, c := range idx {
			if math.Float32bits(got[k]) != math.Float32bits(src[c]) {
				t.Fatalf("n=%d: gatherF32[%d] = %v, want src[%d] = %v", n, k, got[k], c, src[c])
			}
		}
		for _, c := range []float64{1.7, -0.3, 0, math.Copysign(0, -1), 1e300} {
			dst := make([]float64, n)
			for k := range dst {
				dst[k] = r.NormFloat64()
			}
			want := append([]float64(nil), dst...)
			for k, i := range idx {
				want[k] += c * float64(src[i])
			}
			addScaledGather(dst, src, idx, c)
			for k := range dst {
				if math.Float64bits(dst[k]) != math.Float64bits(want[k]) {
					t.Fatalf("n=%d c=%v: addScaledGather[%d] = %v, scalar %v", n, c, k, dst[k], want[k])
				}
			}
			for k := range want {
				want[k] += c * float64(src[k])
			}
			addScaled(dst, src, c)
			for k := range dst {
				if math.Float64bits(dst[k]) != math.Float64bits(want[k]) {
					t.Fatalf("n=%d c=%v: addScaled[%d] = %v, scalar %v", n, c, k, dst[k], want[k])
				}
			}
		}
	}
}

// reconstructGradientLIBSVM is LIBSVM's reconstruct_gradient as written
// there (two loop orders, chosen by the kernel rows each computes), over the
// solver's y-scaled gradient: the reference for reconstructGradient.
func (s *smoSolver) reconstructGradientLIBSVM() {
	l, as := s.l, s.activeSize
	for j := as; j < l; j++ {
		s.yG[j] = s.yGbar[s.p2l[j]] - s.y[j]
	}
	nrFree := 0
	for j := 0; j < as; j++ {
		if s.status[j] == boundFree {
			nrFree++
		}
	}
	if nrFree*l > 2*as*(l-as) {
		for i := as; i < l; i++ {
			Ki := s.cache.row(int(s.p2l[i]))
			for j := 0; j < as; j++ {
				if s.status[j] == boundFree {
					s.yG[i] += s.alpha[j] * (s.y[j] * float64(Ki[s.p2l[j]]))
				}
			}
		}
	} else {
		for i := 0; i < as; i++ {
			if s.status[i] != boundFree {
				continue
			}
			Ki := s.cache.row(int(s.p2l[i]))
			ai, yi := s.alpha[i], s.y[i]
			for j := as; j < l; j++ {
				s.yG[j] += ai * (yi * float64(Ki[s.p2l[j]]))
			}
		}
	}
}

// TestReconstructGradientMatchesLIBSVM: the free-rows-outer gather form
// gives LIBSVM's gradients bit for bit in both of LIBSVM's regimes (few and
// many free variables) and both of its own (gather over the inactive
// positions, or whole rows), positions permuted as shrinking leaves them.
func TestReconstructGradientMatchesLIBSVM(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 23))
	const n, d = 90, 5
	x := make([]float64, n*d)
	for k := range x {
		x[k] = r.NormFloat64()
	}
	train := make([]int, n)
	for k := range train {
		train[k] = k
	}
	for _, dense := range []bool{false, true} {
		var src sqDist = newLazyDist(x, n, d)
		if dense {
			src = newDenseDist(x, n, d, 2)
		}
		cache := newKernelCache(src, train, 0.3, 1<<20)
		for _, freeFrac := range []float64{0.05, 0.5, 0.95} {
			for _, as := range []int{1, 30, 70, 89} {
				s := &smoSolver{l: n, activeSize: as, cache: cache, C: 1,
					y: make([]float64, n), yG: make([]float64, n), yGbar: make([]float64, n),
					alpha: make([]float64, n), status: make([]uint8, n), p2l: make([]int32, n)}
				for k, p := range r.Perm(n) {
					s.p2l[k] = int32(p)
				}
				for k := range n {
					s.y[k] = float64(r.IntN(2)*2 - 1)
					s.yG[k] = r.NormFloat64()
					s.yGbar[k] = r.NormFloat64()
					switch {
					case r.Float64() < freeFrac:
						s.status[k], s.alpha[k] = boundFree, r.Float64()
					case r.IntN(2) == 0:
						s.status[k], s.alpha[k] = boundUpper, 1
					default:
						s.status[k] = boundLower
					}
				}
				ref := *s
				ref.yG = append([]float64(nil), s.yG...)
				ref.reconstructGradientLIBSVM()
				s.reconstructGradient()
				for k := range n {
					if math.Float64bits(s.yG[k]) != math.Float64bits(ref.yG[k]) {
						t.Fatalf("dense=%v free=%v active=%d: yG[%d] = %v, LIBSVM %v", dense, freeFrac, as, k, s.yG[k], ref.yG[k])
					}
				}
			}
		}
	}
}

// TestKernelRowDenseMatchesSteps: the fused kernel row gives the bits of
// its three steps (gather, math.Exp of the scaled distance, conversion to
// float32), at special arguments too (out of the vector exp's range, NaN,
// results that are float32 subnormals).
func TestKernelRowDenseMatchesSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 43))
	drow := make([]float64, 500)
	for k := range drow {
		drow[k] = r.Float64() * 50
	}
	drow[3], drow[7], drow[11], drow[13] = -1e-9, math.NaN(), 2000, 105.6 // exp(−0.9·105.6) is a float32 subnormal
	for _, n := range []int{0, 1, 7, 8, 9, 16, 100, 333} {
		idx := make([]int, n)
		for k := range idx {
			idx[k] = r.IntN(len(drow))
		}
		if n > 20 {
			idx[2], idx[9], idx[17], idx[19] = 3, 7, 11, 13
		}
		for _, scale := range []float64{-0.9, -0.013, -1e-5} {
			got := make([]float32, n)
			kernelRowDense(got, drow, idx, scale)
			for k, i := range idx {
				want := float32(math.Exp(scale * drow[i]))
				if math.Float32bits(got[k]) != math.Float32bits(want) && !(got[k] != got[k] && want != want) {
					t.Fatalf("n=%d scale %v: [%d] = %v, want %v", n, scale, k, got[k], want)
				}
			}
		}
	}
}

// TestDenseDistMatchesLazy: the dense matrix, its dot products made eight
// rows at a time, holds the lazy distances bit for bit, both halves.
func TestDenseDistMatchesLazy(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 53))
	for _, c := range []struct{ n, d int }{{1, 3}, {7, 5}, {8, 1}, {9, 96}, {37, 13}} {
		x := make([]float64, c.n*c.d)
		for k := range x {
			x[k] = r.NormFloat64() * 3
		}
		ld := newLazyDist(x, c.n, c.d)
		dd := newDenseDist(x, c.n, c.d, 2)
		all := make([]int, c.n)
		for k := range all {
			all[k] = k
		}
		want := make([]float64, c.n)
		got := make([]float64, c.n)
		for a := range c.n {
			ld.rowInto(a, all, want)
			dd.rowInto(a, all, got)
			for b := range want {
				if math.Float64bits(got[b]) != math.Float64bits(want[b]) {
					t.Fatalf("n=%d d=%d: d²(%d,%d) = %v dense, %v lazy", c.n, c.d, a, b, got[b], want[b])
				}
			}
		}
	}
}

// wss2Filter is the bound of the division filter once tried in wss2x8 and
// reverted, slower on real embeddings (git log -S'division filter'
// eval/smo_amd64.s), for a lane whose running max of (d·d)/q is p: a
// candidate with RN(d·d) < RN(wss2Filter(p)·q) was skipped without
// dividing. The adversarial inputs below put ratios on both
// sides of it, so that any such filter with too small a margin fails them.
func wss2Filter(p float64) float64 {
	if !(p >= 0x1p-960) {
		return 0
	}
	return min(p, math.MaxFloat64) * (1 - 0x1p-40)
}

// wss2Ratio is the quotient wss2x8 compares, −wss2Obj(d, kij).
func wss2Ratio(d float64, kij float32) float64 { return -wss2Obj(d, kij) }

// nudge moves x by k units in the last place (either direction).
func nudge(x float64, k int) float64 {
	for ; k > 0; k-- {
		x = math.Nextafter(x, math.Inf(1))
	}
	for ; k < 0; k++ {
		x = math.Nextafter(x, math.Inf(-1))
	}
	return x
}

// wss2AdversarialInput draws an input of n positions for wss2 of the named
// kind (see TestWSS2AdversarialMatchesScalar).
func wss2AdversarialInput(r *rand.Rand, n int, kind string) (yG []float64, fl []uint8, Ki []float32, Gmax float64) {
	yG = make([]float64, n)
	fl = make([]uint8, n)
	Ki = make([]float32, n)
	Gmax = []float64{0, 0.5, -0.25, 1.375}[r.IntN(4)]
	for k := range fl {
		fl[k] = inLow
		if r.IntN(8) == 0 {
			fl[k] = uint8(r.IntN(4))
		}
	}
	// kij values: q = 2 − 2K exact; K = 1 and beyond give q ≤ 0 (the 1e-12
	// floor), 1 − 2^-24 the smallest positive q.
	kijs := []float32{0.5, 0.25, 0, 1, 1.5, 1 - 0x1p-24, 0.9999, -1}
	drawK := func() float32 {
		if r.IntN(2) == 0 {
			return kijs[r.IntN(len(kijs))]
		}
		return r.Float32()
	}
	// dFor returns a d with d·d/q near target·q (q the divisor of kij),
	// nudged by a few ulps so that RN(d·d) lands on both sides of it.
	dFor := func(target float64, kij float32) float64 {
		q := 2 - 2*float64(kij)
		if !(q > 0) {
			q = smoTau
		}
		return nudge(math.Sqrt(target*q), r.IntN(7)-3)
	}
	R := math.Ldexp(1+r.Float64(), r.IntN(40)-20) // the lanes' max
	switch kind {
	case "near-ties":
		// Every ratio within a few ulps of R, or just under the filter's
		// bound: the running max and the ties are decided by ulps.
		for k := range n {
			K := drawK()
			t := nudge(R, r.IntN(9)-4)
			if r.IntN(3) == 0 {
				t = nudge(wss2Filter(R), r.IntN(9)-4)
			}
			yG[k] = dFor(t, K) - Gmax
			Ki[k] = K
		}
	case "boundary":
		// Sixteen equal records set p = R in every lane (each lane of both
		// sets sees one), then ratios straddling the filter bound G(R),
		// with an occasional one a few ulps from R.
		d0 := dFor(R, 0.5)
		p := wss2Ratio(d0, 0.5)
		G := wss2Filter(p)
		for k := range n {
			K := drawK()
			var d float64
			switch {
			case k < 16:
				d, K = d0, 0.5
				fl[k] = inLow
			case r.IntN(10) == 0:
				d = dFor(p, K)
			default:
				q := 2 - 2*float64(K)
				if !(q > 0) {
					q = smoTau
				}
				// m around RN(G·q): d·d near it, a few ulps either side.
				d = nudge(math.Sqrt(G*q), r.IntN(7)-3)
			}
			// Gmax = 0 here: d = yG exactly.
			yG[k] = d
			Ki[k] = K
		}
		Gmax = 0
	case "equal":
		// Every position the same: every lane attains the max, the last
		// index wins.
		d, K := dFor(R, drawK()), drawK()
		for k := range n {
			yG[k], Ki[k] = d-Gmax, K
		}
	case "rising":
		// The ratio grows with the position: p improves in every block.
		K := drawK()
		for k := range n {
			yG[k] = dFor(R*(1+float64(k)/float64(n)), K) - Gmax
			Ki[k] = K
			if r.IntN(4) == 0 {
				Ki[k] = drawK()
			}
		}
	case "extreme":
		// Magnitudes from subnormal squares to overflowing ones (d·d =
		// +Inf), non-finite and out-of-range kernel values.
		specials := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1, 2, -3e38}
		for k := range n {
			yG[k] = math.Ldexp(1+r.Float64(), r.IntN(2100)-1050) - Gmax
			if r.IntN(2) == 0 {
				yG[k] = -yG[k]
			}
			switch r.IntN(12) {
			case 0:
				yG[k] = math.MaxFloat64
			case 1:
				yG[k] = 1e200
			}
			Ki[k] = drawK()
			if r.IntN(6) == 0 {
				Ki[k] = specials[r.IntN(len(specials))]
			}
		}
	default: // "random"
		scale := math.Ldexp(1, r.IntN(60)-30)
		for k := range n {
			yG[k] = r.NormFloat64() * scale
			Ki[k] = float32(r.Float64()*1.4 - 0.2)
		}
		Gmax *= scale
	}
	return yG, fl, Ki, Gmax
}

// TestWSS2AdversarialMatchesScalar: wss2x8 gives wss2Go's result bit for
// bit on inputs built to break a kernel that skips or reorders divisions:
// ratios within a few ulps of the lanes' running max, ratios straddling a
// division filter's bound (wss2Filter), every position equal (the last
// index wins), ratios rising
// so that the max improves in every block, subnormal and overflowing
// squares, the 1e-12 floor of the divisor (K = 1 and beyond), non-finite
// kernel values, and plain random inputs; lengths cover the 32-position
// loop, the 8-position tail and the scalar remainder.
func TestWSS2AdversarialMatchesScalar(t *testing.T) {
	if !haveSMOKernels {
		t.Skip("no vector SMO kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(61, 67))
	lengths := []int{8, 16, 24, 31, 32, 40, 56, 64, 65, 100, 263, 1024, 3001}
	for _, kind := range []string{"near-ties", "boundary", "equal", "rising", "extreme", "random"} {
		trials := 300
		for trial := range trials {
			n := lengths[trial%len(lengths)]
			if kind == "boundary" && n < 17 {
				n += 17
			}
			yG, fl, Ki, Gmax := wss2AdversarialInput(r, n, kind)
			w2, wObj, wMin := wss2Go(yG, fl, Ki, Gmax, math.Inf(-1), math.Inf(1), -1, 0)
			g2, gObj, gMin := wss2(yG, fl, Ki, Gmax)
			if math.Float64bits(g2) != math.Float64bits(w2) && !(g2 == 0 && w2 == 0) ||
				math.Float64bits(gObj) != math.Float64bits(wObj) || gMin != wMin {
				t.Fatalf("%s n=%d trial %d (Gmax %v): wss2 (%v, %v, %d), scalar (%v, %v, %d)", kind, n, trial, Gmax, g2, gObj, gMin, w2, wObj, wMin)
			}
		}
	}
}

// TestWSS2BoundaryInputStraddles: the "boundary" inputs of
// TestWSS2AdversarialMatchesScalar put candidates on both sides of
// wss2Filter's bound (ones a filter would skip, ones it would divide
// without improving the max) and some at or above the max, so that test
// exercises a filter where a wrong margin would show. (With that filter and
// a factor 1 instead of 1 − 2^-40, TestWSS2AdversarialMatchesScalar failed:
// a later equal ratio was skipped and the earlier index kept.)
func TestWSS2BoundaryInputStraddles(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 67))
	var below, between, atOrAbove int
	for range 20 {
		yG, fl, Ki, Gmax := wss2AdversarialInput(r, 1024, "boundary")
		p := wss2Ratio(Gmax+yG[0], Ki[0])
		G := wss2Filter(p)
		for k := 16; k < len(yG); k++ {
			d := Gmax + yG[k]
			if fl[k]&inLow == 0 || !(d > 0) {
				continue
			}
			q := 2 - 2*float64(Ki[k])
			m, ratio := d*d, wss2Ratio(d, Ki[k])
			switch {
			case ratio >= p:
				atOrAbove++
			case q > 0 && m < G*q:
				below++
			default:
				between++
			}
		}
	}
	t.Logf("skipped by the filter %d, divided below the max %d, at or above the max %d", below, between, atOrAbove)
	if below == 0 || between == 0 || atOrAbove == 0 {
		t.Errorf("boundary inputs do not straddle the filter: %d below, %d between, %d at or above", below, between, atOrAbove)
	}
}

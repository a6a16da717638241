package loss

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftplusSigmoidsMatchScalar: softplusSigmoids gives softplusSigmoid's
// bits for every input, with the AVX-512 kernel on and off: random values
// over every magnitude, both signs, the boundaries of log1p's branches
// (e = exp(−|s|) near Sqrt(2)−1, 2⁻²⁹ and 2⁻⁵⁴, and e within an ulp of 1,
// where u = 1 + e reaches 2), the kernel's range |s| = 700 and beyond
// (denormal exponentials), zeros, infinities and NaN.
func TestSoftplusSigmoidsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	var s []float64
	for range 200000 {
		mag := math.Pow(10, r.Float64()*6-4) // 1e-4 .. 1e2
		if r.IntN(2) == 0 {
			mag = -mag
		}
		s = append(s, mag)
	}
	for range 20000 {
		s = append(s, r.NormFloat64()*40, (r.Float64()-0.5)*1600, r.NormFloat64()*1e-12, math.Ldexp(r.Float64(), -r.IntN(1080)))
	}
	// Boundaries: e = exp(−a) around log1p's thresholds, a = −log(t).
	for _, th := range []float64{4.142135623730950488017e-01, 1.0 / (1 << 29), 1.0 / (1 << 54)} {
		a := -math.Log(th)
		for k := -200; k <= 200; k++ {
			v := a + float64(k)*math.Ldexp(a, -52)
			s = append(s, v, -v)
		}
	}
	for k := 0; k < 400; k++ { // e within ulps of 1: u = 1 + e near 2
		v := float64(k) * math.Ldexp(1, -55)
		s = append(s, v, -v, math.Nextafter(v, 1))
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 700, -700, math.Nextafter(700, 0), 700.5, 708.3, 708.4, 709, 745, 746, 1e300,
		math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, 5e-324, 1, -1, 0.5, 37.42, 20.1} {
		s = append(s, v, -v)
	}
	for len(s)%8 != 3 { // a tail the kernel leaves
		s = append(s, r.NormFloat64())
	}
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "go", true: "asm"}[on], func(t *testing.T) {
			setSoftplus8(t, on)
			sp, sig := make([]float64, len(s)), make([]float64, len(s))
			softplusSigmoids(s, sp, sig, make([]uint8, len(s)/8+1))
			for i, v := range s {
				wsp, wsig := softplusSigmoid(v)
				if math.Float64bits(sp[i]) != math.Float64bits(wsp) || math.Float64bits(sig[i]) != math.Float64bits(wsig) {
					if math.IsNaN(wsp) && math.IsNaN(sp[i]) && (math.IsNaN(wsig) == math.IsNaN(sig[i])) {
						continue
					}
					t.Fatalf("s = %v (bits %#x): (%v, %v), want (%v, %v)", v, math.Float64bits(v), sp[i], sig[i], wsp, wsig)
				}
			}
		})
	}
}

// TestSoftplusSigmoid8Coverage: the kernel computes the lanes of ordinary
// inputs itself (it leaves only the rare ones to the scalar code).
func TestSoftplusSigmoid8Coverage(t *testing.T) {
	if !haveSoftplus8 {
		t.Skip("no AVX-512 kernel here")
	}
	r := rand.New(rand.NewPCG(9, 9))
	s := make([]float64, 8000)
	for i := range s {
		s[i] = r.NormFloat64() * 5
	}
	sp, sig, bad := make([]float64, len(s)), make([]float64, len(s)), make([]uint8, len(s)/8)
	softplusSigmoid8(&s[0], len(s), &sp[0], &sig[0], &bad[0])
	left := 0
	for _, m := range bad {
		for ; m != 0; m &= m - 1 {
			left++
		}
	}
	if left > len(s)/1000 {
		t.Fatalf("the kernel left %d of %d normal inputs to the scalar code", left, len(s))
	}
}

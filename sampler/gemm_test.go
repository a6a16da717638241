package sampler

import (
	"math"
	"testing"
)

// refDot is the float64 reference inner product of two rows.
func refDot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestGemmPackedMatchesFloat64(t *testing.T) {
	kernels := []struct {
		name string
		asm  bool
	}{{"go", false}, {"asm", true}}
	for _, kn := range kernels {
		if kn.asm && !haveAVX2 {
			t.Logf("no AVX2/FMA on this CPU: asm kernel skipped")
			continue
		}
		for _, tc := range []struct{ m, n, d int }{{1, 1, 1}, {6, 16, 8}, {7, 17, 3}, {13, 40, 37}, {64, 100, 128}} {
			useAsmKernel = kn.asm
			a := randomEmbeddings(tc.m, tc.d, 1)
			b := randomEmbeddings(tc.n, tc.d, 2)
			mPad, nPad := roundUp(tc.m, tileRows), roundUp(tc.n, tileCols)
			ap := make([]float32, mPad*tc.d)
			copy(ap, a.Data)
			p := make([]float32, nPad*tc.d)
			for i := range p {
				p[i] = 99 // packPanels must overwrite padding with zeros
			}
			// pack rows in reverse order through an index list
			rows := make([]int32, tc.n)
			for i := range rows {
				rows[i] = int32(tc.n - 1 - i)
			}
			packPanels(p, b.Data, tc.d, rows, tc.n)
			c := make([]float32, mPad*nPad)
			gemmPacked(mPad, nPad, tc.d, ap, p, c, nPad)
			for i := 0; i < mPad; i++ {
				for j := 0; j < nPad; j++ {
					want := 0.0
					if i < tc.m && j < tc.n {
						want = refDot(a.Row(i), b.Row(tc.n-1-j))
					}
					if got := float64(c[i*nPad+j]); math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
						t.Fatalf("%s kernel %+v: C[%d][%d] = %v, want %v", kn.name, tc, i, j, got, want)
					}
				}
			}
		}
	}
	useAsmKernel = haveAVX2
}

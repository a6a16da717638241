package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWinograd4KernelsMatchScalar checks the F(4×4, 3×3) AVX-512
// transforms against wgIn4Go, wgOut4Go and wgDy4Go bit for bit, for tile
// counts of a partial block, a full one and beyond and one to three tile
// rows, and that nothing outside their outputs is written.
func TestWinograd4KernelsMatchScalar(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX-512 on this machine: the scalar loops are the only path")
	}
	rng := rand.New(rand.NewPCG(31, 4))
	fresh := func(n int) ([]float32, []float32) {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = -7, -7
		}
		return a, b
	}
	randv := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	sc := make([]float32, wg4Scratch)
	for _, rows := range []int{1, 2, 3} {
		for n := 1; n <= 49; n++ {
			wq := n + 1
			rs := 4*wq + 3
			ph := randv((4*rows+2)*rs + 8)
			vs := rows*n + 5
			got, want := fresh(36 * vs)
			wgIn4_32(&got[0], vs, &ph[0], rs, wq, n, rows, &sc[0])
			wgIn4Go(want, vs, ph, rs, wq, n, rows)
			if !slices.Equal(bits32(got), bits32(want)) {
				t.Fatalf("wgIn4_32 n=%d rows=%d differs from wgIn4Go", n, rows)
			}

			ms := rows*n + 2
			m := randv(36 * ms)
			ys := 4*n + 3
			gy, wy := fresh(4 * rows * ys)
			wgOut4_32(&gy[0], ys, &m[0], ms, n, rows, &sc[0])
			wgOut4Go(wy, ys, m, ms, n, rows)
			if !slices.Equal(bits32(gy), bits32(wy)) {
				t.Fatalf("wgOut4_32 n=%d rows=%d differs from wgOut4Go", n, rows)
			}

			wd := n
			qrs := 4*wd + 1
			q := randv(4*rows*qrs + 4)
			gd, wdm := fresh(36 * ms)
			wgDy4_32(&gd[0], ms, &q[0], qrs, wd, n, rows, &sc[0])
			wgDy4Go(wdm, ms, q, qrs, wd, n, rows)
			if !slices.Equal(bits32(gd), bits32(wdm)) {
				t.Fatalf("wgDy4_32 n=%d rows=%d differs from wgDy4Go", n, rows)
			}
		}
	}
}

// TestWinograd4TransformsKnownValues checks the scalar transforms against
// Lavin and Gray's matrices written out, in float64 (exact for the integer
// matrices on small integers; G to float32 rounding).
func TestWinograd4TransformsKnownValues(t *testing.T) {
	bt := [6][6]float64{{4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}}
	at := [4][6]float64{{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}
	rng := rand.New(rand.NewPCG(5, 7))
	// One 6×6 patch in phase rows: rs = 4·wq, wq = 2.
	const wq, rs = 2, 8
	var d [6][6]float64
	ph := make([]float32, 6*rs)
	for i := 0; i < 6; i++ {
		for j := 0; j < 6; j++ {
			d[i][j] = float64(rng.IntN(9) - 4)
			ph[i*rs+(j%4)*wq+j/4] = float32(d[i][j])
		}
	}
	v := make([]float32, 36)
	wgIn4Go(v, 1, ph, rs, wq, 1, 1)
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			want := 0.0
			for i := 0; i < 6; i++ {
				for j := 0; j < 6; j++ {
					want += bt[r][i] * d[i][j] * bt[c][j]
				}
			}
			if float64(v[6*r+c]) != want {
				t.Fatalf("Bᵀ·d·B [%d][%d] = %v, want %v", r, c, v[6*r+c], want)
			}
		}
	}
	m := make([]float32, 36)
	for i := range m {
		m[i] = float32(rng.IntN(9) - 4)
	}
	y := make([]float32, 16)
	wgOut4Go(y, 4, m, 1, 1, 1)
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			want := 0.0
			for i := 0; i < 6; i++ {
				for j := 0; j < 6; j++ {
					want += at[r][i] * float64(m[6*i+j]) * at[c][j]
				}
			}
			if float64(y[4*r+c]) != want {
				t.Fatalf("Aᵀ·m·A [%d][%d] = %v, want %v", r, c, y[4*r+c], want)
			}
		}
	}
	w := make([]float32, 9)
	for i := range w {
		w[i] = float32(rng.IntN(9) - 4)
	}
	u := make([]float32, 36)
	wg4Weights(u, w, 1, 1)
	for r := 0; r < 6; r++ {
		for c := 0; c < 6; c++ {
			want := 0.0
			for a := 0; a < 3; a++ {
				for b := 0; b < 3; b++ {
					want += wg4G[r][a] * float64(w[3*a+b]) * wg4G[c][b]
				}
			}
			if math.Abs(float64(u[6*r+c])-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Fatalf("G·g·Gᵀ [%d][%d] = %v, want %v", r, c, u[6*r+c], want)
			}
		}
	}
}

// TestWinograd4Adjoints: the gradient transforms are the adjoints of the
// forward ones: ⟨dY, Aᵀ·m·A⟩ = ⟨A·dY·Aᵀ, m⟩ (exact on small integers) and
// ⟨dU, G·g·Gᵀ⟩ = ⟨Gᵀ·dU·G, g⟩ (to rounding).
func TestWinograd4Adjoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 16))
	small := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.IntN(9) - 4)
		}
		return v
	}
	dot := func(a, b []float32) float64 {
		s := 0.0
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	for trial := 0; trial < 20; trial++ {
		m, dy := small(36), small(16)
		y, dm := make([]float32, 16), make([]float32, 36)
		wgOut4Go(y, 4, m, 1, 1, 1)
		// dY's 4×4 tile in phase rows: column c of row r at r·4 + c (wd = 1).
		wgDy4Go(dm, 1, dy, 4, 1, 1, 1)
		if a, b := dot(dy, y), dot(dm, m); a != b {
			t.Fatalf("⟨dY, Aᵀ·m·A⟩ = %v, ⟨A·dY·Aᵀ, m⟩ = %v", a, b)
		}
		g, du := small(9), small(36)
		u, dg := make([]float32, 36), make([]float32, 9)
		wg4Weights(u, g, 1, 1)
		wg4WeightGrad(dg, du, 1, 1)
		if a, b := dot(du, u), dot(dg, g); math.Abs(a-b) > 1e-5*(math.Abs(a)+1) {
			t.Fatalf("⟨dU, G·g·Gᵀ⟩ = %v, ⟨Gᵀ·dU·G, g⟩ = %v", a, b)
		}
	}
}

// TestWinograd4MatchesDirect runs F(4×4, 3×3) forward and dW on the
// Winograd cases against float64 loops.
func TestWinograd4MatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 2))
	for _, gc := range winogradCases {
		t.Run(gc.String(), func(t *testing.T) {
			x, w := randVec(rng, prod(gc.xShape())), randVec(rng, prod(gc.wShape()))
			ho, wo := gc.out()
			dy := randVec(rng, gc.n*gc.o*ho*wo)
			want := convRef(gc, x, w)
			_, wantDw := convRefGrads(gc, x, w, dy)
			absX, absW, absDy := absVec(x), absVec(w), absVec(dy)
			scaleY := convRef(gc, absX, absW)
			_, scaleDw := convRefGrads(gc, absX, absW, absDy)
			g, err := newConvGeom("test", gc.xShape(), gc.wShape(), gc.stride, gc.pad)
			if err != nil {
				t.Fatal(err)
			}
			p := newWg4Plan(&g)
			y, dw := make([]float32, len(want)), make([]float32, len(wantDw))
			convWinograd4(&g, p, y, to32(x), to32(w))
			convWinograd4W(&g, p, dw, to32(x), to32(dy))
			var ey, ew float64
			for i := range want {
				ey = math.Max(ey, math.Abs(float64(y[i])-want[i])/(scaleY[i]+1e-30))
			}
			for i := range wantDw {
				ew = math.Max(ew, math.Abs(float64(dw[i])-wantDw[i])/(scaleDw[i]+1e-30))
			}
			t.Logf("relative error: y %.2g, dW %.2g", ey, ew)
			if ey > 1e-5 || ew > 1e-5 {
				t.Errorf("relative error y %.3g, dW %.3g, want ≤ 1e-5", ey, ew)
			}
		})
	}
}

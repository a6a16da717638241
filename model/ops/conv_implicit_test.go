package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
)

// TestConvImplicitMatchesIm2col runs the forward pass, dX and dW of
// stride-1 convolutions with the implicit GEMM and with im2col and asks for
// the same bits: both layouts, square and non-square kernels, padding 0 to
// 3, output rows of 7 to 64 columns (short last segments), one and several
// k blocks, and images of 32×64 (2,048 positions: two k blocks of dW's dot
// products).
func TestConvImplicitMatchesIm2col(t *testing.T) {
	if !igemm.HaveIndirect() {
		t.Skipf("no indirect GEMM kernel with the %s backend", igemm.Backend())
	}
	defer func() { implicitEnabled = true }()
	for _, gc := range []convGeomCase{
		{3, 16, 32, 32, 16, 3, 3, 1, 1},
		{2, 32, 16, 16, 32, 3, 3, 1, 1},
		{2, 3, 32, 32, 16, 3, 3, 1, 1},   // stem: k = 27
		{2, 64, 16, 16, 20, 3, 3, 1, 1},  // k = 576: two k blocks; o not a multiple of 16
		{2, 5, 28, 28, 7, 3, 3, 1, 1},    // rows of 28: a 12-column segment
		{2, 4, 20, 22, 18, 5, 5, 1, 2},   // 5×5, pad 2
		{2, 6, 18, 21, 17, 3, 5, 1, 0},   // non-square kernel, no padding: rows of 17
		{1, 2, 16, 16, 3, 1, 1, 1, 1},    // 1×1 with padding
		{2, 130, 18, 18, 33, 3, 3, 1, 1}, // k = 1170: four k blocks
		{3, 8, 32, 64, 12, 3, 3, 1, 1},   // P = 2048
		{3, 64, 8, 8, 64, 3, 3, 1, 1},    // rows of 8: shifted layout
		{2, 8, 7, 7, 8, 3, 3, 1, 1},      // rows of 7: a short last segment
		{2, 8, 14, 14, 16, 3, 3, 1, 1},   // rows of 14, P = 196
		{2, 8, 24, 24, 8, 3, 3, 1, 1},    // shifted, P = 576: dW's dot products on it
		{2, 4, 12, 13, 4, 5, 5, 1, 2},    // shifted 5×5
		{2, 4, 13, 12, 8, 3, 5, 1, 0},    // shifted, non-square, no padding
		{2, 4, 16, 16, 8, 3, 3, 1, 3},    // pad larger than the kernel: no dX shortcut
	} {
		t.Run(gc.String(), func(t *testing.T) {
			g, err := newConvGeom("test", gc.xShape(), gc.wShape(), gc.stride, gc.pad)
			if err != nil {
				t.Fatal(err)
			}
			implicitEnabled = true
			if implicitPlanFor(&g) == nil {
				t.Fatalf("geometry %v takes no implicit path", gc)
			}
			if wantDW := g.p()%16 == 0 && g.p() >= 128 && g.o%4 == 0 && g.o <= 64 && g.k()%4 == 0; (dwImplicit[float32](&g) != nil) != wantDW {
				t.Fatalf("dW implicit: %t, want %t", !wantDW, wantDW)
			}
			rng := rand.New(rand.NewPCG(7, uint64(gc.c)))
			x, w := randVec32(rng, prod(gc.xShape())), randVec32(rng, prod(gc.wShape()))
			dy := randVec32(rng, g.n*g.o*g.p())
			run := func(on bool) (y, dx, dw []float32) {
				implicitEnabled = on
				y = make([]float32, g.n*g.o*g.p())
				dx = make([]float32, len(x))
				dw = make([]float32, len(w))
				for i := range y {
					y[i] = float32(math.NaN())
				}
				convForward(g, y, x, w)
				convBackwardX(g, dx, w, dy)
				convBackwardW(g, dw, x, dy)
				return y, dx, dw
			}
			yi, dxi, dwi := run(true)
			yc, dxc, dwc := run(false)
			for name, pair := range map[string][2][]float32{"y": {yi, yc}, "dx": {dxi, dxc}, "dw": {dwi, dwc}} {
				for i := range pair[0] {
					if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
						t.Fatalf("%s[%d] = %v implicit, %v im2col", name, i, pair[0][i], pair[1][i])
					}
				}
			}
			// And the forward pass against a float64 loop.
			for n := 0; n < g.n; n++ {
				for o := 0; o < g.o; o++ {
					for oh := 0; oh < g.ho; oh++ {
						for ow := 0; ow < g.wo; ow++ {
							var s float64
							for c := 0; c < g.c; c++ {
								for a := 0; a < g.kh; a++ {
									for b := 0; b < g.kw; b++ {
										ih, iw := oh-g.pad+a, ow-g.pad+b
										if ih < 0 || iw < 0 || ih >= g.h || iw >= g.w {
											continue
										}
										s += float64(x[((n*g.c+c)*g.h+ih)*g.w+iw]) * float64(w[((o*g.c+c)*g.kh+a)*g.kw+b])
									}
								}
							}
							got := yi[((n*g.o+o)*g.ho+oh)*g.wo+ow]
							if math.Abs(float64(got)-s) > 1e-4*(1+math.Abs(s)) {
								t.Fatalf("y[%d,%d,%d,%d] = %v, float64 %v", n, o, oh, ow, got, s)
							}
						}
					}
				}
			}
		})
	}
}

// TestConvImplicitNotTaken lists the geometries that keep im2col.
func TestConvImplicitNotTaken(t *testing.T) {
	for _, gc := range []convGeomCase{
		{1, 16, 32, 32, 32, 3, 3, 2, 1}, // stride 2
		{1, 16, 32, 32, 32, 1, 1, 1, 0}, // pointwise: no im2col at all
	} {
		g, err := newConvGeom("test", gc.xShape(), gc.wShape(), gc.stride, gc.pad)
		if err != nil {
			t.Fatal(err)
		}
		if implicitPlanFor(&g) != nil {
			t.Errorf("%v takes the implicit path", gc)
		}
	}
}

// BenchmarkImplicitFill times copying one image into its implicit layout
// (padded for rows of 32 and 16, shifted for rows of 8).
func BenchmarkImplicitFill(b *testing.B) {
	for _, gc := range []convGeomCase{
		{1, 16, 32, 32, 16, 3, 3, 1, 1},
		{1, 32, 16, 16, 32, 3, 3, 1, 1},
		{1, 64, 8, 8, 64, 3, 3, 1, 1},
	} {
		g, err := newConvGeom("bench", gc.xShape(), gc.wShape(), gc.stride, gc.pad)
		if err != nil {
			b.Fatal(err)
		}
		p := implicitPlanFor(&g)
		if p == nil {
			b.Skip("no implicit path here")
		}
		x := randVec32(rand.New(rand.NewPCG(1, 1)), prod(gc.xShape()))
		xp := make([]float32, p.size)
		b.Run(gc.String(), func(b *testing.B) {
			for b.Loop() {
				p.fill(&g, x, xp)
			}
		})
	}
}

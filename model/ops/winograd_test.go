package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestWinogradKernelsMatchScalar checks the AVX-512 transforms and the
// phase split against wgInGo, wgOutGo and wgFillGo bit for bit, for tile
// counts of a partial block, a full one and beyond, one to three tile rows,
// and that they write nothing outside what they own.
func TestWinogradKernelsMatchScalar(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX-512 on this machine: the scalar loops are the only path")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	fresh := func(n int) ([]float32, []float32) {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = -7, -7
		}
		return a, b
	}
	for _, rows := range []int{1, 2, 3} {
		for n := 1; n <= 49; n++ {
			wh := n + 1
			rs := 2*wh + 3 // a row stride wider than the rows
			src := make([]float32, (2*rows+2)*rs+8)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			vs := rows*n + 5
			got, want := fresh(16 * vs)
			wgIn32(&got[0], vs, &src[0], &src[wh], rs, n, rows)
			wgInGo(want, vs, src, src[wh:], rs, n, rows)
			if !slices.Equal(bits32(got), bits32(want)) {
				t.Fatalf("wgIn32 n=%d rows=%d differs from wgInGo", n, rows)
			}

			ms := rows*n + 2
			m := make([]float32, 16*ms)
			for i := range m {
				m[i] = float32(rng.NormFloat64())
			}
			ys := 2*n + 3
			gy, wy := fresh(2 * rows * ys)
			wgOut32(&gy[0], ys, &m[0], ms, n, rows)
			wgOutGo(wy, ys, m, ms, n, rows)
			if !slices.Equal(bits32(gy), bits32(wy)) {
				t.Fatalf("wgOut32 n=%d rows=%d differs from wgOutGo:\n got %v\nwant %v", n, rows, gy, wy)
			}
		}
	}
	for _, rows := range []int{1, 2, 3} {
		for n := 1; n <= 49; n++ {
			rs := 2*n + 3
			src := make([]float32, 2*rows*rs+8)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			src[3] = 0 // a zero, whose negation is −0
			ms := rows*n + 5
			got, want := fresh(16 * ms)
			wgDy32(&got[0], ms, &src[0], &src[n], rs, n, rows)
			wgDyGo(want, ms, src, src[n:], rs, n, rows)
			if !slices.Equal(bits32(got), bits32(want)) {
				t.Fatalf("wgDy32 n=%d rows=%d differs from wgDyGo", n, rows)
			}
		}
	}
	for _, w := range []int{1, 2, 3, 15, 16, 31, 32, 33, 34, 35, 64, 67} {
		for _, off := range [][2]int{{0, 40}, {41, 1}, {2, 43}} {
			rows, rs := 3, 90
			x := make([]float32, rows*w)
			for i := range x {
				x[i] = float32(i) + 0.5
			}
			got, want := fresh(rows * rs)
			wgFill32(&got[0], &x[0], rows, w, rs, off[0], off[1])
			wgFillGo(want, x, rows, w, rs, off[0], off[1])
			if !slices.Equal(bits32(got), bits32(want)) {
				t.Fatalf("wgFill32 w=%d offsets %v differs from wgFillGo:\n got %v\nwant %v", w, off, got, want)
			}
		}
	}
}

func bits32(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, x := range v {
		b[i] = math.Float32bits(x)
	}
	return b
}

// TestWinogradTransformsKnownValues checks the three transforms against
// their matrices written out (Lavin and Gray's Bᵀ, G, Aᵀ) in float64.
func TestWinogradTransformsKnownValues(t *testing.T) {
	bt := [4][4]float64{{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}
	gm := [4][3]float64{{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}}
	at := [2][4]float64{{1, 1, 1, 0}, {0, 1, -1, -1}}
	rng := rand.New(rand.NewPCG(5, 6))
	// Input: one tile, d[i][j] at e/o rows.
	var d [4][4]float64
	e, o := make([]float32, 4*4), make([]float32, 4*4)
	const rs = 4
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			d[i][j] = float64(rng.IntN(9) - 4)
		}
		e[i*rs], o[i*rs], e[i*rs+1], o[i*rs+1] = float32(d[i][0]), float32(d[i][1]), float32(d[i][2]), float32(d[i][3])
	}
	v := make([]float32, 16)
	wgInGo(v, 1, e, o, rs, 1, 1)
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			want := 0.0
			for i := 0; i < 4; i++ {
				for j := 0; j < 4; j++ {
					want += bt[r][i] * d[i][j] * bt[c][j]
				}
			}
			if float64(v[r*4+c]) != want {
				t.Fatalf("Bᵀ·d·B [%d][%d] = %v, want %v", r, c, v[r*4+c], want)
			}
		}
	}
	// Weights.
	w := make([]float32, 9)
	for i := range w {
		w[i] = float32(rng.IntN(9) - 4)
	}
	u := make([]float32, 16)
	wgWeights(u, w, 1, 1)
	for r := 0; r < 4; r++ {
		for c := 0; c < 4; c++ {
			want := 0.0
			for a := 0; a < 3; a++ {
				for b := 0; b < 3; b++ {
					want += gm[r][a] * float64(w[a*3+b]) * gm[c][b]
				}
			}
			if float64(u[r*4+c]) != want {
				t.Fatalf("G·g·Gᵀ [%d][%d] = %v, want %v", r, c, u[r*4+c], want)
			}
		}
	}
	// Output.
	m := make([]float32, 16)
	for i := range m {
		m[i] = float32(rng.IntN(9) - 4)
	}
	y := make([]float32, 4)
	wgOutGo(y, 2, m, 1, 1, 1)
	for r := 0; r < 2; r++ {
		for c := 0; c < 2; c++ {
			want := 0.0
			for i := 0; i < 4; i++ {
				for j := 0; j < 4; j++ {
					want += at[r][i] * float64(m[i*4+j]) * at[c][j]
				}
			}
			if float64(y[r*2+c]) != want {
				t.Fatalf("Aᵀ·m·A [%d][%d] = %v, want %v", r, c, y[r*2+c], want)
			}
		}
	}
}

// winogradCases are 3×3 stride-1 geometries: odd and even sizes (tiles
// that overhang the output), every padding the backward pass uses, one
// image, groups that do not divide the batch, and the ResNet stages.
var winogradCases = []convGeomCase{
	{1, 8, 5, 4, 9, 3, 3, 1, 1},
	{3, 9, 6, 5, 8, 3, 3, 1, 0},
	{2, 8, 7, 9, 10, 3, 3, 1, 2},
	{5, 8, 3, 3, 8, 3, 3, 1, 1},
	{9, 16, 8, 8, 16, 3, 3, 1, 1},
	{3, 16, 32, 32, 16, 3, 3, 1, 1},
	{5, 32, 16, 16, 8, 3, 3, 1, 1},
	{7, 64, 8, 8, 64, 3, 3, 1, 1},
	{2, 8, 33, 35, 12, 3, 3, 1, 1},
}

// winogradEdgeCases are geometries where most of every tile is padding or
// overhang: one pixel, a single output, padding beyond the kernel. There
// float32 rounding is amplified by cancellations in the transforms (dW up
// to 1.4e-5 of Σ|x·dy| on random data), so TestWinogradExactOnIntegers
// checks them, with the cases above, on exactly representable values.
var winogradEdgeCases = []convGeomCase{
	{2, 8, 1, 1, 8, 3, 3, 1, 1},
	{3, 8, 2, 3, 9, 3, 3, 1, 1},
	{2, 8, 3, 3, 8, 3, 3, 1, 0},
	{2, 9, 5, 6, 8, 3, 3, 1, 3},
}

// TestWinogradMatchesDirect checks the float32 Winograd forward pass and
// dX against float64 loops, with the same bound the direct float32 path
// meets (relative to Σ|x·w| of each output), and that an image's result
// does not depend on the batch it is computed in.
func TestWinogradMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	for _, gc := range winogradCases {
		t.Run(gc.String(), func(t *testing.T) {
			x, w := randVec(rng, prod(gc.xShape())), randVec(rng, prod(gc.wShape()))
			ho, wo := gc.out()
			yShape := []int{gc.n, gc.o, ho, wo}
			dy := randVec(rng, gc.n*gc.o*ho*wo)
			want := convRef(gc, x, w)
			wantDx, wantDw := convRefGrads(gc, x, w, dy)
			// Σ|x·w| and Σ|dy·w| bound each output's rounding.
			absX, absW, absDy := absVec(x), absVec(w), absVec(dy)
			scaleY := convRef(gc, absX, absW)
			scaleDx, scaleDw := convRefGrads(gc, absX, absW, absDy)

			f32 := func(s []int, v []float64) *tensor.Dense {
				return tensor.New(tensor.WithShape(s...), tensor.WithBacking(to32(v)))
			}
			worst := map[bool][3]float64{}
			results := map[bool][3][]float32{}
			for _, wino := range []bool{false, true} {
				y, err := newConvOp(gc.stride, gc.pad, false, wino).Do(f32(gc.xShape(), x), f32(gc.wShape(), w))
				if err != nil {
					t.Fatal(err)
				}
				dx, err := newConvGradXOp(gc.stride, gc.pad, gc.c, gc.h, gc.w, wino).Do(f32(gc.wShape(), w), f32(yShape, dy))
				if err != nil {
					t.Fatal(err)
				}
				dw, err := newConvGradWOp(gc.stride, gc.pad, gc.kh, gc.kw, wino).Do(f32(gc.xShape(), x), f32(yShape, dy))
				if err != nil {
					t.Fatal(err)
				}
				gy, gdx, gdw := y.(*tensor.Dense).Float32s(), dx.(*tensor.Dense).Float32s(), dw.(*tensor.Dense).Float32s()
				results[wino] = [3][]float32{slices.Clone(gy), slices.Clone(gdx), slices.Clone(gdw)}
				var ew [3]float64
				for i := range want {
					ew[0] = math.Max(ew[0], math.Abs(float64(gy[i])-want[i])/(scaleY[i]+1e-30))
				}
				for i := range wantDx {
					ew[1] = math.Max(ew[1], math.Abs(float64(gdx[i])-wantDx[i])/(scaleDx[i]+1e-30))
				}
				for i := range wantDw {
					ew[2] = math.Max(ew[2], math.Abs(float64(gdw[i])-wantDw[i])/(scaleDw[i]+1e-30))
				}
				worst[wino] = ew
			}
			// float32 rounding relative to Σ|x·w|: the direct path stays
			// near 1e-7; F(2×2, 3×3)'s transforms add a few units.
			const bound = 1e-6
			for _, wino := range []bool{false, true} {
				if e := worst[wino]; e[0] > bound || e[1] > bound || e[2] > bound {
					t.Errorf("winograd=%t: relative error y %.3g, dX %.3g, dW %.3g, want ≤ %g", wino, e[0], e[1], e[2], bound)
				}
			}
			t.Logf("relative error: direct y %.2g dX %.2g dW %.2g; winograd y %.2g dX %.2g dW %.2g",
				worst[false][0], worst[false][1], worst[false][2], worst[true][0], worst[true][1], worst[true][2])
			for k, name := range []string{"forward pass", "dX", "dW"} {
				if slices.Equal(bits32(results[true][k]), bits32(results[false][k])) {
					t.Errorf("the Winograd %s has the direct path's bits: was it taken?", name)
				}
			}
			// The last image alone gives the bits it had in the batch.
			if gc.n > 1 {
				xs, ys := gc.c*gc.h*gc.w, gc.o*ho*wo
				s1 := append([]int{1}, gc.xShape()[1:]...)
				y1, err := newConvOp(1, gc.pad, false, true).Do(f32(s1, x[(gc.n-1)*xs:]), f32(gc.wShape(), w))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(bits32(y1.(*tensor.Dense).Float32s()), bits32(results[true][0][(gc.n-1)*ys:])) {
					t.Errorf("image %d alone differs from its result in the batch", gc.n-1)
				}
			}
		})
	}
}

func absVec(v []float64) []float64 {
	a := make([]float64, len(v))
	for i, x := range v {
		a[i] = math.Abs(x)
	}
	return a
}

// TestWinogradScalarPathMatchesKernels runs a whole Winograd convolution
// with the scalar transforms and with the AVX-512 ones: the same bits, so
// a machine without AVX-512 computes what this one does.
func TestWinogradScalarPathMatchesKernels(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX-512 on this machine")
	}
	rng := rand.New(rand.NewPCG(8, 9))
	gc := convGeomCase{3, 9, 9, 10, 8, 3, 3, 1, 1}
	g, err := newConvGeom("test", gc.xShape(), gc.wShape(), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	g.winograd = true
	x, w := to32(randVec(rng, prod(gc.xShape()))), to32(randVec(rng, prod(gc.wShape())))
	p := winogradPlanFor(&g)
	dy := to32(randVec(rng, g.n*g.o*g.p()))
	run := func() (y, dw []float32) {
		y, dw = make([]float32, g.n*g.o*g.p()), make([]float32, len(w))
		convWinograd(&g, p, y, x, w)
		convWinogradW(&g, p, dw, x, dy)
		return y, dw
	}
	y1, dw1 := run()
	setKernels(false)
	defer setKernels(true)
	y2, dw2 := run()
	if !slices.Equal(bits32(y1), bits32(y2)) || !slices.Equal(bits32(dw1), bits32(dw2)) {
		t.Fatal("the scalar transforms give other bits than the AVX-512 ones")
	}
}

// TestWinogradGraphGradient trains nothing but checks, through Gorgonia,
// that a Conv2D with Winograd gives the direct path's gradients of a
// scalar loss (to float32 rounding).
func TestWinogradGraphGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	xv, wv := to32(randVec(rng, 2*8*6*6)), to32(randVec(rng, 9*8*3*3))
	grads := map[bool][2][]float32{}
	for _, wino := range []bool{false, true} {
		g := gorgonia.NewGraph()
		x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(2, 8, 6, 6), gorgonia.WithValue(tensor.New(tensor.WithShape(2, 8, 6, 6), tensor.WithBacking(slices.Clone(xv)))), gorgonia.WithName("x"))
		w := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(9, 8, 3, 3), gorgonia.WithValue(tensor.New(tensor.WithShape(9, 8, 3, 3), tensor.WithBacking(slices.Clone(wv)))), gorgonia.WithName("w"))
		y, err := Conv2D(x, w, ConvOpts{Pad: 1, Winograd: wino})
		if err != nil {
			t.Fatal(err)
		}
		sq := gorgonia.Must(gorgonia.Square(y))
		loss := gorgonia.Must(gorgonia.Sum(sq))
		if _, err := gorgonia.Grad(loss, x, w); err != nil {
			t.Fatal(err)
		}
		vm := gorgonia.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		gx, _ := x.Grad()
		gw, _ := w.Grad()
		grads[wino] = [2][]float32{slices.Clone(gx.Data().([]float32)), slices.Clone(gw.Data().([]float32))}
		vm.Close()
	}
	for k, name := range []string{"dx", "dw"} {
		a, b := grads[false][k], grads[true][k]
		scale := 0.0
		for _, v := range a {
			scale = math.Max(scale, math.Abs(float64(v)))
		}
		for i := range a {
			if d := math.Abs(float64(a[i] - b[i])); d > 1e-5*scale {
				t.Fatalf("%s[%d]: direct %v, winograd %v", name, i, a[i], b[i])
			}
		}
	}
}

// TestWinogradSkipsFewChannels: with fewer than wgMinChannels input or
// output channels (an RGB stem) the option leaves the direct path's bits.
func TestWinogradSkipsFewChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	for _, gc := range []convGeomCase{{2, 3, 8, 8, 16, 3, 3, 1, 1}, {2, 16, 8, 8, 4, 3, 3, 1, 1}} {
		x := tensor.New(tensor.WithShape(gc.xShape()...), tensor.WithBacking(to32(randVec(rng, prod(gc.xShape())))))
		w := tensor.New(tensor.WithShape(gc.wShape()...), tensor.WithBacking(to32(randVec(rng, prod(gc.wShape())))))
		a, err := newConvOp(1, 1, false, false).Do(x, w)
		if err != nil {
			t.Fatal(err)
		}
		b, err := newConvOp(1, 1, false, true).Do(x, w)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(bits32(a.(*tensor.Dense).Float32s()), bits32(b.(*tensor.Dense).Float32s())) {
			t.Errorf("%v: Winograd taken with %d→%d channels", gc, gc.c, gc.o)
		}
	}
}

// TestWinogradAdjoints checks the weight gradient's transforms as the
// adjoints of the forward ones, in float64 sums over float32 values with
// small integers (exact): ⟨dU, U(g)⟩ = ⟨Gᵀ·dU·G, g⟩ and
// ⟨dY, Aᵀ·m·A⟩ = ⟨A·dY·Aᵀ, m⟩.
func TestWinogradAdjoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
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
		g, du := small(9), small(16)
		u, dg := make([]float32, 16), make([]float32, 9)
		wgWeights(u, g, 1, 1)
		wgWeightGrad(dg, du, 1, 1)
		if a, b := dot(du, u), dot(dg, g); a != b {
			t.Fatalf("⟨dU, G·g·Gᵀ⟩ = %v, ⟨Gᵀ·dU·G, g⟩ = %v", a, b)
		}
		// One tile: m at ms = 1, y 2×2 (ys = 2); dY split into even/odd
		// columns (rs = 2: e = dY[r][0] at 2r, o = dY[r][1] at 2r+1).
		m, dy := small(16), small(4)
		y, dm := make([]float32, 4), make([]float32, 16)
		wgOutGo(y, 2, m, 1, 1, 1)
		wgDyGo(dm, 1, dy, dy[1:], 2, 1, 1)
		if a, b := dot(dy, y), dot(dm, m); a != b {
			t.Fatalf("⟨dY, Aᵀ·m·A⟩ = %v, ⟨A·dY·Aᵀ, m⟩ = %v", a, b)
		}
	}
}

// TestWinogradExactOnIntegers: on small integers every value of the
// Winograd forward pass, dX and dW (transformed tiles, halves and quarters
// of the kernels, their products and sums) is exact in float32, so the
// results must equal the float64 loops' exactly, on every geometry.
func TestWinogradExactOnIntegers(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	ints := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(9) - 4)
		}
		return v
	}
	for _, gc := range append(slices.Clone(winogradCases), winogradEdgeCases...) {
		x, w := ints(prod(gc.xShape())), ints(prod(gc.wShape()))
		ho, wo := gc.out()
		dy := ints(gc.n * gc.o * ho * wo)
		want := convRef(gc, x, w)
		wantDx, wantDw := convRefGrads(gc, x, w, dy)
		g, err := newConvGeom("test", gc.xShape(), gc.wShape(), 1, gc.pad)
		if err != nil {
			t.Fatal(err)
		}
		g.winograd = true
		if winogradPlanFor(&g) == nil {
			t.Fatalf("%v: no Winograd plan", gc)
		}
		y, dx, dw := make([]float32, len(want)), make([]float32, len(wantDx)), make([]float32, len(wantDw))
		convForward(g, y, to32(x), to32(w))
		convBackwardX(g, dx, to32(w), to32(dy))
		convBackwardW(g, dw, to32(x), to32(dy))
		for _, c := range []struct {
			name string
			got  []float32
			want []float64
		}{{"y", y, want}, {"dX", dx, wantDx}, {"dW", dw, wantDw}} {
			for i := range c.want {
				if float64(c.got[i]) != c.want[i] {
					t.Fatalf("%v: %s[%d] = %v, want %v exactly", gc, c.name, i, c.got[i], c.want[i])
				}
			}
		}
	}
}

// TestWinogradWeightTransformsParallel checks that the weight transform and
// the weight-gradient transform, which split the kernels across cores for
// large layers, give the bits of one serial loop with 1, 2 and 3 threads.
func TestWinogradWeightTransformsParallel(t *testing.T) {
	const o, c = 64, 48 // 16·o·c above parallelThreshold
	oc := o * c
	rng := rand.New(rand.NewPCG(41, 3))
	w, du := to32(randVec(rng, 9*oc)), to32(randVec(rng, 16*oc))
	wantU, wantDw := make([]float32, 16*oc), make([]float32, 9*oc)
	wgWeightsRange(wantU, w, oc, 0, oc)
	wgWeightGradRange(wantDw, du, oc, 0, oc)
	for _, procs := range []int{1, 2, 3} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			u, dw := make([]float32, 16*oc), make([]float32, 9*oc)
			wgWeights(u, w, o, c)
			wgWeightGrad(dw, du, o, c)
			if !slices.Equal(bits32(u), bits32(wantU)) {
				t.Errorf("GOMAXPROCS %d: wgWeights differs from one serial loop", procs)
			}
			if !slices.Equal(bits32(dw), bits32(wantDw)) {
				t.Errorf("GOMAXPROCS %d: wgWeightGrad differs from one serial loop", procs)
			}
		}()
	}
}

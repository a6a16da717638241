package ops

import (
	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
)

// Winograd's F(2×2, 3×3) for 3×3 stride-1 float32 convolutions (Lavin and
// Gray, "Fast Algorithms for Convolutional Neural Networks", 2016).
//
// The output is cut into 2×2 tiles; tile (ty, tx) reads the 4×4 patch d of
// every input channel at padded rows 2ty..2ty+3 and columns 2tx..2tx+3, and
//
//	Y = Aᵀ [ Σ_c (G·g_oc·Gᵀ) ⊙ (Bᵀ·d_c·B) ] A,
//
// 16 products per tile and channel pair instead of 36. The 16 positions ξ of
// the transformed tiles are 16 independent matrix products: for each ξ,
// M_ξ [O×N] = U_ξ [O×C] · V_ξ [C×N] over the N tiles of a group of images,
// done by internal/gemm. The transforms (Bᵀ·d·B and Aᵀ·m·A) are additions and
// subtractions only, done 16 tiles at a time on AVX-512 (winograd_amd64.s)
// with the bits of the scalar loops here; G's halves are exact.
//
// The image is first split into the even and odd columns of its zero-padded
// rows (two "phase" rows per padded row), so that the four columns of a row
// of 16 patches are four contiguous runs. Every output element depends on
// its image alone (the products take internal/gemm's packed path, whose bits
// do not depend on the number of columns), so results are the same for any
// batch split and core count. They differ from the direct algorithm's in
// the last bits (the sums run in another order, over transformed values):
// TestWinogradMatchesDirect bounds the difference.

// wgPlan is the tiling of one geometry.
type wgPlan struct {
	th, tw int // tiles down and across: ⌈Ho/2⌉, ⌈Wo/2⌉
	t      int // tiles of one image
	hp     int // padded rows held: 2·th + 2
	wh     int // floats of one phase row: tw + 1
	plane  int // floats of one channel's phase rows: hp·2·wh
	group  int // images per group (one GEMM per ξ)
	n      int // GEMM columns of a full group: group·t
	// direct: the tiles cover the output exactly (Ho, Wo even), so the
	// output transform writes into the output planes.
	direct bool
}

// wgMinChannels is the fewest input and output channels for which the
// Winograd path is taken: with fewer, the transforms cost more than the
// products they save (an RGB stem, 3→16 channels on 32×32 images, 256
// images: 2.1 ms against 1.4 ms for the direct path, BenchmarkConv2D).
const wgMinChannels = 8

// winogradPlanFor returns the plan of g when the Winograd path is asked for
// (g.winograd) and applies (a 3×3 kernel with stride 1, at least
// wgMinChannels input and output channels), else nil.
func winogradPlanFor(g *convGeom) *wgPlan {
	if !g.winograd || g.kh != 3 || g.kw != 3 || g.stride != 1 || g.c < wgMinChannels || g.o < wgMinChannels {
		return nil
	}
	p := &wgPlan{th: (g.ho + 1) / 2, tw: (g.wo + 1) / 2}
	p.t = p.th * p.tw
	p.hp, p.wh = 2*p.th+2, p.tw+1
	p.plane = p.hp * 2 * p.wh
	// Enough tiles per group that the products have 64 columns or more.
	p.group = max(1, min(g.n, (64+p.t-1)/p.t))
	p.n = p.group * p.t
	p.direct = g.ho%2 == 0 && g.wo%2 == 0
	return p
}

// wgWeights writes U_ξ = (G·g·Gᵀ)_ξ of the kernels w [O,C,3,3] into
// u[ξ·O·C + o·C + c].
func wgWeights(u, w []float32, o, c int) {
	oc := o * c
	parallelFor(oc, 16*oc, func(lo, hi int) { wgWeightsRange(u, w, oc, lo, hi) })
}

// wgWeightsRange is wgWeights for the kernels lo ≤ i < hi of oc.
func wgWeightsRange(u, w []float32, oc, lo, hi int) {
	for i := lo; i < hi; i++ {
		g := w[i*9 : i*9+9]
		var r [4][3]float32
		for b := 0; b < 3; b++ {
			g0, g1, g2 := g[b], g[3+b], g[6+b]
			r[0][b] = g0
			r[1][b] = ((g0 + g1) + g2) * 0.5
			r[2][b] = ((g0 - g1) + g2) * 0.5
			r[3][b] = g2
		}
		for a := 0; a < 4; a++ {
			r0, r1, r2 := r[a][0], r[a][1], r[a][2]
			u[(a*4+0)*oc+i] = r0
			u[(a*4+1)*oc+i] = ((r0 + r1) + r2) * 0.5
			u[(a*4+2)*oc+i] = ((r0 - r1) + r2) * 0.5
			u[(a*4+3)*oc+i] = r2
		}
	}
}

// wgInGo is wgIn32's scalar loop. For rows tile rows of n tiles, the
// first starting at padded rows e (even columns) and o (odd columns) with
// row stride rs, it writes V_ξ of tile (ty, tx) to v[ξ·vs + ty·n + tx].
func wgInGo(v []float32, vs int, e, o []float32, rs, n, rows int) {
	for ty := 0; ty < rows; ty++ {
		eb, ob, vb := e[2*ty*rs:], o[2*ty*rs:], v[ty*n:]
		for tx := 0; tx < n; tx++ {
			var t [4][4]float32
			for i := 0; i < 4; i++ {
				d0, d1, d2, d3 := eb[i*rs+tx], ob[i*rs+tx], eb[i*rs+tx+1], ob[i*rs+tx+1]
				t[i][0] = d0 - d2
				t[i][1] = d1 + d2
				t[i][2] = d2 - d1
				t[i][3] = d1 - d3
			}
			for j := 0; j < 4; j++ {
				vb[(0*4+j)*vs+tx] = t[0][j] - t[2][j]
				vb[(1*4+j)*vs+tx] = t[1][j] + t[2][j]
				vb[(2*4+j)*vs+tx] = t[2][j] - t[1][j]
				vb[(3*4+j)*vs+tx] = t[1][j] - t[3][j]
			}
		}
	}
}

// wgOutGo is wgOut32's scalar loop. For rows tile rows of n tiles, with
// M_ξ of tile (ty, tx) at m[ξ·ms + ty·n + tx], it writes the 2×2 output
// tile to y[(2·ty + r)·ys + 2·tx + j].
func wgOutGo(y []float32, ys int, m []float32, ms, n, rows int) {
	for ty := 0; ty < rows; ty++ {
		yb, mb := y[2*ty*ys:], m[ty*n:]
		for tx := 0; tx < n; tx++ {
			var s [2][4]float32
			for j := 0; j < 4; j++ {
				m0, m1, m2, m3 := mb[(0*4+j)*ms+tx], mb[(1*4+j)*ms+tx], mb[(2*4+j)*ms+tx], mb[(3*4+j)*ms+tx]
				s[0][j] = (m0 + m1) + m2
				s[1][j] = (m1 - m2) - m3
			}
			for r := 0; r < 2; r++ {
				yb[r*ys+2*tx] = (s[r][0] + s[r][1]) + s[r][2]
				yb[r*ys+2*tx+1] = (s[r][1] - s[r][2]) - s[r][3]
			}
		}
	}
}

// wgFillGo is wgFill32's scalar loop: for rows rows of w values of x and
// destination rows dst[r·rs:], dst[aoff + j] = x[2j] and dst[boff + j] =
// x[2j+1] for j < w/2, and dst[aoff + w/2] = x[w−1] when w is odd.
func wgFillGo(dst, x []float32, rows, w, rs, aoff, boff int) {
	half := w / 2
	for r := 0; r < rows; r++ {
		xr, d := x[r*w:(r+1)*w], dst[r*rs:]
		a, b := d[aoff:aoff+(w+1)/2], d[boff:boff+half]
		for j := range b {
			a[j] = xr[2*j]
			b[j] = xr[2*j+1]
		}
		if w%2 == 1 {
			a[half] = xr[w-1]
		}
	}
}

// wgDyGo is wgDy32's scalar loop, the adjoint of the output transform:
// for rows tile rows of n tiles, the 2×2 gradient tile (ty, tx) has its
// even columns at e[2·ty·rs + r·rs + tx] and odd ones at o[...] (r = 0, 1),
// and dM_ξ = (A·dY·Aᵀ)_ξ goes to dm[ξ·ms + ty·n + tx].
func wgDyGo(dm []float32, ms int, e, o []float32, rs, n, rows int) {
	for ty := 0; ty < rows; ty++ {
		eb, ob, db := e[2*ty*rs:], o[2*ty*rs:], dm[ty*n:]
		for tx := 0; tx < n; tx++ {
			d00, d01, d10, d11 := eb[tx], ob[tx], eb[rs+tx], ob[rs+tx]
			q := [4][2]float32{{d00, d01}, {d00 + d10, d01 + d11}, {d00 - d10, d01 - d11}, {-d10, -d11}}
			for i := 0; i < 4; i++ {
				db[(i*4+0)*ms+tx] = q[i][0]
				db[(i*4+1)*ms+tx] = q[i][0] + q[i][1]
				db[(i*4+2)*ms+tx] = q[i][0] - q[i][1]
				db[(i*4+3)*ms+tx] = -q[i][1]
			}
		}
	}
}

// wgWeightGrad writes dw [O,C,3,3] = Gᵀ·dU_oc·G from du[ξ·O·C + o·C + c],
// the adjoint of wgWeights.
func wgWeightGrad(dw, du []float32, o, c int) {
	oc := o * c
	parallelFor(oc, 16*oc, func(lo, hi int) { wgWeightGradRange(dw, du, oc, lo, hi) })
}

// wgWeightGradRange is wgWeightGrad for the kernels lo ≤ i < hi of oc.
func wgWeightGradRange(dw, du []float32, oc, lo, hi int) {
	for i := lo; i < hi; i++ {
		var d [4][4]float32
		for xi := 0; xi < 16; xi++ {
			d[xi/4][xi%4] = du[xi*oc+i]
		}
		// r = Gᵀ·d (3×4), then dw = r·G (3×3); Gᵀ's rows are (1, ½, ½, 0),
		// (0, ½, −½, 0), (0, ½, ½, 1).
		var r [3][4]float32
		for j := 0; j < 4; j++ {
			h1, h2 := d[1][j]*0.5, d[2][j]*0.5
			r[0][j] = (d[0][j] + h1) + h2
			r[1][j] = h1 - h2
			r[2][j] = (h1 + h2) + d[3][j]
		}
		g := dw[i*9 : i*9+9]
		for a := 0; a < 3; a++ {
			h1, h2 := r[a][1]*0.5, r[a][2]*0.5
			g[a*3+0] = (r[a][0] + h1) + h2
			g[a*3+1] = h1 - h2
			g[a*3+2] = (h1 + h2) + r[a][3]
		}
	}
}

func wgDy(dm []float32, ms int, e, o []float32, rs, n, rows int) {
	if haveKernels && rows > 0 && n > 0 {
		_ = dm[15*ms+rows*n-1]
		_ = e[(2*rows-1)*rs+n-1]
		_ = o[(2*rows-1)*rs+n-1]
		wgDy32(&dm[0], ms, &e[0], &o[0], rs, n, rows)
		return
	}
	wgDyGo(dm, ms, e, o, rs, n, rows)
}

// wgIn, wgOut and wgFill run the AVX-512 kernels when the machine has
// them, after checking the extent of every slice they touch.
func wgIn(v []float32, vs int, e, o []float32, rs, n, rows int) {
	if haveKernels && rows > 0 && n > 0 {
		_ = v[15*vs+(rows-1)*n+n-1]
		_ = e[(2*rows+1)*rs+n]
		_ = o[(2*rows+1)*rs+n]
		wgIn32(&v[0], vs, &e[0], &o[0], rs, n, rows)
		return
	}
	wgInGo(v, vs, e, o, rs, n, rows)
}

func wgOut(y []float32, ys int, m []float32, ms, n, rows int) {
	if haveKernels && rows > 0 && n > 0 {
		_ = y[(2*rows-1)*ys+2*n-1]
		_ = m[15*ms+rows*n-1]
		wgOut32(&y[0], ys, &m[0], ms, n, rows)
		return
	}
	wgOutGo(y, ys, m, ms, n, rows)
}

func wgFill(dst, x []float32, rows, w, rs, aoff, boff int) {
	if haveKernels && rows > 0 && w > 0 {
		_ = x[rows*w-1]
		_ = dst[(rows-1)*rs+max(aoff+(w+1)/2, boff+w/2)-1]
		wgFill32(&dst[0], &x[0], rows, w, rs, aoff, boff)
		return
	}
	wgFillGo(dst, x, rows, w, rs, aoff, boff)
}

// fill writes the phase rows of image x [C,H,W] into ph (c·plane floats):
// padded row r of channel ci holds its even columns at
// ph[ci·plane + r·2·wh : +wh] and its odd columns right after. Positions
// outside the image are never written (they stay zero).
func (p *wgPlan) fill(g *convGeom, ph, x []float32) {
	hw, q, rs := g.h*g.w, g.pad/2, 2*p.wh
	// Padded column j+pad of x[j]: the even x go to the even phase row when
	// pad is even.
	aoff, boff := q, p.wh+q
	if g.pad%2 == 1 {
		aoff, boff = p.wh+q, q+1
	}
	for ci := 0; ci < g.c; ci++ {
		wgFill(ph[ci*p.plane+g.pad*rs:], x[ci*hw:(ci+1)*hw], g.h, g.w, rs, aoff, boff)
	}
}

// convWinograd computes out [N,O,Ho,Wo] = conv(x, w) for a float32 3×3
// stride-1 geometry with plan p.
func convWinograd(g *convGeom, p *wgPlan, out, x, w []float32) {
	oc := g.o * g.c
	groups := (g.n + p.group - 1) / p.group
	workers := numWorkers(groups, g.macs())
	phSize := g.c * p.plane
	// The ξ strides of V and M are padded by 16 floats: 16 streams at a
	// power-of-two distance would fall into the same cache sets.
	cvs, oms := g.c*p.n+16, g.o*p.n+16
	vSize, mSize := 16*cvs, 16*oms
	ySize := 0
	if !p.direct {
		ySize = 2 * p.th * 2 * p.tw
	}
	per := phSize + vSize + mSize + ySize
	buf := getScratch[float32](oc*16 + workers*per)
	defer putScratch(buf)
	u := buf[:16*oc]
	wgWeights(u, w, g.o, g.c)
	for wk := 0; wk < workers; wk++ {
		clear(buf[16*oc+wk*per : 16*oc+wk*per+phSize])
	}
	xs, ys, P := g.c*g.h*g.w, g.o*g.ho*g.wo, g.ho*g.wo
	forEachTask(workers, groups, func(wk, gi int) {
		base := 16*oc + wk*per
		ph := buf[base : base+phSize]
		v := buf[base+phSize : base+phSize+vSize]
		m := buf[base+phSize+vSize : base+phSize+vSize+mSize]
		yt := buf[base+phSize+vSize+mSize : base+per]
		lo, hi := gi*p.group, min(g.n, (gi+1)*p.group)
		for i := lo; i < hi; i++ {
			p.fill(g, ph, x[i*xs:(i+1)*xs])
			col := (i - lo) * p.t
			for ci := 0; ci < g.c; ci++ {
				pc := ph[ci*p.plane:]
				wgIn(v[ci*p.n+col:], cvs, pc, pc[p.wh:], 2*p.wh, p.tw, p.th)
			}
		}
		n := (hi - lo) * p.t
		for xi := 0; xi < 16; xi++ {
			igemm.SgemmPacked(false, false, g.o, n, g.c, 1, u[xi*oc:], g.c, v[xi*cvs:], p.n, 0, m[xi*oms:], p.n)
		}
		for i := lo; i < hi; i++ {
			col := (i - lo) * p.t
			for oi := 0; oi < g.o; oi++ {
				yo := out[i*ys+oi*P : i*ys+(oi+1)*P]
				dst, dw := yo, g.wo
				if !p.direct {
					dst, dw = yt, 2*p.tw
				}
				wgOut(dst, dw, m[oi*p.n+col:], oms, p.tw, p.th)
				if !p.direct {
					for oh := 0; oh < g.ho; oh++ {
						copy(yo[oh*g.wo:(oh+1)*g.wo], yt[oh*dw:])
					}
				}
			}
		}
	})
}

// convWinogradW computes dw [O,C,3,3] of a float32 3×3 stride-1 geometry
// with plan p: the input tiles V as in the forward pass, the gradient tiles
// dM = A·dY·Aᵀ, dU_ξ = Σ_tiles dM_ξ·V_ξᵀ (one product per ξ and group, long
// sums over the tiles), and dw = Gᵀ·dU·G. As convBackwardW, the images are
// split into min(N, dwChunks) fixed chunks whose partial dU are added in
// chunk order, so the bits do not depend on the core count.
func convWinogradW(g *convGeom, p *wgPlan, dw, x, dy []float32) {
	oc := g.o * g.c
	chunks := min(g.n, dwChunks)
	workers := numWorkers(chunks, g.macs())
	phSize := g.c * p.plane
	dyRow := 2 * p.tw // one dY row split: even | odd columns
	dySize := g.o * 2 * p.th * dyRow
	cvs, oms := g.c*p.n+16, g.o*p.n+16
	vSize, mSize := 16*cvs, 16*oms
	per := phSize + dySize + vSize + mSize
	buf := getScratch[float32](chunks*16*oc + 16*oc + workers*per)
	defer putScratch(buf)
	partial := buf[:chunks*16*oc]
	du := buf[chunks*16*oc : (chunks+1)*16*oc]
	work := buf[(chunks+1)*16*oc:]
	// Zero the phase rows once: positions outside the images are never
	// written.
	for wk := 0; wk < workers; wk++ {
		clear(work[wk*per : wk*per+phSize+dySize])
	}
	xs, ys, P := g.c*g.h*g.w, g.o*g.ho*g.wo, g.ho*g.wo
	forEachTask(workers, chunks, func(wk, ch int) {
		base := wk * per
		ph := work[base : base+phSize]
		dph := work[base+phSize : base+phSize+dySize]
		v := work[base+phSize+dySize : base+phSize+dySize+vSize]
		m := work[base+phSize+dySize+vSize : base+per]
		part := partial[ch*16*oc : (ch+1)*16*oc]
		lo, hi := g.n*ch/chunks, g.n*(ch+1)/chunks
		first := true
		for g0 := lo; g0 < hi; g0 += p.group {
			g1 := min(hi, g0+p.group)
			for i := g0; i < g1; i++ {
				col := (i - g0) * p.t
				p.fill(g, ph, x[i*xs:(i+1)*xs])
				for ci := 0; ci < g.c; ci++ {
					pc := ph[ci*p.plane:]
					wgIn(v[ci*p.n+col:], cvs, pc, pc[p.wh:], 2*p.wh, p.tw, p.th)
				}
				dyi := dy[i*ys : (i+1)*ys]
				for oi := 0; oi < g.o; oi++ {
					pd := dph[oi*2*p.th*dyRow:]
					wgFill(pd, dyi[oi*P:(oi+1)*P], g.ho, g.wo, dyRow, 0, p.tw)
					wgDy(m[oi*p.n+col:], oms, pd, pd[p.tw:], dyRow, p.tw, p.th)
				}
			}
			n := (g1 - g0) * p.t
			beta := float32(1)
			if first {
				beta = 0
			}
			first = false
			for xi := 0; xi < 16; xi++ {
				igemm.Sgemm(false, true, g.o, g.c, n, 1, m[xi*oms:], p.n, v[xi*cvs:], p.n, beta, part[xi*oc:], g.c)
			}
		}
	})
	// dU is the chunks' sum in chunk order, then dw = Gᵀ·dU·G, both
	// parallel over kernels (each kernel's bits as in one loop).
	parallelFor(oc, 16*oc*chunks, func(lo, hi int) {
		for xi := 0; xi < 16; xi++ {
			d := du[xi*oc+lo : xi*oc+hi]
			copy(d, partial[xi*oc+lo:xi*oc+hi])
			for ch := 1; ch < chunks; ch++ {
				for j, v := range partial[ch*16*oc+xi*oc+lo : ch*16*oc+xi*oc+hi] {
					d[j] += v
				}
			}
		}
		wgWeightGradRange(dw, du, oc, lo, hi)
	})
}

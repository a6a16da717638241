package ops

import (
	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
)

// Winograd's F(4×4, 3×3): 4×4 output tiles from 6×6 input patches, 36
// products per tile and channel pair instead of 144 (2.25 per output
// instead of F(2×2, 3×3)'s 4), with the matrices of Lavin and Gray:
//
//	Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0; 0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1]
//	G  = [¼ 0 0; −⅙ −⅙ −⅙; −⅙ ⅙ −⅙; 1/24 1/12 ⅙; 1/24 −1/12 ⅙; 0 0 1]
//	Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 0; 0 1 1 4 4 0; 0 1 −1 8 −8 1]
//
// The padded image rows are split into their four column phases (column
// 4i+k in phase k), so that the six columns of 16 neighbouring patches are
// six contiguous runs. The transforms use additions, subtractions and
// multiplications by 2, 4 and 8 (exact), each rounded to float32 on its
// own, so the AVX-512 kernels give the scalar loops' bits.

// wg4Plan is the F(4×4, 3×3) tiling of one geometry.
type wg4Plan struct {
	th, tw int // tiles down and across: ⌈Ho/4⌉, ⌈Wo/4⌉
	t      int // tiles of one image
	hp     int // padded rows held: 4·th + 2
	wq     int // floats of one phase: tw + 1
	plane  int // floats of one channel's phase rows: hp·4·wq
	tmp    int // floats of the two-level split's scratch: 2·hp·2·wq
	group  int // images per group
	n      int // GEMM columns of a full group
	direct bool
}

func newWg4Plan(g *convGeom) *wg4Plan {
	p := &wg4Plan{th: (g.ho + 3) / 4, tw: (g.wo + 3) / 4}
	p.t = p.th * p.tw
	p.hp, p.wq = 4*p.th+2, p.tw+1
	p.plane = p.hp * 4 * p.wq
	p.tmp = 2 * p.hp * 2 * p.wq
	p.group = max(1, min(g.n, (64+p.t-1)/p.t))
	p.n = p.group * p.t
	p.direct = g.ho%4 == 0 && g.wo%4 == 0
	return p
}

// split4 writes the four column phases of rows rows of w values of x
// (consecutive) into dst (row stride rs, phase k at dst[r·rs + k·wd + i] =
// padded column 4i + k, padded column j + pad holding x[j]); tmp
// (2·rows·2·wd floats, zero where the image does not reach) holds the
// even and odd columns in between. dst's rows are written whole.
func split4(dst, tmp, x []float32, rows, h, w, pad, wd int) {
	er := 2 * wd    // one row of even (or odd) padded columns
	eo := rows * er // the odd plane's offset in tmp
	q := pad / 2
	aoff, boff := q, eo+q
	if pad%2 == 1 {
		aoff, boff = eo+q, q+1
	}
	if h > 0 && w > 0 {
		wgFill(tmp[pad*er:], x, h, w, er, aoff, boff)
	}
	rs := 4 * wd
	wgFill(dst, tmp[:eo], rows, er, rs, 0, 2*wd)
	wgFill(dst, tmp[eo:], rows, er, rs, wd, 3*wd)
}

// wg4Row is the row (or column) transform d·B of F(4×4, 3×3) in the
// kernels' order of operations.
func wg4Row(d0, d1, d2, d3, d4, d5 float32) (t0, t1, t2, t3, t4, t5 float32) {
	r := d4 - d2
	p := d4 - float32(4*d2)
	q := d3 - float32(4*d1)
	s := d3 - d1
	s = s + s
	t0 = float32(4*(d0-d2)) + r
	t1 = p + q
	t2 = p - q
	t3 = r + s
	t4 = r - s
	t5 = float32(4*(d1-d3)) + (d5 - d3)
	return
}

// wg4Out6 is the output transform's Aᵀ·m on six values.
func wg4Out6(m0, m1, m2, m3, m4, m5 float32) (o0, o1, o2, o3 float32) {
	a, b := m1+m2, m1-m2
	c, e := m3+m4, m3-m4
	o0 = (m0 + a) + c
	o1 = b + float32(2*e)
	o2 = a + float32(4*c)
	o3 = (b + float32(8*e)) + m5
	return
}

// wg4Dy4 is the adjoint A·g of the output transform on four values.
func wg4Dy4(g0, g1, g2, g3 float32) (h0, h1, h2, h3, h4, h5 float32) {
	u, w := g0+g2, g1+g3
	a := g0 + float32(4*g2)
	b := g1 + float32(4*g3)
	b = b + b
	return g0, u + w, u - w, a + b, a - b, g3
}

// wgIn4Go is wgIn4_32's scalar loop: for rows tile rows of n tiles, the
// first at phase rows ph (phase k at ph[i·rs + k·wq]), it writes V_ξ of
// tile (ty, tx) to v[ξ·vs + ty·n + tx], ξ = 6·r + k.
func wgIn4Go(v []float32, vs int, ph []float32, rs, wq, n, rows int) {
	for ty := 0; ty < rows; ty++ {
		b, vb := ph[4*ty*rs:], v[ty*n:]
		for tx := 0; tx < n; tx++ {
			var t [6][6]float32
			for i := 0; i < 6; i++ {
				r := b[i*rs:]
				t[i][0], t[i][1], t[i][2], t[i][3], t[i][4], t[i][5] =
					wg4Row(r[tx], r[wq+tx], r[2*wq+tx], r[3*wq+tx], r[tx+1], r[wq+tx+1])
			}
			for k := 0; k < 6; k++ {
				var o [6]float32
				o[0], o[1], o[2], o[3], o[4], o[5] = wg4Row(t[0][k], t[1][k], t[2][k], t[3][k], t[4][k], t[5][k])
				for r := 0; r < 6; r++ {
					vb[(6*r+k)*vs+tx] = o[r]
				}
			}
		}
	}
}

// wgOut4Go is wgOut4_32's scalar loop: M_ξ of tile (ty, tx) at
// m[ξ·ms + ty·n + tx]; the 4×4 output tile goes to y[(4·ty + r)·ys + 4·tx + c].
func wgOut4Go(y []float32, ys int, m []float32, ms, n, rows int) {
	for ty := 0; ty < rows; ty++ {
		yb, mb := y[4*ty*ys:], m[ty*n:]
		for tx := 0; tx < n; tx++ {
			// Columns first: s[r][k] = (Aᵀ·M)[r][k].
			var s [4][6]float32
			for k := 0; k < 6; k++ {
				s[0][k], s[1][k], s[2][k], s[3][k] = wg4Out6(mb[k*ms+tx], mb[(6+k)*ms+tx], mb[(12+k)*ms+tx],
					mb[(18+k)*ms+tx], mb[(24+k)*ms+tx], mb[(30+k)*ms+tx])
			}
			for r := 0; r < 4; r++ {
				o := yb[r*ys+4*tx:]
				o[0], o[1], o[2], o[3] = wg4Out6(s[r][0], s[r][1], s[r][2], s[r][3], s[r][4], s[r][5])
			}
		}
	}
}

// wgDy4Go is wgDy4_32's scalar loop, the adjoint of the output transform:
// the 4×4 gradient tile (ty, tx) has column c of row r at
// q[(4·ty + r)·rs + c·wd + tx], and dM_ξ = (A·dY·Aᵀ)_ξ goes to
// dm[ξ·ms + ty·n + tx].
func wgDy4Go(dm []float32, ms int, q []float32, rs, wd, n, rows int) {
	for ty := 0; ty < rows; ty++ {
		b, db := q[4*ty*rs:], dm[ty*n:]
		for tx := 0; tx < n; tx++ {
			// Rows first: h[r][j] = (dY·Aᵀ)[r][j].
			var h [4][6]float32
			for r := 0; r < 4; r++ {
				x := b[r*rs:]
				h[r][0], h[r][1], h[r][2], h[r][3], h[r][4], h[r][5] = wg4Dy4(x[tx], x[wd+tx], x[2*wd+tx], x[3*wd+tx])
			}
			for j := 0; j < 6; j++ {
				var o [6]float32
				o[0], o[1], o[2], o[3], o[4], o[5] = wg4Dy4(h[0][j], h[1][j], h[2][j], h[3][j])
				for i := 0; i < 6; i++ {
					db[(6*i+j)*ms+tx] = o[i]
				}
			}
		}
	}
}

// wg4G is G of F(4×4, 3×3).
var wg4G = [6][3]float64{
	{1.0 / 4, 0, 0},
	{-1.0 / 6, -1.0 / 6, -1.0 / 6},
	{-1.0 / 6, 1.0 / 6, -1.0 / 6},
	{1.0 / 24, 1.0 / 12, 1.0 / 6},
	{1.0 / 24, -1.0 / 12, 1.0 / 6},
	{0, 0, 1},
}

// wg4Weights writes U_ξ = (G·g·Gᵀ)_ξ of w [O,C,3,3] into u[ξ·O·C + o·C + c],
// computed in float64 and rounded once.
func wg4Weights(u, w []float32, o, c int) {
	oc := o * c
	for i := 0; i < oc; i++ {
		g := w[i*9 : i*9+9]
		var r [6][3]float64
		for a := 0; a < 6; a++ {
			for b := 0; b < 3; b++ {
				r[a][b] = wg4G[a][0]*float64(g[b]) + wg4G[a][1]*float64(g[3+b]) + wg4G[a][2]*float64(g[6+b])
			}
		}
		for a := 0; a < 6; a++ {
			for b := 0; b < 6; b++ {
				u[(6*a+b)*oc+i] = float32(r[a][0]*wg4G[b][0] + r[a][1]*wg4G[b][1] + r[a][2]*wg4G[b][2])
			}
		}
	}
}

// wg4WeightGrad writes dw [O,C,3,3] = Gᵀ·dU_oc·G (float64, rounded once),
// the adjoint of wg4Weights.
func wg4WeightGrad(dw, du []float32, o, c int) {
	oc := o * c
	for i := 0; i < oc; i++ {
		var r [3][6]float64 // Gᵀ·dU
		for a := 0; a < 3; a++ {
			for j := 0; j < 6; j++ {
				s := 0.0
				for k := 0; k < 6; k++ {
					s += wg4G[k][a] * float64(du[(6*k+j)*oc+i])
				}
				r[a][j] = s
			}
		}
		for a := 0; a < 3; a++ {
			for b := 0; b < 3; b++ {
				s := 0.0
				for j := 0; j < 6; j++ {
					s += r[a][j] * wg4G[j][b]
				}
				dw[i*9+a*3+b] = float32(s)
			}
		}
	}
}

// wgIn4, wgOut4 and wgDy4 run the AVX-512 kernels when the machine has
// them, after checking the extent of every slice they touch.
func wgIn4(v []float32, vs int, ph []float32, rs, wq, n, rows int, scratch []float32) {
	if haveKernels && rows > 0 && n > 0 {
		_ = v[35*vs+rows*n-1]
		_ = ph[(4*rows+1)*rs+wq+n]
		_ = scratch[wg4Scratch-1]
		wgIn4_32(&v[0], vs, &ph[0], rs, wq, n, rows, &scratch[0])
		return
	}
	wgIn4Go(v, vs, ph, rs, wq, n, rows)
}

func wgOut4(y []float32, ys int, m []float32, ms, n, rows int, scratch []float32) {
	if haveKernels && rows > 0 && n > 0 {
		_ = y[(4*rows-1)*ys+4*n-1]
		_ = m[35*ms+rows*n-1]
		_ = scratch[wg4Scratch-1]
		wgOut4_32(&y[0], ys, &m[0], ms, n, rows, &scratch[0])
		return
	}
	wgOut4Go(y, ys, m, ms, n, rows)
}

func wgDy4(dm []float32, ms int, q []float32, rs, wd, n, rows int, scratch []float32) {
	if haveKernels && rows > 0 && n > 0 {
		_ = dm[35*ms+rows*n-1]
		_ = q[(4*rows-1)*rs+3*wd+n-1]
		_ = scratch[wg4Scratch-1]
		wgDy4_32(&dm[0], ms, &q[0], rs, wd, n, rows, &scratch[0])
		return
	}
	wgDy4Go(dm, ms, q, rs, wd, n, rows)
}

// wg4Scratch is the floats of the kernels' scratch: 36 vectors of 16.
const wg4Scratch = 36 * 16

// convWinograd4 computes out [N,O,Ho,Wo] = conv(x, w) by F(4×4, 3×3).
func convWinograd4(g *convGeom, p *wg4Plan, out, x, w []float32) {
	oc := g.o * g.c
	groups := (g.n + p.group - 1) / p.group
	workers := numWorkers(groups, g.macs())
	phSize := g.c * p.plane
	cvs, oms := g.c*p.n+16, g.o*p.n+16
	vSize, mSize := 36*cvs, 36*oms
	ySize := 0
	if !p.direct {
		ySize = 4 * p.th * 4 * p.tw
	}
	per := phSize + p.tmp + wg4Scratch + vSize + mSize + ySize
	buf := getScratch[float32](oc*36 + workers*per)
	defer putScratch(buf)
	u := buf[:36*oc]
	wg4Weights(u, w, g.o, g.c)
	for wk := 0; wk < workers; wk++ {
		b := 36*oc + wk*per
		clear(buf[b+phSize : b+phSize+p.tmp])
	}
	xs, ys, P := g.c*g.h*g.w, g.o*g.ho*g.wo, g.ho*g.wo
	hw := g.h * g.w
	forEachTask(workers, groups, func(wk, gi int) {
		b := 36*oc + wk*per
		ph := buf[b : b+phSize]
		b += phSize
		tmp := buf[b : b+p.tmp]
		b += p.tmp
		sc := buf[b : b+wg4Scratch]
		b += wg4Scratch
		v := buf[b : b+vSize]
		b += vSize
		m := buf[b : b+mSize]
		b += mSize
		yt := buf[b : b+ySize]
		lo, hi := gi*p.group, min(g.n, (gi+1)*p.group)
		rs := 4 * p.wq
		for i := lo; i < hi; i++ {
			col := (i - lo) * p.t
			xi := x[i*xs : (i+1)*xs]
			for ci := 0; ci < g.c; ci++ {
				pc := ph[ci*p.plane : (ci+1)*p.plane]
				split4(pc, tmp, xi[ci*hw:(ci+1)*hw], p.hp, g.h, g.w, g.pad, p.wq)
				wgIn4(v[ci*p.n+col:], cvs, pc, rs, p.wq, p.tw, p.th, sc)
			}
		}
		n := (hi - lo) * p.t
		for xi := 0; xi < 36; xi++ {
			igemm.SgemmPacked(false, false, g.o, n, g.c, 1, u[xi*oc:], g.c, v[xi*cvs:], p.n, 0, m[xi*oms:], p.n)
		}
		for i := lo; i < hi; i++ {
			col := (i - lo) * p.t
			for oi := 0; oi < g.o; oi++ {
				yo := out[i*ys+oi*P : i*ys+(oi+1)*P]
				dst, dw := yo, g.wo
				if !p.direct {
					dst, dw = yt, 4*p.tw
				}
				wgOut4(dst, dw, m[oi*p.n+col:], oms, p.tw, p.th, sc)
				if !p.direct {
					for oh := 0; oh < g.ho; oh++ {
						copy(yo[oh*g.wo:(oh+1)*g.wo], yt[oh*dw:])
					}
				}
			}
		}
	})
}

// convWinograd4W computes dw [O,C,3,3] by F(4×4, 3×3), as convWinogradW.
func convWinograd4W(g *convGeom, p *wg4Plan, dw, x, dy []float32) {
	oc := g.o * g.c
	chunks := min(g.n, dwChunks)
	workers := numWorkers(chunks, g.macs())
	phSize := g.c * p.plane
	dRows := 4 * p.th
	dq := dRows * 4 * p.tw       // one channel of dY split into phases
	dTmp := 2 * dRows * 2 * p.tw // its two-level scratch
	cvs, oms := g.c*p.n+16, g.o*p.n+16
	vSize, mSize := 36*cvs, 36*oms
	per := phSize + p.tmp + dq + dTmp + wg4Scratch + vSize + mSize
	buf := getScratch[float32](chunks*36*oc + 36*oc + workers*per)
	defer putScratch(buf)
	partial := buf[:chunks*36*oc]
	du := buf[chunks*36*oc : (chunks+1)*36*oc]
	work := buf[(chunks+1)*36*oc:]
	for wk := 0; wk < workers; wk++ {
		b := wk * per
		clear(work[b+phSize : b+phSize+p.tmp])
		clear(work[b+phSize+p.tmp+dq : b+phSize+p.tmp+dq+dTmp])
	}
	xs, ys, P := g.c*g.h*g.w, g.o*g.ho*g.wo, g.ho*g.wo
	hw := g.h * g.w
	forEachTask(workers, chunks, func(wk, ch int) {
		b := wk * per
		ph := work[b : b+phSize]
		b += phSize
		tmp := work[b : b+p.tmp]
		b += p.tmp
		qd := work[b : b+dq]
		b += dq
		qt := work[b : b+dTmp]
		b += dTmp
		sc := work[b : b+wg4Scratch]
		b += wg4Scratch
		v := work[b : b+vSize]
		b += vSize
		m := work[b : b+mSize]
		part := partial[ch*36*oc : (ch+1)*36*oc]
		lo, hi := g.n*ch/chunks, g.n*(ch+1)/chunks
		first := true
		rs := 4 * p.wq
		for g0 := lo; g0 < hi; g0 += p.group {
			g1 := min(hi, g0+p.group)
			for i := g0; i < g1; i++ {
				col := (i - g0) * p.t
				xi := x[i*xs : (i+1)*xs]
				for ci := 0; ci < g.c; ci++ {
					pc := ph[ci*p.plane : (ci+1)*p.plane]
					split4(pc, tmp, xi[ci*hw:(ci+1)*hw], p.hp, g.h, g.w, g.pad, p.wq)
					wgIn4(v[ci*p.n+col:], cvs, pc, rs, p.wq, p.tw, p.th, sc)
				}
				dyi := dy[i*ys : (i+1)*ys]
				for oi := 0; oi < g.o; oi++ {
					split4(qd, qt, dyi[oi*P:(oi+1)*P], dRows, g.ho, g.wo, 0, p.tw)
					wgDy4(m[oi*p.n+col:], oms, qd, 4*p.tw, p.tw, p.tw, p.th, sc)
				}
			}
			n := (g1 - g0) * p.t
			beta := float32(1)
			if first {
				beta = 0
			}
			first = false
			for xi := 0; xi < 36; xi++ {
				igemm.Sgemm(false, true, g.o, g.c, n, 1, m[xi*oms:], p.n, v[xi*cvs:], p.n, beta, part[xi*oc:], g.c)
			}
		}
	})
	copy(du, partial[:36*oc])
	for ch := 1; ch < chunks; ch++ {
		for j, v := range partial[ch*36*oc : (ch+1)*36*oc] {
			du[j] += v
		}
	}
	wg4WeightGrad(dw, du, g.o, g.c)
}

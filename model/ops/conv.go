package ops

import (
	"errors"
	"fmt"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// dwChunks is the number of image chunks whose partial weight gradients are
// computed independently (in parallel) and then added in chunk order. It is
// fixed, so dW does not depend on the core count or on scheduling.
const dwChunks = 8

// ConvOpts configures a Conv2D node.
type ConvOpts struct {
	// Stride is the step of the kernel along H and W; 0 means 1.
	Stride int
	// Pad is the number of zero rows and columns added on every side.
	Pad int
	// NoInputGrad declares that x depends on no learnable (an image batch),
	// so the backward pass skips dX. Differentiating with respect to x is
	// then an error.
	NoInputGrad bool
	// Winograd computes the forward pass, dX and dW of a float32 3×3
	// stride-1 convolution with 8 or more channels in and out by Winograd's
	// F(2×2, 3×3) (winograd.go): 16 multiplications per 2×2 output tile and
	// channel pair instead of 36.
	// The results differ from the direct algorithm's in the last bits; they
	// are deterministic and independent of the batch split and core count.
	// Other geometries and float64 ignore it.
	Winograd bool
}

// Conv2D returns the 2-D cross-correlation (PyTorch's Conv2d, no bias) of
// x [N,C,H,W] with the weights w [O,C,KH,KW]: a node of shape [N,O,Ho,Wo]
// with Ho = (H+2·Pad−KH)/Stride+1 (and Wo alike). x and w are float32 or
// float64 of the same dtype.
//
// The forward pass lowers each image to a column matrix (im2col; none for
// 1×1 kernels with stride 1 and no padding; with a larger stride the image
// is first split into its stride phases so that the columns are shifted
// block copies) and multiplies it by w with one float32 GEMM
// (internal/gemm) per image written straight into the NCHW output, images
// split between goroutines. With stride 1 in float32 on AVX-512 the column
// matrix is not written: the GEMM reads its rows from a padded copy of the
// image through a table of offsets (conv_implicit.go), with the same bits.
// The backward pass computes dX as a convolution of dY with the rotated
// kernel when the stride is 1 (otherwise Wᵀ·dY followed by col2im), and
// dW = Σ_images dY·colᵀ over a fixed number of image chunks added in
// order, so every result is bit-identical from run to run and for any
// GOMAXPROCS.
func Conv2D(x, w *gorgonia.Node, opts ConvOpts) (*gorgonia.Node, error) {
	if x == nil || w == nil {
		return nil, errors.New("ops: Conv2D: nil input")
	}
	stride := opts.Stride
	if stride == 0 {
		stride = 1
	}
	if stride < 0 || opts.Pad < 0 {
		return nil, fmt.Errorf("ops: Conv2D: stride %d and pad %d, want stride >= 1 (0 means 1) and pad >= 0", opts.Stride, opts.Pad)
	}
	if _, err := newConvGeom("Conv2D", x.Shape(), w.Shape(), stride, opts.Pad); err != nil {
		return nil, err
	}
	n, err := applyOp(newConvOp(stride, opts.Pad, opts.NoInputGrad, opts.Winograd), x, w)
	if err != nil {
		return nil, fmt.Errorf("ops: Conv2D: %w", err)
	}
	return n, nil
}

// convGeom is the geometry of one convolution.
type convGeom struct {
	n, c, h, w  int // input
	o, kh, kw   int // kernel
	stride, pad int
	ho, wo      int // output
	// winograd asks for Winograd's F(2×2, 3×3) where it applies (float32,
	// 3×3, stride 1; winograd.go).
	winograd bool
}

// newConvGeom validates the shapes of x [N,C,H,W] and w [O,C,KH,KW].
func newConvGeom(op string, xs, ws tensor.Shape, stride, pad int) (convGeom, error) {
	if xs.Dims() != 4 {
		return convGeom{}, fmt.Errorf("ops: %s: x must be [N,C,H,W], got shape %v", op, xs)
	}
	if ws.Dims() != 4 {
		return convGeom{}, fmt.Errorf("ops: %s: w must be [O,C,KH,KW], got shape %v", op, ws)
	}
	for i, d := range xs {
		if d < 1 || ws[i] < 1 {
			return convGeom{}, fmt.Errorf("ops: %s: x %v and w %v must have positive sizes", op, xs, ws)
		}
	}
	if stride < 1 || pad < 0 {
		return convGeom{}, fmt.Errorf("ops: %s: stride %d, pad %d: want stride >= 1 and pad >= 0", op, stride, pad)
	}
	if xs[1] != ws[1] {
		return convGeom{}, fmt.Errorf("ops: %s: x %v has %d channels, w %v expects %d", op, xs, xs[1], ws, ws[1])
	}
	g := convGeom{n: xs[0], c: xs[1], h: xs[2], w: xs[3], o: ws[0], kh: ws[2], kw: ws[3], stride: stride, pad: pad}
	if g.h+2*pad < g.kh || g.w+2*pad < g.kw {
		return convGeom{}, fmt.Errorf("ops: %s: kernel %d×%d is larger than the padded input %d×%d (pad %d)",
			op, g.kh, g.kw, g.h+2*pad, g.w+2*pad, pad)
	}
	g.ho = (g.h+2*pad-g.kh)/stride + 1
	g.wo = (g.w+2*pad-g.kw)/stride + 1
	return g, nil
}

func (g *convGeom) k() int          { return g.c * g.kh * g.kw }
func (g *convGeom) p() int          { return g.ho * g.wo }
func (g *convGeom) xShape() []int   { return []int{g.n, g.c, g.h, g.w} }
func (g *convGeom) wShape() []int   { return []int{g.o, g.c, g.kh, g.kw} }
func (g *convGeom) yShape() []int   { return []int{g.n, g.o, g.ho, g.wo} }
func (g *convGeom) macs() int       { return g.n * g.o * g.k() * g.p() }
func (g *convGeom) pointwise() bool { return g.kh == 1 && g.kw == 1 && g.stride == 1 && g.pad == 0 }

// validRange returns the output positions [lo, hi) whose input coordinate
// o·stride − pad + a lies in [0, size).
func validRange(a, pad, stride, size, outSize int) (lo, hi int) {
	if d := pad - a; d > 0 {
		lo = (d + stride - 1) / stride
	}
	num := size - 1 + pad - a
	if num < 0 {
		return 0, 0
	}
	hi = min(outSize, num/stride+1)
	if lo > hi {
		lo = hi
	}
	return lo, hi
}

// planeSize is the scratch im2col needs for the stride phases of one image
// (0 for stride 1).
func (g *convGeom) planeSize() int {
	if g.stride == 1 {
		return 0
	}
	return g.c * g.h * g.w
}

// phase splits a kernel offset t = a − pad into the stride phase p ∈ [0, s)
// and the plane offset d with t = s·d + p.
func phase(t, s int) (p, d int) {
	p = ((t % s) + s) % s
	return p, (t - p) / s
}

// phaseLen is the number of input rows (or columns) congruent to p mod s.
func phaseLen(size, p, s int) int { return (size - p + s - 1) / s }

// deinterleave splits each channel of x [C,H,W] into its s×s stride phases:
// plane (pr, pc) holds x[c, s·i+pr, s·j+pc], planes stored one after the
// other in (pr, pc) order, each [C, ⌈(H−pr)/s⌉, ⌈(W−pc)/s⌉].
func deinterleave[T float32 | float64](g *convGeom, x, planes []T) {
	s, hw := g.stride, g.h*g.w
	if s == 2 {
		deinterleave2(g, x, planes)
		return
	}
	off := 0
	for pr := 0; pr < s; pr++ {
		hp := phaseLen(g.h, pr, s)
		for pc := 0; pc < s; pc++ {
			wp := phaseLen(g.w, pc, s)
			for ci := 0; ci < g.c; ci++ {
				xc := x[ci*hw : (ci+1)*hw]
				dst := planes[off : off+hp*wp]
				off += hp * wp
				for i := 0; i < hp; i++ {
					row := xc[(s*i+pr)*g.w : (s*i+pr+1)*g.w]
					d := dst[i*wp : (i+1)*wp]
					for j := range d {
						d[j] = row[s*j+pc]
					}
				}
			}
		}
	}
}

// deinterleave2 is deinterleave for stride 2: every input row is read once
// and split into its even and odd columns.
func deinterleave2[T float32 | float64](g *convGeom, x, planes []T) {
	hw := g.h * g.w
	w0, w1 := phaseLen(g.w, 0, 2), phaseLen(g.w, 1, 2)
	var base [2][2]int // offset of plane (pr, pc)
	off := 0
	for pr := 0; pr < 2; pr++ {
		hp := phaseLen(g.h, pr, 2)
		for pc, wp := range [2]int{w0, w1} {
			base[pr][pc] = off
			off += g.c * hp * wp
		}
	}
	for ci := 0; ci < g.c; ci++ {
		xc := x[ci*hw : (ci+1)*hw]
		for ih := 0; ih < g.h; ih++ {
			pr, i := ih&1, ih>>1
			hp := phaseLen(g.h, pr, 2)
			row := xc[ih*g.w : (ih+1)*g.w]
			e := planes[base[pr][0]+(ci*hp+i)*w0 : base[pr][0]+(ci*hp+i+1)*w0]
			o := planes[base[pr][1]+(ci*hp+i)*w1 : base[pr][1]+(ci*hp+i+1)*w1]
			row = row[:len(e)+len(o)]
			if r32, ok := any(row).([]float32); ok && haveKernels && len(o) > 0 {
				split32(&any(e).([]float32)[0], &any(o).([]float32)[0], &r32[0], len(o))
			} else {
				for j := range o {
					e[j] = row[2*j]
					o[j] = row[2*j+1]
				}
			}
			if len(e) > len(o) {
				e[len(o)] = row[2*len(o)]
			}
		}
	}
}

// im2col writes the column matrix of one image x [C,H,W]: row
// (c·KH + a)·KW + b holds x[c, oh·s−pad+a, ow·s−pad+b] (0 outside) at
// position oh·Wo + ow. Row r starts at col[r·ld]. Every entry of the K×P
// block is written. With a stride s > 1 the image is first split into its
// s×s phase planes (planes, g.planeSize() values of scratch), so that every
// row is a shifted copy of one plane, as with stride 1.
func im2col[T float32 | float64](g *convGeom, x, col []T, ld int, planes []T) {
	s, P := g.stride, g.p()
	if s > 1 && g.kh == 1 && g.kw == 1 {
		// One phase plane is used: gather it straight into the columns.
		hw := g.h * g.w
		for ci := 0; ci < g.c; ci++ {
			dst := col[ci*ld : ci*ld+P]
			pr, da := phase(-g.pad, s)
			pc, db := phase(-g.pad, s)
			oh0, oh1 := max(0, -da), min(g.ho, phaseLen(g.h, pr, s)-da)
			ow0, ow1 := max(0, -db), min(g.wo, phaseLen(g.w, pc, s)-db)
			if oh0 >= oh1 || ow0 >= ow1 {
				clear(dst)
				continue
			}
			clear(dst[:oh0*g.wo])
			clear(dst[oh1*g.wo:])
			xc := x[ci*hw : (ci+1)*hw]
			for oh := oh0; oh < oh1; oh++ {
				r := dst[oh*g.wo : (oh+1)*g.wo]
				src := xc[(oh*s-g.pad)*g.w:]
				clear(r[:ow0])
				if r32, ok := any(r).([]float32); ok && s == 2 && haveKernels {
					src32 := any(src[ow0*s-g.pad : (ow1-1)*s-g.pad+1]).([]float32)
					even32(&r32[ow0], &src32[0], ow1-ow0)
				} else {
					for ow := ow0; ow < ow1; ow++ {
						r[ow] = src[ow*s-g.pad]
					}
				}
				clear(r[ow1:])
			}
		}
		return
	}
	if s > 1 {
		deinterleave(g, x, planes)
	}
	for a := 0; a < g.kh; a++ {
		pr, da := phase(a-g.pad, s)
		hp := phaseLen(g.h, pr, s)
		for b := 0; b < g.kw; b++ {
			pc, db := phase(b-g.pad, s)
			wp := phaseLen(g.w, pc, s)
			src, off := x, 0
			if s > 1 {
				src = planes
				for q := 0; q < pr*s+pc; q++ {
					off += g.c * phaseLen(g.h, q/s, s) * phaseLen(g.w, q%s, s)
				}
			}
			for ci := 0; ci < g.c; ci++ {
				row := (ci*g.kh+a)*g.kw + b
				base := off + ci*hp*wp
				shiftFill(col[row*ld:row*ld+P], src[base:base+hp*wp], hp, wp, g.ho, g.wo, da, db)
			}
		}
	}
}

// shiftFill writes dst[oh·wo + ow] = src[(oh+da)·wp + ow+db] for the
// ho×wo output, 0 where the source position falls outside the hp×wp
// plane.
func shiftFill[T float32 | float64](dst, src []T, hp, wp, ho, wo, da, db int) {
	oh0, oh1 := max(0, -da), min(ho, hp-da)
	ow0, ow1 := max(0, -db), min(wo, wp-db)
	if oh0 >= oh1 || ow0 >= ow1 {
		clear(dst)
		return
	}
	clear(dst[:oh0*wo])
	clear(dst[oh1*wo:])
	if wp != wo {
		for oh := oh0; oh < oh1; oh++ {
			r := dst[oh*wo : (oh+1)*wo]
			o := (oh+da)*wp + ow0 + db
			clear(r[:ow0])
			copy(r[ow0:ow1], src[o:o+ow1-ow0])
			clear(r[ow1:])
		}
		return
	}
	// Same width: the valid rows are one shifted contiguous copy; the
	// out-of-range columns (wrapped from the neighbouring rows) are zeroed
	// after, with strided stores rather than memclr calls.
	sh := da*wp + db
	lo, hi := oh0*wo, oh1*wo
	cl, ch := max(lo, -sh), min(hi, len(src)-sh)
	if ch < cl {
		ch = cl
	}
	clear(dst[lo:cl])
	copy(dst[cl:ch], src[cl+sh:ch+sh])
	clear(dst[ch:hi])
	for q := 0; q < ow0; q++ {
		for i := lo + q; i < hi; i += wo {
			dst[i] = 0
		}
	}
	for q := ow1; q < wo; q++ {
		for i := lo + q; i < hi; i += wo {
			dst[i] = 0
		}
	}
}

// col2imAdd is the adjoint of im2col: it adds every valid entry of the
// column matrix into x [C,H,W] at the position im2col read it from.
func col2imAdd[T float32 | float64](g *convGeom, col []T, ld int, x []T) {
	hw := g.h * g.w
	s := g.stride
	row := 0
	for ci := 0; ci < g.c; ci++ {
		xc := x[ci*hw : (ci+1)*hw]
		for a := 0; a < g.kh; a++ {
			oh0, oh1 := validRange(a, g.pad, s, g.h, g.ho)
			for b := 0; b < g.kw; b++ {
				ow0, ow1 := validRange(b, g.pad, s, g.w, g.wo)
				src := col[row*ld : row*ld+g.p()]
				row++
				for oh := oh0; oh < oh1; oh++ {
					r := src[oh*g.wo : (oh+1)*g.wo]
					ih := oh*s - g.pad + a
					xr := xc[ih*g.w : (ih+1)*g.w]
					iw := ow0*s - g.pad + b
					if s == 1 {
						xr = xr[iw : iw+ow1-ow0]
						for j, v := range r[ow0:ow1] {
							xr[j] += v
						}
						continue
					}
					for ow := ow0; ow < ow1; ow++ {
						xr[iw] += r[ow]
						iw += s
					}
				}
			}
		}
	}
}

// convForward computes out [N,O,Ho,Wo] = conv(x, w), one GEMM per image.
func convForward[T float32 | float64](g convGeom, out, x, w []T) {
	K, P := g.k(), g.p()
	xs, ys := g.c*g.h*g.w, g.o*P
	workers := numWorkers(g.n, g.macs())
	if g.pointwise() {
		forEachTask(workers, g.n, func(_, i int) {
			gemmBeta(false, false, g.o, P, g.c, w, g.c, x[i*xs:(i+1)*xs], P, 0, out[i*ys:(i+1)*ys], P)
		})
		return
	}
	if p := winogradPlanFor(&g); p != nil {
		if o32, ok := any(out).([]float32); ok {
			convWinograd(&g, p, o32, any(x).([]float32), any(w).([]float32))
			return
		}
	}
	if tryImplicit(&g, out, x, w) {
		return
	}
	per := K*P + g.planeSize()
	buf := getScratch[T](workers * per)
	defer putScratch(buf)
	forEachTask(workers, g.n, func(wk, i int) {
		c := buf[wk*per : wk*per+K*P]
		im2col(&g, x[i*xs:(i+1)*xs], c, P, buf[wk*per+K*P:(wk+1)*per])
		gemmBeta(false, false, g.o, P, K, w, K, c, P, 0, out[i*ys:(i+1)*ys], P)
	})
}

// convBackwardX computes dx [N,C,H,W] from w and dy [N,O,Ho,Wo].
func convBackwardX[T float32 | float64](g convGeom, dx, w, dy []T) {
	K, P := g.k(), g.p()
	xs, ys := g.c*g.h*g.w, g.o*P
	workers := numWorkers(g.n, g.macs())
	switch {
	case g.pointwise():
		// dX_i = Wᵀ·dY_i.
		forEachTask(workers, g.n, func(_, i int) {
			gemmBeta(true, false, g.c, P, g.o, w, g.c, dy[i*ys:(i+1)*ys], P, 0, dx[i*xs:(i+1)*xs], P)
		})
	case g.stride == 1 && g.kh == g.kw && g.pad <= g.kh-1:
		// dX = conv(dY, rot180(W) with in/out channels swapped), padding
		// KH−1−pad: an im2col of dY and one GEMM per image, no scatter.
		rg := convGeom{n: g.n, c: g.o, h: g.ho, w: g.wo, o: g.c, kh: g.kh, kw: g.kw, stride: 1, pad: g.kh - 1 - g.pad, ho: g.h, wo: g.w, winograd: g.winograd}
		K2, P2, kk := rg.k(), rg.p(), g.kh*g.kw
		plan := implicitPlanFor(&rg)
		wp := winogradPlanFor(&rg)
		colSize := K2 * P2
		if _, f32 := any(w).([]float32); f32 && (plan != nil || wp != nil) {
			colSize = 0 // no column matrix: implicit GEMM or Winograd
		}
		buf := getScratch[T](g.c*K2 + workers*colSize)
		defer putScratch(buf)
		wr := buf[:g.c*K2]
		for o := 0; o < g.o; o++ {
			for c := 0; c < g.c; c++ {
				src := w[o*K+c*kk : o*K+(c+1)*kk]
				dst := wr[c*K2+o*kk : c*K2+(o+1)*kk]
				for j, v := range src {
					dst[kk-1-j] = v
				}
			}
		}
		if dx32, ok := any(dx).([]float32); ok && wp != nil {
			convWinograd(&rg, wp, dx32, any(dy).([]float32), any(wr).([]float32))
			return
		}
		if colSize == 0 {
			// The implicit plan found above: no column matrix.
			convImplicit(&rg, plan, any(dx).([]float32), any(dy).([]float32), any(wr).([]float32))
			return
		}
		cols := buf[g.c*K2:]
		forEachTask(workers, g.n, func(wk, i int) {
			col := cols[wk*K2*P2 : (wk+1)*K2*P2]
			im2col(&rg, dy[i*ys:(i+1)*ys], col, P2, nil)
			gemmBeta(false, false, g.c, P2, K2, wr, K2, col, P2, 0, dx[i*xs:(i+1)*xs], P2)
		})
	default:
		// dcol = Wᵀ·dY_i, then col2im.
		buf := getScratch[T](workers * K * P)
		defer putScratch(buf)
		forEachTask(workers, g.n, func(wk, i int) {
			dcol := buf[wk*K*P : (wk+1)*K*P]
			gemmBeta(true, false, K, P, g.o, w, K, dy[i*ys:(i+1)*ys], P, 0, dcol, P)
			dxi := dx[i*xs : (i+1)*xs]
			clear(dxi)
			col2imAdd(&g, dcol, P, dxi)
		})
	}
}

// convBackwardW computes dw [O,C,KH,KW] = Σ_i dY_i·col(x_i)ᵀ. The images are
// split into min(N, dwChunks) fixed chunks; each chunk's partial sum is
// accumulated image by image and the partials are added in chunk order.
func convBackwardW[T float32 | float64](g convGeom, dw, x, dy []T) {
	if p := winogradPlanFor(&g); p != nil {
		if dw32, ok := any(dw).([]float32); ok {
			convWinogradW(&g, p, dw32, any(x).([]float32), any(dy).([]float32))
			return
		}
	}
	K, P := g.k(), g.p()
	xs, ys, oK := g.c*g.h*g.w, g.o*P, g.o*K
	chunks := min(g.n, dwChunks)
	workers := numWorkers(chunks, g.macs())
	colSize := K*P + g.planeSize()
	plan := dwImplicit[T](&g)
	switch {
	case g.pointwise():
		colSize = 0
	case plan != nil:
		// The padded image instead of its column matrix.
		colSize = plan.size
	}
	buf := getScratch[T](chunks*oK + workers*colSize)
	defer putScratch(buf)
	partial := buf[:chunks*oK]
	if plan != nil {
		clear(buf[chunks*oK:])
	}
	forEachTask(workers, chunks, func(wk, ch int) {
		p := partial[ch*oK : (ch+1)*oK]
		col := buf[chunks*oK+wk*colSize : chunks*oK+(wk+1)*colSize]
		lo, hi := g.n*ch/chunks, g.n*(ch+1)/chunks
		for i := lo; i < hi; i++ {
			beta := T(1)
			if i == lo {
				beta = 0
			}
			xi, dyi := x[i*xs:(i+1)*xs], dy[i*ys:(i+1)*ys]
			if g.pointwise() {
				gemmBeta(false, true, g.o, g.c, P, dyi, P, xi, P, beta, p, g.c)
				continue
			}
			if plan != nil {
				xp := any(col).([]float32)
				plan.fill(&g, any(xi).([]float32), xp)
				igemm.SgemmDotIndirect(g.o, K, P, any(dyi).([]float32), P, xp, plan.offs, plan.chunks, float32(beta), any(p).([]float32), K)
				continue
			}
			im2col(&g, xi, col[:K*P], P, col[K*P:])
			gemmBeta(false, true, g.o, K, P, dyi, P, col, P, beta, p, K)
		}
	})
	copy(dw[:oK], partial[:oK])
	for ch := 1; ch < chunks; ch++ {
		for j, v := range partial[ch*oK : (ch+1)*oK] {
			dw[j] += v
		}
	}
}

// convOp is the forward op of Conv2D: inputs x, w.
type convOp struct {
	gop.Base
	stride, pad int
	noInputGrad bool
	winograd    bool
	out         outBuf
}

// newConvOp returns the op of Conv2D (Tensor-4 a → Tensor-4 a → Tensor-4 a)
// with stride ≥ 1, whose hash includes every option.
func newConvOp(stride, pad int, noInputGrad, winograd bool) *convOp {
	key := fmt.Sprintf("Conv2D{stride=%d,pad=%d,nogradx=%t}", stride, pad, noInputGrad)
	if winograd {
		key = fmt.Sprintf("Conv2D{stride=%d,pad=%d,nogradx=%t,winograd}", stride, pad, noInputGrad)
	}
	return &convOp{Base: gop.New(key, "", 4, 4, 4), stride: stride, pad: pad, noInputGrad: noInputGrad, winograd: winograd}
}

var convArgs = []arg{{"x", 4}, {"w", 4}}

func (op *convOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes("Conv2D", ds, convArgs...)
	if err != nil {
		return nil, err
	}
	g, err := newConvGeom("Conv2D", s[0], s[1], op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	return tensor.Shape(g.yShape()), nil
}

func (op *convOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *convOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs("Conv2D", vals, convArgs...)
	if err != nil {
		return nil, err
	}
	x, w := in[0], in[1]
	g, err := newConvGeom("Conv2D", x.Shape(), w.Shape(), op.stride, op.pad)
	if err != nil {
		return nil, err
	}
	g.winograd = op.winograd
	out, err := outputTensor(&op.out, "Conv2D", prealloc, x.Dtype(), g.yShape(), x, w)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, w, g), nil
}

func (op *convOp) compute(out, x, w *tensor.Dense, g convGeom) *tensor.Dense {
	switch x.Dtype() {
	case tensor.Float32:
		convForward(g, out.Float32s(), x.Float32s(), w.Float32s())
	case tensor.Float64:
		convForward(g, out.Float64s(), x.Float64s(), w.Float64s())
	}
	return out
}

// DiffWRT reports differentiability with respect to x (unless
// NoInputGrad) and w.
func (op *convOp) DiffWRT(inputs int) []bool { return []bool{!op.noInputGrad, true} }

// SymDiff returns dX (nil with NoInputGrad) and dW, each a further op.
func (op *convOp) SymDiff(inputs gorgonia.Nodes, output, grad *gorgonia.Node) (gorgonia.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("ops: Conv2D.SymDiff: got %d inputs, want 2", len(inputs))
	}
	xs, ws := inputs[0].Shape(), inputs[1].Shape()
	if xs.Dims() != 4 || ws.Dims() != 4 {
		return nil, fmt.Errorf("ops: Conv2D.SymDiff: x %v and w %v must be 4-D", xs, ws)
	}
	var dx *gorgonia.Node
	var err error
	if !op.noInputGrad {
		gx := newConvGradXOp(op.stride, op.pad, xs[1], xs[2], xs[3], op.winograd)
		if dx, err = applyOp(gx, inputs[1], grad); err != nil {
			return nil, fmt.Errorf("ops: Conv2D.SymDiff dx: %w", err)
		}
	}
	gw := newConvGradWOp(op.stride, op.pad, ws[2], ws[3], op.winograd)
	dw, err := applyOp(gw, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("ops: Conv2D.SymDiff dw: %w", err)
	}
	return gorgonia.Nodes{dx, dw}, nil
}

// convGradXOp computes dX [N,C,H,W] from w and dY. The input's channel
// count and spatial size are parameters (H is not determined by Ho when
// the stride exceeds 1). It is not itself differentiated.
type convGradXOp struct {
	gop.Base
	stride, pad int
	c, h, w     int
	winograd    bool
	out         outBuf
}

// newConvGradXOp returns a convGradXOp (Tensor-4 a → Tensor-4 a →
// Tensor-4 a) whose hash includes every parameter.
func newConvGradXOp(stride, pad, c, h, w int, winograd bool) *convGradXOp {
	key := fmt.Sprintf("Conv2DGradX{stride=%d,pad=%d,x=%d×%d×%d}", stride, pad, c, h, w)
	if winograd {
		key = fmt.Sprintf("Conv2DGradX{stride=%d,pad=%d,x=%d×%d×%d,winograd}", stride, pad, c, h, w)
	}
	return &convGradXOp{Base: gop.New(key, "", 4, 4, 4), stride: stride, pad: pad, c: c, h: h, w: w, winograd: winograd}
}

var convGradXArgs = []arg{{"w", 4}, {"dy", 4}}

// geom checks w and dy against the op's input size.
func (op *convGradXOp) geom(ws, dys tensor.Shape) (convGeom, error) {
	if dys.Dims() != 4 {
		return convGeom{}, fmt.Errorf("ops: %s: dy must be 4-D, got %v", op.String(), dys)
	}
	g, err := newConvGeom(op.String(), tensor.Shape{dys[0], op.c, op.h, op.w}, ws, op.stride, op.pad)
	if err != nil {
		return g, err
	}
	if !tensor.Shape(g.yShape()).Eq(dys) {
		return g, fmt.Errorf("ops: %s: dy has shape %v, want %v", op.String(), dys, g.yShape())
	}
	return g, nil
}

func (op *convGradXOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, convGradXArgs...)
	if err != nil {
		return nil, err
	}
	g, err := op.geom(s[0], s[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape(g.xShape()), nil
}

func (op *convGradXOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *convGradXOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, convGradXArgs...)
	if err != nil {
		return nil, err
	}
	w, dy := in[0], in[1]
	g, err := op.geom(w.Shape(), dy.Shape())
	if err != nil {
		return nil, err
	}
	g.winograd = op.winograd
	out, err := outputTensor(&op.out, op.String(), prealloc, w.Dtype(), g.xShape(), w, dy)
	if err != nil {
		return nil, err
	}
	return op.compute(out, w, dy, g), nil
}

func (op *convGradXOp) compute(out, w, dy *tensor.Dense, g convGeom) *tensor.Dense {
	switch w.Dtype() {
	case tensor.Float32:
		convBackwardX(g, out.Float32s(), w.Float32s(), dy.Float32s())
	case tensor.Float64:
		convBackwardX(g, out.Float64s(), w.Float64s(), dy.Float64s())
	}
	return out
}

// convGradWOp computes dW [O,C,KH,KW] from x and dY. The kernel size is a
// parameter. It is not itself differentiated.
type convGradWOp struct {
	gop.Base
	stride, pad int
	kh, kw      int
	winograd    bool
	out         outBuf
}

// newConvGradWOp returns a convGradWOp (Tensor-4 a → Tensor-4 a →
// Tensor-4 a) whose hash includes every parameter.
func newConvGradWOp(stride, pad, kh, kw int, winograd bool) *convGradWOp {
	key := fmt.Sprintf("Conv2DGradW{stride=%d,pad=%d,k=%d×%d}", stride, pad, kh, kw)
	if winograd {
		key = fmt.Sprintf("Conv2DGradW{stride=%d,pad=%d,k=%d×%d,winograd}", stride, pad, kh, kw)
	}
	return &convGradWOp{Base: gop.New(key, "", 4, 4, 4), stride: stride, pad: pad, kh: kh, kw: kw, winograd: winograd}
}

var convGradWArgs = []arg{{"x", 4}, {"dy", 4}}

// geom checks x and dy against the op's kernel size.
func (op *convGradWOp) geom(xs, dys tensor.Shape) (convGeom, error) {
	if xs.Dims() != 4 || dys.Dims() != 4 {
		return convGeom{}, fmt.Errorf("ops: %s: x %v and dy %v must be 4-D", op.String(), xs, dys)
	}
	g, err := newConvGeom(op.String(), xs, tensor.Shape{dys[1], xs[1], op.kh, op.kw}, op.stride, op.pad)
	if err != nil {
		return g, err
	}
	if !tensor.Shape(g.yShape()).Eq(dys) {
		return g, fmt.Errorf("ops: %s: dy has shape %v, want %v", op.String(), dys, g.yShape())
	}
	return g, nil
}

func (op *convGradWOp) InferShape(ds ...gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(op.String(), ds, convGradWArgs...)
	if err != nil {
		return nil, err
	}
	g, err := op.geom(s[0], s[1])
	if err != nil {
		return nil, err
	}
	return tensor.Shape(g.wShape()), nil
}

func (op *convGradWOp) Do(vals ...gorgonia.Value) (gorgonia.Value, error) {
	return op.UsePreallocDo(nil, vals...)
}

func (op *convGradWOp) UsePreallocDo(prealloc gorgonia.Value, vals ...gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(op.String(), vals, convGradWArgs...)
	if err != nil {
		return nil, err
	}
	x, dy := in[0], in[1]
	g, err := op.geom(x.Shape(), dy.Shape())
	if err != nil {
		return nil, err
	}
	g.winograd = op.winograd
	out, err := outputTensor(&op.out, op.String(), prealloc, x.Dtype(), g.wShape(), x, dy)
	if err != nil {
		return nil, err
	}
	return op.compute(out, x, dy, g), nil
}

func (op *convGradWOp) compute(out, x, dy *tensor.Dense, g convGeom) *tensor.Dense {
	switch x.Dtype() {
	case tensor.Float32:
		convBackwardW(g, out.Float32s(), x.Float32s(), dy.Float32s())
	case tensor.Float64:
		convBackwardW(g, out.Float64s(), x.Float64s(), dy.Float64s())
	}
	return out
}

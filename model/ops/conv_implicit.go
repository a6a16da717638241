package ops

import (
	"math"
	"sync"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
)

// Implicit GEMM for stride-1 convolutions (float32, AVX-512).
//
// With stride 1, im2col's row for kernel tap (c, a, b) is the image plane c
// shifted by (a−pad, b−pad) with zeros outside, so it need not be written
// out: igemm.SgemmIndirect multiplies the weights by rows read through a
// table of tap offsets, one segment of at most 16 output positions at a
// time, writing straight into the NCHW output. The image is first copied
// into one of two layouts:
//
//   - padded (output rows of whole chunks of 16 columns, e.g. 32 or 16): the
//     zero-padded planes, Hp×Wp with Wp = W + 2·pad. Columns ow..ow+15 of
//     output row oh read tap (c, a, b) at xpad[c·Hp·Wp + (oh+a)·Wp + ow + b]:
//     one copy of the image instead of im2col's KH·KW.
//   - shifted (other widths, e.g. 8 or 28): KW copies of the padded planes,
//     copy b shifted left by b columns and cut to the output width Wo, so
//     that tap (c, a, b) is a contiguous run over all output positions
//     from row a of plane c of copy b: KW copies of the image instead of
//     KH·KW, and segments that cross output rows without waste.
//
// Every output element gets the bits of the im2col path, whose GEMM runs
// the same FMA chain over the same taps in the same k blocks
// (TestConvImplicitMatchesIm2col); the weight gradient likewise through
// igemm.SgemmDotIndirect where the product takes Sgemm's dot path.

// implicitKey is the part of a geometry an implicit plan depends on.
type implicitKey struct{ c, h, w, kh, kw, pad int }

// implicitPlan is the layout, offset table and output segments of one
// geometry.
type implicitPlan struct {
	shifted bool // the shifted layout (else padded)
	hp, wp  int  // plane height and row stride: padded Wp, shifted Wo
	size    int  // floats of one image's layout, with the slack the last segment reads
	offs    []int32
	segs    []igemm.Segment
	// chunks, when the output positions are whole chunks of 16 in the
	// layout, is the offset of each chunk (the weight gradient's indirect
	// dot products); nil otherwise.
	chunks []int32
}

// implicitEnabled lets tests compare the implicit path with im2col.
var implicitEnabled = true

// implicitPlans caches the plans by geometry (a network has a handful).
var implicitPlans sync.Map // implicitKey → *implicitPlan

// implicitPlanFor returns the plan of g, or nil when g does not take the
// implicit path: a stride other than 1, a 1×1 kernel without padding (it
// needs no im2col), offsets beyond int32, or no indirect kernel on this
// machine.
func implicitPlanFor(g *convGeom) *implicitPlan {
	if !implicitEnabled || g.stride != 1 || g.pointwise() || !igemm.HaveIndirect() {
		return nil
	}
	key := implicitKey{g.c, g.h, g.w, g.kh, g.kw, g.pad}
	if p, ok := implicitPlans.Load(key); ok {
		return p.(*implicitPlan)
	}
	p := &implicitPlan{shifted: g.wo%16 != 0, hp: g.h + 2*g.pad, wp: g.w + 2*g.pad}
	copies := 1
	if p.shifted {
		p.wp, copies = g.wo, g.kw
	}
	plane := p.hp * p.wp
	// The last segment reads up to 15 floats past the planes (columns it
	// discards).
	p.size = copies*g.c*plane + 16
	if p.size > math.MaxInt32 {
		return nil
	}
	p.offs = make([]int32, 0, g.k())
	for ci := 0; ci < g.c; ci++ {
		for a := 0; a < g.kh; a++ {
			for b := 0; b < g.kw; b++ {
				if p.shifted {
					p.offs = append(p.offs, int32((b*g.c+ci)*plane+a*p.wp))
				} else {
					p.offs = append(p.offs, int32(ci*plane+a*p.wp+b))
				}
			}
		}
	}
	P := g.p()
	switch {
	case p.shifted:
		for q := 0; q < P; q += 16 {
			p.segs = append(p.segs, igemm.Segment{Off: q, Col: q, N: min(16, P-q)})
			if P%16 == 0 {
				p.chunks = append(p.chunks, int32(q))
			}
		}
	default:
		for oh := 0; oh < g.ho; oh++ {
			for ow := 0; ow < g.wo; ow += 16 {
				p.segs = append(p.segs, igemm.Segment{Off: oh*p.wp + ow, Col: oh*g.wo + ow, N: 16})
				p.chunks = append(p.chunks, int32(oh*p.wp+ow))
			}
		}
	}
	actual, _ := implicitPlans.LoadOrStore(key, p)
	return actual.(*implicitPlan)
}

// fill copies the image x [C,H,W] into the plan's layout xp; what it does
// not write (padding, slack) is left as it is: zero.
func (p *implicitPlan) fill(g *convGeom, x, xp []float32) {
	hw, plane := g.h*g.w, p.hp*p.wp
	if !p.shifted {
		for ci := 0; ci < g.c; ci++ {
			xc := x[ci*hw : (ci+1)*hw]
			base := ci*plane + g.pad*p.wp + g.pad
			for ih := 0; ih < g.h; ih++ {
				copy(xp[base+ih*p.wp:base+ih*p.wp+g.w], xc[ih*g.w:(ih+1)*g.w])
			}
		}
		return
	}
	// Copy b: row ih+pad of plane c holds x[c, ih, ow+b−pad] at column ow,
	// for the columns ow where that lies inside the image.
	for b := 0; b < g.kw; b++ {
		ow0, ow1 := max(0, g.pad-b), min(g.wo, g.w+g.pad-b)
		if ow0 >= ow1 {
			continue
		}
		for ci := 0; ci < g.c; ci++ {
			xc := x[ci*hw : (ci+1)*hw]
			base := (b*g.c+ci)*plane + g.pad*p.wp
			for ih := 0; ih < g.h; ih++ {
				src := xc[ih*g.w+ow0+b-g.pad : ih*g.w+ow1+b-g.pad]
				copy(xp[base+ih*p.wp+ow0:base+ih*p.wp+ow1], src)
			}
		}
	}
}

// convImplicit computes out [N,O,Ho,Wo] = conv(x, w) for a geometry with a
// plan, images split between goroutines as in convForward.
func convImplicit(g *convGeom, p *implicitPlan, out, x, w []float32) {
	K, P := g.k(), g.p()
	xs, ys := g.c*g.h*g.w, g.o*P
	workers := numWorkers(g.n, g.macs())
	buf := getScratch[float32](workers * p.size)
	defer putScratch(buf)
	clear(buf)
	forEachTask(workers, g.n, func(wk, i int) {
		xp := buf[wk*p.size : (wk+1)*p.size]
		p.fill(g, x[i*xs:(i+1)*xs], xp)
		igemm.SgemmIndirect(g.o, K, w, K, xp, p.offs, p.segs, out[i*ys:(i+1)*ys], P)
	})
}

// dwImplicit reports whether convBackwardW takes the implicit path for g:
// float32, a plan with whole chunks, and a product SgemmDotIndirect
// computes.
func dwImplicit[T float32 | float64](g *convGeom) *implicitPlan {
	if _, ok := any(*new(T)).(float32); !ok {
		return nil
	}
	p := implicitPlanFor(g)
	if p == nil || p.chunks == nil || !igemm.DotIndirectApplies(g.o, g.k(), g.p()) {
		return nil
	}
	return p
}

// tryImplicit runs convImplicit when T is float32 and g has a plan, and
// reports whether it did.
func tryImplicit[T float32 | float64](g *convGeom, out, x, w []T) bool {
	o32, ok := any(out).([]float32)
	if !ok {
		return false
	}
	p := implicitPlanFor(g)
	if p == nil {
		return false
	}
	convImplicit(g, p, o32, any(x).([]float32), any(w).([]float32))
	return true
}

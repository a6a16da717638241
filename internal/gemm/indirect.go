package gemm

import (
	"fmt"
	"math"
)

// A Segment is a run of at most 16 consecutive columns of C in
// SgemmIndirect: for j < N, column Col+j of C is computed from the values
// b[offs[l]+Off+j], l < k.
type Segment struct {
	Off, Col, N int
}

// HaveIndirect reports whether SgemmIndirect runs here: with the AVX-512
// micro-kernel, whose loop can read the rows of B through a table of
// offsets. Elsewhere SgemmIndirect does nothing and reports false.
func HaveIndirect() bool { return haveIndirect && level == levelAVX512 && Backend() == "avx512" }

// SgemmIndirect computes C = A·B (alpha 1, beta 0) for a B that is not
// stored as a matrix but read through a table of row offsets: for every
// segment s and j < s.N,
//
//	C[r][s.Col+j] = Σ_{l<k} A[r][l] · b[offs[l]+s.Off+j],  r < m,
//
// A row-major m×k with stride lda, C row-major with stride ldc. A
// convolution with stride 1 is such a product on its zero-padded input
// (offs[l] the offset of kernel tap l, a segment a piece of an output row),
// which spares the column matrix of im2col.
//
// Each element gets the bits Sgemm(false, false, m, n, k, 1, a, lda, B, ldb,
// 0, c, ldc) gives it for the matrix B the table describes: the same FMA
// chain over l, split into the same k blocks. For a segment shorter than 16
// the values b[offs[l]+s.Off+j] with s.N <= j < 16 are read as well (and
// discarded), so they must lie inside b.
//
// SgemmIndirect reports false and does nothing unless HaveIndirect; the
// caller then materialises B and calls Sgemm. Like Sgemm it panics on
// inconsistent arguments (an offset or segment reading outside b, a
// segment longer than 16 or writing outside C), which are programming
// errors.
func SgemmIndirect(m, k int, a []float32, lda int, b []float32, offs []int32, segs []Segment, c []float32, ldc int) bool {
	if !HaveIndirect() {
		return false
	}
	checkIndirect(m, k, a, lda, b, offs, segs, c, ldc)
	if m == 0 || len(segs) == 0 {
		return true
	}
	if k == 0 {
		for _, s := range segs {
			for r := 0; r < m; r++ {
				clear(c[r*ldc+s.Col : r*ldc+s.Col+s.N])
			}
		}
		return true
	}
	ks := &kernelSets[levelAVX512]
	mr := ks.mr
	kc := kBlock(k)
	ws := wsPool.Get().(*workspace)
	pa := aligned(&ws.abuf, min(kc, k)*mr)
	tile := &ws.tile
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		var beta float32
		if pc > 0 {
			beta = 1
		}
		for ir := 0; ir < m; ir += mr {
			mh := min(mr, m-ir)
			ap := pa[:kb*mr]
			packA(ks, false, ap, a, lda, ir, mh, pc, kb)
			for _, s := range segs {
				cs := c[ir*ldc+s.Col:]
				if s.N == 16 {
					kernIndirect(kb, ap, b[s.Off:], offs[pc:], cs, ldc, mh, beta)
					continue
				}
				// A short segment: the whole tile into the scratch tile,
				// then its columns into C (C + T when beta is 1: the one
				// rounding of the kernel's FMA with beta = 1).
				kernIndirect(kb, ap, b[s.Off:], offs[pc:], tile[:], 16, mr, 0)
				for r := 0; r < mh; r++ {
					t := tile[r*16 : r*16+s.N]
					cr := cs[r*ldc : r*ldc+s.N]
					if beta == 0 {
						copy(cr, t)
						continue
					}
					for j, v := range t {
						cr[j] += v
					}
				}
			}
		}
	}
	wsPool.Put(ws)
	return true
}

// checkIndirect panics unless every value SgemmIndirect reads and writes
// lies inside a, b and c.
func checkIndirect(m, k int, a []float32, lda int, b []float32, offs []int32, segs []Segment, c []float32, ldc int) {
	if m < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: SgemmIndirect: negative size m=%d k=%d", m, k))
	}
	if len(offs) < k {
		panic(fmt.Sprintf("gemm: SgemmIndirect: %d offsets for k=%d", len(offs), k))
	}
	checkMatrix("A", m, k, a, lda)
	var lo, hi int64
	if k > 0 {
		lo, hi = int32Range(offs[:k])
	}
	if ldc < 1 {
		panic(fmt.Sprintf("gemm: SgemmIndirect: ldc=%d", ldc))
	}
	for i, s := range segs {
		if s.N < 1 || s.N > 16 || s.Col < 0 || s.Off < 0 {
			panic(fmt.Sprintf("gemm: SgemmIndirect: segment %d is %+v: want 1 <= N <= 16, Col >= 0, Off >= 0", i, s))
		}
		if s.Col+s.N > ldc {
			panic(fmt.Sprintf("gemm: SgemmIndirect: segment %d %+v crosses the row stride ldc=%d", i, s, ldc))
		}
		if m > 0 && (m-1)*ldc+s.Col+s.N > len(c) {
			panic(fmt.Sprintf("gemm: SgemmIndirect: segment %d %+v writes past len(c)=%d (m=%d, ldc=%d)", i, s, len(c), m, ldc))
		}
		if k > 0 && (lo+int64(s.Off) < 0 || hi+int64(s.Off)+16 > int64(len(b))) {
			panic(fmt.Sprintf("gemm: SgemmIndirect: segment %d %+v reads b[%d:%d], len(b)=%d", i, s, lo+int64(s.Off), hi+int64(s.Off)+16, len(b)))
		}
	}
}

// SgemmDotIndirect computes C = A·Bᵀ + beta·C (alpha 1) for an n×k matrix
// B read through row offsets and 16-column chunk offsets:
//
//	B[j][16t+i] = b[boffs[j]+seg[t]+i],  i < 16,
//
// A row-major m×k with stride lda, C m×n with stride ldc. The weight
// gradient of a stride-1 convolution, dW = dY·colᵀ, is such a product on
// the zero-padded input when its output rows are whole chunks of 16.
//
// Each element gets the bits Sgemm(false, true, m, n, k, 1, a, lda, B, k,
// beta, c, ldc) gives it on its dot path (dot.go), which this mirrors. It
// reports false and does nothing unless HaveIndirect, Sgemm would take the
// dot path, and the product has no leftovers for the packed path (m and n
// multiples of 4, k a multiple of 16); the caller then materialises B. It
// panics on offsets reading outside b or a C outside c.
func SgemmDotIndirect(m, n, k int, a []float32, lda int, b []float32, boffs, seg []int32, beta float32, c []float32, ldc int) bool {
	if !DotIndirectApplies(m, n, k) {
		return false
	}
	checkMatrix("A", m, k, a, lda)
	checkMatrix("C", m, n, c, ldc)
	if len(boffs) < n || len(seg) < k/16 {
		panic(fmt.Sprintf("gemm: SgemmDotIndirect: %d row offsets and %d chunk offsets for n=%d, k=%d", len(boffs), len(seg), n, k))
	}
	blo, bhi := int32Range(boffs[:n])
	slo, shi := int32Range(seg[:k/16])
	if blo+slo < 0 || bhi+shi+16 > int64(len(b)) {
		panic(fmt.Sprintf("gemm: SgemmDotIndirect: reads b[%d:%d], len(b)=%d", blo+slo, bhi+shi+16, len(b)))
	}
	dotKBlocks(k, beta, func(p0, kb int, bet float32) {
		for j := 0; j < n; j += dotRowBlk {
			for i := 0; i < m; i += dotRowBlk {
				dotIndirect(kb, a[i*lda+p0:], lda, b, boffs[j:], seg[p0/16:], c[i*ldc+j:], ldc, bet)
			}
		}
	})
	return true
}

// DotIndirectApplies reports whether SgemmDotIndirect computes an m×n×k
// product (rather than declining it).
func DotIndirectApplies(m, n, k int) bool {
	return HaveIndirect() && useDot(false, true, m, n, k) && m%dotRowBlk == 0 && n%dotRowBlk == 0 && k%16 == 0
}

// int32Range returns the least and greatest of xs (not empty).
func int32Range(xs []int32) (lo, hi int64) {
	lo, hi = math.MaxInt64, math.MinInt64
	for _, x := range xs {
		lo, hi = min(lo, int64(x)), max(hi, int64(x))
	}
	return lo, hi
}

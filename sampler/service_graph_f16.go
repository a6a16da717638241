package sampler

// Graph builds from float16 embeddings kept resident as float16: half the
// memory of the float32 rows the other builders hold (0.33 GB instead of
// 0.66 GB at ImageNet scale, N = 1,281,167, d = 128), with the same graph.

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/half"
)

// Float16Embeddings is N×D embeddings held as IEEE 754 half-precision
// values: Bits[i*D+j] is the binary16 encoding of row i, column j (what
// numpy's float16 and torch.half store; internal/npy's ReadFloat16Matrix
// returns it from a .npy file).
type Float16Embeddings struct {
	N, D int
	Bits []uint16
}

// Widen returns the embeddings converted to float32 (exactly: every
// float16 value is a float32 value).
func (e Float16Embeddings) Widen() Embeddings {
	w := Embeddings{N: e.N, D: e.D, Data: make([]float32, len(e.Bits))}
	t := half.Table()
	for i, x := range e.Bits {
		w.Data[i] = t[x]
	}
	return w
}

// BuildGraphRowsFloat16 is BuildGraphRows on float16 embeddings, without
// widening them: the rows stay float16 in e (not modified), each with its
// inverse L2 norm (N float64s), and the builder converts the rows it scores
// to normalised float32 rows in blocks (a block's own rows, then the
// candidates chunk by chunk, into the per-worker buffers the float32 path
// gathers into). The conversion of an element x of a row of squared norm s
// (summed in float64 over the row, in order) is float32(float64(x)·(1/√s)),
// the arithmetic of NormalizeRowsInPlace, so the scores and hence the
// graph are bit for bit those of BuildGraphRows(e.Widen(), ...) — the graph
// the float32 path builds from the same file — whatever the range and
// opt.Workers.
//
// Keeping the raw float16 rows and a float64 inverse norm per row, rather
// than normalising the rows and storing them back as float16, avoids a
// second rounding (to float16 of the normalised values), which would change
// scores by up to about 2⁻¹¹ and reorder near-equal candidates.
//
// Memory: 2·N·D bytes of embeddings (the caller's), 8·N bytes of inverse
// norms, 4·(hi−lo)·K bytes of neighbour table and per-worker scratch (as
// BuildGraphRowsNormalized, plus halfStage staged rows). Time: about that
// of the float32 path; the staged conversion of a block's candidates
// (halfRows.gather, an F16C/AVX kernel on amd64) takes about the time of
// the float32 path's row copies (BenchmarkGather1001).
func BuildGraphRowsFloat16(e Float16Embeddings, kind string, opt GraphOptions, lo, hi int) (*GraphRows, error) {
	if lo < 0 || hi > e.N || lo > hi {
		return nil, fmt.Errorf("sampler: graph rows: range [%d, %d) is not within [0, %d)", lo, hi, e.N)
	}
	h, err := newHalfRows(e)
	if err != nil {
		return nil, fmt.Errorf("sampler: graph rows: %w", err)
	}
	return buildGraphRows(nil, h, e.N, e.D, kind, opt, lo, hi)
}

// halfRows is float16 rows (n×d bits) with the inverse L2 norm of each row
// (0 for a zero row, which stays zero).
type halfRows struct {
	bits []uint16
	inv  []float64
	d    int
}

// newHalfRows checks e (shape, every value finite) and computes the
// inverse norms of its rows.
func newHalfRows(e Float16Embeddings) (*halfRows, error) {
	if e.N <= 0 || e.D <= 0 {
		return nil, fmt.Errorf("embeddings are %d×%d, want N ≥ 1 and D ≥ 1", e.N, e.D)
	}
	if len(e.Bits) != e.N*e.D {
		return nil, fmt.Errorf("embeddings hold %d values, want N·D = %d·%d = %d", len(e.Bits), e.N, e.D, e.N*e.D)
	}
	t := half.Table()
	h := &halfRows{bits: e.Bits, inv: make([]float64, e.N), d: e.D}
	for i := 0; i < e.N; i++ {
		row := e.Bits[i*e.D : (i+1)*e.D]
		var s float64
		for j, x := range row {
			if x&0x7c00 == 0x7c00 { // exponent all ones: Inf or NaN
				return nil, fmt.Errorf("embedding row %d column %d is %v (float16 bits %#04x), want a finite value", i, j, t[x], x)
			}
			v := float64(t[x])
			s += v * v
		}
		if s != 0 {
			h.inv[i] = 1 / math.Sqrt(s)
		}
	}
	return h, nil
}

// row writes row v, normalised, to dst (len d): element j is
// float32(float64(x_j)·inv_v), as NormalizeRowsInPlace computes it on the
// widened row (a zero row gives ±0, its own values); half.ToFloat32Scaled
// (an F16C/AVX kernel on amd64, the same bits) does the conversion.
func (h *halfRows) row(dst []float32, v int) {
	half.ToFloat32Scaled(dst, h.bits[v*h.d:(v+1)*h.d], h.inv[v])
}

// scoreBlockHalf is scoreBlock on float16 rows: the candidate rows (rows
// rowsIdx, or c0..c0+cols−1 when rowsIdx is nil) are converted into bw.p
// (halfRows.gather), then multiplied as scoreBlock multiplies its gathered
// rows.
func scoreBlockHalf(bw *blockWork, h *halfRows, d, rows, c0 int, rowsIdx []int32, cols int) {
	b := bw.p[:cols*d]
	if rowsIdx != nil {
		h.gather(bw, b, rowsIdx)
	} else {
		for j := 0; j < cols; j++ {
			h.row(b[j*d:(j+1)*d], c0+j)
		}
	}
	gemm.SgemmPacked(false, true, rows, cols, d, 1, bw.a[:rows*d], d, b, d, 0, bw.c, bw.ldc)
}

// halfStage is the number of scattered rows halfRows.gather copies before
// converting them.
const halfStage = 64

// gather writes rows idx, normalised, to dst (row j at dst[j·d:]) in
// stages of halfStage rows: the raw rows and their inverse norms are first
// copied into bw's scratch (short independent loads, so that many cache
// and TLB misses are in flight at once, as in the float32 path's row
// copies), then converted from there. Converting straight from the
// scattered rows stalls on each row's misses in turn: it measured 2–3× the
// time of the float32 gather at ImageNet scale (BenchmarkGather1001),
// staged about the same time.
func (h *halfRows) gather(bw *blockWork, dst []float32, idx []int32) {
	d := h.d
	if bw.h16 == nil {
		bw.h16, bw.hinv = make([]uint16, halfStage*d), make([]float64, halfStage)
	}
	for j0 := 0; j0 < len(idx); j0 += halfStage {
		part := idx[j0:min(j0+halfStage, len(idx))]
		for _, v := range part { // the norms are scattered too
			prefetchLines((*byte)(unsafe.Pointer(&h.inv[v])), 1)
		}
		gatherRows(bw.h16[:len(part)*d], h.bits, d, part)
		for j, v := range part {
			bw.hinv[j] = h.inv[v]
		}
		for j := range part {
			half.ToFloat32Scaled(dst[(j0+j)*d:(j0+j+1)*d], bw.h16[j*d:(j+1)*d], bw.hinv[j])
		}
	}
}

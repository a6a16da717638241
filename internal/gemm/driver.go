package gemm

import (
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas/blas32"
)

// Cache-block sizes. The micro-tile (mr×nr) depends on the kernel set in
// use (kernelSet). Every C element is computed by the same sequence of
// operations whatever the caller's split into column blocks at multiples of
// nr or row blocks at multiples of mr (see SgemmParallel): the k blocking
// depends on k alone.
const (
	kcMax  = 384  // largest k block; k is split into equal blocks no larger
	mcMax  = 144  // rows of A packed per block (a multiple of every mr), kept in L2
	ncMax  = 4096 // columns of B packed per block (a multiple of every nr)
	shortK = 64   // k blocks up to this use the rowsOuter loop order
	// directMaxPanels: with at most this many row panels an untransposed B is
	// read in place by the micro-kernel (if it can) instead of being packed.
	directMaxPanels = 4
	cacheL          = 16 // float32s per 64-byte cache line, for buffer alignment
	maxMR           = 16 // largest mr of any kernel set
	maxNR           = 16 // largest nr of any kernel set
)

// Kernel levels, in increasing order of speed; kernelSets[level] is used.
const (
	levelGo     = iota // no micro-kernel: gonum's BLAS (sgemmGonum)
	levelAVX2          // AVX2+FMA 6×16 micro-kernel (amd64)
	levelAVX512        // AVX-512 16×16 micro-kernel (amd64)
)

// useDirectA lets the micro-kernel read full panels of an untransposed A in
// place (kernelSet.directA); tests turn it off to compare with packing.
var useDirectA = true

// level selects the kernel set, bestLevel (the fastest this CPU and build
// support) by default. Tests lower it to exercise every kernel.
var level = bestLevel

// microKernel computes the mr×nr product T = A·B of one packed A panel
// (a[l*mr+r], l < k) and one packed B panel (b[l*nr+j]) and writes
// C[r][j] = alpha·T[r][j] + beta·C[r][j] for r < rows and j < nr, C with row
// stride ldc. C is not read when beta == 0.
type microKernel func(k int, a, b, c []float32, ldc, rows int, alpha, beta float32)

// kernelSet is a micro-kernel with its tile shape. The go set has no
// kernel: at that level Sgemm is gonum's.
type kernelSet struct {
	name   string
	mr, nr int
	kernel microKernel
	// strided, if not nil, is kernel reading B in place (row stride ldb)
	// instead of from a packed panel.
	strided func(k int, a, b []float32, ldb int, c []float32, ldc, rows int, alpha, beta float32)
	// directA, if not nil, is kernel reading a full panel of mr rows of an
	// untransposed A in place (row stride lda) instead of a packed panel,
	// and B with row stride ldb (nr for a packed panel, or B in place).
	directA func(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32)
	// stridedA, if not nil, is kernel reading a transposed A in place: the
	// mr values of step l at a[l*astep] (a full panel), B with row stride
	// ldb (nr for a packed panel, or B in place).
	stridedA func(k int, a []float32, astep int, b []float32, ldb int, c []float32, ldc, rows int, alpha, beta float32)
}

// Tile shape of the AVX2 micro-kernel; also the split granularity of
// SgemmParallel at the go level.
const (
	mr6  = 6
	nr16 = 16
)

func kernels() *kernelSet { return &kernelSets[level] }

// workspace holds the packing buffers of one Sgemm call.
type workspace struct {
	abuf []float32
	bbuf []float32
	tile [maxMR * maxNR]float32 // right-edge micro-tile
}

var wsPool = sync.Pool{New: func() any { return new(workspace) }}

// aligned returns a 64-byte aligned slice of length n backed by *buf,
// growing *buf when needed.
func aligned(buf *[]float32, n int) []float32 {
	if cap(*buf) < n+cacheL {
		*buf = make([]float32, n+cacheL)
	}
	s := (*buf)[:cap(*buf)]
	off := int(uintptr(unsafe.Pointer(&s[0]))%64) / 4
	if off != 0 {
		off = cacheL - off
	}
	return s[off : off+n]
}

// kBlock returns the k block size: k split into ceil(k/kcMax) equal blocks,
// so that no block is a short remainder.
func kBlock(k int) int {
	nb := (k + kcMax - 1) / kcMax
	return (k + nb - 1) / nb
}

// sgemmNative is the blocked Go/assembly implementation of Sgemm, or
// gonum's pure-Go BLAS where no micro-kernel is available.
func sgemmNative(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmNativeWith(useDot(transA, transB, m, n, k), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmNativeWith is sgemmNative with the choice of the dot path (see
// useDot) made by the caller: SgemmParallel makes it once for the whole
// product so that every block computes its elements the same way.
func sgemmNativeWith(dot bool, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 || alpha == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if level == levelGo {
		sgemmGonum(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	if dot && level == levelAVX512 {
		sgemmDot(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	sgemmPacked(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmPacked is the packed (Goto/BLIS) GEMM for m, n, k > 0 and alpha != 0.
func sgemmPacked(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ks := kernels()
	if m <= mr6 && level == levelAVX512 {
		// A 16-row tile would mostly compute padding: take the 6×16 AVX2
		// kernel. Both kernels compute each element by the same FMA sequence,
		// so SgemmParallel's row blocks stay bit-identical.
		ks = &kernelSets[levelAVX2]
	}
	mr, nr := ks.mr, ks.nr
	kc := kBlock(k)
	mc := min(mcMax, roundUp(m, mr))
	nc := min(ncMax, roundUp(n, nr))

	ws := wsPool.Get().(*workspace)
	pa := aligned(&ws.abuf, mc*kc)
	// Loop order inside an mc×kc block of A and a kc×nc block of B:
	//   - columnsOuter (the usual one): one B panel stays in L1 while the A
	//     panels of the block stream past it. With a single mc block each B
	//     panel is used right after packing, so one L1-resident panel buffer
	//     is enough; otherwise the whole kc×nc block is kept.
	//     When B is untransposed and C has at most directMaxPanels row panels,
	//     the kernel reads the B panel in place (direct): packing would cost
	//     about as much as the few kernel calls that use it.
	//   - rowsOuter, for short k (kc <= shortK): one A panel stays in L1 while
	//     the B panels stream past it, so that C, whose traffic dominates,
	//     is written in long row streams instead of nr-column strips.
	rowsOuter := kc <= shortK && n > nr
	panelOnly := m <= mc && !rowsOuter
	direct := !rowsOuter && !transB && m <= directMaxPanels*mr && ks.strided != nil
	// Full row panels of an untransposed A are read in place when every
	// column panel is full (no edge tile needs a packed A); with short k
	// an untransposed B is then read in place too (inPlaceB).
	directA := useDirectA && ks.directA != nil && !transA && n%nr == 0
	// A transposed A's full panels are read in place the same way.
	stridedA := useDirectA && ks.stridedA != nil && transA && n%nr == 0
	inPlaceB := rowsOuter && (directA || stridedA) && !transB && ks.strided != nil
	pb := aligned(&ws.bbuf, kc*nr)
	if !panelOnly {
		pb = aligned(&ws.bbuf, kc*nc)
	}

	tile := &ws.tile
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				// Each panel is packed just before its first use, so that it
				// is still in L1 when the micro-kernel reads it.
				if rowsOuter {
					for ir := 0; ir < mb; ir += mr {
						mh := min(mr, mb-ir)
						dA := directA && mh == mr
						sA := stridedA && mh == mr
						ap := pa[:kb*mr]
						if !dA && !sA {
							packA(ks, transA, ap, a, lda, ic+ir, mh, pc, kb)
						}
						for jr := 0; jr < nb; jr += nr {
							nw := min(nr, nb-jr)
							cp := c[(ic+ir)*ldc+jc+jr:]
							if inPlaceB {
								bo := pc*ldb + jc + jr
								switch {
								case dA:
									ks.directA(kb, a[(ic+ir)*lda+pc:], lda, b[bo:], ldb, cp, ldc, alpha, bet)
								case sA:
									ks.stridedA(kb, a[pc*lda+ic+ir:], lda, b[bo:], ldb, cp, ldc, mh, alpha, bet)
								default:
									ks.strided(kb, ap, b[bo:], ldb, cp, ldc, mh, alpha, bet)
								}
								continue
							}
							bp := pb[jr*kb : (jr+nr)*kb]
							if ic == 0 && ir == 0 {
								packB(ks, transB, bp, b, ldb, pc, kb, jc+jr, nw)
							}
							if dA {
								ks.directA(kb, a[(ic+ir)*lda+pc:], lda, bp, nr, cp, ldc, alpha, bet)
								continue
							}
							if sA {
								ks.stridedA(kb, a[pc*lda+ic+ir:], lda, bp, nr, cp, ldc, mh, alpha, bet)
								continue
							}
							microTile(ks, kb, ap, bp, cp, ldc, mh, nw, alpha, bet, tile)
						}
					}
					continue
				}
				for jr := 0; jr < nb; jr += nr {
					nw := min(nr, nb-jr)
					bp := pb[:kb*nr]
					if !panelOnly {
						bp = pb[jr*kb : (jr+nr)*kb]
					}
					if direct && nw == nr {
						// Few row panels use each B panel: read B in place
						// instead of packing it.
						bo := pc*ldb + jc + jr
						for ir := 0; ir < mb; ir += mr {
							mh := min(mr, mb-ir)
							cp := c[(ic+ir)*ldc+jc+jr:]
							if directA && mh == mr {
								ks.directA(kb, a[(ic+ir)*lda+pc:], lda, b[bo:], ldb, cp, ldc, alpha, bet)
								continue
							}
							if stridedA && mh == mr {
								ks.stridedA(kb, a[pc*lda+ic+ir:], lda, b[bo:], ldb, cp, ldc, mh, alpha, bet)
								continue
							}
							ap := pa[ir*kb : (ir+mr)*kb]
							if jr == 0 {
								packA(ks, transA, ap, a, lda, ic+ir, mh, pc, kb)
							}
							ks.strided(kb, ap, b[bo:], ldb, cp, ldc, mh, alpha, bet)
						}
						continue
					}
					if ic == 0 {
						packB(ks, transB, bp, b, ldb, pc, kb, jc+jr, nw)
					}
					for ir := 0; ir < mb; ir += mr {
						mh := min(mr, mb-ir)
						cp := c[(ic+ir)*ldc+jc+jr:]
						if directA && mh == mr {
							ks.directA(kb, a[(ic+ir)*lda+pc:], lda, bp, nr, cp, ldc, alpha, bet)
							continue
						}
						if stridedA && mh == mr {
							ks.stridedA(kb, a[pc*lda+ic+ir:], lda, bp, nr, cp, ldc, mh, alpha, bet)
							continue
						}
						ap := pa[ir*kb : (ir+mr)*kb]
						if jr == 0 {
							packA(ks, transA, ap, a, lda, ic+ir, mh, pc, kb)
						}
						microTile(ks, kb, ap, bp, cp, ldc, mh, nw, alpha, bet, tile)
					}
				}
			}
		}
	}
	wsPool.Put(ws)
}

// microTile updates the mh×nw block of C at c (stride ldc) with
// alpha·Ap·Bp + beta·C for packed panels ap and bp of length kb. A right-edge
// tile (nw < nr) is computed into the temporary tile and only the columns
// that exist are written back.
func microTile(ks *kernelSet, kb int, ap, bp, c []float32, ldc, mh, nw int, alpha, beta float32, tile *[maxMR * maxNR]float32) {
	if nw == ks.nr {
		ks.kernel(kb, ap, bp, c, ldc, mh, alpha, beta)
		return
	}
	ks.kernel(kb, ap, bp, tile[:], ks.nr, ks.mr, 1, 0)
	edgeUpdate(mh, nw, tile[:], ks.nr, c, ldc, alpha, beta)
}

// edgeUpdate sets C[0:mh][0:nw] = alpha·T + beta·C for a micro-tile T
// (row stride nr), reading C only when beta != 0.
func edgeUpdate(mh, nw int, t []float32, nr int, c []float32, ldc int, alpha, beta float32) {
	for i := 0; i < mh; i++ {
		tr := t[i*nr : i*nr+nw]
		cr := c[i*ldc : i*ldc+nw]
		if beta == 0 {
			for j, v := range tr {
				cr[j] = alpha * v
			}
			continue
		}
		for j, v := range tr {
			cr[j] = alpha*v + beta*cr[j]
		}
	}
}

// roundUp rounds x up to a multiple of q.
func roundUp(x, q int) int { return (x + q - 1) / q * q }

// sgemmGonum is Sgemm through gonum's blas32 (pure Go with gonum's own
// assembly for the vector loops; gonum parallelises large products
// internally).
func sgemmGonum(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb, ar, ac, br, bc := gonumShapes(transA, transB, m, n, k)
	blas32.Gemm(ta, tb, alpha,
		blas32.General{Rows: ar, Cols: ac, Stride: lda, Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: ldb, Data: b},
		beta, blas32.General{Rows: m, Cols: n, Stride: ldc, Data: c})
}

package eval

import (
	"math"
	"runtime"
	"sync"
)

// sqDist serves squared Euclidean distances between rows of one dataset in
// LIBSVM's training form, (‖a‖² + ‖b‖²) − 2⟨a,b⟩, each dot product summed
// sequentially over the dimensions in float64 (as LIBSVM's Kernel::dot).
type sqDist interface {
	// rowInto writes d²(a, idx[k]) into dst[k] for every k.
	rowInto(a int, idx []int, dst []float64)
}

// lazyDist computes distances on demand from the rows.
type lazyDist struct {
	x    []float64 // n × d row-major
	d    int
	norm []float64 // ‖x_i‖², computed with the same loop as the dot products
}

func newLazyDist(x []float64, n, d int) *lazyDist {
	ld := &lazyDist{x: x, d: d, norm: make([]float64, n)}
	for i := 0; i < n; i++ {
		r := x[i*d : (i+1)*d]
		ld.norm[i] = dot64(r, r)
	}
	return ld
}

func (ld *lazyDist) rowInto(a int, idx []int, dst []float64) {
	d := ld.d
	ra := ld.x[a*d : (a+1)*d]
	na := ld.norm[a]
	for k, b := range idx {
		dst[k] = (na + ld.norm[b]) - 2*dot64(ra, ld.x[b*d:(b+1)*d])
	}
}

// denseDist holds the full n × n matrix of training-form squared distances.
type denseDist struct {
	n int
	m []float64
}

// newDenseDist computes all pairwise distances of the n × d rows x with the
// given number of goroutines. The matrix is exactly symmetric: both halves
// come from the same dot product.
func newDenseDist(x []float64, n, d, workers int) *denseDist {
	ld := newLazyDist(x, n, d)
	dd := &denseDist{n: n, m: make([]float64, n*n)}
	if workers < 1 {
		workers = 1
	}
	// xT holds the rows in blocks of eight, transposed (xT[b·8d + t·8 + r]
	// is dimension t of row 8b+r), so that the dot products of one row with
	// eight others run as eight independent sequential sums.
	blocks := n / 8
	xT := make([]float64, blocks*8*d)
	for b := range blocks {
		for r := range 8 {
			row := x[(8*b+r)*d : (8*b+r+1)*d]
			for t, v := range row {
				xT[b*8*d+t*8+r] = v
			}
		}
	}
	// Rows are handed out in an interleaved order so that the triangular
	// workload is balanced.
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dots [8]float64
			for i := range next {
				ri := x[i*d : (i+1)*d]
				ni := ld.norm[i]
				row := dd.m[i*n : (i+1)*n]
				j := 0
				for ; j+8 <= i+1; j += 8 {
					dot64x8(ri, xT[j*d:(j+8)*d], &dots)
					for r, dot := range dots {
						v := (ni + ld.norm[j+r]) - 2*dot
						row[j+r] = v
						dd.m[(j+r)*n+i] = v
					}
				}
				for ; j <= i; j++ {
					v := (ni + ld.norm[j]) - 2*dot64(ri, x[j*d:(j+1)*d])
					row[j] = v
					dd.m[j*n+i] = v
				}
			}
		}()
	}
	wg.Wait()
	return dd
}

func (dd *denseDist) rowInto(a int, idx []int, dst []float64) {
	row := dd.m[a*dd.n : (a+1)*dd.n]
	for k, b := range idx {
		dst[k] = row[b]
	}
}

// dot64x8 sets dots[r] = dot64(a, row r) for eight rows given transposed
// in blk (blk[t·8 + r] is dimension t of row r): eight sequential sums in
// independent chains, each with dot64's order and bits.
func dot64x8(a, blk []float64, dots *[8]float64) {
	blk = blk[:len(a)*8]
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for t, v := range a {
		c := (*[8]float64)(blk[t*8 : t*8+8])
		s0 += v * c[0]
		s1 += v * c[1]
		s2 += v * c[2]
		s3 += v * c[3]
		s4 += v * c[4]
		s5 += v * c[5]
		s6 += v * c[6]
		s7 += v * c[7]
	}
	*dots = [8]float64{s0, s1, s2, s3, s4, s5, s6, s7}
}

// kernelRowDense sets dst[k] = float32(exp(scale·drow[idx[k]])) for every
// k < len(idx), as denseDist.rowInto, expScaledInto and the conversion to
// float32 give it, in one pass (on the vector kernel when the CPU has one).
// Every idx[k] must be a valid index of drow.
func kernelRowDense(dst []float32, drow []float64, idx []int, scale float64) {
	dst = dst[:len(idx)]
	done := 0
	if haveExpKernel {
		done = kernelRowVec(dst, drow, idx, scale)
	}
	for k := done; k < len(idx); k++ {
		dst[k] = float32(math.Exp(scale * drow[idx[k]]))
	}
}

// dot64 is the sequential dot product LIBSVM uses (no reassociation, so that
// results are bit-identical to its Kernel::dot).
func dot64(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// kernelCache serves rows of the RBF kernel matrix of one training set,
// K[o][k] = float32(exp(−γ·d²(idx[o], idx[k]))), computed on first use and
// kept in a least-recently-used cache. Rows are float32 like LIBSVM's Qfloat.
// A kernelCache is used by one goroutine at a time.
type kernelCache struct {
	src     sqDist
	idx     []int // local training index → dataset row
	gamma   float64
	rows    [][]float32
	maxRows int
	nRows   int
	// LRU list over local indices; node l is the sentinel.
	prev, next []int32
	tmp        []float64
	drow       []float64 // scratch for a row of the dense distances
	// arena is scratch for the rows a solver keeps in position order
	// (posRows), shared by the solvers that use the cache in turn.
	arena []float32
}

// posArenaBytes bounds the rows a solver keeps in position order.
const posArenaBytes = 16 << 20

// posArena returns scratch for at least two rows of l values and at most
// posArenaBytes, whole rows only.
func (c *kernelCache) posArena(l int) []float32 {
	rows := max(2, min(l, posArenaBytes/(4*max(l, 1))))
	if cap(c.arena) < rows*l {
		c.arena = make([]float32, rows*l)
	}
	return c.arena[:rows*l]
}

// newKernelCache makes a cache for the training rows idx with a budget of
// cacheBytes (at least two rows are always kept, as in LIBSVM).
func newKernelCache(src sqDist, idx []int, gamma float64, cacheBytes int64) *kernelCache {
	l := len(idx)
	maxRows := l
	if l > 0 {
		per := int64(l) * 4
		if m := cacheBytes / per; m < int64(maxRows) {
			maxRows = int(m)
		}
	}
	if maxRows < 2 {
		maxRows = 2
	}
	c := &kernelCache{
		src: src, idx: idx, gamma: gamma,
		rows: make([][]float32, l), maxRows: maxRows,
		prev: make([]int32, l+1), next: make([]int32, l+1),
		tmp: make([]float64, l),
	}
	c.prev[l], c.next[l] = int32(l), int32(l)
	return c
}

func (c *kernelCache) unlink(o int) {
	p, n := c.prev[o], c.next[o]
	c.next[p] = n
	c.prev[n] = p
}

func (c *kernelCache) pushBack(o int) {
	l := int32(len(c.idx))
	last := c.prev[l]
	c.next[last] = int32(o)
	c.prev[o] = last
	c.next[o] = l
	c.prev[l] = int32(o)
}

// row returns kernel row o (length len(idx)). The slice stays valid until two
// other rows have been requested.
func (c *kernelCache) row(o int) []float32 {
	if r := c.rows[o]; r != nil {
		c.unlink(o)
		c.pushBack(o)
		return r
	}
	var buf []float32
	if c.nRows >= c.maxRows {
		l := len(c.idx)
		old := int(c.next[l])
		c.unlink(old)
		buf = c.rows[old]
		c.rows[old] = nil
		c.nRows--
	} else {
		buf = make([]float32, len(c.idx))
	}
	if dd, ok := c.src.(*denseDist); ok {
		// The row is copied first: a sequential read the hardware
		// prefetches, where the gather's scattered reads of a row not in
		// cache would stall on memory.
		if c.drow == nil {
			c.drow = make([]float64, dd.n)
		}
		copy(c.drow, dd.m[c.idx[o]*dd.n:(c.idx[o]+1)*dd.n])
		kernelRowDense(buf, c.drow, c.idx, -c.gamma)
	} else {
		c.src.rowInto(c.idx[o], c.idx, c.tmp)
		expScaledInto(c.tmp, c.tmp, -c.gamma)
		for k, v := range c.tmp {
			buf[k] = float32(v)
		}
	}
	c.rows[o] = buf
	c.nRows++
	c.pushBack(o)
	return buf
}

func defaultWorkers(w int) int {
	if w > 0 {
		return w
	}
	return runtime.GOMAXPROCS(0)
}

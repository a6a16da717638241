package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// problem is one Sgemm call with its operands, stored with padded strides.
type problem struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
}

// newProblem fills A and B with values in [-1, 1) and C with values in
// [-1, 1) (or NaN when nanC). The stride padding of A and B holds NaN, so a
// kernel that reads outside the matrices poisons its result; the padding of
// C holds a sentinel that must survive.
func newProblem(rng *rand.Rand, transA, transB bool, m, n, k int, alpha, beta float32, nanC bool) *problem {
	p := &problem{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	p.lda, p.ldb, p.ldc = ac+3, bc+5, n+2
	p.a = fill(rng, ar, ac, p.lda, float32(math.NaN()))
	p.b = fill(rng, br, bc, p.ldb, float32(math.NaN()))
	p.c = fill(rng, m, n, p.ldc, sentinel)
	if nanC {
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				p.c[i*p.ldc+j] = float32(math.NaN())
			}
		}
	}
	return p
}

const sentinel = 12345.5

func fill(rng *rand.Rand, rows, cols, ld int, pad float32) []float32 {
	x := make([]float32, max(rows*ld, 1))
	for i := range x {
		x[i] = pad
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			x[i*ld+j] = rng.Float32()*2 - 1
		}
	}
	return x
}

func (p *problem) opA(i, l int) float64 {
	if p.transA {
		return float64(p.a[l*p.lda+i])
	}
	return float64(p.a[i*p.lda+l])
}

func (p *problem) opB(l, j int) float64 {
	if p.transB {
		return float64(p.b[j*p.ldb+l])
	}
	return float64(p.b[l*p.ldb+j])
}

func (p *problem) run(f func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)) []float32 {
	c := append([]float32(nil), p.c...)
	f(p.transA, p.transB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, c, p.ldc)
	return c
}

// check compares got with the float64 triple loop. The tolerance is
// relative to the sum of absolute values of the terms, so cancellation does
// not make it meaninglessly tight.
func (p *problem) check(t *testing.T, name string, got []float32) {
	t.Helper()
	bad := 0
	for i := 0; i < p.m; i++ {
		for j := 0; j < p.n; j++ {
			var s, abs float64
			for l := 0; l < p.k; l++ {
				v := p.opA(i, l) * p.opB(l, j)
				s += v
				abs += math.Abs(v)
			}
			want := float64(p.alpha) * s
			scale := math.Abs(float64(p.alpha)) * abs
			if p.beta != 0 {
				old := float64(p.c[i*p.ldc+j])
				want += float64(p.beta) * old
				scale += math.Abs(float64(p.beta) * old)
			}
			g := float64(got[i*p.ldc+j])
			tol := 1e-5*float64(max(p.k, 1))*scale + 1e-30
			if !(math.Abs(g-want) <= tol) {
				if bad++; bad <= 3 {
					t.Errorf("%s: C[%d][%d] = %v, want %v (tol %.3g)", name, i, j, g, want, tol)
				}
			}
		}
		for j := p.n; j < p.ldc && i*p.ldc+j < len(got); j++ {
			if got[i*p.ldc+j] != sentinel {
				t.Fatalf("%s: padding C[%d][%d] = %v was overwritten", name, i, j, got[i*p.ldc+j])
			}
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d elements wrong in total", name, bad)
	}
}

// kernelPaths runs f once per kernel set this CPU and build support.
func kernelPaths(t *testing.T, f func(t *testing.T)) {
	defer func() { level = bestLevel }()
	for l := levelGo; l <= bestLevel; l++ {
		level = l
		t.Run(kernelSets[l].name, f)
	}
	if bestLevel < levelAVX512 {
		t.Logf("kernel sets above %q unavailable (build or CPU): not tested", kernelSets[bestLevel].name)
	}
}

func transName(ta, tb bool) string {
	s := [2]string{"N", "T"}
	return s[b2i(ta)] + s[b2i(tb)]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSgemmNativeMatchesFloat64(t *testing.T) {
	small := []int{1, 5, 6, 7, 15, 16, 17, 37}
	ks := []int{0, 1, 7, 16, 37, shortK + 9} // short k blocks run rows-outer, longer ones columns-outer
	scalars := []struct{ alpha, beta float32 }{{1, 0}, {1, 1}, {1, 0.3}, {-0.5, 0}, {-0.5, 1}, {-0.5, 0.3}}
	kernelPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, m := range small {
					for _, n := range small {
						for _, k := range ks {
							for _, s := range scalars {
								nanC := s.beta == 0
								p := newProblem(rng, ta, tb, m, n, k, s.alpha, s.beta, nanC)
								name := fmt.Sprintf("%s m=%d n=%d k=%d alpha=%g beta=%g", transName(ta, tb), m, n, k, s.alpha, s.beta)
								p.check(t, name, p.run(sgemmNative))
							}
						}
					}
				}
			}
		}
	})
}

// TestSgemmNativeLarge covers the cache blocking: m beyond one mc block, k
// split into several kc blocks, n beyond one nc block, and sizes 300.
func TestSgemmNativeLarge(t *testing.T) {
	cases := []struct{ m, n, k int }{
		{300, 300, 300},
		{mcMax + 7, 37, kcMax*2 + 5},
		{17, ncMax + 21, 9},
		{6, 16, kcMax + 1},
		{mcMax + 7, 100, 40}, // rows-outer order with several mc blocks
	}
	kernelPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, tc := range cases {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, s := range []struct{ alpha, beta float32 }{{1, 0}, {-0.5, 0.3}} {
						p := newProblem(rng, ta, tb, tc.m, tc.n, tc.k, s.alpha, s.beta, s.beta == 0)
						name := fmt.Sprintf("%s m=%d n=%d k=%d alpha=%g beta=%g", transName(ta, tb), tc.m, tc.n, tc.k, s.alpha, s.beta)
						p.check(t, name, p.run(sgemmNative))
					}
				}
			}
		}
	})
}

// TestSgemmDotPath covers the dot path for A·Bᵀ with few rows (AVX-512):
// k with a masked tail, k in several blocks, and leftover rows and columns
// that go through the packed path.
func TestSgemmDotPath(t *testing.T) {
	if !haveDot || bestLevel < levelAVX512 {
		t.Skipf("dot path needs AVX-512; backend %q", Backend())
	}
	cases := []struct{ m, n, k int }{
		{4, 4, dotMinK}, {16, 144, 2*kcDotMax + 37}, {7, 9, 130}, {dotMaxM, 22, 517}, {5, 4, 1000}, {4, 7, 200},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range cases {
		if !useDot(false, true, tc.m, tc.n, tc.k) {
			t.Fatalf("m=%d n=%d k=%d does not take the dot path", tc.m, tc.n, tc.k)
		}
		for _, s := range []struct{ alpha, beta float32 }{{1, 0}, {-0.5, 0.3}, {1, 1}} {
			p := newProblem(rng, false, true, tc.m, tc.n, tc.k, s.alpha, s.beta, s.beta == 0)
			p.check(t, fmt.Sprintf("dot m=%d n=%d k=%d alpha=%g beta=%g", tc.m, tc.n, tc.k, s.alpha, s.beta), p.run(sgemmNative))
		}
	}
}

// TestSgemmAlphaZero checks that alpha == 0 scales C by beta without
// reading A or B (they hold NaN).
func TestSgemmAlphaZero(t *testing.T) {
	for _, beta := range []float32{0, 1, 0.3} {
		m, n, k := 7, 19, 5
		a := make([]float32, m*k)
		b := make([]float32, k*n)
		for i := range a {
			a[i] = float32(math.NaN())
		}
		for i := range b {
			b[i] = float32(math.NaN())
		}
		c := make([]float32, m*n)
		for i := range c {
			c[i] = float32(i)
			if beta == 0 {
				c[i] = float32(math.NaN())
			}
		}
		Sgemm(false, false, m, n, k, 0, a, k, b, n, beta, c, n)
		for i, v := range c {
			want := beta * float32(i)
			if beta == 0 {
				want = 0
			}
			if v != want {
				t.Fatalf("beta=%g: C[%d] = %v, want %v", beta, i, v, want)
			}
		}
	}
}

// TestSgemmMatchesFloat64 checks the exported entry point, whatever backend
// the build selected (native or OpenBLAS).
func TestSgemmMatchesFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {7, 17, 0}, {37, 15, 300}, {16, 144, 100}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, s := range []struct{ alpha, beta float32 }{{1, 0}, {-0.5, 1}, {1, 0.3}} {
					p := newProblem(rng, ta, tb, tc.m, tc.n, tc.k, s.alpha, s.beta, s.beta == 0)
					name := fmt.Sprintf("%s %s m=%d n=%d k=%d alpha=%g beta=%g", Backend(), transName(ta, tb), tc.m, tc.n, tc.k, s.alpha, s.beta)
					p.check(t, name, p.run(Sgemm))
				}
			}
		}
	}
}

// TestSgemmParallelBitIdentical checks that SgemmParallel gives exactly
// Sgemm's bits with the native backends, whatever the number of workers and
// split direction. OpenBLAS makes no such promise: in the openblas build the
// split results are only checked against the float64 reference.
func TestSgemmParallelBitIdentical(t *testing.T) {
	defer func(v int) { parallelMin = v }(parallelMin)
	parallelMin = 1
	cases := []struct{ m, n, k int }{
		{16, 1024, 144}, {16, 144, 1500}, {30, 61, 300}, {144, 64, 16}, {300, 7, 37}, {5, 300, 37}, {37, 37, kcMax + 50}, {200, 17, 3}, {mcMax + 20, 40, 100},
		{20, 7, 300}, // with 16-row tiles the last row block has 4 rows and takes the 6×16 kernel
	}
	exact := Backend() != "openblas"
	kernelPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, tc := range cases {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					p := newProblem(rng, ta, tb, tc.m, tc.n, tc.k, -0.5, 0.3, false)
					want := p.run(Sgemm)
					for _, w := range []int{2, 3, 4, 7} {
						got := p.run(func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
							SgemmParallel(w, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
						})
						name := fmt.Sprintf("%s %s m=%d n=%d k=%d workers=%d", Backend(), transName(ta, tb), tc.m, tc.n, tc.k, w)
						if !exact {
							p.check(t, name, got)
							continue
						}
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%s: C[%d] = %v, Sgemm gave %v", name, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	})
}

func TestSgemmDoesNotAllocate(t *testing.T) {
	if Backend() == "go" {
		t.Skip("the go backend is gonum's BLAS, which allocates per call")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, tc := range []struct {
		ta, tb  bool
		m, n, k int
	}{
		{false, true, 64, 200, 500},   // dot path (AVX-512)
		{false, false, 30, 203, 300},  // B read in place (AVX-512)
		{true, true, 200, 203, 500},   // packed, several k blocks
		{true, false, 150, 1000, 30},  // packed, rows-outer order
		{false, false, 301, 17, 1000}, // packed, several mc blocks
	} {
		p := newProblem(rng, tc.ta, tc.tb, tc.m, tc.n, tc.k, 1, 0, false)
		c := append([]float32(nil), p.c...)
		allocs := testing.AllocsPerRun(10, func() {
			Sgemm(p.transA, p.transB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, c, p.ldc)
		})
		if allocs != 0 {
			t.Errorf("%s m=%d n=%d k=%d: Sgemm allocated %v times per call in steady state, want 0", transName(tc.ta, tc.tb), tc.m, tc.n, tc.k, allocs)
		}
	}
}

func TestSgemmPanicsOnBadArguments(t *testing.T) {
	x := make([]float32, 12)
	cases := []struct {
		name string
		f    func()
	}{
		{"negative m", func() { Sgemm(false, false, -1, 2, 2, 1, x, 2, x, 2, 0, x, 2) }},
		{"lda too small", func() { Sgemm(false, false, 2, 2, 3, 1, x, 2, x, 2, 0, x, 2) }},
		{"transposed lda too small", func() { Sgemm(true, false, 3, 2, 2, 1, x, 2, x, 2, 0, x, 2) }},
		{"b too short", func() { Sgemm(false, false, 2, 2, 3, 1, x, 3, x[:5], 2, 0, x, 2) }},
		{"c too short", func() { Sgemm(false, false, 3, 4, 1, 1, x, 1, x, 4, 0, x[:11], 4) }},
	}
	for _, tc := range cases {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Sgemm did not panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// TestSgemmPacked checks SgemmPacked against the float64 product, and that
// each element comes out with the same bits whatever block of rows or
// columns of the product a call computes, including the thin A·Bᵀ shapes
// for which Sgemm takes the dot path.
func TestSgemmPacked(t *testing.T) {
	kernelPaths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, tc := range []struct{ m, n, k int }{{1, 1, 1}, {7, 33, 17}, {62, 1001, 128}, {64, 200, 517}, {5, 40, 300}} {
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, s := range []struct{ alpha, beta float32 }{{1, 0}, {-0.5, 0.3}} {
						p := newProblem(rng, ta, tb, tc.m, tc.n, tc.k, s.alpha, s.beta, s.beta == 0)
						p.check(t, fmt.Sprintf("%s m=%d n=%d k=%d alpha=%g beta=%g", transName(ta, tb), tc.m, tc.n, tc.k, s.alpha, s.beta), p.run(SgemmPacked))
					}
				}
			}
			if level == levelGo {
				continue // gonum: no promise about blocks
			}
			// A·Bᵀ by blocks of rows (1, 4, 5 rows) and of 16 columns.
			p := newProblem(rng, false, true, tc.m, tc.n, tc.k, 1, 0, true)
			full := p.run(SgemmPacked)
			for _, rows := range []int{1, 4, 5} {
				c := append([]float32(nil), p.c...)
				for i0 := 0; i0 < tc.m; i0 += rows {
					mb := min(rows, tc.m-i0)
					SgemmPacked(false, true, mb, tc.n, tc.k, 1, p.a[i0*p.lda:], p.lda, p.b, p.ldb, 0, c[i0*p.ldc:], p.ldc)
				}
				for i := range c {
					if math.Float32bits(c[i]) != math.Float32bits(full[i]) {
						t.Fatalf("m=%d n=%d k=%d in blocks of %d rows: C[%d][%d] = %v, full product %v", tc.m, tc.n, tc.k, rows, i/p.ldc, i%p.ldc, c[i], full[i])
					}
				}
			}
			c := append([]float32(nil), p.c...)
			for j0 := 0; j0 < tc.n; j0 += nr16 {
				nb := min(nr16, tc.n-j0)
				SgemmPacked(false, true, tc.m, nb, tc.k, 1, p.a, p.lda, p.b[j0*p.ldb:], p.ldb, 0, c[j0:], p.ldc)
			}
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(full[i]) {
					t.Fatalf("m=%d n=%d k=%d in blocks of 16 columns: C[%d][%d] = %v, full product %v", tc.m, tc.n, tc.k, i/p.ldc, i%p.ldc, c[i], full[i])
				}
			}
			if !useDot(false, true, tc.m, tc.n, tc.k) {
				if got := p.run(Sgemm); !slices.Equal(got, full) {
					t.Errorf("m=%d n=%d k=%d: Sgemm (no dot path) and SgemmPacked differ", tc.m, tc.n, tc.k)
				}
			}
		}
	})
}

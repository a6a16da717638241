package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// indirectCase is a random SgemmIndirect problem: the offsets table, the
// segments and the matrix B they describe, materialised for Sgemm.
type indirectCase struct {
	m, k, n int
	a       []float32
	b       []float32
	offs    []int32
	segs    []Segment
	bm      []float32 // k×n: bm[l*n+col] = b[offs[l]+Off+j]
}

func newIndirectCase(rng *rand.Rand, m, k int, widths []int) *indirectCase {
	tc := &indirectCase{m: m, k: k}
	tc.a = make([]float32, m*k)
	for i := range tc.a {
		tc.a[i] = float32(rng.NormFloat64())
	}
	tc.b = make([]float32, 4096)
	for i := range tc.b {
		tc.b[i] = float32(rng.NormFloat64())
	}
	tc.offs = make([]int32, k)
	for l := range tc.offs {
		tc.offs[l] = int32(rng.IntN(1500)) // repeats and any order
	}
	for _, w := range widths {
		tc.segs = append(tc.segs, Segment{Off: rng.IntN(2000), Col: tc.n, N: w})
		tc.n += w
	}
	tc.bm = make([]float32, k*tc.n)
	for l := 0; l < k; l++ {
		for _, s := range tc.segs {
			for j := 0; j < s.N; j++ {
				tc.bm[l*tc.n+s.Col+j] = tc.b[int(tc.offs[l])+s.Off+j]
			}
		}
	}
	return tc
}

// TestSgemmIndirectMatchesSgemm checks SgemmIndirect bit for bit against
// Sgemm on the materialised B (short segments, several row panels, several
// k blocks), and both against a float64 loop.
func TestSgemmIndirectMatchesSgemm(t *testing.T) {
	if !HaveIndirect() {
		t.Skipf("no indirect kernel with the %s backend", Backend())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 5, 16, 17, 40} {
		for _, k := range []int{1, 3, 27, 144, 385, 800} {
			for _, widths := range [][]int{{16}, {16, 16, 7}, {3, 16, 1, 16, 12}} {
				tc := newIndirectCase(rng, m, k, widths)
				name := fmt.Sprintf("m%d_k%d_w%v", m, k, widths)
				want := make([]float32, m*tc.n)
				for i := range want {
					want[i] = float32(math.NaN()) // beta 0: never read
				}
				Sgemm(false, false, m, tc.n, k, 1, tc.a, k, tc.bm, tc.n, 0, want, tc.n)
				got := make([]float32, m*tc.n)
				for i := range got {
					got[i] = float32(math.NaN())
				}
				if !SgemmIndirect(m, k, tc.a, k, tc.b, tc.offs, tc.segs, got, tc.n) {
					t.Fatalf("%s: SgemmIndirect reported false with HaveIndirect", name)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: C[%d][%d] = %v, Sgemm %v", name, i/tc.n, i%tc.n, got[i], want[i])
					}
				}
				for r := 0; r < m; r++ {
					for col := 0; col < tc.n; col++ {
						var s float64
						for l := 0; l < k; l++ {
							s += float64(tc.a[r*k+l]) * float64(tc.bm[l*tc.n+col])
						}
						if d := math.Abs(float64(got[r*tc.n+col]) - s); d > 1e-4*float64(k) {
							t.Fatalf("%s: C[%d][%d] = %v, float64 %v", name, r, col, got[r*tc.n+col], s)
						}
					}
				}
			}
		}
	}
}

// TestSgemmIndirectOtherLevels: without the AVX-512 kernel SgemmIndirect
// reports false and leaves C alone.
func TestSgemmIndirectOtherLevels(t *testing.T) {
	defer func() { level = bestLevel }()
	tc := newIndirectCase(rand.New(rand.NewPCG(5, 6)), 4, 9, []int{16})
	for _, l := range []int{levelGo, levelAVX2} {
		if l >= len(kernelSets) {
			continue
		}
		level = l
		c := make([]float32, 4*tc.n)
		if SgemmIndirect(4, 9, tc.a, 9, tc.b, tc.offs, tc.segs, c, tc.n) {
			t.Fatalf("level %s: SgemmIndirect reported true", kernelSets[l].name)
		}
		for _, v := range c {
			if v != 0 {
				t.Fatalf("level %s: C written", kernelSets[l].name)
			}
		}
	}
}

// TestSgemmIndirectPanicsOnBadArguments checks the messages of the
// programming errors SgemmIndirect refuses.
func TestSgemmIndirectPanicsOnBadArguments(t *testing.T) {
	if !HaveIndirect() {
		t.Skipf("no indirect kernel with the %s backend", Backend())
	}
	a := make([]float32, 4*3)
	b := make([]float32, 40)
	c := make([]float32, 4*16)
	offs := []int32{0, 1, 2}
	for _, tc := range []struct {
		name string
		offs []int32
		segs []Segment
		want string
	}{
		{"read past b", []int32{0, 30, 2}, []Segment{{0, 0, 16}}, "reads b[0:46]"},
		{"negative offset", []int32{0, -1, 2}, []Segment{{0, 0, 16}}, "reads b[-1:"},
		{"segment too long", offs, []Segment{{0, 0, 17}}, "want 1 <= N <= 16"},
		{"crosses ldc", offs, []Segment{{0, 8, 16}}, "crosses the row stride"},
		{"few offsets", offs[:2], []Segment{{0, 0, 16}}, "2 offsets for k=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Fatalf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			SgemmIndirect(4, 3, a, 3, b, tc.offs, tc.segs, c, 16)
		})
	}
}

// TestSgemmDotIndirectMatchesSgemm checks SgemmDotIndirect bit for bit
// against Sgemm's dot path on the materialised B (one and several k
// blocks, beta 0, 1 and ½), and that it declines the products Sgemm would
// not compute on its dot path alone.
func TestSgemmDotIndirectMatchesSgemm(t *testing.T) {
	if !HaveIndirect() {
		t.Skipf("no indirect kernel with the %s backend", Backend())
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for _, m := range []int{4, 16, 64} {
		for _, n := range []int{4, 144, 36} {
			for _, k := range []int{128, 1024, 1040, 2080} {
				for _, beta := range []float32{0, 1, 0.5} {
					name := fmt.Sprintf("m%d_n%d_k%d_beta%v", m, n, k, beta)
					a := make([]float32, m*k)
					for i := range a {
						a[i] = float32(rng.NormFloat64())
					}
					b := make([]float32, 6000)
					for i := range b {
						b[i] = float32(rng.NormFloat64())
					}
					boffs := make([]int32, n)
					for j := range boffs {
						boffs[j] = int32(rng.IntN(3000))
					}
					seg := make([]int32, k/16)
					for t := range seg {
						seg[t] = int32(rng.IntN(2900))
					}
					bm := make([]float32, n*k)
					for j := 0; j < n; j++ {
						for l := 0; l < k; l++ {
							bm[j*k+l] = b[int(boffs[j])+int(seg[l/16])+l%16]
						}
					}
					c0 := make([]float32, m*n)
					for i := range c0 {
						c0[i] = float32(rng.NormFloat64())
					}
					want := append([]float32(nil), c0...)
					Sgemm(false, true, m, n, k, 1, a, k, bm, k, beta, want, n)
					got := append([]float32(nil), c0...)
					if !SgemmDotIndirect(m, n, k, a, k, b, boffs, seg, beta, got, n) {
						t.Fatalf("%s: declined", name)
					}
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: C[%d][%d] = %v, Sgemm %v", name, i/n, i%n, got[i], want[i])
						}
					}
				}
			}
		}
	}
	b := make([]float32, 4096)
	for _, tc := range []struct{ m, n, k int }{{3, 8, 128}, {68, 8, 128}, {8, 6, 128}, {8, 8, 112}, {8, 8, 136}} {
		a, c := make([]float32, tc.m*tc.k), make([]float32, tc.m*tc.n)
		if SgemmDotIndirect(tc.m, tc.n, tc.k, a, tc.k, b, make([]int32, tc.n), make([]int32, tc.k/16+1), 0, c, tc.n) {
			t.Errorf("m=%d n=%d k=%d: not declined", tc.m, tc.n, tc.k)
		}
	}
}

// TestSgemmDirectAMatchesPacked: reading full row panels of A in place
// (rows of an untransposed A, steps of a transposed one; with short k an
// untransposed B too) gives the bits of packing them, on both loop orders (k ≤ 64 and k > 64), with B
// untransposed and transposed, partial row panels, several k blocks and
// alpha, beta other than 1.
func TestSgemmDirectAMatchesPacked(t *testing.T) {
	if Backend() != "avx512" {
		t.Skipf("no direct-A kernel with the %s backend", Backend())
	}
	defer func() { useDirectA = true }()
	rng := rand.New(rand.NewPCG(11, 12))
	for _, transA := range []bool{false, true} {
		for _, transB := range []bool{false, true} {
			for _, m := range []int{16, 40, 64, 200} {
				for _, n := range []int{16, 32, 48, 200} {
					for _, k := range []int{1, 5, 32, 37, 64, 65, 400, 800} {
						for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, 0.25}} {
							p := newProblem(rng, transA, transB, m, n, k, ab[0], ab[1], ab[1] == 0)
							useDirectA = false
							want := p.run(Sgemm)
							useDirectA = true
							got := p.run(Sgemm)
							for i := range want {
								if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
									t.Fatalf("transA=%t transB=%t m=%d n=%d k=%d alpha,beta=%v: C[%d] = %v in place, %v packed", transA, transB, m, n, k, ab, i, got[i], want[i])
								}
							}
							p.check(t, fmt.Sprintf("direct A transA=%t transB=%t m%d n%d k%d", transA, transB, m, n, k), got)
						}
					}
				}
			}
		}
	}
}

package data

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomGraph returns a graph of n nodes with about m edges drawn at
// random, including (sometimes) self-loops, duplicated edges and isolated
// nodes.
func randomGraph(rng *rand.Rand, n, m int) *Graph {
	g := &Graph{NumNodes: n}
	for range m {
		u, v := int32(rng.IntN(n)), int32(rng.IntN(n))
		if u > v {
			u, v = v, u
		}
		g.Edges = append(g.Edges, [2]int32{u, v})
		if rng.IntN(8) == 0 {
			g.Edges = append(g.Edges, [2]int32{u, v}) // a duplicate
		}
	}
	return g
}

// refDiffusion is MVGRL's compute_ppr in dense float64, written
// independently of the package: A (0/1, with self-loops on the diagonal),
// Ã = A + I, Â = D^-½ÃD^-½, S = α·inv(I − (1−α)Â) by LU.
func refDiffusion(t *testing.T, g *Graph, alpha float64) (ahat, s *mat.Dense) {
	t.Helper()
	n := g.NumNodes
	a := mat.NewDense(n, n, nil)
	for _, e := range g.Edges {
		a.Set(int(e[0]), int(e[1]), 1)
		a.Set(int(e[1]), int(e[0]), 1)
	}
	for v := 0; v < n; v++ {
		a.Set(v, v, a.At(v, v)+1)
	}
	ahat = mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			di, dj := mat.Sum(a.RowView(i)), mat.Sum(a.RowView(j))
			ahat.Set(i, j, a.At(i, j)/math.Sqrt(di*dj))
		}
	}
	m := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := -(1 - alpha) * ahat.At(i, j)
			if i == j {
				v++
			}
			m.Set(i, j, v)
		}
	}
	s = mat.NewDense(n, n, nil)
	if err := s.Inverse(m); err != nil {
		t.Fatal(err)
	}
	s.Scale(alpha, s)
	return ahat, s
}

// maxDiff returns the largest |got − want| over a dense N×N matrix.
func maxDiff(got []float64, want *mat.Dense) float64 {
	n, _ := want.Dims()
	d := 0.0
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			d = math.Max(d, math.Abs(got[i*n+j]-want.At(i, j)))
		}
	}
	return d
}

func TestNormalizedAdjacency(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 5, 17} {
		g := randomGraph(rng, n, 2*n)
		got, err := NormalizedAdjacency(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Validate(); err != nil {
			t.Fatal(err)
		}
		want, _ := refDiffusion(t, g, 0.2)
		if d := maxDiff(got.Dense(), want); d > 1e-14 {
			t.Errorf("n=%d: Â differs from the dense formula by %g", n, d)
		}
	}
	if _, err := NormalizedAdjacency(nil); err == nil {
		t.Error("nil graph: want an error")
	}
	if _, err := NormalizedAdjacency(&Graph{NumNodes: 2, Edges: [][2]int32{{0, 2}}}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("edge out of range: err = %v", err)
	}
}

// TestPPRDiffusionPaths compares both computations of S with a dense LU
// inverse: the exact (Cholesky) path to 1e-10, the truncated series within
// its tolerance, on random graphs with isolated nodes, self-loops and
// several components.
func TestPPRDiffusionPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ n, m int }{{1, 0}, {2, 1}, {6, 4}, {12, 30}, {30, 40}, {40, 200}} {
		for _, alpha := range []float64{0.2, 0.05, 0.7} {
			g := randomGraph(rng, tc.n, tc.m)
			_, want := refDiffusion(t, g, alpha)
			for _, p := range []struct {
				name string
				opt  DiffusionOptions
				tol  float64
			}{
				{"exact", DiffusionOptions{Alpha: alpha, Eps: -1}, 1e-10},
				{"series", DiffusionOptions{Alpha: alpha, Eps: -1, ExactMaxNodes: -1}, DefaultSeriesTol},
				{"series-loose", DiffusionOptions{Alpha: alpha, Eps: -1, ExactMaxNodes: -1, SeriesTol: 1e-3}, 1e-3},
			} {
				t.Run(fmt.Sprintf("n%d-m%d-a%g-%s", tc.n, tc.m, alpha, p.name), func(t *testing.T) {
					s, err := PPRDiffusion(g, p.opt)
					if err != nil {
						t.Fatal(err)
					}
					if err := s.Validate(); err != nil {
						t.Fatal(err)
					}
					if d := maxDiff(s.Dense(), want); d > p.tol {
						t.Errorf("max |S − S_ref| = %g, want <= %g", d, p.tol)
					}
				})
			}
		}
	}
}

// TestPPRDiffusionSeriesLargeGraph checks the series on a graph above the
// default exact size against the exact path.
func TestPPRDiffusionSeriesLargeGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := randomGraph(rng, 400, 900)
	exact, err := PPRDiffusion(g, DiffusionOptions{Eps: -1, ExactMaxNodes: 400})
	if err != nil {
		t.Fatal(err)
	}
	series, err := PPRDiffusion(g, DiffusionOptions{Eps: -1, ExactMaxNodes: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, s := exact.Dense(), series.Dense()
	for i := range e {
		if d := math.Abs(e[i] - s[i]); d > DefaultSeriesTol {
			t.Fatalf("entry (%d, %d): series %v, exact %v (diff %g)", i/400, i%400, s[i], e[i], d)
		}
	}
}

// TestPPRDiffusionDenseGraph: a dense graph above ExactMaxNodes (as
// COLLAB's) gets the exact inverse, where the series would cost more, and
// its sparsified rows are those of a dense float64 reference; the series,
// forced, agrees within its tolerance.
func TestPPRDiffusionDenseGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 300
	g := randomGraph(rng, n, 30*n)
	a, err := NormalizedAdjacency(g)
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := DiffusionOptions{}.withDefaults()
	if !useExact(a, opt) {
		t.Fatalf("a %d-node graph with %d entries in Â: the series (%d terms) chosen over the inverse", n, a.NNZ(), seriesTerms(opt.Alpha, opt.SeriesTol))
	}
	_, want := refDiffusion(t, g, DefaultPPRAlpha)
	s, err := PPRDiffusion(g, DiffusionOptions{Eps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(s.Dense(), want); d > 1e-10 {
		t.Errorf("max |S − S_ref| = %g, want <= 1e-10 (the exact path)", d)
	}
	series, err := PPRDiffusion(g, DiffusionOptions{Eps: -1, ExactMaxNodes: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := maxDiff(series.Dense(), want)
	if d > DefaultSeriesTol {
		t.Errorf("series: max |S − S_ref| = %g, want <= %g", d, DefaultSeriesTol)
	}
	t.Logf("series: max |S − S_ref| = %g (the exact path: <= 1e-10)", d)
	// Sparsified on the fly: each row keeps the top_k largest entries of
	// the reference that reach eps, with their values.
	for _, k := range []int{1, 16, 64, n} {
		s, err := PPRDiffusion(g, DiffusionOptions{TopK: k})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if c := cap(s.Col); c > s.NNZ()+s.NNZ()/8 {
			t.Errorf("top_k %d: %d entries held in a capacity of %d", k, s.NNZ(), c)
		}
		for i := 0; i < n; i++ {
			var ref []entry
			for j := 0; j < n; j++ {
				if v := want.At(i, j); v >= DefaultDiffusionEps {
					ref = append(ref, entry{int32(j), v})
				}
			}
			slices.SortStableFunc(ref, func(p, q entry) int { return -cmpFloat(p.val, q.val) })
			ref = ref[:min(k, len(ref))]
			lo, hi := s.RowPtr[i], s.RowPtr[i+1]
			if int(hi-lo) != len(ref) {
				t.Fatalf("top_k %d, row %d: %d entries, want %d", k, i, hi-lo, len(ref))
			}
			// The k-th largest value bounds the kept ones (ties aside).
			kth := ref[len(ref)-1].val
			for p := lo; p < hi; p++ {
				c, v := int(s.Col[p]), s.Val[p]
				if math.Abs(v-want.At(i, c)) > 1e-10 || v < kth-1e-10 {
					t.Fatalf("top_k %d, row %d: kept (%d, %v); reference %v, k-th largest %v", k, i, c, v, want.At(i, c), kth)
				}
			}
		}
	}
}

// cmpFloat orders float64s (no NaN).
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestUseExact: the series for sparse large graphs, for graphs above
// DenseMaxNodes and whenever ExactMaxNodes is negative; the inverse up to
// ExactMaxNodes and for dense graphs where the series would cost more.
func TestUseExact(t *testing.T) {
	opt, _ := DiffusionOptions{}.withDefaults()
	square := func(n, perRow int) SparseMatrix { // nnz = n·perRow; only N and the size count
		return SparseMatrix{N: n, Col: make([]int32, n*perRow)}
	}
	terms := seriesTerms(opt.Alpha, opt.SeriesTol)
	if terms < 70 || terms > 80 {
		t.Errorf("seriesTerms(0.2, 1e-7) = %d, want ~73", terms)
	}
	for _, tc := range []struct {
		a     SparseMatrix
		exact int
		want  bool
	}{
		{square(200, 3), 256, true},                // small
		{square(257, 3), 256, false},               // large, sparse: series
		{square(492, 150), 256, true},              // large, dense (COLLAB): inverse
		{square(492, 150), -1, false},              // always the series
		{square(DenseMaxNodes+1, 100), 256, false}, // too large for a dense inverse
		{square(DenseMaxNodes, 30), 256, true},
		{square(3000, 1), 4000, true}, // ExactMaxNodes is obeyed
	} {
		o := opt
		o.ExactMaxNodes = tc.exact
		if got := useExact(tc.a, o); got != tc.want {
			t.Errorf("n %d, nnz %d, ExactMaxNodes %d: useExact = %v, want %v", tc.a.N, tc.a.NNZ(), tc.exact, got, tc.want)
		}
	}
}

// TestPPRDiffusionSparsified: the default threshold keeps exactly the
// entries of the exact S that reach ε, with their exact values; TopK keeps
// the k largest of every row.
func TestPPRDiffusionSparsified(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g := randomGraph(rng, 60, 70)
	_, want := refDiffusion(t, g, DefaultPPRAlpha)
	for _, eps := range []float64{0, 1e-3, 0.02} {
		s, err := PPRDiffusion(g, DiffusionOptions{Eps: eps})
		if err != nil {
			t.Fatal(err)
		}
		if eps == 0 {
			eps = DefaultDiffusionEps
		}
		d := s.Dense()
		for i := 0; i < g.NumNodes; i++ {
			for j := 0; j < g.NumNodes; j++ {
				w := want.At(i, j)
				switch got := d[i*g.NumNodes+j]; {
				case got == 0 && w >= eps+1e-10:
					t.Fatalf("eps %g: entry (%d, %d) = %v dropped", eps, i, j, w)
				case got != 0 && (w < eps-1e-10 || math.Abs(got-w) > 1e-10):
					t.Fatalf("eps %g: entry (%d, %d) kept as %v, exact %v", eps, i, j, got, w)
				}
			}
		}
	}
	const k = 3
	s, err := PPRDiffusion(g, DiffusionOptions{Eps: -1, TopK: k})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < g.NumNodes; i++ {
		row := make([]float64, g.NumNodes)
		mat.Row(row, i, want)
		slices.Sort(row)
		kept := s.Val[s.RowPtr[i]:s.RowPtr[i+1]]
		nonzero := 0
		for _, v := range row {
			if v > 1e-12 {
				nonzero++
			}
		}
		if len(kept) != min(k, nonzero) {
			t.Fatalf("row %d: %d entries, want min(%d, %d nonzero)", i, len(kept), k, nonzero)
		}
		kth := row[len(row)-k]
		for _, v := range kept {
			if v < kth-1e-10 {
				t.Fatalf("row %d: kept %v below the %d-th largest %v", i, v, k, kth)
			}
		}
	}
}

func TestPPRDiffusionRejects(t *testing.T) {
	g := &Graph{NumNodes: 3, Edges: [][2]int32{{0, 1}}}
	for _, tc := range []struct {
		opt  DiffusionOptions
		want string
	}{
		{DiffusionOptions{Alpha: 1}, "alpha"},
		{DiffusionOptions{Alpha: -0.1}, "alpha"},
		{DiffusionOptions{Eps: math.NaN()}, "eps"},
		{DiffusionOptions{TopK: -1}, "top_k"},
		{DiffusionOptions{SeriesTol: 2}, "tolerance"},
	} {
		if _, err := PPRDiffusion(g, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one naming %s", tc.opt, err, tc.want)
		}
	}
	if _, err := PPRDiffusion(&Graph{NumNodes: 1, Edges: [][2]int32{{1, 0}}}, DiffusionOptions{}); err == nil {
		t.Error("invalid graph: want an error")
	}
	s, err := PPRDiffusion(&Graph{}, DiffusionOptions{})
	if err != nil || s.N != 0 || s.NNZ() != 0 {
		t.Errorf("empty graph: %+v, %v", s, err)
	}
}

// seriesPPRSupport is the per-source series seriesPPR replaced (2026-11-25),
// kept as its reference: it computes the rows of the truncated series α Σ_t ((1−α)Â)^t
// (see PPRDiffusion for the stopping rule) and hands them, in order, to
// emit (by column; the slice is reused for the next row). Â is symmetric,
// so row v is the column α Σ_t ((1−α)Â)^t e_v, propagated on its support
// only.
func seriesPPRSupport(a SparseMatrix, alpha, tol float64, emit func(r int, row []entry)) {
	n := a.N
	x := make([]float64, n)    // ((1−α)Â)^t e_v
	next := make([]float64, n) // the following term
	acc := make([]float64, n)  // α Σ of the terms so far
	inSupport := make([]bool, n)
	inNext := make([]bool, n)
	inAcc := make([]bool, n)
	var support, nextSupport, touched []int32
	var row []entry
	for v := 0; v < n; v++ {
		x[v], inSupport[v] = 1, true
		support = append(support[:0], int32(v))
		touched = append(touched[:0], int32(v)) // every index acc holds
		inAcc[v] = true
		for {
			norm := 0.0
			for _, i := range support {
				acc[i] += alpha * x[i]
				norm += x[i] * x[i]
			}
			if (1-alpha)*math.Sqrt(norm) <= tol {
				break
			}
			nextSupport = nextSupport[:0]
			for _, i := range support {
				xi := (1 - alpha) * x[i]
				for k := a.RowPtr[i]; k < a.RowPtr[i+1]; k++ {
					j := a.Col[k]
					if !inNext[j] {
						inNext[j] = true
						nextSupport = append(nextSupport, j)
					}
					next[j] += a.Val[k] * xi
				}
			}
			for _, i := range support {
				x[i], inSupport[i] = 0, false
			}
			for _, j := range nextSupport {
				x[j], next[j], inNext[j], inSupport[j] = next[j], 0, false, true
				if !inAcc[j] {
					inAcc[j] = true
					touched = append(touched, j)
				}
			}
			support, nextSupport = nextSupport, support
		}
		row = row[:0]
		for _, j := range touched {
			row = append(row, entry{j, acc[j]})
			acc[j], inAcc[j] = 0, false
		}
		for _, i := range support {
			x[i], inSupport[i] = 0, false
		}
		slices.SortFunc(row, func(p, q entry) int { return cmp.Compare(p.col, q.col) })
		emit(v, row)
	}
}

// collectRows runs a series computation and returns its rows, copied.
func collectRows(series func(SparseMatrix, float64, float64, func(int, []entry)), a SparseMatrix, alpha, tol float64) [][]entry {
	rows := make([][]entry, a.N)
	series(a, alpha, tol, func(r int, row []entry) { rows[r] = slices.Clone(row) })
	return rows
}

// TestSeriesPPRMatchesPerSource compares the blocked series with the
// per-source one it replaced (seriesPPRSupport): the same entries (the
// nodes each source reaches) and the same values up to the order of the
// sums, on random graphs with several components and on rewired cycles of
// hundreds of nodes (the REDDIT-sized stand-in's kind), for sizes around
// the block of 8 sources.
func TestSeriesPPRMatchesPerSource(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var graphs []*Graph
	for _, tc := range []struct{ n, m int }{{1, 0}, {7, 5}, {8, 12}, {9, 4}, {17, 40}, {64, 70}, {100, 400}} {
		graphs = append(graphs, randomGraph(rng, tc.n, tc.m))
	}
	set, err := GenerateGraphs(SynthConfig{Graphs: 4, Classes: 2, MinNodes: 200, MaxNodes: 400, Noise: 0.1}, 7)
	if err != nil {
		t.Fatal(err)
	}
	graphs = append(graphs, set.Graphs...)
	for gi, g := range graphs {
		a, err := NormalizedAdjacency(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, alpha := range []float64{0.2, 0.05} {
			got := collectRows(seriesPPR, a, alpha, DefaultSeriesTol)
			want := collectRows(seriesPPRSupport, a, alpha, DefaultSeriesTol)
			for r := range want {
				if len(got[r]) != len(want[r]) {
					t.Fatalf("graph %d (n=%d) α=%g row %d: %d entries, per-source %d", gi, g.NumNodes, alpha, r, len(got[r]), len(want[r]))
				}
				for k, e := range want[r] {
					if got[r][k].col != e.col || math.Abs(got[r][k].val-e.val) > 1e-12*max(1, e.val) {
						t.Fatalf("graph %d α=%g row %d entry %d: %+v, per-source %+v", gi, alpha, r, k, got[r][k], e)
					}
				}
			}
		}
	}
}

// TestPPRTermKernelMatchesGo compares pprTermAVX512 with pprTermGo bit for
// bit on a random term (rows in index order, some columns stopped).
func TestPPRTermKernelMatchesGo(t *testing.T) {
	if !havePPRKernel {
		t.Skip("no AVX-512")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	a, err := NormalizedAdjacency(randomGraph(rng, 300, 900))
	if err != nil {
		t.Fatal(err)
	}
	const B = pprBlock
	w := make([]float64, len(a.Val))
	for k, v := range a.Val {
		w[k] = 0.8 * v
	}
	x := make([]float64, a.N*B)
	for i := range x {
		x[i] = rng.Float64()
	}
	var rows []int32
	for j := 0; j < a.N; j++ {
		if rng.IntN(3) > 0 {
			rows = append(rows, int32(j))
		}
	}
	am := [B]float64{0.2, 0, 0.2, 0.2, 0, 0.2, 0.2, 0.2}
	acc0 := make([]float64, a.N*B)
	for i := range acc0 {
		acc0[i] = rng.Float64()
	}
	var res [2]struct {
		next, acc []float64
		norm      [B]float64
	}
	for pass := range 2 {
		next, acc := make([]float64, a.N*B), slices.Clone(acc0)
		norm := [B]float64{1, 2, 3, 4, 5, 6, 7, 8}
		if pass == 0 {
			pprTermGo(rows, a, w, x, next, acc, &am, &norm)
		} else {
			pprTermAVX512(&rows[0], len(rows), &a.RowPtr[0], &a.Col[0], &w[0], &x[0], &next[0], &acc[0], &am[0], &norm[0])
		}
		res[pass].next, res[pass].acc, res[pass].norm = next, acc, norm
	}
	for i := range res[0].next {
		if math.Float64bits(res[0].next[i]) != math.Float64bits(res[1].next[i]) || math.Float64bits(res[0].acc[i]) != math.Float64bits(res[1].acc[i]) {
			t.Fatalf("element %d: next %v / %v, acc %v / %v (Go / AVX-512)", i, res[0].next[i], res[1].next[i], res[0].acc[i], res[1].acc[i])
		}
	}
	if res[0].norm != res[1].norm {
		t.Fatalf("norm %v, AVX-512 %v", res[0].norm, res[1].norm)
	}
}

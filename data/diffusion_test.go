package data

import (
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
	series, err := PPRDiffusion(g, DiffusionOptions{Eps: -1})
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

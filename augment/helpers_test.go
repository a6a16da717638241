package augment

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

// Test graphs give every node an identity that survives renumbering:
// NodeLabels[v] = v, X row v = (v, v+0.25), NodeAttrs row v = (-v, 1000+v,
// 0.5), and edge i = {u, v} has label edgeCode(u, v).
const (
	featDim = 2
	attrDim = 3
)

func edgeCode(u, v int32) int32 { return 10000*u + v }

// mkGraph builds an identity-labelled graph with all optional fields set.
func mkGraph(n int, edges [][2]int32) *data.Graph {
	g := &data.Graph{NumNodes: n, AttrDim: attrDim, FeatDim: featDim, Label: 1}
	g.Edges = make([][2]int32, len(edges))
	g.EdgeLabels = make([]int32, len(edges))
	for i, e := range edges {
		if e[0] > e[1] {
			e[0], e[1] = e[1], e[0]
		}
		g.Edges[i] = e
		g.EdgeLabels[i] = edgeCode(e[0], e[1])
	}
	g.NodeLabels = make([]int32, n)
	g.X = make([]float32, n*featDim)
	g.NodeAttrs = make([]float32, n*attrDim)
	for v := range n {
		g.NodeLabels[v] = int32(v)
		g.X[v*featDim], g.X[v*featDim+1] = float32(v), float32(v)+0.25
		g.NodeAttrs[v*attrDim], g.NodeAttrs[v*attrDim+1], g.NodeAttrs[v*attrDim+2] = -float32(v), 1000+float32(v), 0.5
	}
	return g
}

func pathEdges(n int) [][2]int32 {
	var e [][2]int32
	for v := 1; v < n; v++ {
		e = append(e, [2]int32{int32(v - 1), int32(v)})
	}
	return e
}

func cycleEdges(n int) [][2]int32 {
	e := pathEdges(n)
	if n > 2 {
		e = append(e, [2]int32{0, int32(n - 1)})
	}
	return e
}

func starEdges(n int) [][2]int32 {
	var e [][2]int32
	for v := 1; v < n; v++ {
		e = append(e, [2]int32{0, int32(v)})
	}
	return e
}

func completeEdges(n int) [][2]int32 {
	var e [][2]int32
	for u := range n {
		for v := u + 1; v < n; v++ {
			e = append(e, [2]int32{int32(u), int32(v)})
		}
	}
	return e
}

// randomConnected returns a random tree on n nodes plus extra distinct
// non-tree edges, in random order.
func randomConnected(n, extra int, rng *rand.Rand) [][2]int32 {
	seen := map[[2]int32]bool{}
	var e [][2]int32
	add := func(u, v int32) bool {
		if u == v {
			return false
		}
		if u > v {
			u, v = v, u
		}
		if seen[[2]int32{u, v}] {
			return false
		}
		seen[[2]int32{u, v}] = true
		e = append(e, [2]int32{u, v})
		return true
	}
	for v := 1; v < n; v++ {
		add(int32(rng.IntN(v)), int32(v))
	}
	for added := 0; added < extra && len(e) < n*(n-1)/2; {
		if add(int32(rng.IntN(n)), int32(rng.IntN(n))) {
			added++
		}
	}
	rng.Shuffle(len(e), func(i, j int) { e[i], e[j] = e[j], e[i] })
	return e
}

// molecule returns a 30-node, 33-edge connected graph in the style of MUTAG,
// with 7 one-hot features.
func molecule() *data.Graph {
	rng := rand.New(rand.NewPCG(30, 33))
	g := mkGraph(30, randomConnected(30, 4, rng))
	g.FeatDim = 7
	g.X = make([]float32, 30*7)
	for v := range 30 {
		g.X[v*7+rng.IntN(7)] = 1
	}
	return g
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// edgeSet returns the undirected pairs of g.Edges as a multiset.
func edgeSet(edges [][2]int32) map[[2]int32]int {
	m := map[[2]int32]int{}
	for _, e := range edges {
		m[e]++
	}
	return m
}

// origIDs returns, for each output node, the input node it came from (read
// from NodeLabels), and fails unless they are distinct, in range and
// increasing (renumbering keeps the original order).
func origIDs(t *testing.T, in, out *data.Graph) []int32 {
	t.Helper()
	if len(out.NodeLabels) != out.NumNodes {
		t.Fatalf("output has %d node labels for %d nodes", len(out.NodeLabels), out.NumNodes)
	}
	for r, id := range out.NodeLabels {
		if id < 0 || int(id) >= in.NumNodes {
			t.Fatalf("output node %d has identity %d outside [0,%d)", r, id, in.NumNodes)
		}
		if r > 0 && out.NodeLabels[r-1] >= id {
			t.Fatalf("output nodes %d,%d have identities %d,%d: not increasing", r-1, r, out.NodeLabels[r-1], id)
		}
	}
	return out.NodeLabels
}

// checkAligned fails unless every row of out and every edge label of out
// belongs to the input node or edge it claims to come from. With masked,
// X rows may differ (they are checked by the caller).
func checkAligned(t *testing.T, in, out *data.Graph, masked bool) []int32 {
	t.Helper()
	if err := out.Validate(); err != nil {
		t.Fatalf("output invalid: %v", err)
	}
	ids := origIDs(t, in, out)
	for r, id := range ids {
		if got, want := out.NodeAttrs[r*attrDim:(r+1)*attrDim], in.NodeAttrs[int(id)*attrDim:(int(id)+1)*attrDim]; !reflect.DeepEqual(got, want) {
			t.Fatalf("output node %d (input %d): attrs %v, want %v", r, id, got, want)
		}
		if !masked {
			d := in.FeatDim
			if got, want := out.X[r*d:(r+1)*d], in.X[int(id)*d:(int(id)+1)*d]; !reflect.DeepEqual(got, want) {
				t.Fatalf("output node %d (input %d): X %v, want %v", r, id, got, want)
			}
		}
	}
	if len(out.EdgeLabels) != len(out.Edges) {
		t.Fatalf("%d edge labels for %d edges", len(out.EdgeLabels), len(out.Edges))
	}
	return ids
}

// mappedEdges returns out's edges written with input node ids.
func mappedEdges(out *data.Graph, ids []int32) [][2]int32 {
	m := make([][2]int32, len(out.Edges))
	for i, e := range out.Edges {
		m[i] = [2]int32{ids[e[0]], ids[e[1]]}
	}
	return m
}

// inducedEdges returns the input edges with both ends in keep, in order.
func inducedEdges(in *data.Graph, keep map[int32]bool) [][2]int32 {
	var r [][2]int32
	for _, e := range in.Edges {
		if keep[e[0]] && keep[e[1]] {
			r = append(r, e)
		}
	}
	return r
}

// checkInduced fails unless out is exactly the subgraph of in induced by the
// nodes it kept, with labels aligned; it returns the kept input ids.
func checkInduced(t *testing.T, in, out *data.Graph) []int32 {
	t.Helper()
	ids := checkAligned(t, in, out, false)
	keep := map[int32]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	got, want := mappedEdges(out, ids), inducedEdges(in, keep)
	if len(got) != len(want) {
		t.Fatalf("%d edges, want the %d induced ones", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("edge %d maps to %v, want induced edge %v", i, got[i], want[i])
		}
		if out.EdgeLabels[i] != edgeCode(got[i][0], got[i][1]) {
			t.Fatalf("edge %d %v has label %d, want %d", i, got[i], out.EdgeLabels[i], edgeCode(got[i][0], got[i][1]))
		}
	}
	return ids
}

// connected reports whether g is connected (the empty graph is).
func connected(g *data.Graph) bool {
	if g.NumNodes == 0 {
		return true
	}
	adj := make([][]int32, g.NumNodes)
	for _, e := range g.Edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	seen := make([]bool, g.NumNodes)
	stack := []int32{0}
	seen[0] = true
	cnt := 1
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range adj[v] {
			if !seen[w] {
				seen[w] = true
				cnt++
				stack = append(stack, w)
			}
		}
	}
	return cnt == g.NumNodes
}

// key is a printable fingerprint of a graph, for counting distinct outputs.
func key(g *data.Graph) string { return fmt.Sprintf("%+v", *g) }

// chiSquare returns Σ (obs-exp)²/exp for equal expected counts.
func chiSquare(obs []int) float64 {
	total := 0
	for _, o := range obs {
		total += o
	}
	exp := float64(total) / float64(len(obs))
	x := 0.0
	for _, o := range obs {
		d := float64(o) - exp
		x += d * d / exp
	}
	return x
}

// chi2Crit999 holds the 0.999 quantiles of the chi-square distribution by
// degrees of freedom (standard tables).
var chi2Crit999 = map[int]float64{
	1: 10.828, 2: 13.816, 3: 16.266, 4: 18.467, 5: 20.515,
	6: 22.458, 7: 24.322, 8: 26.124, 9: 27.877, 10: 29.588,
}

// snapshot returns an exact deep copy of g that, unlike Clone, keeps empty
// non-nil slices empty and non-nil, so that reflect.DeepEqual(g, snapshot)
// detects any change.
func snapshot(g *data.Graph) *data.Graph {
	c := *g
	c.Edges = cp(g.Edges)
	c.NodeLabels = cp(g.NodeLabels)
	c.NodeAttrs = cp(g.NodeAttrs)
	c.EdgeLabels = cp(g.EdgeLabels)
	c.X = cp(g.X)
	return &c
}

func cp[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// sameGraph reports whether a and b hold the same graph, treating nil and
// empty slices as equal.
func sameGraph(a, b *data.Graph) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.NumNodes == b.NumNodes && a.AttrDim == b.AttrDim && a.FeatDim == b.FeatDim && a.Label == b.Label &&
		sameSlice(a.Edges, b.Edges) && sameSlice(a.NodeLabels, b.NodeLabels) && sameSlice(a.NodeAttrs, b.NodeAttrs) &&
		sameSlice(a.EdgeLabels, b.EdgeLabels) && sameSlice(a.X, b.X)
}

func sameSlice[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

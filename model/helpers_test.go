package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

// synthGraphs returns random connected graphs with sizes in
// [minNodes, maxNodes], about edgeFactor×n undirected edges (a random tree
// plus extra random pairs, which may repeat), and featDim-dimensional
// features: one-hot labels when oneHot, else standard normal values.
func synthGraphs(rng *rand.Rand, num, minNodes, maxNodes int, edgeFactor float64, featDim int, oneHot bool) []*data.Graph {
	gs := make([]*data.Graph, num)
	for i := range gs {
		n := minNodes + rng.IntN(maxNodes-minNodes+1)
		g := &data.Graph{NumNodes: n, FeatDim: featDim, X: make([]float32, n*featDim)}
		add := func(u, v int32) {
			if u > v {
				u, v = v, u
			}
			g.Edges = append(g.Edges, [2]int32{u, v})
		}
		for v := 1; v < n; v++ {
			add(int32(rng.IntN(v)), int32(v))
		}
		extra := int(math.Round(edgeFactor*float64(n))) - (n - 1)
		for k := 0; k < extra && n > 1; k++ {
			u, v := rng.IntN(n), rng.IntN(n)
			if u != v {
				add(int32(u), int32(v))
			}
		}
		for v := 0; v < n; v++ {
			if oneHot {
				g.X[v*featDim+rng.IntN(featDim)] = 1
			} else {
				for j := 0; j < featDim; j++ {
					g.X[v*featDim+j] = float32(rng.NormFloat64())
				}
			}
		}
		gs[i] = g
	}
	return gs
}

func mustPack(tb testing.TB, gs []*data.Graph) *GraphBatch {
	tb.Helper()
	b, err := PackGraphs(gs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// nci1Like returns a batch shaped like 128 NCI1 graphs: about 2,520 nodes,
// about 10,000 directed adjacency entries, 37 one-hot features.
func nci1Like(tb testing.TB, seed uint64, graphs int) *GraphBatch {
	rng := rand.New(rand.NewPCG(seed, 11))
	return mustPack(tb, synthGraphs(rng, graphs, 10, 29, 2.05, 37, true))
}

// refLayer is one GIN layer's parameters in float64.
type refLayer struct {
	w1, w2                      [][]float64 // in×out
	b1, b2, gamma, beta, rm, rv []float64
}

// refModel is an independent float64 implementation of the GIN forward with
// a dense adjacency matrix and plain loops.
type refModel struct {
	layers   []refLayer
	pw1, pw2 [][]float64
	pb1, pb2 []float64
	eps      float64
}

func refFrom(m *GIN) *refModel {
	byName := map[string][]float64{}
	shape := map[string][]int{}
	for _, p := range m.Params() {
		byName[p.Name] = floats64(p.Value)
		shape[p.Name] = p.Value.Shape()
	}
	mat := func(name string) [][]float64 {
		s, v := shape[name], byName[name]
		out := make([][]float64, s[0])
		for i := range out {
			out[i] = v[i*s[1] : (i+1)*s[1]]
		}
		return out
	}
	r := &refModel{eps: m.Config().BNEps}
	for l := 0; l < m.Config().Layers; l++ {
		p := "gin." + string(rune('0'+l)) + "."
		r.layers = append(r.layers, refLayer{
			w1: mat(p + "mlp.0.weight"), b1: byName[p+"mlp.0.bias"],
			w2: mat(p + "mlp.2.weight"), b2: byName[p+"mlp.2.bias"],
			gamma: byName[p+"bn.weight"], beta: byName[p+"bn.bias"],
			rm: byName[p+"bn.running_mean"], rv: byName[p+"bn.running_var"],
		})
	}
	r.pw1, r.pb1 = mat("proj.0.weight"), byName["proj.0.bias"]
	r.pw2, r.pb2 = mat("proj.2.weight"), byName["proj.2.bias"]
	return r
}

func refLinear(x [][]float64, w [][]float64, b []float64, relu bool) [][]float64 {
	out := make([][]float64, len(x))
	for i, row := range x {
		out[i] = make([]float64, len(b))
		for j := range b {
			s := b[j]
			for k, xv := range row {
				s += xv * w[k][j]
			}
			if relu && s < 0 {
				s = 0
			}
			out[i][j] = s
		}
	}
	return out
}

// forward returns the graph embeddings, the projections, and in training
// mode the batch mean and biased variance of every layer.
func (r *refModel) forward(b *GraphBatch, train bool) (emb, proj [][]float64, means, vars [][]float64) {
	n := b.NumNodes
	adj := make([][]float64, n)
	for v := range adj {
		adj[v] = make([]float64, n)
		for k := b.RowPtr[v]; k < b.RowPtr[v+1]; k++ {
			adj[v][b.Col[k]]++
		}
	}
	h := make([][]float64, n)
	for v := range h {
		h[v] = make([]float64, b.FeatDim)
		for j := range h[v] {
			h[v][j] = float64(b.X[v*b.FeatDim+j])
		}
	}
	emb = make([][]float64, b.NumGraphs)
	for _, L := range r.layers {
		agg := make([][]float64, n)
		for v := 0; v < n; v++ {
			agg[v] = append([]float64(nil), h[v]...)
			for u := 0; u < n; u++ {
				for j := range agg[v] {
					agg[v][j] += adj[v][u] * h[u][j]
				}
			}
		}
		u := refLinear(refLinear(agg, L.w1, L.b1, true), L.w2, L.b2, true)
		c := len(L.b2)
		mean, variance := L.rm, L.rv
		if train {
			mean, variance = make([]float64, c), make([]float64, c)
			for j := 0; j < c; j++ {
				for v := 0; v < n; v++ {
					mean[j] += u[v][j]
				}
				mean[j] /= float64(n)
				for v := 0; v < n; v++ {
					variance[j] += (u[v][j] - mean[j]) * (u[v][j] - mean[j])
				}
				variance[j] /= float64(n)
			}
			means, vars = append(means, mean), append(vars, variance)
		}
		for v := 0; v < n; v++ {
			for j := 0; j < c; j++ {
				u[v][j] = L.gamma[j]*(u[v][j]-mean[j])/math.Sqrt(variance[j]+r.eps) + L.beta[j]
			}
		}
		for g := 0; g < b.NumGraphs; g++ {
			pooled := make([]float64, c)
			for v := b.GraphPtr[g]; v < b.GraphPtr[g+1]; v++ {
				for j := 0; j < c; j++ {
					pooled[j] += u[v][j]
				}
			}
			emb[g] = append(emb[g], pooled...)
		}
		h = u
	}
	proj = refLinear(refLinear(emb, r.pw1, r.pb1, true), r.pw2, r.pb2, false)
	return emb, proj, means, vars
}

// perturbModel gives γ, β and the running statistics non-trivial values so
// that tests of evaluation mode can tell them apart from the defaults.
func perturbModel(m *GIN, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 5))
	for _, p := range m.Params() {
		switch {
		case hasSuffix(p.Name, "bn.weight"):
			fill(p.Value, func() float64 { return 0.5 + rng.Float64() })
		case hasSuffix(p.Name, "bn.bias"), hasSuffix(p.Name, "running_mean"):
			fill(p.Value, func() float64 { return rng.NormFloat64() * 0.5 })
		case hasSuffix(p.Name, "running_var"):
			fill(p.Value, func() float64 { return 0.2 + 2*rng.Float64() })
		}
	}
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// flat returns rows concatenated.
func flat(rows [][]float64) []float64 {
	var out []float64
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// maxRelDiff returns max |a−b| / max(1, |b|).
func maxRelDiff(a []float32, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-b[i])/math.Max(1, math.Abs(b[i])))
	}
	return d
}

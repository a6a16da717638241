package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mvgrlViews returns both views of every graph: the normalised adjacency
// and its exact (unsparsified) diffusion.
func mvgrlViews(t testing.TB, gs []*data.Graph) [2][]data.SparseMatrix {
	t.Helper()
	var v [2][]data.SparseMatrix
	for _, g := range gs {
		a, err := data.NormalizedAdjacency(g)
		if err != nil {
			t.Fatal(err)
		}
		s, err := data.PPRDiffusion(g, data.DiffusionOptions{Eps: -1})
		if err != nil {
			t.Fatal(err)
		}
		v[0], v[1] = append(v[0], a), append(v[1], s)
	}
	return v
}

func mustPackViews(t testing.TB, gs []*data.Graph) *ViewBatch {
	t.Helper()
	b, err := PackViews(gs, mvgrlViews(t, gs))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// paramValues returns a parameter's values as float64.
func paramValues(p *Param) []float64 { return floats64(p.Value) }

// refPReLU is max(x,0) + a·min(x,0).
func refPReLU(x, a float64) float64 {
	if x > 0 {
		return x
	}
	return a * x
}

// refDense returns x·W + b for row-major x (n×in), W (in×out), b (out or
// nil).
func refDense(x []float64, n, in int, w, b []float64, out int) []float64 {
	y := make([]float64, n*out)
	for r := 0; r < n; r++ {
		for o := 0; o < out; o++ {
			s := 0.0
			if b != nil {
				s = b[o]
			}
			for k := 0; k < in; k++ {
				s += x[r*in+k] * w[k*out+o]
			}
			y[r*out+o] = s
		}
	}
	return y
}

// refHead is MVGRL's MLP in float64: ffn(x) + shortcut(x).
func refHead(m *ShortcutMLP, x []float64, n int) []float64 {
	c := m.cfg
	h, in := x, c.In
	for _, ly := range m.ffn {
		h = refDense(h, n, in, paramValues(m.params[ly.w]), paramValues(m.params[ly.b]), c.Out)
		a := paramValues(m.params[ly.a])[0]
		for i := range h {
			h[i] = refPReLU(h[i], a)
		}
		in = c.Out
	}
	s := refDense(x, n, c.In, paramValues(m.params[m.sw]), paramValues(m.params[m.sb]), c.Out)
	for i := range h {
		h[i] += s[i]
	}
	return h
}

// refMVGRL is an independent float64 forward of the model with dense
// propagation matrices and plain loops: per view the head outputs of the
// last layer's nodes and of the concatenated per-layer graph sums.
func refMVGRL(m *MVGRL, gs []*data.Graph, views [2][]data.SparseMatrix) (local, global [2][]float64) {
	c := m.cfg
	for v := range 2 {
		enc := m.Encoders[v]
		var nodesAll []float64
		var readout []float64
		for gi, g := range gs {
			n := g.NumNodes
			p := views[v][gi].Dense()
			h := make([]float64, n*c.InDim)
			for i, x := range g.X {
				h[i] = float64(x)
			}
			in := c.InDim
			sums := make([]float64, 0, c.Layers*c.Hidden)
			for _, ly := range enc.layers {
				xw := refDense(h, n, in, paramValues(enc.params[ly.w]), nil, c.Hidden)
				bias, a := paramValues(enc.params[ly.b]), paramValues(enc.params[ly.a])[0]
				h = make([]float64, n*c.Hidden)
				for r := 0; r < n; r++ {
					for o := 0; o < c.Hidden; o++ {
						s := bias[o]
						for k := 0; k < n; k++ {
							s += p[r*n+k] * xw[k*c.Hidden+o]
						}
						h[r*c.Hidden+o] = refPReLU(s, a)
					}
				}
				for o := 0; o < c.Hidden; o++ {
					s := 0.0
					for r := 0; r < n; r++ {
						s += h[r*c.Hidden+o]
					}
					sums = append(sums, s)
				}
				in = c.Hidden
			}
			nodesAll = append(nodesAll, h...)
			readout = append(readout, sums...)
		}
		local[v] = refHead(m.NodeHead, nodesAll, len(nodesAll)/c.Hidden)
		global[v] = refHead(m.GraphHead, readout, len(gs))
	}
	return local, global
}

func smallMVGRLGraphs(seed uint64, num, featDim int) []*data.Graph {
	rng := rand.New(rand.NewPCG(seed, 3))
	return synthGraphs(rng, num, 1, 7, 1.5, featDim, false)
}

func TestMVGRLParams(t *testing.T) {
	m, err := NewMVGRL(MVGRLConfig{InDim: 5, Hidden: 6, Layers: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{
		"gnn1.layers.0.fc.weight": {5, 6}, "gnn1.layers.0.bias": {6}, "gnn1.layers.0.act.weight": {1},
		"gnn2.layers.2.fc.weight": {6, 6}, "mlp1.ffn.0.weight": {6, 6}, "mlp1.ffn.5.weight": {1},
		"mlp2.ffn.0.weight": {18, 6}, "mlp2.linear_shortcut.weight": {18, 6}, "mlp2.linear_shortcut.bias": {6},
	}
	seen := map[string]bool{}
	for _, p := range m.Params() {
		if seen[p.Name] {
			t.Fatalf("parameter %s twice", p.Name)
		}
		seen[p.Name] = true
		if !p.Trainable {
			t.Errorf("%s is not trainable", p.Name)
		}
		if s, ok := want[p.Name]; ok && !p.Value.Shape().Eq(tensor.Shape(s)) {
			t.Errorf("%s has shape %v, want %v", p.Name, p.Value.Shape(), s)
		}
		v := paramValues(p)
		switch {
		case strings.HasSuffix(p.Name, "act.weight") || (strings.HasPrefix(p.Name, "mlp") && p.Value.Dims() == 1 && len(v) == 1):
			if v[0] != 0.25 {
				t.Errorf("%s = %v, want PReLU's 0.25", p.Name, v[0])
			}
		case strings.HasPrefix(p.Name, "gnn") && strings.HasSuffix(p.Name, ".bias"):
			for _, x := range v {
				if x != 0 {
					t.Fatalf("%s has %v, want zeros", p.Name, x)
				}
			}
		case strings.HasPrefix(p.Name, "gnn"):
			s := p.Value.Shape()
			bound := math.Sqrt(6 / float64(s[0]+s[1]))
			for _, x := range v {
				if math.Abs(x) > bound {
					t.Fatalf("%s has %v outside the Xavier bound %v", p.Name, x, bound)
				}
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no parameter %s", name)
		}
	}
	if len(m.Params()) != 2*3*3+2*(3*3+2) {
		t.Errorf("%d parameters", len(m.Params()))
	}
	for _, cfg := range []MVGRLConfig{{Hidden: 2, Layers: 1}, {InDim: 2, Layers: 1}, {InDim: 2, Hidden: 2}} {
		if _, err := NewMVGRL(cfg, 1); err == nil {
			t.Errorf("%+v: want an error", cfg)
		}
	}
}

// TestMVGRLForwardMatchesReference checks both views' node and graph head
// outputs against the float64 reference, in float64 and in float32.
func TestMVGRLForwardMatchesReference(t *testing.T) {
	gs := smallMVGRLGraphs(5, 6, 3)
	views := mvgrlViews(t, gs)
	batch, err := PackViews(gs, views)
	if err != nil {
		t.Fatal(err)
	}
	for _, f64 := range []bool{true, false} {
		m, err := NewMVGRL(MVGRLConfig{InDim: 3, Hidden: 4, Layers: 3, Float64: f64}, 9)
		if err != nil {
			t.Fatal(err)
		}
		refL, refG := refMVGRL(m, gs, views)
		g := gorgonia.NewGraph()
		out, err := m.Bind(g).Forward(batch)
		if err != nil {
			t.Fatal(err)
		}
		vm := gorgonia.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Close()
		tol := 1e-12
		if !f64 {
			tol = 1e-5
		}
		for v := range 2 {
			if d := maxRel64(nodeValues(t, out.Local[v]), refL[v]); d > tol {
				t.Errorf("float64=%v view %d: node outputs differ by %g", f64, v+1, d)
			}
			if d := maxRel64(nodeValues(t, out.Global[v]), refG[v]); d > tol {
				t.Errorf("float64=%v view %d: graph outputs differ by %g", f64, v+1, d)
			}
		}
		if !f64 {
			emb, err := m.Embed(batch)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, len(refG[0]))
			for i := range want {
				want[i] = refG[0][i] + refG[1][i]
			}
			if d := maxRel64(to64(emb), want); d > 1e-5 {
				t.Errorf("Embed differs from the sum of the graph outputs by %g", d)
			}
			// A graph's embedding does not depend on its batch.
			alone, err := m.Embed(mustPackViews(t, gs[2:3]))
			if err != nil {
				t.Fatal(err)
			}
			if d := maxRel64(to64(alone), want[2*4:3*4]); d > 1e-5 {
				t.Errorf("graph 2 embedded alone differs by %g", d)
			}
		}
	}
}

// mvgrlLoss builds MVGRL's objective on batch for m (float64) and returns
// the bound model and the loss node.
func mvgrlLoss(t *testing.T, m *MVGRL, batch *ViewBatch) (*gorgonia.ExprGraph, *MVGRLBound, *gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	out, err := b.Forward(batch)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := loss.LocalGlobal(out.Local[0], out.Global[1], batch.GraphPtr)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := loss.LocalGlobal(out.Local[1], out.Global[0], batch.GraphPtr)
	if err != nil {
		t.Fatal(err)
	}
	l, err := gorgonia.Add(l1, l2)
	if err != nil {
		t.Fatal(err)
	}
	return g, b, l
}

func mvgrlLossValue(t *testing.T, m *MVGRL, batch *ViewBatch) float64 {
	g, _, l := mvgrlLoss(t, m, batch)
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return l.Value().Data().(float64)
}

// TestMVGRLGradientFiniteDifference checks the gradient of MVGRL's loss
// with respect to every parameter against central differences (float64).
func TestMVGRLGradientFiniteDifference(t *testing.T) {
	checkMVGRLGradients(t, smallMVGRLGraphs(11, 4, 2))
}

// TestMVGRLGradientsHashCollision is the gradient check on a batch whose
// loss-and-gradient graph holds two different nodes with the same 32-bit
// Node.Hashcode, the hash by which Gorgonia identifies nodes. Gorgonia
// 0.9.18's compiler took such nodes for one (common-subexpression
// elimination without a comparison), so the later one was never executed and
// its consumers read the other's value; an MVGRL run on NCI1 failed that way
// at step 420 ("gnn1.layers.2.bias: gradient is <nil>": the bias gradient
// collided with the node of the parameter gnn2.layers.3.act.weight). The
// batch was found by trying seeds of smallMVGRLGraphs (284,920 of them when the
// sparse matrices' hash changed from FNV-1a to ops.hashWords); the hash covers node
// types, shapes, op keys (with the sparse matrices' hashes) and parameter
// names, so a change to any of them can move the collision away, which the
// test reports (then search again).
func TestMVGRLGradientsHashCollision(t *testing.T) {
	checkMVGRLGradients(t, smallMVGRLGraphs(284920, 4, 2), func(g *gorgonia.ExprGraph) {
		if len(hashCollisions(g)) == 0 {
			t.Fatal("the fixture's graph no longer has two nodes of one hash: search for another seed of smallMVGRLGraphs (InDim 2, Hidden 3, Layers 2, float64, model seed 4)")
		}
	})
}

// hashCollisions returns the pairs of different nodes of g with equal
// Hashcode.
func hashCollisions(g *gorgonia.ExprGraph) [][2]*gorgonia.Node {
	seen := map[uint32]*gorgonia.Node{}
	var out [][2]*gorgonia.Node
	for _, n := range g.AllNodes() {
		h := n.Hashcode()
		if m, ok := seen[h]; ok && m != n {
			out = append(out, [2]*gorgonia.Node{m, n})
		}
		seen[h] = n
	}
	return out
}

// checkMVGRLGradients checks the gradient of MVGRL's loss on gs (a float64
// model: InDim 2, Hidden 3, Layers 2, seed 4) with respect to every
// parameter against central differences. Each inspect sees the graph with
// its gradient nodes before it runs.
func checkMVGRLGradients(t *testing.T, gs []*data.Graph, inspect ...func(*gorgonia.ExprGraph)) {
	t.Helper()
	batch := mustPackViews(t, gs)
	m, err := NewMVGRL(MVGRLConfig{InDim: 2, Hidden: 3, Layers: 2, Float64: true}, 4)
	if err != nil {
		t.Fatal(err)
	}
	g, b, l := mvgrlLoss(t, m, batch)
	if _, err := gorgonia.Grad(l, b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	for _, f := range inspect {
		f(g)
	}
	vm := gorgonia.NewTapeMachine(g)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	vm.Close()
	grads, err := b.Grads(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(grads) != len(m.Params()) {
		t.Fatalf("%d gradients for %d parameters", len(grads), len(m.Params()))
	}
	// Gradients come back as float32: compare with a float32-level tolerance.
	const h = 1e-6
	for i, p := range m.Params() {
		if grads[i] == nil {
			t.Fatalf("%s has no gradient", p.Name)
		}
		vals := p.Value.Float64s()
		for e := range vals {
			orig := vals[e]
			vals[e] = orig + h
			lp := mvgrlLossValue(t, m, batch)
			vals[e] = orig - h
			lm := mvgrlLossValue(t, m, batch)
			vals[e] = orig
			num := (lp - lm) / (2 * h)
			ana := float64(grads[i][e])
			if math.Abs(num-ana) > 1e-6*math.Max(1, math.Abs(num)) {
				t.Errorf("%s[%d]: analytic %.8g, numeric %.8g", p.Name, e, ana, num)
			}
		}
	}
}

func TestPackViewsRejects(t *testing.T) {
	gs := smallMVGRLGraphs(2, 3, 2)
	views := mvgrlViews(t, gs)
	if _, err := PackViews(nil, views); err == nil {
		t.Error("no graphs: want an error")
	}
	short := views
	short[1] = short[1][:2]
	if _, err := PackViews(gs, short); err == nil || !strings.Contains(err.Error(), "2 matrices for 3 graphs") {
		t.Errorf("missing view: err = %v", err)
	}
	swapped := mvgrlViews(t, gs)
	swapped[0][0], swapped[0][1] = swapped[0][1], swapped[0][0]
	if gs[0].NumNodes != gs[1].NumNodes {
		if _, err := PackViews(gs, swapped); err == nil || !strings.Contains(err.Error(), "nodes") {
			t.Errorf("view of another graph: err = %v", err)
		}
	}
	bad := []*data.Graph{{NumNodes: 1}}
	if _, err := PackViews(bad, mvgrlViews(t, bad)); err == nil || !strings.Contains(err.Error(), "features") {
		t.Errorf("no features: err = %v", err)
	}
	nan := smallMVGRLGraphs(2, 1, 2)
	nan[0].X[0] = float32(math.NaN())
	if _, err := PackViews(nan, mvgrlViews(t, nan)); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN feature: err = %v", err)
	}
	m, err := NewMVGRL(MVGRLConfig{InDim: 3, Hidden: 2, Layers: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Embed(mustPackViews(t, gs)); err == nil || !strings.Contains(err.Error(), "dimension") {
		t.Errorf("feature dimension mismatch: err = %v", err)
	}
}

// identityView is the n×n identity as a view.
func identityView(n int) data.SparseMatrix {
	m := data.SparseMatrix{N: n, RowPtr: make([]int32, n+1), Col: make([]int32, n), Val: make([]float64, n)}
	for i := range n {
		m.RowPtr[i+1], m.Col[i], m.Val[i] = int32(i+1), int32(i), 1
	}
	return m
}

// TestPackFeatures: the packed features are the graphs' rows in order; the
// one-hot columns are those of a row-by-row reading of the packed matrix
// when every row is one-hot, nil otherwise; a non-finite value is reported
// with its graph, whether or not the graphs before it were one-hot.
func TestPackFeatures(t *testing.T) {
	g := func(d int, x ...float32) *data.Graph { return &data.Graph{NumNodes: len(x) / d, FeatDim: d, X: x} }
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, c := range []struct {
		name   string
		graphs []*data.Graph
		hot    []int32
		err    string
	}{
		{"one-hot", []*data.Graph{g(3, 0, 1, 0, 1, 0, 0), g(3, 0, 0, 1)}, []int32{1, 0, 2}, ""},
		{"second graph not one-hot", []*data.Graph{g(3, 0, 1, 0), g(3, 0, 0.5, 0)}, nil, ""},
		{"first graph not one-hot", []*data.Graph{g(3, 1, 1, 0), g(3, 0, 0, 1)}, nil, ""},
		{"a zero row", []*data.Graph{g(2, 0, 1, 0, 0)}, nil, ""},
		{"degrees, not one-hot", []*data.Graph{g(2, 2, 0), g(2, 0, 1)}, nil, ""},
		{"NaN after one-hot graphs", []*data.Graph{g(2, 1, 0), g(2, 0, nan)}, nil, "graph 1 feature 1 is NaN"},
		{"Inf after a dense graph", []*data.Graph{g(2, 0.5, 0.5), g(2, inf, 0)}, nil, "graph 1 feature 0 is +Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, d := 0, c.graphs[0].FeatDim
			var want []float32
			for _, gr := range c.graphs {
				n += gr.NumNodes
				want = append(want, gr.X...)
			}
			var views [2][]data.SparseMatrix
			for _, gr := range c.graphs {
				for v := range views {
					views[v] = append(views[v], identityView(gr.NumNodes))
				}
			}
			var x []float32
			var hot []int32
			b, err := PackViews(c.graphs, views)
			if err == nil {
				x, hot = b.X, b.OneHot
				if b.NumNodes != n || b.FeatDim != d {
					t.Fatalf("%d nodes of dimension %d, want %d of %d", b.NumNodes, b.FeatDim, n, d)
				}
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(x) != fmt.Sprint(want) {
				t.Errorf("features %v, want %v", x, want)
			}
			if fmt.Sprint(hot) != fmt.Sprint(c.hot) || (hot == nil) != (c.hot == nil) {
				t.Errorf("one-hot columns %v, want %v", hot, c.hot)
			}
		})
	}
}

// TestViewPackerPack: a batch of a packer's graphs (repeats, any order) is
// the batch a plain loop builds from those graphs: the features, the
// one-hot columns, the graph pointers, the pooling pattern and, for each
// view, the pattern, values, float32 values and transpose that
// ops.NewWeightedCSR and its T give for the block-diagonal arrays, bit for
// bit; products with the packed views agree with the reference's.
func TestViewPackerPack(t *testing.T) {
	gs := smallMVGRLGraphs(7, 6, 3)
	views := mvgrlViews(t, gs)
	p, err := NewViewPacker(gs, views)
	if err != nil {
		t.Fatal(err)
	}
	for _, idx := range [][]int{{0}, {5, 1, 1, 3}, {2, 4, 0, 5, 3, 1}} {
		b, err := p.Pack(idx)
		if err != nil {
			t.Fatal(err)
		}
		// The reference, by plain loops.
		var x []float32
		ptr := []int32{0}
		var ref [2]*ops.WeightedCSR
		for v := range ref {
			rowPtr, col, val := []int32{0}, []int32{}, []float64{}
			base := int32(0)
			for _, j := range idx {
				m := views[v][j]
				for r := range m.N {
					for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
						col = append(col, base+m.Col[k])
						val = append(val, m.Val[k])
					}
					rowPtr = append(rowPtr, int32(len(col)))
				}
				base += int32(m.N)
			}
			if ref[v], err = ops.NewWeightedCSR(int(base), int(base), rowPtr, col, val); err != nil {
				t.Fatal(err)
			}
		}
		for _, j := range idx {
			x = append(x, gs[j].X...)
			ptr = append(ptr, ptr[len(ptr)-1]+int32(gs[j].NumNodes))
		}
		if fmt.Sprint(b.X) != fmt.Sprint(x) || fmt.Sprint(b.GraphPtr) != fmt.Sprint(ptr) || b.NumGraphs != len(idx) || b.NumNodes != int(ptr[len(ptr)-1]) {
			t.Fatalf("%v: features or graph pointers differ: %v, want %v", idx, b.GraphPtr, ptr)
		}
		if b.Pool.Rows != len(idx) || fmt.Sprint(b.Pool.RowPtr) != fmt.Sprint(ptr) {
			t.Errorf("%v: pooling %d rows %v", idx, b.Pool.Rows, b.Pool.RowPtr)
		}
		for v := range ref {
			for _, pair := range [][2]*ops.WeightedCSR{{b.Views[v], ref[v]}, {b.Views[v].T(), ref[v].T()}} {
				g, w := pair[0], pair[1]
				if fmt.Sprint(g.Rows, g.Cols, g.RowPtr, g.Col) != fmt.Sprint(w.Rows, w.Cols, w.RowPtr, w.Col) {
					t.Fatalf("%v: view %d pattern differs", idx, v+1)
				}
				for k := range w.Val {
					if math.Float64bits(g.Val[k]) != math.Float64bits(w.Val[k]) {
						t.Fatalf("%v: view %d value %d: %v, want %v", idx, v+1, k, g.Val[k], w.Val[k])
					}
				}
				if g.Hash() != w.Hash() {
					t.Errorf("%v: view %d hash differs", idx, v+1)
				}
				const f = 3
				in := make([]float32, g.Cols*f)
				for i := range in {
					in[i] = float32(i%7) - 2.5
				}
				y1, y2 := make([]float32, g.Rows*f), make([]float32, g.Rows*f)
				ops.WSpMMFloat32(g, in, f, y1)
				ops.WSpMMFloat32(w, in, f, y2)
				for i := range y1 {
					if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
						t.Fatalf("%v: view %d product %d: %v, want %v", idx, v+1, i, y1[i], y2[i])
					}
				}
			}
		}
	}
	if _, err := p.Pack([]int{0, 6}); err == nil || !strings.Contains(err.Error(), "graph 6 out of range [0, 6)") {
		t.Errorf("out of range: err = %v", err)
	}
	if _, err := p.Pack(nil); err == nil {
		t.Error("no graphs: want an error")
	}
}

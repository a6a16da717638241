package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// smallBatch returns 5 random graphs with normal features, including a
// single-node graph, a self-loop and a repeated edge.
func smallBatch(t testing.TB, seed uint64, inDim int) *GraphBatch {
	rng := rand.New(rand.NewPCG(seed, 3))
	gs := synthGraphs(rng, 4, 2, 7, 1.5, inDim, false)
	gs[0].Edges = append(gs[0].Edges, [2]int32{0, 0}, [2]int32{0, 1})
	single := &data.Graph{NumNodes: 1, FeatDim: inDim, X: make([]float32, inDim)}
	for j := range single.X {
		single.X[j] = float32(rng.NormFloat64())
	}
	gs = append(gs, single)
	return mustPack(t, gs)
}

// nodeValues returns a node's value as float64s.
func nodeValues(t testing.TB, n *gorgonia.Node) []float64 {
	t.Helper()
	d, ok := n.Value().(*tensor.Dense)
	if !ok {
		t.Fatalf("node %v has value %T", n, n.Value())
	}
	return floats64(d)
}

// encodeRun builds one graph that encodes and projects each batch, runs it
// and returns the embeddings and projections of every batch.
func encodeRun(t testing.TB, m *GIN, train bool, batches ...*GraphBatch) (embs, projs [][]float64, b *Bound) {
	t.Helper()
	g := gorgonia.NewGraph()
	b = m.Bind(g)
	var en, pn []*gorgonia.Node
	for _, batch := range batches {
		e, err := b.Encode(batch, train)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Project(e)
		if err != nil {
			t.Fatal(err)
		}
		en, pn = append(en, e), append(pn, p)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i := range batches {
		embs = append(embs, nodeValues(t, en[i]))
		projs = append(projs, nodeValues(t, pn[i]))
	}
	return embs, projs, b
}

func maxRel64(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i])/math.Max(1, math.Abs(b[i])))
	}
	return d
}

func to64(a []float32) []float64 {
	o := make([]float64, len(a))
	for i, v := range a {
		o[i] = float64(v)
	}
	return o
}

func TestParams(t *testing.T) {
	cfg := GINConfig{InDim: 7}
	m, err := NewGIN(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Config(); got.Hidden != 32 || got.Layers != 3 || got.ProjDim != 96 || got.BNEps != 1e-5 || got.BNMomentum != 0.1 {
		t.Fatalf("defaults: %+v", got)
	}
	if m.EmbedDim() != 96 || m.ProjDim() != 96 {
		t.Fatalf("EmbedDim %d ProjDim %d, want 96 96", m.EmbedDim(), m.ProjDim())
	}
	seen := map[string]bool{}
	trainable := 0
	for _, p := range m.Params() {
		if seen[p.Name] {
			t.Errorf("duplicate name %q", p.Name)
		}
		seen[p.Name] = true
		if p.Trainable {
			trainable++
		}
		if p.Trainable == (strings.Contains(p.Name, "running")) {
			t.Errorf("%s: Trainable = %t", p.Name, p.Trainable)
		}
	}
	if len(m.Params()) != 3*8+4 || trainable != 3*6+4 || m.NumTrainable() != trainable {
		t.Errorf("%d params, %d trainable; want 28 and 22", len(m.Params()), trainable)
	}
	// Initialisation: Linear weights and biases in ±1/√fan_in, spread over
	// the range; BatchNorm γ=1, β=0, running mean 0, running var 1.
	for _, p := range m.Params() {
		v := floats64(p.Value)
		var lo, hi float64
		switch {
		case strings.Contains(p.Name, "mlp") || strings.Contains(p.Name, "proj"):
			fanIn := 32 // Hidden
			switch {
			case strings.HasPrefix(p.Name, "gin.0.mlp.0."):
				fanIn = 7 // InDim
			case strings.HasPrefix(p.Name, "proj."):
				fanIn = 96 // EmbedDim, and ProjDim for proj.2
			}
			bound := 1 / math.Sqrt(float64(fanIn))
			mn, mx := math.Inf(1), math.Inf(-1)
			for _, x := range v {
				mn, mx = math.Min(mn, x), math.Max(mx, x)
			}
			if mn < -bound || mx > bound || mx-mn < bound {
				t.Errorf("%s: values in [%v, %v], want spread over ±%v", p.Name, mn, mx, bound)
			}
			continue
		case strings.HasSuffix(p.Name, "bn.weight"), strings.HasSuffix(p.Name, "running_var"):
			lo, hi = 1, 1
		default:
			lo, hi = 0, 0
		}
		for _, x := range v {
			if x < lo || x > hi {
				t.Errorf("%s: value %v, want %v", p.Name, x, lo)
				break
			}
		}
	}
	// Same seed, same values; another seed, other values.
	m2, _ := NewGIN(cfg, 1)
	m3, _ := NewGIN(cfg, 2)
	a, b, c := m.Params()[0].Value.Float32s(), m2.Params()[0].Value.Float32s(), m3.Params()[0].Value.Float32s()
	if a[0] != b[0] || a[5] != b[5] || a[0] == c[0] {
		t.Error("initialisation is not a function of the seed")
	}
}

func TestNewGINRejects(t *testing.T) {
	for _, cfg := range []GINConfig{{}, {InDim: -1}, {InDim: 3, Hidden: -2}, {InDim: 3, BNEps: -1}, {InDim: 3, BNMomentum: 2}} {
		if _, err := NewGIN(cfg, 1); err == nil {
			t.Errorf("%+v: want an error", cfg)
		}
	}
}

func TestForwardMatchesReference(t *testing.T) {
	const inDim = 6
	m, err := NewGIN(GINConfig{InDim: inDim, Hidden: 8, ProjDim: 5}, 3)
	if err != nil {
		t.Fatal(err)
	}
	perturbModel(m, 4)
	batch := smallBatch(t, 5, inDim)
	ref := refFrom(m)

	for _, train := range []bool{false, true} {
		t.Run(fmt.Sprintf("train=%t", train), func(t *testing.T) {
			wantEmb, wantProj, _, _ := ref.forward(batch, train)
			embs, projs, _ := encodeRun(t, m, train, batch)
			if d := maxRel64(embs[0], flat(wantEmb)); d > 1e-4 {
				t.Errorf("Gorgonia embedding differs from the float64 reference by %.3g", d)
			}
			if d := maxRel64(projs[0], flat(wantProj)); d > 1e-4 {
				t.Errorf("Gorgonia projection differs from the float64 reference by %.3g", d)
			}
			if train {
				return
			}
			emb, err := m.Embed(batch)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxRelDiff(emb, flat(wantEmb)); d > 1e-4 {
				t.Errorf("Embed differs from the float64 reference by %.3g", d)
			}
			if d := maxRel64(to64(emb), embs[0]); d > 1e-5 {
				t.Errorf("Embed differs from the Gorgonia eval forward by %.3g", d)
			}
			proj, err := m.EmbedProjected(batch)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxRelDiff(proj, flat(wantProj)); d > 1e-4 {
				t.Errorf("EmbedProjected differs from the float64 reference by %.3g", d)
			}
			if d := maxRel64(to64(proj), projs[0]); d > 1e-5 {
				t.Errorf("EmbedProjected differs from the Gorgonia eval forward by %.3g", d)
			}
		})
	}
}

func TestEmbedAgreesWithGorgoniaOnNCI1LikeBatch(t *testing.T) {
	m, err := NewGIN(GINConfig{InDim: 37}, 7)
	if err != nil {
		t.Fatal(err)
	}
	perturbModel(m, 8)
	batch := nci1Like(t, 9, 128)
	embs, projs, _ := encodeRun(t, m, false, batch)
	emb, err := m.Embed(batch)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := m.EmbedProjected(batch)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRel64(to64(emb), embs[0]); d > 1e-5 {
		t.Errorf("Embed vs Gorgonia: max relative difference %.3g", d)
	}
	if d := maxRel64(to64(proj), projs[0]); d > 1e-5 {
		t.Errorf("EmbedProjected vs Gorgonia: max relative difference %.3g", d)
	}
}

// TestGradientFiniteDifference checks d loss/d θ of the whole model (two
// views through one Bound, training mode, projection head) against central
// differences for three entries of every trainable parameter, in float64.
func TestGradientFiniteDifference(t *testing.T) {
	const inDim = 4
	m, err := NewGIN(GINConfig{InDim: inDim, Hidden: 5, Layers: 2, ProjDim: 3, Float64: true}, 11)
	if err != nil {
		t.Fatal(err)
	}
	perturbModel(m, 12)
	views := []*GraphBatch{smallBatch(t, 13, inDim), smallBatch(t, 14, inDim)}
	rng := rand.New(rand.NewPCG(15, 1))
	rs := make([][]float64, len(views))
	for i, v := range views {
		rs[i] = make([]float64, v.NumGraphs*3)
		for k := range rs[i] {
			rs[i][k] = rng.NormFloat64()
		}
	}
	b, loss := lossOfGraph(t, m, views, rs)
	exact := exactGrads(t, m, b, loss)
	grads, err := b.Grads()
	if err != nil {
		t.Fatal(err)
	}
	if len(grads) != m.NumTrainable() {
		t.Fatalf("Grads returned %d slices, want %d", len(grads), m.NumTrainable())
	}
	lossAt := func() float64 {
		_, l := lossOfGraph(t, m, views, rs)
		exactGrads(t, m, nil, l)
		return l.Value().Data().(float64)
	}

	const h = 1e-6
	k := 0
	for _, p := range m.Params() {
		if !p.Trainable {
			continue
		}
		vals := p.Value.Float64s()
		if len(grads[k]) != len(vals) || len(exact[k]) != len(vals) {
			t.Fatalf("%s: %d/%d gradient values for %d parameters", p.Name, len(grads[k]), len(exact[k]), len(vals))
		}
		for _, e := range []int{0, len(vals) / 2, len(vals) - 1} {
			orig := vals[e]
			vals[e] = orig + h
			lp := lossAt()
			vals[e] = orig - h
			lm := lossAt()
			vals[e] = orig
			num := (lp - lm) / (2 * h)
			ana := exact[k][e]
			if rel := math.Abs(num-ana) / math.Max(1e-3, math.Max(math.Abs(num), math.Abs(ana))); rel > 1e-6 {
				t.Errorf("%s[%d]: analytic %.10g, numeric %.10g (rel err %.2g)", p.Name, e, ana, num, rel)
			}
			if math.Abs(float64(grads[k][e])-ana) > 1e-6*math.Max(1, math.Abs(ana)) {
				t.Errorf("%s[%d]: Grads() = %v, float64 gradient %v", p.Name, e, grads[k][e], ana)
			}
		}
		k++
	}
}

// lossOfGraph builds Σ_i Σ P_i⊙R_i in a new graph with gradients and
// returns the bound model and the loss node.
func lossOfGraph(t *testing.T, m *GIN, views []*GraphBatch, rs [][]float64) (*Bound, *gorgonia.Node) {
	t.Helper()
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	var total *gorgonia.Node
	for i, v := range views {
		e, err := b.Encode(v, true)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Project(e)
		if err != nil {
			t.Fatal(err)
		}
		rn := gorgonia.NewConstant(tensor.New(tensor.WithShape(p.Shape()...), tensor.WithBacking(append([]float64(nil), rs[i]...))), gorgonia.WithName(fmt.Sprintf("R%d", i)))
		s := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(p, rn))))
		if total == nil {
			total = s
		} else {
			total = gorgonia.Must(gorgonia.Add(total, s))
		}
	}
	if _, err := gorgonia.Grad(total, b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	return b, total
}

// exactGrads runs the graph and returns the float64 gradients of the
// trainable parameters in Params order.
func exactGrads(t *testing.T, m *GIN, b *Bound, loss *gorgonia.Node) [][]float64 {
	t.Helper()
	vm := gorgonia.NewTapeMachine(loss.Graph())
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var out [][]float64
	if b == nil {
		return nil
	}
	for i, p := range m.Params() {
		if !p.Trainable {
			continue
		}
		gv, err := b.nodes[i].Grad()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, floats64(gv.(*tensor.Dense)))
	}
	return out
}

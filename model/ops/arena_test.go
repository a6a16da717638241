package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// arenaStep builds and runs, on a new graph (attached to a when a is not
// nil), a small float32 training step over n rows: Linear → SpMM →
// BiasAct(ReLU) → PReLU → BatchNorm → AddReLU → Σ y⊙R, differentiated with
// respect to W, b, the slope and x. It returns the loss and the gradients,
// copied out before the arena is released.
func arenaStep(t *testing.T, a *Arena, n int, seed uint64) (float32, [][]float32) {
	t.Helper()
	const k, m = 6, 5
	rng := rand.New(rand.NewPCG(seed, 7))
	vals := func(size int) []float32 {
		v := make([]float32, size)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	g := gorgonia.NewGraph()
	if a != nil {
		if err := a.Attach(g); err != nil {
			t.Fatal(err)
		}
		defer a.Release()
	}
	mat := func(name string, r, c int) *gorgonia.Node {
		return gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(r, c), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(vals(r*c)))))
	}
	vec := func(name string, c int) *gorgonia.Node {
		return gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(c), gorgonia.WithName(name),
			gorgonia.WithValue(tensor.New(tensor.WithShape(c), tensor.WithBacking(vals(c)))))
	}
	x, w, b, zb := mat("x", n, k), mat("W", k, m), vec("b", m), vec("zero", m)
	slope := vec("a", 1)
	adj := randCSR(t, rng, n, n, 3)
	must := func(n *gorgonia.Node, err error) *gorgonia.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	xw := must(Linear(x, w, zb, LinearOpts{}))
	p := must(SpMM(adj, xw))
	z := must(BiasAct(p, b, true))
	h := must(PReLU(z, slope))
	bn, _, err := BatchNorm(h, vec("gamma", m), vec("beta", m), BNConfig{Training: true, Eps: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	y := must(AddReLU(bn, xw))
	r := gorgonia.NewConstant(tensor.New(tensor.WithShape(n, m), tensor.WithBacking(vals(n*m))), gorgonia.WithName("R"))
	loss := must(gorgonia.Sum(must(gorgonia.HadamardProd(y, r))))
	wrt := gorgonia.Nodes{w, b, slope, x}
	if _, err := gorgonia.Grad(loss, wrt...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var grads [][]float32
	for _, nd := range wrt {
		gv, err := nd.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, slices.Clone(gv.Data().([]float32)))
	}
	return loss.Value().Data().(float32), grads
}

// TestArenaStepsBitIdentical: steps whose op outputs come from an arena
// (reused across steps of different sizes, the idle buffers filled with NaN
// between steps, and within a step once their last reader has run) give the
// bits of steps that allocate.
func TestArenaStepsBitIdentical(t *testing.T) {
	defer PoisonArenas(PoisonArenas(true))
	a := NewArena()
	for s, n := range []int{40, 40, 33, 47, 12, 40} {
		want, wantG := arenaStep(t, nil, n, uint64(s))
		for i := range a.free {
			for k := range a.free[i].b {
				a.free[i].b[k] = float32(math.NaN())
			}
		}
		got, gotG := arenaStep(t, a, n, uint64(s))
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("step %d (n=%d): loss %v with the arena, %v without", s, n, got, want)
		}
		for i := range wantG {
			for k := range wantG[i] {
				if math.Float32bits(gotG[i][k]) != math.Float32bits(wantG[i][k]) {
					t.Fatalf("step %d (n=%d): gradient %d[%d] = %v with the arena, %v without", s, n, i, k, gotG[i][k], wantG[i][k])
				}
			}
		}
		if len(a.lent) != 0 || a.g != nil {
			t.Fatalf("step %d: after Release %d buffers lent, graph attached %v", s, len(a.lent), a.g != nil)
		}
	}
	if a.early == 0 {
		t.Error("no buffer was taken back within a step (after the last op that reads it)")
	}
	t.Logf("%d buffers taken back within steps", a.early)
}

// TestArenaReusesAndDrops: a second step of the same size allocates no new
// buffer; buffers unused for arenaMaxIdle steps are dropped.
func TestArenaReusesAndDrops(t *testing.T) {
	a := NewArena()
	arenaStep(t, a, 40, 1)
	size := a.Size()
	if size == 0 || len(a.free) == 0 {
		t.Fatalf("after a step the arena holds %d float32s in %d buffers", size, len(a.free))
	}
	arenaStep(t, a, 40, 2)
	if a.Size() != size {
		t.Errorf("a second step of the same size grew the arena from %d to %d float32s", size, a.Size())
	}
	// Smaller steps reuse some buffers; the rest idle out.
	for range arenaMaxIdle {
		arenaStep(t, a, 4, 3)
	}
	if a.Size() >= size {
		t.Errorf("after %d smaller steps the arena still holds %d float32s (%d after the large step)", arenaMaxIdle, a.Size(), size)
	}
	for i := 1; i < len(a.free); i++ {
		if cap(a.free[i].b) < cap(a.free[i-1].b) {
			t.Fatalf("idle buffers not sorted by capacity at %d", i)
		}
	}
	for range arenaMaxIdle {
		a.Release()
	}
	if a.Size() != 0 || len(a.free) != 0 {
		t.Errorf("after %d releases without a step the arena holds %d float32s", arenaMaxIdle, a.Size())
	}
}

// TestArenaGet: lent buffers are zeroed and distinct, the smallest idle
// buffer that fits is chosen, and a new one has spare capacity.
func TestArenaGet(t *testing.T) {
	a := NewArena()
	x, y := a.get(100, false), a.get(10, false)
	if cap(x) != 100+100/arenaSlack || len(x) != 100 {
		t.Errorf("new buffer len %d cap %d, want 100, %d", len(x), cap(x), 100+100/arenaSlack)
	}
	for i := range x {
		x[i] = 1
	}
	for i := range y {
		y[i] = 2
	}
	a.Release()
	z := a.get(9, false) // the 10 fits better than the 100
	if cap(z) != cap(y) || &z[0] != &y[0] {
		t.Errorf("get(9) took a buffer of capacity %d, want the idle one of %d", cap(z), cap(y))
	}
	if v := a.get(40, false); &v[0] == &x[0] {
		t.Error("get(40) took the idle buffer of 100 (more than twice its size)")
	}
	w := a.get(60, false)
	if &w[0] != &x[0] {
		t.Error("get(60) did not reuse the idle buffer of 100")
	}
	for i, v := range w {
		if v != 0 {
			t.Fatalf("reused buffer not cleared: [%d] = %v", i, v)
		}
	}
	if v := a.get(200, false); cap(v) < 200 || &v[0] == &x[0] {
		t.Error("get(200) must allocate a new buffer")
	}
}

// TestArenaAttach: one graph per arena and one arena per graph; a graph run
// again after Release allocates as before (its ops' values are then not
// lent by the arena).
func TestArenaAttach(t *testing.T) {
	a, b := NewArena(), NewArena()
	if err := a.Attach(nil); err == nil {
		t.Error("attach to nil graph: no error")
	}
	g := gorgonia.NewGraph()
	if err := a.Attach(g); err != nil {
		t.Fatal(err)
	}
	if err := a.Attach(gorgonia.NewGraph()); err == nil {
		t.Error("attaching an attached arena: no error")
	}
	if err := b.Attach(g); err == nil {
		t.Error("a second arena on one graph: no error")
	}
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 2), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float32{-1, 2, -3, 4, -5, 6}))))
	y, err := ReLU(x)
	if err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if len(a.lent) != 1 {
		t.Fatalf("%d buffers lent for one ReLU", len(a.lent))
	}
	lent := &a.lent[0].b[0]
	a.Release()
	vm.Reset()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	if v := y.Value().Data().([]float32); &v[0] == lent || !slices.Equal(v, []float32{0, 2, 0, 4, 0, 6}) {
		t.Errorf("run after Release: value %v (lent buffer reused: %v)", v, &v[0] == lent)
	}
	if len(a.lent) != 0 {
		t.Errorf("a released arena lent %d buffers", len(a.lent))
	}
	if err := b.Attach(g); err != nil {
		t.Errorf("attach after the first arena released the graph: %v", err)
	}
	b.Release()
}

// TestArenaKeep: a node read only by this package's ops is taken back once
// they have run (its value then shows the poison), unless it is kept.
func TestArenaKeep(t *testing.T) {
	defer PoisonArenas(PoisonArenas(true))
	a := NewArena()
	for _, keep := range []bool{false, true} {
		g := gorgonia.NewGraph()
		if err := a.Attach(g); err != nil {
			t.Fatal(err)
		}
		x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 2), gorgonia.WithName("x"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(3, 2), tensor.WithBacking([]float32{1, -2, 3, -4, 5, -6}))))
		w := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("w"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{1, 0, 0, 1}))))
		b := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("b"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{0, 0}))))
		slope := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(1), gorgonia.WithName("a"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{0.25}))))
		xw, err := Linear(x, w, b, LinearOpts{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := PReLU(xw, slope)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := gorgonia.Sum(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gorgonia.Grad(loss, w, slope); err != nil {
			t.Fatal(err)
		}
		if keep {
			a.Keep(xw)
		}
		vm := gorgonia.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(xw.Value().Data().([]float32))
		hv := slices.Clone(h.Value().Data().([]float32))
		vm.Close()
		a.Release()
		if want := []float32{1, -2, 3, -4, 5, -6}; keep != slices.Equal(got, want) {
			t.Errorf("keep %v: x·W read after the run = %v (x·W is %v)", keep, got, want)
		}
		if want := []float32{1, -0.5, 3, -1, 5, -1.5}; !slices.Equal(hv, want) {
			t.Errorf("keep %v: PReLU output (read by the sum) = %v, want %v", keep, hv, want)
		}
	}
}

// TestFillersOverwrite: the sparse products, which the arena lends
// uncleared buffers (filler), write every element of their output, empty
// rows included, whatever the buffer held (NaN here), in both row paths
// (f = 3 and f = 130 take different kernel blocks).
func TestFillersOverwrite(t *testing.T) {
	// Rows 0 and 2 are empty.
	rowPtr, col := []int32{0, 0, 2, 2, 3}, []int32{0, 2, 1}
	m, err := NewCSR(4, 3, rowPtr, col)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWeightedCSR(4, 3, rowPtr, col, []float64{0.5, 2, -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []int{3, 130} {
		x := make([]float32, 3*f)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		nan := func() []float32 {
			o := make([]float32, 4*f)
			for i := range o {
				o[i] = float32(math.NaN())
			}
			return o
		}
		out, wout := nan(), nan()
		SpMMFloat32(m, x, f, out)
		WSpMMFloat32(w, x, f, wout)
		for j := range f {
			want := [4]float32{0, x[j] + x[2*f+j], 0, x[f+j]}
			wwant := [4]float32{0, 0.5*x[j] + 2*x[2*f+j], 0, -x[f+j]}
			for r := range 4 {
				if out[r*f+j] != want[r] || wout[r*f+j] != wwant[r] {
					t.Fatalf("f=%d: row %d column %d: SpMM %v (want %v), WSpMM %v (want %v)", f, r, j, out[r*f+j], want[r], wout[r*f+j], wwant[r])
				}
			}
		}
	}
}

package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

func TestResNetPresetsAndParams(t *testing.T) {
	for _, tc := range []struct {
		arch   string
		convs  int // 3×3 and 1×1 convolutions
		embed  int
		params int // trainable scalars, independent count below
	}{
		{"resnet8", 1 + 2*3 + 2, 64, 0},
		{"resnet14", 1 + 4*3 + 2, 64, 0},
		{"resnet20", 1 + 6*3 + 2, 64, 0},
		{"resnet18-narrow", 1 + 4*4 + 3, 256, 0},
	} {
		cfg, err := ResNetPreset(tc.arch)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewResNet(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		convs := 0
		names := map[string]bool{}
		for _, p := range m.Params() {
			if names[p.Name] {
				t.Errorf("%s: duplicate parameter name %s", tc.arch, p.Name)
			}
			names[p.Name] = true
			if p.Value.Dims() == 4 {
				convs++
				if !strings.HasSuffix(p.Name, ".weight") {
					t.Errorf("%s: 4-D parameter %s", tc.arch, p.Name)
				}
			}
			if strings.Contains(p.Name, "running_") == p.Trainable {
				t.Errorf("%s: %s has Trainable %v", tc.arch, p.Name, p.Trainable)
			}
		}
		if convs != tc.convs {
			t.Errorf("%s: %d convolutions, want %d", tc.arch, convs, tc.convs)
		}
		if m.EmbedDim() != tc.embed || m.ProjDim() != 128 {
			t.Errorf("%s: EmbedDim %d ProjDim %d, want %d and 128", tc.arch, m.EmbedDim(), m.ProjDim(), tc.embed)
		}
	}
	if _, err := ResNetPreset("resnet50"); err == nil {
		t.Error("unknown preset accepted")
	}
	for _, bad := range []ResNetConfig{
		{Widths: []int{16, 32}, Blocks: []int{1}},
		{Widths: []int{16, 0}, Blocks: []int{1, 1}},
		{BNMomentum: 2},
	} {
		if _, err := NewResNet(bad, 0); err == nil {
			t.Errorf("config %+v accepted", bad)
		}
	}
}

// TestResNetFLOPs checks ForwardFLOPs against the multiply-adds of the
// benchmark network (ResNet-14, 16/32/64, head 64-64-128) counted by hand.
func TestResNetFLOPs(t *testing.T) {
	m, err := NewResNet(ResNetConfig{ProjHidden: 64}, 0)
	if err != nil {
		t.Fatal(err)
	}
	macs := 32*32*3*16*9 + // stem
		4*32*32*16*16*9 + // stage 1
		16*16*32*16*9 + 3*16*16*32*32*9 + 16*16*32*16 + // stage 2 + shortcut
		8*8*64*32*9 + 3*8*8*64*64*9 + 8*8*64*32 + // stage 3 + shortcut
		64*64 + 64*128 // head
	if got := m.ForwardFLOPs(32, 32); got != int64(2*macs) {
		t.Errorf("ForwardFLOPs = %d, want %d", got, 2*macs)
	}
}

// tinyResNet is a two-stage float64 ResNet small enough for finite differences.
func tinyResNet(t *testing.T, float64s bool) *ResNet {
	t.Helper()
	m, err := NewResNet(ResNetConfig{InChannels: 2, Widths: []int{3, 4}, Blocks: []int{1, 1}, ProjHidden: 5, ProjDim: 3, Float64: float64s}, 7)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func randomImages(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// resnetObjective builds Σ r⊙proj for a training-mode forward pass of x
// (n×2×6×5) and returns the graph, the objective and the bound model.
func resnetObjective(t *testing.T, m *ResNet, x []float64, n int, r []float64) (*gorgonia.ExprGraph, *gorgonia.Node, *ResNetBound) {
	t.Helper()
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	in, xv := b.Input(n, 6, 5)
	copy(xv.Float64s(), x)
	e, err := b.Encode(in, true)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Project(e)
	if err != nil {
		t.Fatal(err)
	}
	rn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, m.ProjDim()), gorgonia.WithName("r"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(n, m.ProjDim()), tensor.WithBacking(r))))
	prod, err := gorgonia.HadamardProd(p, rn)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := gorgonia.Sum(prod)
	if err != nil {
		t.Fatal(err)
	}
	return g, obj, b
}

func TestResNetGradientFiniteDifferences(t *testing.T) {
	t.Run("cifar stem", func(t *testing.T) { checkResNetGradient(t, tinyResNet(t, true)) })
	t.Run("imagenet stem", func(t *testing.T) {
		m, err := NewResNet(ResNetConfig{InChannels: 2, Widths: []int{3, 4}, Blocks: []int{1, 1}, ProjHidden: 5, ProjDim: 3, Float64: true, ImageNetStem: true}, 7)
		if err != nil {
			t.Fatal(err)
		}
		if s := m.Params()[0].Value.Shape(); s[2] != 7 || s[3] != 7 {
			t.Fatalf("stem weight %v, want 7×7", s)
		}
		checkResNetGradient(t, m)
	})
}

// checkResNetGradient compares the gradient of every trainable parameter
// of m with central finite differences (three entries per parameter).
func checkResNetGradient(t *testing.T, m *ResNet) {
	const n = 3
	rng := rand.New(rand.NewPCG(11, 12))
	x := randomImages(rng, n*2*6*5)
	r := randomImages(rng, n*m.ProjDim())
	g, obj, b := resnetObjective(t, m, x, n, r)
	if _, err := gorgonia.Grad(obj, b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	grads, err := b.Grads(nil)
	if err != nil {
		t.Fatal(err)
	}
	value := func() float64 {
		g2, o2, _ := resnetObjective(t, m, x, n, r)
		vm2 := gorgonia.NewTapeMachine(g2)
		defer vm2.Close()
		if err := vm2.RunAll(); err != nil {
			t.Fatal(err)
		}
		return o2.Value().Data().(float64)
	}
	const h = 1e-5
	k := 0
	checked := 0
	for _, p := range m.Params() {
		if !p.Trainable {
			continue
		}
		gk := grads[k]
		k++
		vals := p.Value.Float64s()
		// Three entries per parameter: first, middle, last.
		for _, i := range []int{0, len(vals) / 2, len(vals) - 1} {
			old := vals[i]
			vals[i] = old + h
			up := value()
			vals[i] = old - h
			down := value()
			vals[i] = old
			fd := (up - down) / (2 * h)
			if d := math.Abs(fd - float64(gk[i])); d > 1e-4*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s[%d]: analytic %.7g, finite difference %.7g", p.Name, i, gk[i], fd)
			}
			checked++
		}
	}
	if checked < 3*20 {
		t.Fatalf("checked only %d entries", checked)
	}
}

// TestResNetCompiledGraphReruns runs one compiled training graph twice on
// the same input (identical results: buffers are reused, not accumulated)
// and after a parameter update (the update is seen).
func TestResNetCompiledGraphReruns(t *testing.T) {
	m := tinyResNet(t, false)
	const n = 4
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	in, xv := b.Input(n, 6, 5)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range xv.Float32s() {
		xv.Float32s()[i] = float32(rng.NormFloat64())
	}
	e, err := b.Encode(in, true)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Project(e)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := gorgonia.Sum(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gorgonia.Grad(obj, b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	run := func() ([]float32, [][]float32) {
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		defer vm.Reset()
		gs, err := b.Grads(nil)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(p.Value().Data().([]float32)), gs
	}
	p1, g1 := run()
	p2, g2 := run()
	if !slices.Equal(p1, p2) {
		t.Error("second run of the same graph changed the projections")
	}
	for i := range g1 {
		if !slices.Equal(g1[i], g2[i]) {
			t.Errorf("second run changed gradient %d", i)
		}
	}
	w := m.Params()[0].Value.Float32s()
	w[0] += 0.5
	p3, _ := run()
	if slices.Equal(p1, p3) {
		t.Error("a parameter update is not seen by the compiled graph")
	}
}

func TestResNetStatsAndEmbedding(t *testing.T) {
	m := tinyResNet(t, false)
	const n = 7
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, n*2*6*5)
	for i := range x {
		x[i] = float32(2 + rng.NormFloat64())
	}
	// Before any training step, running statistics are (0, 1): evaluation
	// mode is then batch-size invariant, including the zero-padded tail.
	e1, p1, err := m.EmbedImages(x, n, 6, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	e2, p2, err := m.EmbedImages(x, n, 6, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRel64(to64(e1), to64(e2)); d > 1e-5 {
		t.Errorf("embeddings depend on the batch size: max rel diff %g", d)
	}
	if d := maxRel64(to64(p1), to64(p2)); d > 1e-5 {
		t.Errorf("projections depend on the batch size: max rel diff %g", d)
	}
	if len(e1) != n*m.EmbedDim() || len(p1) != n*m.ProjDim() {
		t.Fatalf("sizes %d, %d", len(e1), len(p1))
	}

	// One training-mode run and CommitStats move the stem's running mean
	// towards the batch mean (inputs have mean 2, so the conv outputs are
	// far from 0).
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	in, xv := b.Input(n, 6, 5)
	copy(xv.Float32s(), x)
	if _, err := b.Encode(in, true); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(m.Params()[4].Value.Float32s()) // bn1.running_var
	if m.Params()[4].Name != "bn1.running_var" {
		t.Fatalf("param 3 is %s", m.Params()[4].Name)
	}
	if err := b.CommitStats(); err != nil {
		t.Fatal(err)
	}
	after := m.Params()[4].Value.Float32s()
	if slices.Equal(before, after) {
		t.Error("CommitStats did not change bn1.running_var")
	}
	e3, _, err := m.EmbedImages(x, n, 6, 5, 7)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(e2, e3) {
		t.Error("evaluation mode ignores the updated running statistics")
	}
	if _, _, err := m.EmbedImages(x[:5], n, 6, 5, 3); err == nil {
		t.Error("short pixel slice accepted")
	}
}

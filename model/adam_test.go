package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

func scalarParam(name string, v ...float32) *Param {
	return &Param{Name: name, Value: tensor.New(tensor.WithShape(len(v)), tensor.WithBacking(v)), Trainable: true}
}

// TestAdamHandComputed checks two steps on one parameter against values
// worked out by hand from PyTorch's update rule.
func TestAdamHandComputed(t *testing.T) {
	p := scalarParam("p", 1)
	buf := &Param{Name: "buffer", Value: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{5})), Trainable: false}
	a := NewAdam(0.1, []*Param{buf, p})
	// Step 1, g = 0.5: m = 0.05, v = 0.00025, m̂ = 0.5, v̂ = 0.25,
	// p = 1 − 0.1·0.5/(0.5 + 1e-8).
	if err := a.Step([][]float32{{0.5}}); err != nil {
		t.Fatal(err)
	}
	want1 := 1 - 0.1*0.5/(0.5+1e-8)
	if got := float64(p.Value.Float32s()[0]); math.Abs(got-want1) > 1e-7 {
		t.Fatalf("after step 1: p = %v, want %v", got, want1)
	}
	// Step 2, g = −0.25: m = 0.9·0.05 − 0.1·0.25 = 0.02,
	// v = 0.999·0.00025 + 0.001·0.0625 = 0.00031225,
	// m̂ = 0.02/0.19, v̂ = 0.00031225/(1 − 0.999²).
	if err := a.Step([][]float32{{-0.25}}); err != nil {
		t.Fatal(err)
	}
	mhat := 0.02 / (1 - 0.81)
	vhat := 0.00031225 / (1 - 0.999*0.999)
	want2 := want1 - 0.1*mhat/(math.Sqrt(vhat)+1e-8)
	if got := float64(p.Value.Float32s()[0]); math.Abs(got-want2) > 1e-6 {
		t.Fatalf("after step 2: p = %v, want %v", got, want2)
	}
	if buf.Value.Float32s()[0] != 5 || a.Steps() != 2 {
		t.Fatalf("buffer %v (want 5 untouched), steps %d (want 2)", buf.Value.Float32s()[0], a.Steps())
	}
}

// TestAdamReference compares several steps with weight decay and a skipped
// (nil) gradient against a float64 loop.
func TestAdamReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	p1 := scalarParam("a", 0.3, -1.2, 2)
	p2 := scalarParam("b", 0.7)
	a := NewAdam(0.01, []*Param{p1, p2})
	a.WeightDecay = 0.05
	ref := []float64{0.3, -1.2, 2}
	m, v := make([]float64, 3), make([]float64, 3)
	for step := 1; step <= 5; step++ {
		g := []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())}
		if err := a.Step([][]float32{g, nil}); err != nil {
			t.Fatal(err)
		}
		for k := range ref {
			gr := float64(g[k]) + 0.05*ref[k]
			m[k] = 0.9*m[k] + 0.1*gr
			v[k] = 0.999*v[k] + 0.001*gr*gr
			ref[k] -= 0.01 / (1 - math.Pow(0.9, float64(step))) * m[k] / (math.Sqrt(v[k])/math.Sqrt(1-math.Pow(0.999, float64(step))) + 1e-8)
		}
	}
	for k, want := range ref {
		if got := float64(p1.Value.Float32s()[k]); math.Abs(got-want) > 1e-6 {
			t.Errorf("a[%d] = %v, want %v", k, got, want)
		}
	}
	if p2.Value.Float32s()[0] != 0.7 {
		t.Errorf("parameter with nil gradients moved to %v", p2.Value.Float32s()[0])
	}
}

func TestAdamRejects(t *testing.T) {
	p := scalarParam("p", 1, 2)
	a := NewAdam(0.1, []*Param{p})
	for _, grads := range [][][]float32{nil, {{1}}, {{1, 2}, {3}}} {
		if err := a.Step(grads); err == nil {
			t.Errorf("grads %v: want an error", grads)
		}
	}
	a.Beta1 = 1
	if err := a.Step([][]float32{{1, 2}}); err == nil {
		t.Error("Beta1 = 1: want an error")
	}
	if a.Steps() != 0 || p.Value.Float32s()[0] != 1 {
		t.Error("a failed step changed the state")
	}
	m64, _ := NewGIN(GINConfig{InDim: 2, Hidden: 2, Layers: 1, Float64: true}, 1)
	a64 := NewAdam(0.1, m64.Params())
	if err := a64.Step(make([][]float32, m64.NumTrainable())); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Errorf("float64 model: err = %v", err)
	}
}

func TestAdamStateRoundTrip(t *testing.T) {
	mk := func() ([]*Param, *Adam) {
		ps := []*Param{scalarParam("w", 1, 2, 3), scalarParam("b", -1)}
		return ps, NewAdam(0.05, ps)
	}
	grads := [][]float32{{0.1, -0.2, 0.3}, {0.4}}
	psA, a := mk()
	for i := 0; i < 3; i++ {
		if err := a.Step(grads); err != nil {
			t.Fatal(err)
		}
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	psB, b := mk()
	for i, p := range psA { // same parameter values, fresh optimiser
		copy(psB[i].Value.Float32s(), p.Value.Float32s())
	}
	b.LR = 123
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	if b.Steps() != 3 || b.LR != 0.05 {
		t.Fatalf("restored steps %d lr %v, want 3 and 0.05", b.Steps(), b.LR)
	}
	// One more step from both must agree exactly.
	if err := a.Step(grads); err != nil {
		t.Fatal(err)
	}
	if err := b.Step(grads); err != nil {
		t.Fatal(err)
	}
	for i := range psA {
		for k, x := range psA[i].Value.Float32s() {
			if y := psB[i].Value.Float32s()[k]; x != y {
				t.Fatalf("param %d[%d]: %v vs %v after restore", i, k, x, y)
			}
		}
	}
	// Corrupt or mismatched states are rejected without changes.
	_, c := mk()
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("XX"), state[2:]...),
		"truncated": state[:len(state)-3],
		"trailing":  append(append([]byte(nil), state...), 0),
	} {
		if err := c.UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	other := NewAdam(0.1, []*Param{scalarParam("w", 1, 2, 3)})
	if err := other.UnmarshalBinary(state); err == nil {
		t.Error("state for another parameter list: want an error")
	}
	if c.Steps() != 0 {
		t.Error("a failed restore changed the optimiser")
	}
}

func TestGINParamsRoundTrip(t *testing.T) {
	a, _ := NewGIN(GINConfig{InDim: 3, Hidden: 4, Layers: 2}, 1)
	b, _ := NewGIN(GINConfig{InDim: 3, Hidden: 4, Layers: 2}, 2)
	perturbModel(a, 3)
	blob, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(blob); err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Params() {
		if !p.Value.Eq(b.Params()[i].Value) {
			t.Fatalf("%s differs after the round trip", p.Name)
		}
	}
	c, _ := NewGIN(GINConfig{InDim: 3, Hidden: 5, Layers: 2}, 1)
	if err := c.UnmarshalBinary(blob); err == nil {
		t.Error("checkpoint of another shape: want an error")
	}
	if err := b.UnmarshalBinary(blob[:len(blob)-1]); err == nil {
		t.Error("truncated checkpoint: want an error")
	}
}

package optim

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// kinds builds one optimizer of each kind with non-default settings.
var kinds = []struct {
	name string
	make func([]Param) Optimizer
}{
	{"adam", func(p []Param) Optimizer { a := NewAdam(p, 0.01); a.WeightDecay = 0.01; return a }},
	{"adamw", func(p []Param) Optimizer { return NewAdamW(p, 0.01, 0.05) }},
	{"sgd", func(p []Param) Optimizer {
		s := NewSGD(p, 0.1)
		s.Momentum, s.Nesterov, s.WeightDecay = 0.9, true, 1e-3
		return s
	}},
	{"lars", func(p []Param) Optimizer {
		l := NewLARS(p, 0.3)
		l.WeightDecay, l.TrustCoefficient = 1e-4, 0.02
		return l
	}},
}

func cloneParams(ps []Param) []Param {
	out := make([]Param, len(ps))
	for i, p := range ps {
		out[i] = p
		out[i].Value = slices.Clone(p.Value)
	}
	return out
}

// randomGrads returns gradients for params; the last parameter's is nil at
// the first steps so that SGD has a parameter without a momentum buffer at
// the checkpoint.
func randomGrads(rng *rand.Rand, params []Param, step int) [][]float32 {
	grads := make([][]float32, len(params))
	for i, p := range params {
		if i == len(params)-1 && step < 3 {
			continue
		}
		grads[i] = make([]float32, len(p.Value))
		for k := range grads[i] {
			grads[i][k] = float32(rng.NormFloat64())
		}
	}
	return grads
}

func TestStateRoundTrip(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			psA := testParams()
			a := kind.make(psA)
			var grads [][][]float32
			for step := range 6 {
				grads = append(grads, randomGrads(rng, psA, step))
			}
			for step := range 3 {
				a.SetLR(a.LR() * 0.9)
				if err := a.Step(grads[step]); err != nil {
					t.Fatal(err)
				}
			}
			state, err := a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			psB := cloneParams(psA)
			b := kind.make(psB)
			b.SetLR(123)
			if err := b.UnmarshalBinary(state); err != nil {
				t.Fatal(err)
			}
			if b.Steps() != 3 || b.LR() != a.LR() {
				t.Fatalf("restored steps %d lr %v, want 3 and %v", b.Steps(), b.LR(), a.LR())
			}
			again, _ := b.MarshalBinary()
			if !bytes.Equal(again, state) {
				t.Fatal("the restored optimizer encodes differently")
			}
			for step := 3; step < 6; step++ {
				for _, o := range []Optimizer{a, b} {
					o.SetLR(o.LR() * 0.9)
					if err := o.Step(grads[step]); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i := range psA {
				for k, x := range psA[i].Value {
					if y := psB[i].Value[k]; math.Float32bits(x) != math.Float32bits(y) {
						t.Fatalf("%s[%d]: %v uninterrupted, %v after restore", psA[i].Name, k, x, y)
					}
				}
			}
		})
	}
}

func TestStateRejects(t *testing.T) {
	for ki, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			src := kind.make(testParams())
			for step := range 4 {
				if err := src.Step(randomGrads(rng, testParams(), step)); err != nil {
					t.Fatal(err)
				}
			}
			state, _ := src.MarshalBinary()
			renamed := testParams()
			renamed[1].Name = "c"
			resized := testParams()
			resized[2].Value = resized[2].Value[:3]
			other, _ := kinds[(ki+1)%len(kinds)].make(testParams()).MarshalBinary()
			magic := slices.Clone(state)
			magic[0] = 'X'
			cases := []struct {
				name   string
				params []Param
				state  []byte
				want   string
			}{
				{"empty", nil, nil, "bad magic"},
				{"wrong magic", nil, magic, "bad magic"},
				{"truncated", nil, state[:len(state)-5], "truncated"},
				{"truncated header", nil, state[:len(stateMagic)+3], "truncated"},
				{"trailing bytes", nil, append(slices.Clone(state), 0, 0), "2 trailing bytes"},
				{"renamed param", renamed, state, `parameter 1 is "b", want "c"`},
				{"resized param", resized, state, "zero has 4 values, want 3"},
				{"fewer params", testParams()[:3], state, "4 parameters, optimizer has 3"},
				{"other kind", nil, other, "not \"" + kind.name + "\""},
			}
			for cut := range len(state) { // every truncation fails
				cases = append(cases, struct {
					name   string
					params []Param
					state  []byte
					want   string
				}{"cut", nil, state[:cut], ""})
			}
			for _, c := range cases {
				params := c.params
				if params == nil {
					params = testParams()
				}
				o := kind.make(params)
				o.SetLR(0.25)
				if err := o.Step(randomGrads(rng, params, 5)); err != nil {
					t.Fatal(err)
				}
				before, _ := o.MarshalBinary()
				values := cloneParams(params)
				err := o.UnmarshalBinary(c.state)
				if err == nil {
					t.Fatalf("%s: want an error", c.name)
				}
				if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), kind.name+" state: ") {
					t.Errorf("%s: error %q, want it to start with %q and contain %q", c.name, err, kind.name+" state: ", c.want)
				}
				after, _ := o.MarshalBinary()
				if !bytes.Equal(before, after) || o.LR() != 0.25 || o.Steps() != 1 {
					t.Errorf("%s: a failed restore changed the optimizer", c.name)
				}
				for i := range params {
					if !slices.Equal(params[i].Value, values[i].Value) {
						t.Errorf("%s: a failed restore changed %s", c.name, params[i].Name)
					}
				}
			}
		})
	}
}

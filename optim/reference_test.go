package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refState is the float64 state of one parameter in the reference loops.
type refState struct {
	m, v, b []float64
	started bool // SGD: the momentum buffer exists
}

// refStep is an independent float64 implementation of one optimizer's
// update of one parameter, written from the PyTorch / MoCo v3 formulas.
// t is the (global, 1-based) step count.
type refStep func(t int, lr float64, p, g []float64, st *refState, noDecay bool)

func norm(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func refAdam(b1, b2, eps, wd float64, decoupled bool) refStep {
	return func(t int, lr float64, p, g []float64, st *refState, noDecay bool) {
		wd := wd
		if noDecay {
			wd = 0
		}
		if st.m == nil {
			st.m, st.v = make([]float64, len(p)), make([]float64, len(p))
		}
		for k := range p {
			gr := g[k]
			if decoupled {
				p[k] *= 1 - lr*wd
			} else {
				gr += wd * p[k]
			}
			st.m[k] = b1*st.m[k] + (1-b1)*gr
			st.v[k] = b2*st.v[k] + (1-b2)*gr*gr
			mhat := st.m[k] / (1 - math.Pow(b1, float64(t)))
			vhat := st.v[k] / (1 - math.Pow(b2, float64(t)))
			p[k] -= lr * mhat / (math.Sqrt(vhat) + eps)
		}
	}
}

func refSGD(mom, damp, wd float64, nesterov bool) refStep {
	return func(t int, lr float64, p, g []float64, st *refState, noDecay bool) {
		wd := wd
		if noDecay {
			wd = 0
		}
		d := make([]float64, len(p))
		for k := range p {
			d[k] = g[k] + wd*p[k]
		}
		if mom != 0 {
			if !st.started {
				st.b = append([]float64(nil), d...)
				st.started = true
			} else {
				for k := range d {
					st.b[k] = mom*st.b[k] + (1-damp)*d[k]
				}
			}
			for k := range d {
				if nesterov {
					d[k] += mom * st.b[k]
				} else {
					d[k] = st.b[k]
				}
			}
		}
		for k := range p {
			p[k] -= lr * d[k]
		}
	}
}

func refLARS(mom, wd, trust float64, nesterov bool) refStep {
	return func(t int, lr float64, p, g []float64, st *refState, noDecay bool) {
		d := append([]float64(nil), g...)
		if !noDecay {
			for k := range d {
				d[k] += wd * p[k]
			}
			pn, dn := norm(p), norm(d)
			if pn > 0 && dn > 0 {
				for k := range d {
					d[k] *= trust * pn / dn
				}
			}
		}
		if st.b == nil {
			st.b = make([]float64, len(p))
		}
		for k := range d {
			st.b[k] = mom*st.b[k] + d[k]
			if nesterov {
				d[k] += mom * st.b[k]
			} else {
				d[k] = st.b[k]
			}
			p[k] -= lr * d[k]
		}
	}
}

// testParams returns fresh parameters: a decayed matrix, a NoDecay bias,
// a parameter that starts at zero (LARS's ‖p‖ = 0 case) and one whose
// gradient is nil at some steps.
func testParams() []Param {
	return []Param{
		{Name: "w", Value: []float32{0.3, -1.2, 2, 0.05, -0.7, 1.1}},
		{Name: "b", Value: []float32{0.1, -0.2, 0.4}, NoDecay: true},
		{Name: "zero", Value: []float32{0, 0, 0, 0}},
		{Name: "sometimes", Value: []float32{-0.5, 0.9}},
	}
}

// skipped reports whether parameter i gets a nil gradient at 1-based step t.
func skipped(i, t int) bool { return i == 3 && (t == 2 || t == 5) }

func TestAgainstFloat64Reference(t *testing.T) {
	cases := []struct {
		name string
		make func([]Param) Optimizer
		ref  refStep
	}{
		{"adam", func(p []Param) Optimizer { return NewAdam(p, 0.01) }, refAdam(0.9, 0.999, 1e-8, 0, false)},
		{"adam wd", func(p []Param) Optimizer { a := NewAdam(p, 0.01); a.WeightDecay = 0.05; return a },
			refAdam(0.9, 0.999, 1e-8, 0.05, false)},
		{"adam betas", func(p []Param) Optimizer {
			a := NewAdam(p, 0.02)
			a.Beta1, a.Beta2, a.Eps = 0.8, 0.99, 1e-6
			return a
		}, refAdam(0.8, 0.99, 1e-6, 0, false)},
		{"adamw", func(p []Param) Optimizer { return NewAdamW(p, 0.01, 0.1) }, refAdam(0.9, 0.999, 1e-8, 0.1, true)},
		{"adamw no decay", func(p []Param) Optimizer { return NewAdamW(p, 0.01, 0) }, refAdam(0.9, 0.999, 1e-8, 0, true)},
		{"sgd", func(p []Param) Optimizer { return NewSGD(p, 0.1) }, refSGD(0, 0, 0, false)},
		{"sgd wd", func(p []Param) Optimizer { s := NewSGD(p, 0.1); s.WeightDecay = 0.01; return s }, refSGD(0, 0, 0.01, false)},
		{"sgd momentum", func(p []Param) Optimizer { s := NewSGD(p, 0.1); s.Momentum = 0.9; return s }, refSGD(0.9, 0, 0, false)},
		{"sgd momentum dampening wd", func(p []Param) Optimizer {
			s := NewSGD(p, 0.1)
			s.Momentum, s.Dampening, s.WeightDecay = 0.9, 0.1, 0.01
			return s
		}, refSGD(0.9, 0.1, 0.01, false)},
		{"sgd nesterov wd", func(p []Param) Optimizer {
			s := NewSGD(p, 0.1)
			s.Momentum, s.WeightDecay, s.Nesterov = 0.9, 0.01, true
			return s
		}, refSGD(0.9, 0, 0.01, true)},
		{"lars", func(p []Param) Optimizer { return NewLARS(p, 0.5) }, refLARS(0.9, 0, 0.001, false)},
		{"lars wd trust 0.02", func(p []Param) Optimizer {
			l := NewLARS(p, 0.5)
			l.WeightDecay, l.TrustCoefficient = 0.1, 0.02
			return l
		}, refLARS(0.9, 0.1, 0.02, false)},
		{"lars nesterov wd", func(p []Param) Optimizer {
			l := NewLARS(p, 0.5)
			l.WeightDecay, l.TrustCoefficient, l.Nesterov = 1e-2, 0.02, true
			return l
		}, refLARS(0.9, 1e-2, 0.02, true)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			params := testParams()
			opt := c.make(params)
			ref := make([][]float64, len(params))
			st := make([]refState, len(params))
			for i, p := range params {
				for _, x := range p.Value {
					ref[i] = append(ref[i], float64(x))
				}
			}
			base := opt.LR()
			for step := 1; step <= 6; step++ {
				lr := base * (1 - 0.1*float64(step)) // a changing (scheduled) rate
				opt.SetLR(lr)
				grads := make([][]float32, len(params))
				for i, p := range params {
					if skipped(i, step) {
						continue
					}
					grads[i] = make([]float32, len(p.Value))
					g64 := make([]float64, len(p.Value))
					for k := range grads[i] {
						grads[i][k] = float32(rng.NormFloat64())
						g64[k] = float64(grads[i][k])
					}
					c.ref(step, lr, ref[i], g64, &st[i], p.NoDecay)
				}
				if err := opt.Step(grads); err != nil {
					t.Fatal(err)
				}
				for i, p := range params {
					for k, x := range p.Value {
						if want := ref[i][k]; !close(float64(x), want, 2e-6) {
							t.Fatalf("step %d: %s[%d] = %v, want %v", step, p.Name, k, x, want)
						}
					}
				}
			}
			if opt.Steps() != 6 {
				t.Errorf("Steps() = %d, want 6", opt.Steps())
			}
		})
	}
}

// close reports whether got is within tol of want, relative to max(|want|, 1e-2).
func close(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-2)
}

// TestHandValues checks single steps against values worked out by hand.
func TestHandValues(t *testing.T) {
	// Adam, g = 0.5: m̂ = 0.5, v̂ = 0.25, p = 1 − 0.1·0.5/(0.5 + 1e-8).
	p := []Param{{Name: "p", Value: []float32{1}}}
	a := NewAdam(p, 0.1)
	if err := a.Step([][]float32{{0.5}}); err != nil {
		t.Fatal(err)
	}
	if got, want := p[0].Value[0], float32(1-0.1*0.5/(0.5+1e-8)); got != want {
		t.Errorf("adam: %v, want %v", got, want)
	}
	// AdamW, lr 0.1, wd 0.5: p = 1·(1 − 0.05) − 0.1·0.5/(0.5 + 1e-8) ≈ 0.85.
	p = []Param{{Name: "p", Value: []float32{1}}}
	if err := NewAdamW(p, 0.1, 0.5).Step([][]float32{{0.5}}); err != nil {
		t.Fatal(err)
	}
	if got, want := p[0].Value[0], float32(0.95-0.1*0.5/(0.5+1e-8)); got != want {
		t.Errorf("adamw: %v, want %v", got, want)
	}
	// SGD momentum 0.9, lr 0.1, g = 0.5 twice: b = 0.5, p = 0.95; b = 0.95, p = 0.855.
	p = []Param{{Name: "p", Value: []float32{1}}}
	s := NewSGD(p, 0.1)
	s.Momentum = 0.9
	for range 2 {
		if err := s.Step([][]float32{{0.5}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := p[0].Value[0]; math.Abs(float64(got)-0.855) > 1e-7 {
		t.Errorf("sgd: %v, want 0.855", got)
	}
	// LARS, lr 1, p = (3, 4), g = (0.6, 0.8): ‖p‖ = 5, ‖g‖ = 1,
	// q = 0.001·5 = 0.005, p = (3 − 0.003, 4 − 0.004). The NoDecay bias
	// moves by the raw gradient: 1 − 1·0.25.
	p = []Param{{Name: "w", Value: []float32{3, 4}}, {Name: "bias", Value: []float32{1}, NoDecay: true}}
	if err := NewLARS(p, 1).Step([][]float32{{0.6, 0.8}, {0.25}}); err != nil {
		t.Fatal(err)
	}
	if p[0].Value[0] != 2.997 || p[0].Value[1] != 3.996 || p[1].Value[0] != 0.75 {
		t.Errorf("lars: %v %v, want [2.997 3.996] [0.75]", p[0].Value, p[1].Value)
	}
}

func TestStepRejects(t *testing.T) {
	for _, c := range []struct {
		name  string
		make  func([]Param) Optimizer
		grads [][]float32
	}{
		{"too few grads", func(p []Param) Optimizer { return NewAdam(p, 0.1) }, [][]float32{{1, 2}}},
		{"wrong size", func(p []Param) Optimizer { return NewSGD(p, 0.1) }, [][]float32{{1}, {1}}},
		{"negative lr", func(p []Param) Optimizer { return NewLARS(p, -1) }, [][]float32{{1, 2}, {1}}},
		{"NaN lr", func(p []Param) Optimizer { return NewAdamW(p, math.NaN(), 0) }, [][]float32{{1, 2}, {1}}},
		{"beta1 = 1", func(p []Param) Optimizer { a := NewAdam(p, 0.1); a.Beta1 = 1; return a }, [][]float32{{1, 2}, {1}}},
		{"negative weight decay", func(p []Param) Optimizer { a := NewAdam(p, 0.1); a.WeightDecay = -1; return a }, [][]float32{{1, 2}, {1}}},
		{"nesterov without momentum", func(p []Param) Optimizer { s := NewSGD(p, 0.1); s.Nesterov = true; return s }, [][]float32{{1, 2}, {1}}},
		{"zero trust", func(p []Param) Optimizer { l := NewLARS(p, 0.1); l.TrustCoefficient = 0; return l }, [][]float32{{1, 2}, {1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := []Param{{Name: "w", Value: []float32{1, 2}}, {Name: "b", Value: []float32{3}}}
			o := c.make(p)
			before, _ := o.MarshalBinary()
			if err := o.Step(c.grads); err == nil {
				t.Fatal("want an error")
			}
			after, _ := o.MarshalBinary()
			if string(before) != string(after) || p[0].Value[0] != 1 || p[0].Value[1] != 2 || p[1].Value[0] != 3 {
				t.Error("a failed step changed the state")
			}
		})
	}
}

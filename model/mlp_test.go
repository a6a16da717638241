package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// refMLP is the float64 loop the MLP is checked against: for every layer
// y = x·W, then (hidden layers) BatchNorm with batch statistics and the
// biased variance, γ, β and ReLU, or (last layer with LastBN) the same
// normalisation without γ, β and ReLU. It returns the output and the
// batch mean and biased variance of every BatchNorm, in call order.
func refMLP(m *MLP, x [][]float64, train bool) (out [][]float64, means, vars [][]float64) {
	h := x
	for l, ly := range m.layers {
		w := m.params[ly.w].Value
		in, o := w.Shape()[0], w.Shape()[1]
		y := make([][]float64, len(h))
		for i := range h {
			y[i] = make([]float64, o)
			for j := 0; j < o; j++ {
				for k := 0; k < in; k++ {
					y[i][j] += h[i][k] * at(w, k*o+j)
				}
			}
		}
		if ly.hasBN {
			mean, v := make([]float64, o), make([]float64, o)
			for j := 0; j < o; j++ {
				if train {
					for i := range y {
						mean[j] += y[i][j]
					}
					mean[j] /= float64(len(y))
					for i := range y {
						v[j] += (y[i][j] - mean[j]) * (y[i][j] - mean[j])
					}
					v[j] /= float64(len(y))
				} else {
					mean[j], v[j] = at(m.params[ly.bn.runMean].Value, j), at(m.params[ly.bn.runVar].Value, j)
				}
				g, b := 1.0, 0.0
				if ly.bn.gamma >= 0 {
					g, b = at(m.params[ly.bn.gamma].Value, j), at(m.params[ly.bn.beta].Value, j)
				}
				for i := range y {
					y[i][j] = g*(y[i][j]-mean[j])/math.Sqrt(v[j]+m.cfg.BNEps) + b
					if l < len(m.layers)-1 {
						y[i][j] = math.Max(y[i][j], 0)
					}
				}
			}
			means, vars = append(means, mean), append(vars, v)
		}
		h = y
	}
	return h, means, vars
}

func randomRows(rng *rand.Rand, n, d int) [][]float64 {
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = rng.NormFloat64()
		}
	}
	return x
}

// mlpRun runs m on x once (train or evaluation mode) and returns the
// output, the bound model and the input node.
func mlpRun(t *testing.T, m *MLP, x [][]float64, train bool) ([]float64, *MLPBound) {
	t.Helper()
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	in := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(len(x), len(x[0])), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(len(x), len(x[0])), tensor.WithBacking(flat(x)))))
	y, err := b.Forward(in, train)
	if err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(y.Value().Data().([]float64)), b
}

// TestMLPMatchesFloat64Loop checks MoCo v3's projector (BatchNorm without
// affine at the end) and predictor (no final BatchNorm) against refMLP in
// training mode, the running statistics CommitStats folds in, and the
// evaluation-mode output with those statistics. It also checks the
// parameter names against PyTorch's nn.Sequential numbering.
func TestMLPMatchesFloat64Loop(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    MLPConfig
		params []string
	}{
		{"projector", MLPConfig{In: 4, Hidden: 6, Out: 3, LastBN: true, Float64: true},
			[]string{"p.0.weight", "p.1.weight", "p.1.bias", "p.1.running_mean", "p.1.running_var", "p.3.weight", "p.4.running_mean", "p.4.running_var"}},
		{"predictor", MLPConfig{In: 3, Hidden: 5, Out: 3, Float64: true},
			[]string{"p.0.weight", "p.1.weight", "p.1.bias", "p.1.running_mean", "p.1.running_var", "p.3.weight"}},
		{"three layers", MLPConfig{In: 3, Hidden: 4, Out: 2, Layers: 3, LastBN: true, Float64: true},
			[]string{"p.0.weight", "p.1.weight", "p.1.bias", "p.1.running_mean", "p.1.running_var", "p.3.weight", "p.4.weight", "p.4.bias", "p.4.running_mean", "p.4.running_var", "p.6.weight", "p.7.running_mean", "p.7.running_var"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMLP("p.", tc.cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range m.Params() {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, tc.params) {
				t.Fatalf("params %v, want %v", names, tc.params)
			}
			perturbMLP(m, 5)
			x := randomRows(rand.New(rand.NewPCG(1, 2)), 7, tc.cfg.In)
			got, b := mlpRun(t, m, x, true)
			want, means, vars := refMLP(m, x, true)
			if d := maxAbsDiff(got, flat(want)); d > 1e-12 {
				t.Fatalf("training-mode output differs from the float64 loop by %g", d)
			}
			if err := b.CommitStats(); err != nil {
				t.Fatal(err)
			}
			k := 0
			for _, ly := range m.layers {
				if !ly.hasBN {
					continue
				}
				for j := range means[k] {
					wm := 0.1 * means[k][j]
					wv := 0.9 + 0.1*vars[k][j]*7/6
					if gm, gv := at(m.params[ly.bn.runMean].Value, j), at(m.params[ly.bn.runVar].Value, j); math.Abs(gm-wm) > 1e-12 || math.Abs(gv-wv) > 1e-12 {
						t.Fatalf("BatchNorm %d channel %d: running stats %g, %g; want %g, %g", k, j, gm, gv, wm, wv)
					}
				}
				k++
			}
			got, _ = mlpRun(t, m, x, false)
			want, _, _ = refMLP(m, x, false)
			if d := maxAbsDiff(got, flat(want)); d > 1e-12 {
				t.Fatalf("evaluation-mode output differs from the float64 loop by %g", d)
			}
		})
	}
}

// perturbMLP moves γ and β away from 1 and 0 so that they matter.
func perturbMLP(m *MLP, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed))
	for _, p := range m.Params() {
		if p.Trainable && p.Value.Dims() == 1 {
			fill(p.Value, func() float64 { return 1 + 0.3*rng.NormFloat64() })
		}
	}
}

func maxAbsDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// TestMLPGradientFiniteDifferences checks the gradients of Σ r⊙MLP(x)
// with respect to every trainable parameter and to the input against
// central finite differences, for the projector and the predictor shapes.
func TestMLPGradientFiniteDifferences(t *testing.T) {
	for _, lastBN := range []bool{true, false} {
		m, err := NewMLP("p.", MLPConfig{In: 4, Hidden: 5, Out: 3, LastBN: lastBN, Float64: true}, 9)
		if err != nil {
			t.Fatal(err)
		}
		perturbMLP(m, 2)
		rng := rand.New(rand.NewPCG(4, 5))
		const n = 6
		x := randomRows(rng, n, 4)
		r := flat(randomRows(rng, n, 3))
		objective := func() (float64, []float64, [][]float32) {
			g := gorgonia.NewGraph()
			b := m.Bind(g)
			in := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, 4), gorgonia.WithName("x"),
				gorgonia.WithValue(tensor.New(tensor.WithShape(n, 4), tensor.WithBacking(flat(x)))))
			y, err := b.Forward(in, true)
			if err != nil {
				t.Fatal(err)
			}
			rn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(n, 3), gorgonia.WithName("r"),
				gorgonia.WithValue(tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(r))))
			obj := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(y, rn))))
			if _, err := gorgonia.Grad(obj, append(b.Learnables(), in)...); err != nil {
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
			gx, err := in.Grad()
			if err != nil {
				t.Fatal(err)
			}
			return obj.Value().Data().(float64), slices.Clone(gx.Data().([]float64)), grads
		}
		_, gx, grads := objective()
		const h = 1e-6
		fd := func(v *float64) float64 {
			old := *v
			*v = old + h
			up, _, _ := objective()
			*v = old - h
			down, _, _ := objective()
			*v = old
			return (up - down) / (2 * h)
		}
		check := func(name string, analytic, want float64) {
			if math.Abs(analytic-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("lastBN %t: %s: analytic %.8g, finite difference %.8g", lastBN, name, analytic, want)
			}
		}
		k := 0
		for _, p := range m.Params() {
			if !p.Trainable {
				continue
			}
			vals := p.Value.Float64s()
			for i := range vals {
				check(p.Name, float64(grads[k][i]), fd(&vals[i]))
			}
			k++
		}
		for i := range n {
			for j := range 4 {
				check("x", gx[i*4+j], fd(&x[i][j]))
			}
		}
	}
}

func TestMLPConfigErrors(t *testing.T) {
	for _, c := range []MLPConfig{{In: 0, Hidden: 2, Out: 2}, {In: 2, Hidden: 0, Out: 2}, {In: 2, Hidden: 2, Out: 2, Layers: -1}, {In: 2, Hidden: 2, Out: 2, BNMomentum: 2}} {
		if _, err := NewMLP("p.", c, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	m, err := NewMLP("p.", MLPConfig{In: 2, Hidden: 2, Out: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(4, 3), gorgonia.WithName("x"))
	if _, err := m.Bind(g).Forward(x, true); err == nil {
		t.Error("input of width 3 for an MLP of width 2: no error")
	}
}

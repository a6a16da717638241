package lab

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MLP is the encoder of train mode: x ↦ normalize(W2·tanh(W1·x + b1) + b2),
// in float64, with an analytic gradient (LossGrad) checked against finite
// differences in the tests.
type MLP struct {
	In, Hidden, Out int
	W1, B1, W2, B2  []float64 // W1 Hidden×In, W2 Out×Hidden, row major
}

// NewMLP returns an MLP with Glorot-uniform weights drawn from seed and
// zero biases.
func NewMLP(in, hidden, out int, seed uint64) (*MLP, error) {
	if in < 1 || hidden < 1 || out < 2 {
		return nil, fmt.Errorf("mlp: sizes in=%d hidden=%d out=%d: want in ≥ 1, hidden ≥ 1, out ≥ 2", in, hidden, out)
	}
	r := rand.New(rand.NewPCG(seed, 0x6d6c70)) // "mlp"
	m := &MLP{In: in, Hidden: hidden, Out: out,
		W1: make([]float64, hidden*in), B1: make([]float64, hidden),
		W2: make([]float64, out*hidden), B2: make([]float64, out)}
	glorot := func(w []float64, fanIn, fanOut int) {
		a := math.Sqrt(6 / float64(fanIn+fanOut))
		for i := range w {
			w[i] = a * (2*r.Float64() - 1)
		}
	}
	glorot(m.W1, in, hidden)
	glorot(m.W2, hidden, out)
	return m, nil
}

// Params returns the parameter slices (W1, B1, W2, B2), aliased.
func (m *MLP) Params() [][]float64 { return [][]float64{m.W1, m.B1, m.W2, m.B2} }

// forward holds the activations of n rows.
type forward struct {
	n       int
	x, h, z []float64 // inputs, hidden (after tanh), outputs before normalising
	norm    []float64 // ‖z_i‖
	e       []float64 // z_i/‖z_i‖
}

func (m *MLP) forward(x []float64, n int) forward {
	f := forward{n: n, x: x, h: make([]float64, n*m.Hidden), z: make([]float64, n*m.Out), norm: make([]float64, n), e: make([]float64, n*m.Out)}
	for i := range n {
		xi := x[i*m.In : (i+1)*m.In]
		hi := f.h[i*m.Hidden : (i+1)*m.Hidden]
		for j := range m.Hidden {
			s := m.B1[j]
			for k, v := range xi {
				s += m.W1[j*m.In+k] * v
			}
			hi[j] = math.Tanh(s)
		}
		zi := f.z[i*m.Out : (i+1)*m.Out]
		var n2 float64
		for j := range m.Out {
			s := m.B2[j]
			for k, v := range hi {
				s += m.W2[j*m.Hidden+k] * v
			}
			zi[j] = s
			n2 += s * s
		}
		f.norm[i] = math.Sqrt(n2)
		inv := 0.0
		if f.norm[i] > 0 {
			inv = 1 / f.norm[i]
		}
		for j := range m.Out {
			f.e[i*m.Out+j] = zi[j] * inv
		}
	}
	return f
}

// Embed returns the unit-length outputs of the n rows of x (n×In), n×Out.
func (m *MLP) Embed(x []float64, n int) []float64 { return m.forward(x, n).e }

// InfoNCE is the NT-Xent loss of SimCLR over 2B unit rows e (2B×d): rows i
// and i+B are the two views of instance i, each the other's positive, and
// the other 2B−2 rows are its negatives:
//
//	L = −1/(2B) Σ_a log( exp(e_a·e_p(a)/τ) / Σ_{c≠a} exp(e_a·e_c/τ) ).
//
// It returns L and ∂L/∂e.
func InfoNCE(e []float64, b, d int, tau float64) (float64, []float64) {
	n := 2 * b
	sim := make([]float64, n*n)
	for a := range n {
		for c := range n {
			if a != c {
				var s float64
				for k := range d {
					s += e[a*d+k] * e[c*d+k]
				}
				sim[a*n+c] = s / tau
			}
		}
	}
	de := make([]float64, n*d)
	var loss float64
	inv := 1 / float64(n)
	for a := range n {
		p := (a + b) % n
		mx := math.Inf(-1)
		for c := range n {
			if c != a {
				mx = max(mx, sim[a*n+c])
			}
		}
		var z float64
		for c := range n {
			if c != a {
				z += math.Exp(sim[a*n+c] - mx)
			}
		}
		loss += -(sim[a*n+p] - mx - math.Log(z))
		// ∂L_a/∂sim[a][c] = (softmax_c − [c = p])/n; sim = e_a·e_c/τ.
		for c := range n {
			if c == a {
				continue
			}
			g := math.Exp(sim[a*n+c]-mx) / z
			if c == p {
				g--
			}
			g *= inv / tau
			for k := range d {
				de[a*d+k] += g * e[c*d+k]
				de[c*d+k] += g * e[a*d+k]
			}
		}
	}
	return loss * inv, de
}

// LossGrad returns the InfoNCE loss of the two views x1 and x2 (b rows of
// In values each: row i of x1 and of x2 are views of one instance) at
// temperature tau, and adds its gradient to grads (shaped as Params).
func (m *MLP) LossGrad(x1, x2 []float64, b int, tau float64, grads [][]float64) float64 {
	x := append(append(make([]float64, 0, 2*b*m.In), x1...), x2...)
	f := m.forward(x, 2*b)
	loss, de := InfoNCE(f.e, b, m.Out, tau)
	gW1, gB1, gW2, gB2 := grads[0], grads[1], grads[2], grads[3]
	dz := make([]float64, m.Out)
	dh := make([]float64, m.Hidden)
	for i := range 2 * b {
		ei := f.e[i*m.Out : (i+1)*m.Out]
		gi := de[i*m.Out : (i+1)*m.Out]
		// e = z/‖z‖: ∂L/∂z = (g − e (e·g))/‖z‖.
		var eg float64
		for j := range m.Out {
			eg += ei[j] * gi[j]
		}
		inv := 0.0
		if f.norm[i] > 0 {
			inv = 1 / f.norm[i]
		}
		for j := range m.Out {
			dz[j] = (gi[j] - ei[j]*eg) * inv
		}
		hi := f.h[i*m.Hidden : (i+1)*m.Hidden]
		clear(dh)
		for j := range m.Out {
			gB2[j] += dz[j]
			for k := range m.Hidden {
				gW2[j*m.Hidden+k] += dz[j] * hi[k]
				dh[k] += m.W2[j*m.Hidden+k] * dz[j]
			}
		}
		xi := x[i*m.In : (i+1)*m.In]
		for k := range m.Hidden {
			dp := dh[k] * (1 - hi[k]*hi[k]) // tanh'
			gB1[k] += dp
			for q := range m.In {
				gW1[k*m.In+q] += dp * xi[q]
			}
		}
	}
	return loss
}

// Adam is the Adam optimiser (Kingma & Ba) over a list of parameter
// slices.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	m, v                  [][]float64
	t                     int
}

// NewAdam returns Adam with the usual β₁ = 0.9, β₂ = 0.999, ε = 1e-8 for
// parameters shaped as params.
func NewAdam(lr float64, params [][]float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	for _, p := range params {
		a.m = append(a.m, make([]float64, len(p)))
		a.v = append(a.v, make([]float64, len(p)))
	}
	return a
}

// Step updates params by grads.
func (a *Adam) Step(params, grads [][]float64) {
	a.t++
	c1 := 1 - math.Pow(a.Beta1, float64(a.t))
	c2 := 1 - math.Pow(a.Beta2, float64(a.t))
	for i, p := range params {
		m, v, g := a.m[i], a.v[i], grads[i]
		for j := range p {
			m[j] = a.Beta1*m[j] + (1-a.Beta1)*g[j]
			v[j] = a.Beta2*v[j] + (1-a.Beta2)*g[j]*g[j]
			p[j] -= a.LR * (m[j] / c1) / (math.Sqrt(v[j]/c2) + a.Eps)
		}
	}
}

package lab

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLossGradFiniteDifferences checks LossGrad's analytic gradient of
// every parameter against central finite differences of the loss.
func TestLossGradFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		in, hidden, out, b int
		tau                float64
	}{{3, 5, 4, 4, 0.5}, {2, 7, 3, 6, 0.1}, {10, 4, 8, 3, 1}} {
		m, err := NewMLP(tc.in, tc.hidden, tc.out, 3)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(5, 5))
		for _, p := range m.Params() {
			for i := range p {
				p[i] += 0.1 * r.NormFloat64() // biases non-zero too
			}
		}
		x1 := make([]float64, tc.b*tc.in)
		x2 := make([]float64, tc.b*tc.in)
		for i := range x1 {
			x1[i], x2[i] = r.NormFloat64(), r.NormFloat64()
		}
		var grads [][]float64
		for _, p := range m.Params() {
			grads = append(grads, make([]float64, len(p)))
		}
		m.LossGrad(x1, x2, tc.b, tc.tau, grads)
		const h = 1e-6
		worst := 0.0
		for pi, p := range m.Params() {
			for j := range p {
				old := p[j]
				scratch := [][]float64{make([]float64, len(m.W1)), make([]float64, len(m.B1)), make([]float64, len(m.W2)), make([]float64, len(m.B2))}
				p[j] = old + h
				lp := m.LossGrad(x1, x2, tc.b, tc.tau, scratch)
				p[j] = old - h
				lm := m.LossGrad(x1, x2, tc.b, tc.tau, scratch)
				p[j] = old
				fd := (lp - lm) / (2 * h)
				if d := math.Abs(fd-grads[pi][j]) / max(1e-3, math.Abs(fd)); d > worst {
					worst = d
				}
				if math.Abs(fd-grads[pi][j]) > 1e-6+1e-5*math.Abs(fd) {
					t.Errorf("%+v: parameter %d[%d]: analytic %v, finite difference %v", tc, pi, j, grads[pi][j], fd)
				}
			}
		}
		t.Logf("%+v: worst relative difference %.2g", tc, worst)
	}
}

// TestInfoNCEKnownValues: identical embeddings give log(2B−1); views that
// are each other's and orthogonal to the rest give the closed form.
func TestInfoNCEKnownValues(t *testing.T) {
	const b, d = 3, 6
	e := make([]float64, 2*b*d)
	for i := range 2 * b {
		e[i*d] = 1
	}
	if l, _ := InfoNCE(e, b, d, 0.5); math.Abs(l-math.Log(2*b-1)) > 1e-12 {
		t.Errorf("identical rows: loss %v, want log(%d) = %v", l, 2*b-1, math.Log(2*b-1))
	}
	clear(e)
	for i := range b { // instance i on axis i, both views
		e[i*d+i], e[(i+b)*d+i] = 1, 1
	}
	tau := 0.25
	want := -math.Log(math.Exp(1/tau) / (math.Exp(1/tau) + float64(2*b-2)))
	if l, _ := InfoNCE(e, b, d, tau); math.Abs(l-want) > 1e-12 {
		t.Errorf("orthogonal instances: loss %v, want %v", l, want)
	}
}

func TestNewMLPErrors(t *testing.T) {
	for _, s := range [][3]int{{0, 4, 4}, {3, 0, 4}, {3, 4, 1}} {
		if _, err := NewMLP(s[0], s[1], s[2], 1); err == nil {
			t.Errorf("NewMLP%v accepted", s)
		}
	}
}

package lab

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// TestPCA checks FitPCA against a float64 covariance loop (C·v = λ·v for
// every axis, axes orthonormal, variances descending and summing to at most
// the trace) and a known case: points along one direction plus smaller
// noise along another.
func TestPCA(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, d = 400, 6
	e := sampler.Embeddings{N: n, D: d, Data: make([]float32, n*d)}
	u := []float64{1, 2, 0, -1, 0, 0.5} // the dominant direction
	var un float64
	for _, x := range u {
		un += x * x
	}
	un = math.Sqrt(un)
	for i := range n {
		a, b := 3*r.NormFloat64(), r.NormFloat64()
		for j := range d {
			noise := 0.05 * r.NormFloat64()
			other := 0.0
			if j == 4 {
				other = b
			}
			e.Data[i*d+j] = float32(a*u[j]/un + other + noise + 7)
		}
	}
	p, err := FitPCA(e, 3)
	if err != nil {
		t.Fatal(err)
	}
	// covariance by a plain loop
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += float64(e.Data[i*d+j]) / n
		}
	}
	cov := make([]float64, d*d)
	for i := range n {
		for a := range d {
			for b := range d {
				cov[a*d+b] += (float64(e.Data[i*d+a]) - mean[a]) * (float64(e.Data[i*d+b]) - mean[b]) / (n - 1)
			}
		}
	}
	for c, axis := range p.Axes {
		for a := range d {
			var cv float64
			for b := range d {
				cv += cov[a*d+b] * axis[b]
			}
			if math.Abs(cv-p.Variance[c]*axis[a]) > 1e-9*(1+p.Variance[0]) {
				t.Errorf("axis %d: (C·v)[%d] = %v, λ·v = %v", c, a, cv, p.Variance[c]*axis[a])
			}
		}
		for c2, other := range p.Axes {
			var dot float64
			for j := range d {
				dot += axis[j] * other[j]
			}
			want := 0.0
			if c == c2 {
				want = 1
			}
			if math.Abs(dot-want) > 1e-9 {
				t.Errorf("axes %d·%d = %v, want %v", c, c2, dot, want)
			}
		}
		if c > 0 && p.Variance[c] > p.Variance[c-1] {
			t.Errorf("variances not descending: %v", p.Variance)
		}
	}
	var cos float64
	for j := range d {
		cos += p.Axes[0][j] * u[j] / un
	}
	if math.Abs(cos) < 0.999 || math.Abs(p.Variance[0]-9) > 1.5 {
		t.Errorf("first axis %v (cosine %v with the dominant direction), variance %v, want about 9", p.Axes[0], cos, p.Variance[0])
	}
	xy := p.Project(e)
	var s0 float64
	for i := range n {
		s0 += xy[i*3] * xy[i*3]
	}
	if v := s0 / (n - 1); math.Abs(v-p.Variance[0]) > 1e-6*p.Variance[0] {
		t.Errorf("the projection's variance on axis 0 is %v, the eigenvalue %v", v, p.Variance[0])
	}
	if _, err := FitPCA(e, 7); err == nil {
		t.Error("7 components of 6 dimensions accepted")
	}
	if _, err := FitPCA(sampler.Embeddings{N: 1, D: 2, Data: []float32{1, 2}}, 1); err == nil {
		t.Error("one row accepted")
	}
}

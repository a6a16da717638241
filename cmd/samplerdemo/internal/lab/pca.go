package lab

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// PCA is a projection onto the leading principal components of a point set.
type PCA struct {
	Mean []float64   // the D column means
	Axes [][]float64 // k unit vectors of D values, by decreasing variance
	// Variance is the variance along each axis and Total the total
	// variance (the trace of the covariance).
	Variance []float64
	Total    float64
}

// FitPCA computes the k leading principal axes of the N×D embeddings
// (the eigenvectors of their covariance, gonum's EigenSym). Each axis is
// signed so that its largest-magnitude coordinate is positive, so the
// projection is a deterministic function of the data.
func FitPCA(e sampler.Embeddings, k int) (PCA, error) {
	if e.N < 2 || e.D < 1 || len(e.Data) != e.N*e.D {
		return PCA{}, fmt.Errorf("pca: need at least 2 rows of N·D values, got N=%d D=%d with %d values", e.N, e.D, len(e.Data))
	}
	if k < 1 || k > e.D {
		return PCA{}, fmt.Errorf("pca: %d components of %d dimensions: want 1 ≤ k ≤ D", k, e.D)
	}
	d := e.D
	p := PCA{Mean: make([]float64, d)}
	for i := range e.N {
		for j, x := range e.Row(i) {
			p.Mean[j] += float64(x)
		}
	}
	for j := range p.Mean {
		p.Mean[j] /= float64(e.N)
	}
	cov := mat.NewSymDense(d, nil)
	row := make([]float64, d)
	for i := range e.N {
		for j, x := range e.Row(i) {
			row[j] = float64(x) - p.Mean[j]
		}
		for a := range d {
			if row[a] == 0 {
				continue
			}
			for b := a; b < d; b++ {
				cov.SetSym(a, b, cov.At(a, b)+row[a]*row[b])
			}
		}
	}
	cov.ScaleSym(1/float64(e.N-1), cov)
	for j := range d {
		p.Total += cov.At(j, j)
	}
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return PCA{}, fmt.Errorf("pca: the eigendecomposition of the %d×%d covariance did not converge", d, d)
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	for c := range k {
		col := d - 1 - c
		axis := make([]float64, d)
		big := 0
		for j := range d {
			axis[j] = vecs.At(j, col)
			if math.Abs(axis[j]) > math.Abs(axis[big]) {
				big = j
			}
		}
		if axis[big] < 0 {
			for j := range axis {
				axis[j] = -axis[j]
			}
		}
		p.Axes = append(p.Axes, axis)
		p.Variance = append(p.Variance, max(vals[col], 0))
	}
	return p, nil
}

// Project returns the coordinates of the N rows of e on the axes, N×k row
// major.
func (p PCA) Project(e sampler.Embeddings) []float64 {
	k := len(p.Axes)
	out := make([]float64, e.N*k)
	for i := range e.N {
		r := e.Row(i)
		for c, axis := range p.Axes {
			var s float64
			for j, x := range r {
				s += (float64(x) - p.Mean[j]) * axis[j]
			}
			out[i*k+c] = s
		}
	}
	return out
}

package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
)

// k-means for the cluster-based samplers (Lloyd's iterations from
// k-means++ seeds); assign.go assigns rows to centres of fixed sizes.

// DefaultKMeansIterations caps the Lloyd iterations of KMeans.
const DefaultKMeansIterations = 30

// KMeans clusters the n rows of x (n×d, row-major) into c groups (1 ≤ c ≤
// n): k-means++ seeding (Arthur and Vassilvitskii 2007) from rng, then
// Lloyd's iterations (assign every row to its nearest centre in squared
// Euclidean distance, ties to the lower centre; move every centre to the
// mean of its rows; a centre left without rows stays where it is) until no
// assignment changes or maxIter iterations. It returns the c×d centres and
// each row's cluster. The distances are computed in float32 (x·μᵀ by
// internal/gemm), the means in float64.
func KMeans(x []float32, n, d, c, maxIter int, rng *rand.Rand) (centres []float32, labels []int32, err error) {
	if n < 1 || d < 1 || len(x) != n*d {
		return nil, nil, fmt.Errorf("sampler: kmeans: %d values for %d×%d rows", len(x), n, d)
	}
	if c < 1 || c > n {
		return nil, nil, fmt.Errorf("sampler: kmeans: clusters must be in [1, %d] (the number of rows), got %d", n, c)
	}
	centres = make([]float32, c*d)
	norm := make([]float64, n)
	for i := range n {
		norm[i] = sqNorm(x[i*d : (i+1)*d])
	}
	// k-means++: the first centre uniform, each next one a row drawn with
	// probability proportional to its squared distance to the nearest centre
	// chosen so far.
	// The squared distances to a new centre μ are ‖x‖² − 2x·μ + ‖μ‖², the
	// dot products x·μ one matrix-vector product (gonum's BLAS, float32).
	dot := make([]float32, n)
	toCentre := func(muNorm float64, i int) float64 {
		return max(0, norm[i]-2*float64(dot[i])+muNorm)
	}
	first := rng.IntN(n)
	copy(centres[:d], x[first*d:(first+1)*d])
	blas32.Implementation().Sgemv(blas.NoTrans, n, d, 1, x, d, centres[:d], 1, 0, dot, 1)
	dist := make([]float64, n)
	mn := sqNorm(centres[:d])
	for i := range n {
		dist[i] = toCentre(mn, i)
	}
	for j := 1; j < c; j++ {
		var tot float64
		for _, v := range dist {
			tot += v
		}
		pick := 0
		if tot > 0 {
			r := rng.Float64() * tot
			pick = n - 1
			for i, v := range dist {
				if r < v {
					pick = i
					break
				}
				r -= v
			}
		} else {
			pick = rng.IntN(n)
		}
		cj := centres[j*d : (j+1)*d]
		copy(cj, x[pick*d:(pick+1)*d])
		blas32.Implementation().Sgemv(blas.NoTrans, n, d, 1, x, d, cj, 1, 0, dot, 1)
		mn := sqNorm(cj)
		for i := range n {
			dist[i] = min(dist[i], toCentre(mn, i))
		}
	}
	labels = make([]int32, n)
	for i := range labels {
		labels[i] = -1
	}
	dots := make([]float32, n*c)
	sums := make([]float64, c*d)
	counts := make([]int, c)
	for it := 0; it < max(maxIter, 1); it++ {
		gemm.Sgemm(false, true, n, c, d, 1, x, d, centres, d, 0, dots, c)
		cn := make([]float64, c)
		for j := range c {
			cn[j] = sqNorm(centres[j*d : (j+1)*d])
		}
		changed := false
		for i := range n {
			best, bd := int32(0), math.Inf(1)
			row := dots[i*c : (i+1)*c]
			for j, dot := range row {
				if v := norm[i] - 2*float64(dot) + cn[j]; v < bd {
					best, bd = int32(j), v
				}
			}
			if labels[i] != best {
				labels[i] = best
				changed = true
			}
		}
		if !changed {
			break
		}
		clear(sums)
		clear(counts)
		for i := range n {
			l := int(labels[i])
			counts[l]++
			s := sums[l*d : (l+1)*d]
			for k, v := range x[i*d : (i+1)*d] {
				s[k] += float64(v)
			}
		}
		for j := range c {
			if counts[j] == 0 {
				continue
			}
			for k := range d {
				centres[j*d+k] = float32(sums[j*d+k] / float64(counts[j]))
			}
		}
	}
	return centres, labels, nil
}

func sqNorm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return s
}

func sqDist(a, b []float32) float64 {
	var s float64
	for k, x := range a {
		t := float64(x) - float64(b[k])
		s += t * t
	}
	return s
}

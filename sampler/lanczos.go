package sampler

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// topEigen returns the k algebraically largest eigenvalues of the
// symmetric n×n matrix a (row-major, both triangles) and their unit
// eigenvectors (column c of the n×k row-major vecs for values[c], largest
// first), by the Lanczos iteration with full reorthogonalisation (every
// new vector is orthogonalised twice against all earlier ones, so the
// basis stays orthonormal to rounding): from the start vector v0, the
// tridiagonal projection T_m of a on the Krylov basis grows until the
// residuals ‖a·x − θ·x‖ = β_m·|y_m| of the k largest Ritz pairs are below
// tol·max(1, |θ_1|), or m = n (then the Ritz pairs are the exact
// eigenpairs up to rounding), or m = maxLanczos. A breakdown (an invariant subspace) goes on
// from the next unit vector e_i with a component outside the basis. From
// one start vector the iteration finds one direction of a repeated
// eigenvalue before a breakdown: SpectralEmbedding's affinities are
// positive everywhere (a connected graph), so its top eigenvalue is simple. T_m's
// eigenpairs come from gonum's EigenSym. The spectral embedding needs the
// top k of a dense n×n affinity, n = k·B; a full EigenSym costs about 9n³
// flops, the iteration m·n² for the m ≪ n steps a clustered spectrum needs.
func topEigen(a []float64, n, k int, v0 []float64, tol float64) (values, vecs []float64) {
	k = min(k, n)
	q := make([][]float64, 0, min(n, 64))
	alpha := make([]float64, 0, 64)
	beta := make([]float64, 0, 64) // beta[j]: coupling of q_j and q_{j+1}
	v := append([]float64(nil), v0...)
	if normalize(v) == 0 {
		v = make([]float64, n)
		v[0] = 1
	}
	w := make([]float64, n)
	nextUnit := 0
	check := func(m int) (ok bool, th []float64, y *mat.Dense) {
		t := mat.NewSymDense(m, nil)
		for i := range m {
			t.SetSym(i, i, alpha[i])
			if i+1 < m {
				t.SetSym(i, i+1, beta[i])
			}
		}
		var es mat.EigenSym
		if !es.Factorize(t, true) {
			return false, nil, nil
		}
		th = es.Values(nil)
		y = &mat.Dense{}
		es.VectorsTo(y)
		if m == n || m == maxLanczos {
			return true, th, y
		}
		bm := beta[m-1]
		scale := math.Max(1, math.Abs(th[m-1]))
		for c := range k {
			if math.Abs(bm*y.At(m-1, m-1-c)) > tol*scale {
				return false, th, y
			}
		}
		return true, th, y
	}
	var th []float64
	var y *mat.Dense
	nextCheck := 8
	for m := 1; ; m++ {
		q = append(q, v)
		for i := range n {
			row := a[i*n : (i+1)*n]
			var s float64
			for j, x := range row {
				s += x * v[j]
			}
			w[i] = s
		}
		var al float64
		for i := range n {
			al += w[i] * v[i]
		}
		alpha = append(alpha, al)
		for range 2 {
			for _, qi := range q {
				var s float64
				for i := range n {
					s += qi[i] * w[i]
				}
				for i := range n {
					w[i] -= s * qi[i]
				}
			}
		}
		b := math.Sqrt(dot64(w, w))
		beta = append(beta, b)
		// At a breakdown the Ritz values are exact but may miss larger
		// eigenvalues outside the Krylov space: go on. Checks come at
		// geometrically spaced m (each costs O(m³)), and the iteration stops
		// at maxLanczos steps.
		last := m == n || m == maxLanczos
		if m >= k && (last || (m >= nextCheck && b >= 1e-12)) {
			var ok bool
			ok, th, y = check(m)
			if ok || last {
				break
			}
			nextCheck = max(m+8, m*5/4)
		}
		next := make([]float64, n)
		if b < 1e-12 {
			// Invariant subspace: continue from a unit vector outside it.
			beta[m-1] = 0
			for ; nextUnit < n; nextUnit++ {
				clear(next)
				next[nextUnit] = 1
				for range 2 {
					for _, qi := range q {
						d := dot64(qi, next)
						for i := range n {
							next[i] -= d * qi[i]
						}
					}
				}
				if normalize(next) > 1e-8 {
					nextUnit++
					break
				}
			}
		} else {
			for i := range n {
				next[i] = w[i] / b
			}
		}
		v = next
	}
	m := len(q)
	values = make([]float64, k)
	vecs = make([]float64, n*k)
	for c := range k {
		col := m - 1 - c
		values[c] = th[col]
		for j, qj := range q {
			yj := y.At(j, col)
			for i := range n {
				vecs[i*k+c] += yj * qj[i]
			}
		}
	}
	return values, vecs
}

// maxLanczos caps the Lanczos steps of topEigen: when the k largest
// eigenvalues sit in a flat part of the spectrum (embeddings early in
// training, all alike, make the affinity almost constant), their Ritz
// vectors converge slowly, and any basis of that near-degenerate subspace
// clusters as well as another; the iteration then stops at maxLanczos
// steps with the Ritz vectors it has.
const maxLanczos = 200

func dot64(a, b []float64) float64 {
	var s float64
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// normalize scales v to unit length and returns its former norm.
func normalize(v []float64) float64 {
	nrm := math.Sqrt(dot64(v, v))
	if nrm > 0 {
		for i := range v {
			v[i] /= nrm
		}
	}
	return nrm
}

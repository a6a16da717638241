package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Defaults of SVC, equal to scikit-learn's SVC defaults.
const (
	DefaultSVCTol = 1e-3
	// DefaultCacheBytes is the kernel-cache budget of one fit (scikit-learn
	// uses 200 MB; this cache serves float32 rows like LIBSVM's).
	DefaultCacheBytes = 256 << 20
)

// SVC is a C-support-vector classifier with the RBF kernel
// K(a,b) = exp(−γ‖a−b‖²), trained by the SMO solver of LIBSVM as shipped in
// scikit-learn, so that a fit agrees with sklearn.svm.SVC(kernel="rbf") to
// rounding. Multi-class problems are solved one-vs-one with LIBSVM's voting
// (a tie goes to the class that sorts first).
//
// Set the parameters, then call Fit. The zero value of every parameter but C
// means scikit-learn's default.
type SVC struct {
	// C is the box constraint; it must be > 0.
	C float64
	// Gamma is the RBF width γ; 0 means scikit-learn's gamma="scale":
	// 1/(d·Var(X)), with the variance over all entries of the training
	// matrix (1 when that variance is 0).
	Gamma float64
	// Tol is the stopping tolerance of SMO (LIBSVM's eps); 0 means 1e-3.
	Tol float64
	// NoShrinking disables LIBSVM's shrinking heuristic (on by default, as in
	// scikit-learn). Results agree to within Tol either way.
	NoShrinking bool
	// MaxIter bounds the SMO iterations of each binary subproblem; 0 means
	// max(10⁷, 100·l) as in upstream LIBSVM (scikit-learn has no bound).
	MaxIter int
	// CacheBytes is the kernel-cache budget; 0 means DefaultCacheBytes.
	CacheBytes int64

	m      *svmModel
	sv     []float64 // support vectors, nSV × d row-major
	d      int
	gamma  float64
	labels []int
}

// svmModel is a trained LIBSVM C-SVC model in LIBSVM's layout.
type svmModel struct {
	nClass int
	labels []int // sorted class labels
	nSV    []int // support vectors per class
	// svIdx holds the local training index of every support vector, grouped
	// by class (in label order) and ascending within a class, like
	// scikit-learn's support_.
	svIdx []int
	// coef is LIBSVM's sv_coef / scikit-learn's dual_coef_ (before its sign
	// flip for two classes): (nClass−1) rows of len(svIdx).
	coef [][]float64
	// rho holds one bias per pair (i<j), in LIBSVM order; the decision value
	// of pair p is Σ coef·K − rho[p], positive meaning class i.
	rho       []float64
	svStart   []int // index of the first support vector of each class
	iter      int   // total SMO iterations
	converged bool  // every subproblem met the tolerance
}

type trainParams struct {
	C, eps     float64
	shrinking  bool
	maxIter    int
	cacheBytes int64
	// ctx, when not nil, stops the SMO solver when it is cancelled; the fit
	// then fails with an error wrapping ctx.Err().
	ctx context.Context
}

func (s *SVC) params() (trainParams, error) {
	if !(s.C > 0) || math.IsInf(s.C, 0) {
		return trainParams{}, fmt.Errorf("eval: SVC.C = %v, want a finite value > 0", s.C)
	}
	if s.Gamma < 0 || math.IsNaN(s.Gamma) || math.IsInf(s.Gamma, 0) {
		return trainParams{}, fmt.Errorf("eval: SVC.Gamma = %v, want 0 (scale) or a finite value > 0", s.Gamma)
	}
	if s.Tol < 0 || math.IsNaN(s.Tol) {
		return trainParams{}, fmt.Errorf("eval: SVC.Tol = %v, want 0 (default) or > 0", s.Tol)
	}
	if s.MaxIter < 0 {
		return trainParams{}, fmt.Errorf("eval: SVC.MaxIter = %d, want >= 0", s.MaxIter)
	}
	p := trainParams{C: s.C, eps: s.Tol, shrinking: !s.NoShrinking, maxIter: s.MaxIter, cacheBytes: s.CacheBytes}
	if p.eps == 0 {
		p.eps = DefaultSVCTol
	}
	if p.cacheBytes <= 0 {
		p.cacheBytes = DefaultCacheBytes
	}
	return p, nil
}

// checkMatrix validates an n × d row-major matrix.
func checkMatrix[T float32 | float64](name string, x []T, n, d int) error {
	if n <= 0 || d <= 0 {
		return fmt.Errorf("eval: %s has shape %d×%d, want n > 0 and d > 0", name, n, d)
	}
	if len(x) != n*d {
		return fmt.Errorf("eval: %s has %d values, want n×d = %d×%d = %d", name, len(x), n, d, n*d)
	}
	for i, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("eval: %s[%d] (row %d, column %d) = %v, want a finite value", name, i, i/d, i%d, f)
		}
	}
	return nil
}

// Fit trains the classifier on the n × d row-major matrix x with labels y
// (any integers; at least two distinct values).
func (s *SVC) Fit(x []float64, n, d int, y []int) error {
	p, err := s.params()
	if err != nil {
		return err
	}
	if err := checkMatrix("SVC.Fit x", x, n, d); err != nil {
		return err
	}
	if len(y) != n {
		return fmt.Errorf("eval: SVC.Fit has %d labels for %d rows", len(y), n)
	}
	xc := slices.Clone(x)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	gamma := s.Gamma
	if gamma == 0 {
		gamma = scaleGamma(xc, d)
	}
	src := newLazyDist(xc, n, d)
	m, err := trainSVM(src, idx, y, gamma, p)
	if err != nil {
		return err
	}
	s.m, s.d, s.gamma, s.labels = m, d, gamma, m.labels
	s.sv = make([]float64, len(m.svIdx)*d)
	for k, o := range m.svIdx {
		copy(s.sv[k*d:(k+1)*d], xc[o*d:(o+1)*d])
	}
	return nil
}

// errNotFitted is returned by the prediction methods before a successful Fit.
var errNotFitted = errors.New("eval: SVC is not fitted: call Fit first")

// Classes returns the sorted class labels seen by Fit.
func (s *SVC) Classes() []int { return slices.Clone(s.labels) }

// GammaUsed returns the γ of the fitted model (the computed one when Gamma
// was 0).
func (s *SVC) GammaUsed() float64 { return s.gamma }

// Support returns the training-row indices of the support vectors, grouped
// by class and ascending within a class (scikit-learn's support_).
func (s *SVC) Support() []int {
	if s.m == nil {
		return nil
	}
	return slices.Clone(s.m.svIdx)
}

// NSupport returns the number of support vectors per class (n_support_).
func (s *SVC) NSupport() []int {
	if s.m == nil {
		return nil
	}
	return slices.Clone(s.m.nSV)
}

// DualCoef returns LIBSVM's sv_coef: (classes−1) rows, one column per
// support vector. It equals scikit-learn's dual_coef_ for three or more
// classes; for two classes scikit-learn exposes its negation.
func (s *SVC) DualCoef() [][]float64 {
	if s.m == nil {
		return nil
	}
	out := make([][]float64, len(s.m.coef))
	for i, r := range s.m.coef {
		out[i] = slices.Clone(r)
	}
	return out
}

// Rho returns LIBSVM's biases, one per class pair (i<j) in order;
// scikit-learn's intercept_ is −Rho (and Rho itself for two classes).
func (s *SVC) Rho() []float64 {
	if s.m == nil {
		return nil
	}
	return slices.Clone(s.m.rho)
}

// Iterations returns the total number of SMO iterations of the last Fit and
// whether every subproblem reached the tolerance.
func (s *SVC) Iterations() (iter int, converged bool) {
	if s.m == nil {
		return 0, false
	}
	return s.m.iter, s.m.converged
}

// DecisionFunction returns LIBSVM's pairwise decision values for the m × d
// row-major matrix x: m rows of k(k−1)/2 values, pair (i,j), i<j, in order,
// positive meaning the class that sorts first. This is scikit-learn's
// decision_function with decision_function_shape="ovo" for three or more
// classes; for two classes scikit-learn returns the negation.
func (s *SVC) DecisionFunction(x []float64, m int) ([][]float64, error) {
	if s.m == nil {
		return nil, errNotFitted
	}
	if err := checkMatrix("SVC.DecisionFunction x", x, m, s.d); err != nil {
		return nil, err
	}
	out := make([][]float64, m)
	kv := make([]float64, len(s.m.svIdx))
	for r := 0; r < m; r++ {
		s.kernelToSV(x[r*s.d:(r+1)*s.d], kv)
		out[r] = make([]float64, len(s.m.rho))
		s.m.decision(kv, out[r])
	}
	return out, nil
}

// Predict returns the predicted labels of the m × d row-major matrix x.
func (s *SVC) Predict(x []float64, m int) ([]int, error) {
	if s.m == nil {
		return nil, errNotFitted
	}
	if err := checkMatrix("SVC.Predict x", x, m, s.d); err != nil {
		return nil, err
	}
	out := make([]int, m)
	kv := make([]float64, len(s.m.svIdx))
	dec := make([]float64, len(s.m.rho))
	for r := 0; r < m; r++ {
		s.kernelToSV(x[r*s.d:(r+1)*s.d], kv)
		out[r] = s.m.labels[s.m.decision(kv, dec)]
	}
	return out, nil
}

// kernelToSV computes K(x, sv_k) in float64 the way LIBSVM's k_function
// does for dense data: exp(−γ Σ (x_i − sv_i)²).
func (s *SVC) kernelToSV(x []float64, kv []float64) {
	d := s.d
	ng := -s.gamma
	for k := range kv {
		sv := s.sv[k*d : (k+1)*d]
		var sum float64
		for i, v := range x {
			t := v - sv[i]
			sum += t * t
		}
		kv[k] = math.Exp(ng * sum)
	}
}

// decision fills dec with the pairwise decision values from the kernel
// values kv between one sample and every support vector, and returns the
// index of the winning class (LIBSVM's vote; ties go to the lowest index).
func (m *svmModel) decision(kv []float64, dec []float64) int {
	k := m.nClass
	start := m.svStart
	var votesBuf [16]int
	var votes []int
	if k <= len(votesBuf) {
		votes = votesBuf[:k]
	} else {
		votes = make([]int, k)
	}
	p := 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			var sum float64
			si, sj := start[i], start[j]
			c1, c2 := m.coef[j-1], m.coef[i]
			for q := 0; q < m.nSV[i]; q++ {
				sum += c1[si+q] * kv[si+q]
			}
			for q := 0; q < m.nSV[j]; q++ {
				sum += c2[sj+q] * kv[sj+q]
			}
			sum -= m.rho[p]
			dec[p] = sum
			if sum > 0 {
				votes[i]++
			} else {
				votes[j]++
			}
			p++
		}
	}
	best := 0
	for i := 1; i < k; i++ {
		if votes[i] > votes[best] {
			best = i
		}
	}
	return best
}

// decisionsT is decision for n samples at once, their kernel values in
// training-major layout: K(sample b, local training row o) is
// kT[o*stride+b] for b < n ≤ stride. Each sample's decision values are the
// sums decision forms (the same terms, in the same order), made one support
// vector at a time over all samples so that kT is read row by row; dec
// receives them pair-major (dec[p*n+b], at least len(rho)·n long) and win[b]
// sample b's winning class index (win at least n long).
func (m *svmModel) decisionsT(kT []float64, stride, n int, dec []float64, win []int) {
	k := m.nClass
	start := m.svStart
	votes := make([]int, k*n) // class-major
	p := 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			sums := dec[p*n : (p+1)*n]
			clear(sums)
			// Class i's support vectors with coef[j−1], then class j's
			// with coef[i], as decision sums them.
			for seg := range 2 {
				c, first, nsv := m.coef[j-1], start[i], m.nSV[i]
				if seg == 1 {
					c, first, nsv = m.coef[i], start[j], m.nSV[j]
				}
				for q := first; q < first+nsv; q++ {
					cq := c[q]
					o := m.svIdx[q] * stride
					row := kT[o : o+n]
					for b, v := range row {
						sums[b] += cq * v
					}
				}
			}
			rho := m.rho[p]
			vi, vj := votes[i*n:(i+1)*n], votes[j*n:(j+1)*n]
			for b := range sums {
				sums[b] -= rho
				if sums[b] > 0 {
					vi[b]++
				} else {
					vj[b]++
				}
			}
			p++
		}
	}
	for b := range win[:n] {
		best := 0
		for i := 1; i < k; i++ {
			if votes[i*n+b] > votes[best*n+b] {
				best = i
			}
		}
		win[b] = best
	}
}

// trainSVM trains a C-SVC on the training rows idx of src (local index o is
// dataset row idx[o]) with labels y[o], as LIBSVM's svm_train does for C_SVC:
// classes sorted, samples grouped by class keeping their order, one binary
// SMO problem per class pair.
func trainSVM(src sqDist, idx []int, y []int, gamma float64, p trainParams) (*svmModel, error) {
	return trainSVMCached(newKernelCache(src, idx, gamma, p.cacheBytes), y, p)
}

// trainSVMCached trains on the training set of an existing kernel cache, so
// that fits with several C on one training set share kernel rows.
func trainSVMCached(cache *kernelCache, y []int, p trainParams) (*svmModel, error) {
	l := len(cache.idx)
	if len(y) != l {
		return nil, fmt.Errorf("eval: %d labels for %d training rows", len(y), l)
	}
	labels := slices.Clone(y)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	k := len(labels)
	if k < 2 {
		return nil, fmt.Errorf("eval: training set of %d rows has %d class(es) %v, want at least 2", l, k, labels)
	}
	cls := make([]int, l) // class index per local sample
	count := make([]int, k)
	for o, v := range y {
		c, _ := slices.BinarySearch(labels, v)
		cls[o] = c
		count[c]++
	}
	start := make([]int, k)
	for i := 1; i < k; i++ {
		start[i] = start[i-1] + count[i-1]
	}
	perm := make([]int, l) // grouped position → local index
	{
		fill := slices.Clone(start)
		for o := 0; o < l; o++ {
			perm[fill[cls[o]]] = o
			fill[cls[o]]++
		}
	}

	maxIterFor := func(n int) int {
		if p.maxIter > 0 {
			return p.maxIter
		}
		return max(10_000_000, 100*n)
	}
	var stop <-chan struct{}
	if p.ctx != nil {
		stop = p.ctx.Done()
	}
	nPairs := k * (k - 1) / 2
	alphas := make([][]float64, nPairs)
	rho := make([]float64, nPairs)
	nonzero := make([]bool, l) // by grouped position
	m := &svmModel{nClass: k, labels: labels, rho: rho, converged: true}
	pi := 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			si, sj, ci, cj := start[i], start[j], count[i], count[j]
			sub := make([]int, 0, ci+cj)
			sub = append(sub, perm[si:si+ci]...)
			sub = append(sub, perm[sj:sj+cj]...)
			ys := make([]int8, ci+cj)
			for q := range ys {
				if q < ci {
					ys[q] = 1
				} else {
					ys[q] = -1
				}
			}
			r := solveSMO(cache, sub, ys, p.C, p.eps, p.shrinking, maxIterFor(ci+cj), stop)
			if r.cancelled {
				return nil, p.ctx.Err()
			}
			m.iter += r.iter
			m.converged = m.converged && r.converged
			alphas[pi] = r.alpha
			rho[pi] = r.rho
			for q := 0; q < ci; q++ {
				if r.alpha[q] != 0 {
					nonzero[si+q] = true
				}
			}
			for q := 0; q < cj; q++ {
				if r.alpha[ci+q] != 0 {
					nonzero[sj+q] = true
				}
			}
			pi++
		}
	}

	m.nSV = make([]int, k)
	for i := 0; i < k; i++ {
		for q := 0; q < count[i]; q++ {
			if nonzero[start[i]+q] {
				m.nSV[i]++
			}
		}
	}
	for g := 0; g < l; g++ {
		if nonzero[g] {
			m.svIdx = append(m.svIdx, perm[g])
		}
	}
	total := len(m.svIdx)
	nzStart := make([]int, k)
	for i := 1; i < k; i++ {
		nzStart[i] = nzStart[i-1] + m.nSV[i-1]
	}
	m.svStart = nzStart
	m.coef = make([][]float64, k-1)
	for i := range m.coef {
		m.coef[i] = make([]float64, total)
	}
	pi = 0
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			si, sj, ci, cj := start[i], start[j], count[i], count[j]
			q := nzStart[i]
			for t := 0; t < ci; t++ {
				if nonzero[si+t] {
					m.coef[j-1][q] = alphas[pi][t]
					q++
				}
			}
			q = nzStart[j]
			for t := 0; t < cj; t++ {
				if nonzero[sj+t] {
					m.coef[i][q] = alphas[pi][ci+t]
					q++
				}
			}
			pi++
		}
	}
	return m, nil
}

// scaleGamma returns scikit-learn's gamma="scale" for the n × d matrix x:
// 1/(d·x.var()), with NumPy's summation order so that the value is
// bit-identical to scikit-learn's; 1 when the variance is 0.
func scaleGamma(x []float64, d int) float64 {
	v := npVar(x)
	if v == 0 {
		return 1
	}
	return 1 / (float64(d) * v)
}

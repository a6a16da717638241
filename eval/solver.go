package eval

import "math"

// This file is a port of the SMO solver of LIBSVM (Chang & Lin) as shipped
// in scikit-learn (sklearn/svm/src/libsvm/svm.cpp), restricted to C-SVC with
// an RBF kernel and one C for all samples: working-set selection by
// second-order information (WSS2, Fan, Chen & Lin, JMLR 6, 2005), shrinking,
// and the bias (rho) computed as LIBSVM does. The iteration path is LIBSVM's,
// including index order, tie breaking and the float32 kernel cache, so the
// solution is bit-identical to scikit-learn's whenever the kernel values are
// (they come from the same formula; only exp's last bit may differ).
//
// Two representation changes, both exact in floating point:
//   - the solver keeps yG_i = y_i·G_i (and y_i·Ḡ_i) instead of the gradient
//     G_i; since y_i = ±1 and sign flips are exact, every comparison and
//     update gives the same bits as LIBSVM's, and the index sets become
//     I_up = {i : y_i = +1, α_i < C} ∪ {i : y_i = −1, α_i > 0} and I_low
//     (its mirror), kept as flags;
//   - LIBSVM physically swaps the columns of its kernel cache when it
//     shrinks; here cache rows stay in training order and every solver
//     position carries the cache column it refers to (p2l); the rows the
//     two hot loops read are served in position order by posRows.

const (
	boundLower uint8 = iota
	boundUpper
	boundFree
)

// Index-set flags of a position.
const (
	inUp  uint8 = 1 // may increase y_i α_i: selectable as i
	inLow uint8 = 2 // may decrease y_i α_i: selectable as j
)

const smoTau = 1e-12

// smoResult is the solution of one binary subproblem.
type smoResult struct {
	alpha     []float64 // y_i·α_i, in subproblem order
	rho       float64
	iter      int
	converged bool
	cancelled bool // stopped by the stop channel
}

type smoSolver struct {
	l          int
	activeSize int
	y          []float64 // ±1, by position
	yG         []float64 // y_i·∇f(α)_i
	// yGbar holds y_o·Ḡ_o, Ḡ_o = Σ_{j at upper bound} C·Q_oj, by cache
	// column o (not by position: y_o·Ḡ_o = Σ_j C·y_j·K_oj does not depend on
	// o's own label, so a row of the cache updates it in one contiguous
	// pass and shrinking need not move it).
	yGbar     []float64
	recon     []float64 // reconstructGradient's scratch, by cache column
	alpha     []float64
	status    []uint8
	flags     []uint8 // inUp | inLow
	activeSet []int   // position → subproblem index
	p2l       []int32 // position → local training index (cache column)
	cache     *kernelCache
	C         float64
	eps       float64
	unshrink  bool
	// The first loop of WSS2 (max of −yG over I_up) is computed during the
	// gradient update of the previous step when the active set is unchanged.
	upMax      float64
	upMaxIdx   int
	upMaxValid bool

	pos *posRows // the hot loops' kernel rows in position order
}

// solveSMO solves min ½αᵀQα − eᵀα s.t. yᵀα = 0, 0 ≤ α ≤ C, where
// Q_ij = y_i y_j K(sub_i, sub_j), starting from α = 0 (LIBSVM's solve_c_svc).
// sub maps subproblem indices to local training indices of the cache.
// A non-nil stop is polled every min(l, 1000) iterations; when it is closed
// the solver returns at once with cancelled set (the result is then unusable).
func solveSMO(cache *kernelCache, sub []int, y []int8, C, eps float64, shrinking bool, maxIter int, stop <-chan struct{}) smoResult {
	l := len(sub)
	s := &smoSolver{
		l: l, activeSize: l,
		y: make([]float64, l), yG: make([]float64, l), yGbar: make([]float64, len(cache.idx)),
		alpha: make([]float64, l), status: make([]uint8, l), flags: make([]uint8, l),
		activeSet: make([]int, l), p2l: make([]int32, l),
		cache: cache, C: C, eps: eps,
	}
	for i := 0; i < l; i++ {
		s.p2l[i] = int32(sub[i])
	}
	s.pos = newPosRows(cache, s.p2l)
	for i := 0; i < l; i++ {
		s.y[i] = float64(y[i])
		s.yG[i] = -s.y[i] // G = p = −1 at α = 0
		s.activeSet[i] = i
		s.p2l[i] = int32(sub[i])
		s.updateStatus(i)
	}

	iter := 0
	counter := min(l, 1000) + 1
	converged := true
	for {
		if maxIter > 0 && iter >= maxIter {
			converged = false
			if s.activeSize < l {
				s.reconstructGradient()
				s.activeSize = l
			}
			break
		}
		counter--
		if counter == 0 {
			counter = min(l, 1000)
			if stop != nil {
				select {
				case <-stop:
					return smoResult{iter: iter, cancelled: true}
				default:
				}
			}
			if shrinking {
				s.doShrinking()
			}
		}
		i, j, done := s.selectWorkingSet()
		if done {
			s.reconstructGradient()
			s.activeSize = l
			i, j, done = s.selectWorkingSet()
			if done {
				break
			}
			counter = 1
		}
		iter++
		s.update(i, j)
	}

	rho := s.calculateRho()
	alpha := make([]float64, l)
	for i := 0; i < l; i++ {
		alpha[s.activeSet[i]] = s.alpha[i] * s.y[i]
	}
	return smoResult{alpha: alpha, rho: rho, iter: iter, converged: converged}
}

func (s *smoSolver) updateStatus(i int) {
	switch {
	case s.alpha[i] >= s.C:
		s.status[i] = boundUpper
	case s.alpha[i] <= 0:
		s.status[i] = boundLower
	default:
		s.status[i] = boundFree
	}
	var f uint8
	switch s.status[i] {
	case boundFree:
		f = inUp | inLow
	case boundUpper:
		if s.y[i] == 1 {
			f = inLow
		} else {
			f = inUp
		}
	default: // lower bound
		if s.y[i] == 1 {
			f = inUp
		} else {
			f = inLow
		}
	}
	s.flags[i] = f
}

// clipSum is one half of LIBSVM's clipping of an SMO step on a pair of
// equal labels, which keeps a[x] + a[y] = sum: when sum > C and a[x] left
// the box above, a[x] = C; when sum ≤ C and a[y] left it below, a[y] = 0;
// the other takes the rest of the sum. update calls it on (i, j), then on
// (j, i), as LIBSVM's two if-blocks.
func clipSum(a []float64, x, y int, sum, C float64) {
	if sum > C {
		if a[x] > C {
			a[x] = C
			a[y] = sum - C
		}
	} else {
		if a[y] < 0 {
			a[y] = 0
			a[x] = sum
		}
	}
}

// update performs one SMO step on the pair (i, j) (positions).
func (s *smoSolver) update(i, j int) {
	n := s.activeSize
	s.pos.reserve(2)
	Ki := s.pos.row(s.p2l[i], s.p2l[:n])
	Kj := s.pos.row(s.p2l[j], s.p2l[:n])
	C := s.C
	yi, yj := s.y[i], s.y[j]
	kij := float64(Ki[j])
	oldAi, oldAj := s.alpha[i], s.alpha[j]
	// QD_i + QD_j − 2K_ij with K(x,x) = 1 for the RBF kernel; the sign of
	// Q_ij = y_i y_j K_ij cancels in both branches of LIBSVM.
	quad := 2 - 2*kij
	if quad <= 0 {
		quad = smoTau
	}
	a := s.alpha
	Gi, Gj := yi*s.yG[i], yj*s.yG[j]
	if yi != yj {
		delta := (-Gi - Gj) / quad
		diff := a[i] - a[j]
		a[i] += delta
		a[j] += delta
		if diff > 0 {
			if a[j] < 0 {
				a[j] = 0
				a[i] = diff
			}
		} else {
			if a[i] < 0 {
				a[i] = 0
				a[j] = -diff
			}
		}
		if diff > 0 { // C_i − C_j = 0
			if a[i] > C {
				a[i] = C
				a[j] = C - diff
			}
		} else {
			if a[j] > C {
				a[j] = C
				a[i] = C + diff
			}
		}
	} else {
		delta := (Gi - Gj) / quad
		sum := a[i] + a[j]
		a[i] -= delta
		a[j] += delta
		clipSum(a, i, j, sum, C)
		clipSum(a, j, i, sum, C)
	}

	// LIBSVM: G_k += Q_ik Δα_i + Q_jk Δα_j, Q_ik = y_i y_k K_ik. Multiplied
	// by y_k: yG_k += K_ik (y_i Δα_i) + K_jk (y_j Δα_j), bit for bit.
	dai := (a[i] - oldAi) * yi
	daj := (a[j] - oldAj) * yj
	ui, uj := s.status[i] == boundUpper, s.status[j] == boundUpper
	s.updateStatus(i)
	s.updateStatus(j)
	// Fused with the gradient update: the first loop of the next WSS2,
	// visiting the same positions in the same order.
	s.upMax, s.upMaxIdx = gradUpdate(s.yG[:n], s.flags[:n], Ki, Kj, dai, daj)
	s.upMaxValid = true

	if ui != (s.status[i] == boundUpper) {
		s.addGbar(s.cache.row(int(s.p2l[i])), yi, ui)
	}
	if uj != (s.status[j] == boundUpper) {
		s.addGbar(s.cache.row(int(s.p2l[j])), yj, uj)
	}
}

// addGbar adds (or, when wasUpper, subtracts) C·Q_i to Ḡ, in the y-scaled
// form yḠ_o ± C·y_i·K_io, over every cache column o (those outside the
// subproblem are never read).
func (s *smoSolver) addGbar(Ki []float32, yi float64, wasUpper bool) {
	c := s.C * yi
	if wasUpper {
		c = -c
	}
	addScaled(s.yGbar, Ki, c)
}

// selectWorkingSet is LIBSVM's WSS2. done reports that the stopping
// criterion m(α) − M(α) < eps holds on the active set.
func (s *smoSolver) selectWorkingSet() (outI, outJ int, done bool) {
	Gmax := math.Inf(-1)
	GmaxIdx := -1
	n := s.activeSize
	yG, fl := s.yG[:n], s.flags[:n]
	if s.upMaxValid {
		Gmax, GmaxIdx = s.upMax, s.upMaxIdx
	} else {
		for t, g := range yG {
			if fl[t]&inUp != 0 && -g >= Gmax {
				Gmax = -g
				GmaxIdx = t
			}
		}
	}
	if GmaxIdx == -1 {
		// No candidate i: Gmax = −Inf and no j can be chosen (LIBSVM then
		// never reads Q_i).
		return 0, 0, true
	}
	s.pos.reserve(1)
	Ki := s.pos.row(s.p2l[GmaxIdx], s.p2l[:n])
	Gmax2, _, GminIdx := wss2(yG, fl, Ki, Gmax)
	if Gmax+Gmax2 < s.eps || GminIdx == -1 {
		return 0, 0, true
	}
	return GmaxIdx, GminIdx, false
}

// beShrunk: a bounded variable that cannot enter the working set while the
// violation bounds Gmax1 (over I_up) and Gmax2 (over I_low) hold.
func (s *smoSolver) beShrunk(i int, Gmax1, Gmax2 float64) bool {
	f := s.flags[i]
	switch {
	case f == inLow: // at a bound, not in I_up
		return -s.yG[i] > Gmax1
	case f == inUp: // at a bound, not in I_low
		return s.yG[i] > Gmax2
	}
	return false
}

func (s *smoSolver) doShrinking() {
	s.upMaxValid = false
	Gmax1 := math.Inf(-1) // max { −y_i ∇f_i | i ∈ I_up }
	Gmax2 := math.Inf(-1) // max { y_i ∇f_i | i ∈ I_low }
	for i := 0; i < s.activeSize; i++ {
		g := s.yG[i]
		if s.flags[i]&inUp != 0 && -g >= Gmax1 {
			Gmax1 = -g
		}
		if s.flags[i]&inLow != 0 && g >= Gmax2 {
			Gmax2 = g
		}
	}
	if !s.unshrink && Gmax1+Gmax2 <= s.eps*10 {
		s.unshrink = true
		s.reconstructGradient()
		s.activeSize = s.l
	}
	for i := 0; i < s.activeSize; i++ {
		if s.beShrunk(i, Gmax1, Gmax2) {
			s.activeSize--
			for s.activeSize > i {
				if !s.beShrunk(s.activeSize, Gmax1, Gmax2) {
					s.swapIndex(i, s.activeSize)
					break
				}
				s.activeSize--
			}
		}
	}
}

func (s *smoSolver) swapIndex(i, j int) {
	s.pos.swapped(i, j)
	s.y[i], s.y[j] = s.y[j], s.y[i]
	s.yG[i], s.yG[j] = s.yG[j], s.yG[i]
	s.status[i], s.status[j] = s.status[j], s.status[i]
	s.flags[i], s.flags[j] = s.flags[j], s.flags[i]
	s.alpha[i], s.alpha[j] = s.alpha[j], s.alpha[i]
	s.activeSet[i], s.activeSet[j] = s.activeSet[j], s.activeSet[i]
	s.p2l[i], s.p2l[j] = s.p2l[j], s.p2l[i]
}

// reconstructGradient recomputes the gradient of the inactive positions from
// Ḡ and the free variables (LIBSVM's reconstruct_gradient).
//
// LIBSVM adds, to each inactive G_t, α_f Q_ft over the free positions f in
// position order, choosing between two loop orders (inactive rows outer, or
// free rows outer) by the kernel rows each would compute. Every inactive
// gradient receives the same terms in the same order either way, so here the
// free rows are always outer (the kernel is symmetric bit for bit: K(a,b)
// and K(b,a) come from the same squared distance), and the inner loop runs
// either over the inactive positions as a gather or, when they are a third
// of the cache columns or more, over a whole cache row in column order.
func (s *smoSolver) reconstructGradient() {
	if s.activeSize == s.l {
		return
	}
	s.upMaxValid = false
	l, as := s.l, s.activeSize
	yG, cols := s.yG[as:l], s.p2l[as:l]
	for t, c := range cols {
		yG[t] = s.yGbar[c] - s.y[as+t] // y_t (Ḡ_t + p_t), p_t = −1
	}
	dense := 3*len(cols) >= len(s.yGbar)
	acc := yG
	if dense {
		if s.recon == nil {
			s.recon = make([]float64, len(s.yGbar))
		}
		acc = s.recon
		for t, c := range cols {
			acc[c] = yG[t]
		}
	}
	for f := 0; f < as; f++ {
		if s.status[f] != boundFree {
			continue
		}
		// y_t·α_f Q_ft = α_f (y_f K_ft) = (y_f α_f) K_ft: y_f = ±1 flips
		// signs exactly.
		Kf, c := s.cache.row(int(s.p2l[f])), s.y[f]*s.alpha[f]
		if dense {
			addScaled(acc, Kf, c)
		} else {
			addScaledGather(acc, Kf, cols, c)
		}
	}
	if dense {
		for t, c := range cols {
			yG[t] = acc[c]
		}
	}
}

func (s *smoSolver) calculateRho() float64 {
	nrFree := 0
	ub, lb, sumFree := math.Inf(1), math.Inf(-1), 0.0
	for i := 0; i < s.activeSize; i++ {
		yG := s.yG[i]
		switch s.flags[i] {
		case inLow: // upper bound with y = +1, or lower bound with y = −1
			lb = math.Max(lb, yG)
		case inUp: // upper bound with y = −1, or lower bound with y = +1
			ub = math.Min(ub, yG)
		default:
			nrFree++
			sumFree += yG
		}
	}
	if nrFree > 0 {
		return sumFree / float64(nrFree)
	}
	return (ub + lb) / 2
}

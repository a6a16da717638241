package eval

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// gaussBlobs draws n points per centre with the given noise.
func gaussBlobs(rng *rand.Rand, centres [][]float64, labels []int, n int, noise float64) ([]float64, []int) {
	d := len(centres[0])
	var x []float64
	var y []int
	for i := 0; i < n; i++ {
		for c, ctr := range centres {
			for j := 0; j < d; j++ {
				x = append(x, ctr[j]+noise*rng.NormFloat64())
			}
			y = append(y, labels[c])
		}
	}
	return x, y
}

func accuracy(pred, y []int) float64 {
	c := 0
	for i := range y {
		if pred[i] == y[i] {
			c++
		}
	}
	return float64(c) / float64(len(y))
}

func TestSVCLinearlySeparable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	centres := [][]float64{{-3, 0, 1}, {3, 0, 1}}
	x, y := gaussBlobs(rng, centres, []int{4, 9}, 60, 0.5)
	xt, yt := gaussBlobs(rng, centres, []int{4, 9}, 60, 0.5)
	for _, C := range []float64{0.1, 1, 100} {
		svc := &SVC{C: C}
		if err := svc.Fit(x, len(y), 3, y); err != nil {
			t.Fatal(err)
		}
		for name, set := range map[string][2]any{"train": {x, y}, "test": {xt, yt}} {
			xs, ys := set[0].([]float64), set[1].([]int)
			pred, err := svc.Predict(xs, len(ys))
			if err != nil {
				t.Fatal(err)
			}
			if acc := accuracy(pred, ys); acc != 1 {
				t.Errorf("C=%v: %s accuracy %v on separable blobs, want 1", C, name, acc)
			}
		}
		if got := svc.Classes(); !slices.Equal(got, []int{4, 9}) {
			t.Errorf("classes %v, want [4 9]", got)
		}
	}
}

// TestSVCXORNeedsRBF: the four XOR clusters cannot be split by any line (a
// linear classifier gets at most 3 of 4 clusters right), but the RBF SVC
// separates them.
func TestSVCXORNeedsRBF(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	centres := [][]float64{{1, 1}, {-1, -1}, {1, -1}, {-1, 1}}
	labels := []int{0, 0, 1, 1}
	x, y := gaussBlobs(rng, centres, labels, 50, 0.25)
	xt, yt := gaussBlobs(rng, centres, labels, 50, 0.25)
	svc := &SVC{C: 10}
	if err := svc.Fit(x, len(y), 2, y); err != nil {
		t.Fatal(err)
	}
	pred, err := svc.Predict(xt, len(yt))
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(pred, yt); acc < 0.97 {
		t.Errorf("XOR test accuracy %v, want ≥ 0.97", acc)
	}
	// Best linear rule through the data for reference: sign of x0 (or x1)
	// gets half the clusters wrong.
	lin := make([]int, len(yt))
	for i := range yt {
		if xt[2*i] > 0 {
			lin[i] = 1
		}
	}
	if acc := accuracy(lin, yt); acc > 0.75 {
		t.Errorf("linear rule accuracy %v on XOR, expected ≤ 0.75 (fixture is not XOR-like)", acc)
	}
}

// rbf64 is an independent float64 RBF kernel.
func rbf64(a, b []float64, gamma float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Exp(-gamma * s)
}

// TestSVCDualKKT checks the binary solution against the optimality
// conditions of the dual, recomputed from scratch in float64: 0 ≤ α ≤ C,
// Σ y_i α_i = 0, and max_{I_up} −y∇f − min_{I_low} −y∇f ≤ tol (up to the
// float32 kernel rounding), and that rho lies between the two.
func TestSVCDualKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	centres := [][]float64{{0, 0, 0, 0}, {1, 0.5, 0, -0.5}, {-0.5, 1, 0.5, 0}}
	x, y := gaussBlobs(rng, centres, []int{0, 1, 1}, 40, 0.8)
	n, d := len(y), 4
	for _, tc := range []struct {
		C       float64
		shrink  bool
		maxByte int64
	}{{0.5, true, 0}, {10, true, 0}, {1000, true, 0}, {10, false, 0}, {10, true, 3 * 4 * 120}} {
		svc := &SVC{C: tc.C, NoShrinking: !tc.shrink, CacheBytes: tc.maxByte}
		if err := svc.Fit(x, n, d, y); err != nil {
			t.Fatal(err)
		}
		// Full dual vector: coef = y_i α_i on support vectors, 0 elsewhere.
		ya := make([]float64, n)
		for k, o := range svc.Support() {
			ya[o] = svc.DualCoef()[0][k]
		}
		sy := make([]float64, n) // +1 for the first class
		var sum float64
		for i := range y {
			sy[i] = -1
			if y[i] == 0 {
				sy[i] = 1
			}
			a := ya[i] * sy[i]
			if a < -1e-12 || a > tc.C*(1+1e-12) {
				t.Fatalf("C=%v: α_%d = %v outside [0, C]", tc.C, i, a)
			}
			sum += ya[i]
		}
		if math.Abs(sum) > 1e-9*tc.C*float64(n) {
			t.Errorf("C=%v: Σ y α = %v, want 0", tc.C, sum)
		}
		g := svc.GammaUsed()
		upMax, lowMin := math.Inf(-1), math.Inf(1)
		for i := 0; i < n; i++ {
			// ∇f_i = Σ_j Q_ij α_j − 1 = y_i Σ_j K_ij y_j α_j − 1.
			var s float64
			for j := 0; j < n; j++ {
				if ya[j] != 0 {
					s += rbf64(x[i*d:(i+1)*d], x[j*d:(j+1)*d], g) * ya[j]
				}
			}
			grad := sy[i]*s - 1
			v := -sy[i] * grad
			a := ya[i] * sy[i]
			if (sy[i] == 1 && a < tc.C) || (sy[i] == -1 && a > 0) {
				upMax = math.Max(upMax, v)
			}
			if (sy[i] == 1 && a > 0) || (sy[i] == -1 && a < tc.C) {
				lowMin = math.Min(lowMin, v)
			}
		}
		// float32 kernel values perturb the gradient by ~n·C·6e-8.
		slack := 1e-3 + float64(n)*tc.C*1e-7
		if upMax-lowMin > slack {
			t.Errorf("C=%v shrink=%v: KKT violation %v > %v", tc.C, tc.shrink, upMax-lowMin, slack)
		}
		rho := svc.Rho()[0]
		if -rho < lowMin-slack || -rho > upMax+slack {
			// b = −rho lies in [M(α), m(α)] at the optimum.
			t.Errorf("C=%v: bias %v outside [%v, %v]", tc.C, -rho, lowMin, upMax)
		}
		it, conv := svc.Iterations()
		if !conv || it == 0 {
			t.Errorf("C=%v: %d iterations, converged %v", tc.C, it, conv)
		}
	}
}

// TestSVCShrinkingAndCacheAgree: shrinking off or a cache of two rows must
// not change the solution beyond the tolerance (the cache size not at all).
func TestSVCShrinkingAndCacheAgree(t *testing.T) {
	fx := loadEmbed(t, "embed3")
	x := fx.rows64(0, 200)
	base := &SVC{C: 10}
	if err := base.Fit(x, 200, fx.d, fx.y[:200]); err != nil {
		t.Fatal(err)
	}
	want, _ := base.DecisionFunction(fx.rows64(200, 300), 100)
	for _, v := range []*SVC{{C: 10, NoShrinking: true}, {C: 10, CacheBytes: 1}} {
		if err := v.Fit(x, 200, fx.d, fx.y[:200]); err != nil {
			t.Fatal(err)
		}
		got, _ := v.DecisionFunction(fx.rows64(200, 300), 100)
		var maxDiff float64
		for i := range got {
			for p := range got[i] {
				maxDiff = math.Max(maxDiff, math.Abs(got[i][p]-want[i][p]))
			}
		}
		limit := 1e-2
		if !v.NoShrinking {
			limit = 0 // same iteration path, only the cache differs
		}
		if maxDiff > limit {
			t.Errorf("NoShrinking=%v CacheBytes=%d: decision differs by %v, want ≤ %v", v.NoShrinking, v.CacheBytes, maxDiff, limit)
		}
	}
}

// TestSVCVoteTies: with three classes and a query where every class wins one
// duel, LIBSVM's vote goes to the class that sorts first.
func TestSVCVoteTies(t *testing.T) {
	m := &svmModel{
		nClass: 3, labels: []int{2, 5, 7}, nSV: []int{1, 1, 1}, svStart: []int{0, 1, 2},
		// Pairs (0,1), (0,2), (1,2) with unit kernel values: the decision of
		// each pair is coef sum − rho.
		coef: [][]float64{{0, 0, 0}, {0, 0, 0}},
		rho:  []float64{-1, 1, -1}, // (0,1): +1 → 0; (0,2): −1 → 2; (1,2): +1 → 1
	}
	dec := make([]float64, 3)
	if got := m.decision([]float64{1, 1, 1}, dec); got != 0 {
		t.Errorf("three-way tie went to class index %d, want 0", got)
	}
	// A zero decision value votes for the second class of the pair.
	m.rho = []float64{0, 0, 0}
	if got := m.decision([]float64{1, 1, 1}, dec); got != 2 {
		t.Errorf("all-zero decisions: class index %d, want 2 (every pair votes j)", got)
	}
}

func TestSVCBadInputs(t *testing.T) {
	x := []float64{0, 0, 1, 1, 2, 2, 3, 3}
	y := []int{0, 0, 1, 1}
	cases := []struct {
		name string
		svc  SVC
		x    []float64
		n, d int
		y    []int
		want string
	}{
		{"zero C", SVC{}, x, 4, 2, y, "SVC.C"},
		{"negative C", SVC{C: -1}, x, 4, 2, y, "SVC.C"},
		{"NaN C", SVC{C: math.NaN()}, x, 4, 2, y, "SVC.C"},
		{"negative gamma", SVC{C: 1, Gamma: -1}, x, 4, 2, y, "SVC.Gamma"},
		{"negative tol", SVC{C: 1, Tol: -1}, x, 4, 2, y, "SVC.Tol"},
		{"negative max iter", SVC{C: 1, MaxIter: -1}, x, 4, 2, y, "MaxIter"},
		{"short x", SVC{C: 1}, x[:7], 4, 2, y, "want n×d"},
		{"zero rows", SVC{C: 1}, nil, 0, 2, nil, "shape"},
		{"NaN in x", SVC{C: 1}, []float64{0, 0, 1, math.NaN(), 2, 2, 3, 3}, 4, 2, y, "row 1, column 1"},
		{"Inf in x", SVC{C: 1}, []float64{0, 0, 1, 1, math.Inf(1), 2, 3, 3}, 4, 2, y, "row 2, column 0"},
		{"label count", SVC{C: 1}, x, 4, 2, y[:3], "3 labels for 4 rows"},
		{"one class", SVC{C: 1}, x, 4, 2, []int{3, 3, 3, 3}, "at least 2"},
	}
	for _, tc := range cases {
		s := tc.svc
		err := s.Fit(tc.x, tc.n, tc.d, tc.y)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	var s SVC
	if _, err := s.Predict(x, 4); !errors.Is(err, errNotFitted) {
		t.Errorf("Predict before Fit: %v, want errNotFitted", err)
	}
	if _, err := s.DecisionFunction(x, 4); !errors.Is(err, errNotFitted) {
		t.Errorf("DecisionFunction before Fit: %v, want errNotFitted", err)
	}
	s = SVC{C: 1}
	if err := s.Fit(x, 4, 2, y); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Predict(x[:3], 2); err == nil {
		t.Error("Predict with 3 values for 2×2: no error")
	}
	if _, err := s.Predict([]float64{math.NaN(), 0}, 1); err == nil {
		t.Error("Predict with NaN: no error")
	}
}

// TestNpSumPairwise checks NumPy's summation order emulation (used for
// gamma="scale", whose bit-exactness against scikit-learn is checked in the
// agreement tests) against a compensated sum, on data where a naive loop
// loses precision, across the block boundaries 8, 128 and 8192.
func TestNpSumPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 8, 9, 127, 128, 129, 1000, 8192, 8193, 30000} {
		a := make([]float64, n)
		for i := range a {
			a[i] = rng.NormFloat64()*1e3 + 1e6
		}
		got := npSum(a)
		want := exactSum(a)
		if math.Abs(got-want) > 1e-12*math.Abs(want)+1e-9 {
			t.Errorf("n=%d: npSum %v, exact %v", n, got, want)
		}
	}
	if v := npVar([]float64{1, 2, 3, 4}); v != 1.25 {
		t.Errorf("npVar(1,2,3,4) = %v, want 1.25", v)
	}
	if g := scaleGamma([]float64{5, 5, 5, 5}, 2); g != 1 {
		t.Errorf("scaleGamma of constant data = %v, want 1 (sklearn's rule for zero variance)", g)
	}
}

// exactSum is a compensated (Neumaier) sum, accurate to ~1 ulp.
func exactSum(a []float64) float64 {
	var s, c float64
	for _, v := range a {
		t := s + v
		if math.Abs(s) >= math.Abs(v) {
			c += (s - t) + v
		} else {
			c += (v - t) + s
		}
		s = t
	}
	return s + c
}

// TestDecisionsTMatchesDecision: scoring all samples at once from
// training-major kernel values gives decision's values bit for bit and its
// winners, ties of the vote included, for two to five classes.
func TestDecisionsTMatchesDecision(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 37))
	for _, k := range []int{2, 3, 5} {
		for trial := range 10 {
			const l = 60 // local training rows
			m := &svmModel{nClass: k, labels: make([]int, k), nSV: make([]int, k), svStart: make([]int, k)}
			perm := r.Perm(l)
			n := 0
			for c := range k {
				m.labels[c] = 10 * c
				m.svStart[c] = n
				m.nSV[c] = 1 + r.IntN(8)
				for range m.nSV[c] {
					m.svIdx = append(m.svIdx, perm[n])
					n++
				}
			}
			m.coef = make([][]float64, k-1)
			for c := range m.coef {
				m.coef[c] = make([]float64, n)
				for q := range n {
					m.coef[c][q] = r.NormFloat64()
				}
			}
			m.rho = make([]float64, k*(k-1)/2)
			for p := range m.rho {
				m.rho[p] = r.NormFloat64() * 0.1
			}
			samples := 1 + r.IntN(20)
			stride := samples + r.IntN(3)
			kT := make([]float64, l*stride)
			for i := range kT {
				kT[i] = r.Float64()
				if trial%2 == 0 {
					kT[i] = float64(r.IntN(2)) // ties in the sums and votes
				}
			}
			decT := make([]float64, len(m.rho)*samples)
			win := make([]int, samples)
			m.decisionsT(kT, stride, samples, decT, win)
			dec := make([]float64, len(m.rho))
			kv := make([]float64, n)
			for b := range samples {
				for q, o := range m.svIdx {
					kv[q] = kT[o*stride+b]
				}
				want := m.decision(kv, dec)
				if win[b] != want {
					t.Fatalf("k=%d trial %d sample %d: winner %d, decision %d", k, trial, b, win[b], want)
				}
				for p := range dec {
					if math.Float64bits(decT[p*samples+b]) != math.Float64bits(dec[p]) {
						t.Fatalf("k=%d trial %d sample %d pair %d: %v, decision %v", k, trial, b, p, decT[p*samples+b], dec[p])
					}
				}
			}
		}
	}
}

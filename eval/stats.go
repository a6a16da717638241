package eval

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// npSum sums like NumPy's add.reduce on a contiguous float64 array: blocks
// of 8192 elements (the iterator's buffer size) accumulated in order, each
// block summed by NumPy's pairwise_sum. Results are bit-identical to
// np.sum, np.mean and np.var for such arrays.
func npSum(a []float64) float64 {
	const bufSize = 8192
	var r float64
	for s := 0; s < len(a); s += bufSize {
		r += pairwiseSum(a[s:min(s+bufSize, len(a))])
	}
	return r
}

// pairwiseSum is NumPy's pairwise_sum (8-way unrolled below 128 elements).
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		var r float64
		for _, v := range a {
			r += v
		}
		return r
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := 0; j < 8; j++ {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}

// npMean is np.mean of a contiguous float64 array.
func npMean(a []float64) float64 { return npSum(a) / float64(len(a)) }

// npVar is np.var (ddof = 0) of a contiguous float64 array.
func npVar(a []float64) float64 {
	m := npMean(a)
	dev := make([]float64, len(a))
	for i, v := range a {
		t := v - m
		dev[i] = t * t
	}
	return npSum(dev) / float64(len(a))
}

// MeanStd returns the mean and the population standard deviation (ddof = 0,
// NumPy's np.std default, which is what GraphCL reports) of xs, computed
// with NumPy's summation order so that both are bit-identical to np.mean and
// np.std. An empty slice gives NaN, NaN.
func MeanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return npMean(xs), math.Sqrt(npVar(xs))
}

func checkPaired(name string, a, b []float64) error {
	if len(a) != len(b) {
		return fmt.Errorf("eval: %s: samples have lengths %d and %d, want equal", name, len(a), len(b))
	}
	for i := range a {
		if math.IsNaN(a[i]) || math.IsNaN(b[i]) || math.IsInf(a[i], 0) || math.IsInf(b[i], 0) {
			return fmt.Errorf("eval: %s: pair %d = (%v, %v), want finite values", name, i, a[i], b[i])
		}
	}
	return nil
}

// ErrZeroDifferences is returned by the paired tests when every pair is
// equal, so that there is nothing to test.
var ErrZeroDifferences = errors.New("eval: all paired differences are zero")

// PairedTTest is the two-sided paired Student t test of mean(a − b) = 0
// (scipy.stats.ttest_rel): t = mean(d)/(sd(d)/√n) with the sample standard
// deviation (ddof = 1), p from Student's t with n − 1 degrees of freedom.
// It needs n ≥ 2 pairs. When every difference is the same non-zero value,
// t = ±Inf and p = 0; when every difference is zero it returns
// ErrZeroDifferences.
func PairedTTest(a, b []float64) (t, p float64, err error) {
	if err := checkPaired("PairedTTest", a, b); err != nil {
		return 0, 0, err
	}
	n := len(a)
	if n < 2 {
		return 0, 0, fmt.Errorf("eval: PairedTTest: %d pair(s), want at least 2", n)
	}
	d := make([]float64, n)
	for i := range a {
		d[i] = a[i] - b[i]
	}
	mean := npMean(d)
	dev := make([]float64, n)
	for i, v := range d {
		dev[i] = (v - mean) * (v - mean)
	}
	sd := math.Sqrt(npSum(dev) / float64(n-1))
	if sd == 0 {
		if mean == 0 {
			return math.NaN(), math.NaN(), ErrZeroDifferences
		}
		return math.Copysign(math.Inf(1), mean), 0, nil
	}
	t = mean / (sd / math.Sqrt(float64(n)))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}
	p = 2 * dist.Survival(math.Abs(t))
	return t, min(p, 1), nil
}

// WilcoxonSignedRank is the two-sided Wilcoxon signed-rank test of the
// paired samples a and b (scipy.stats.wilcoxon with its defaults:
// zero_method="wilcox", no continuity correction). Zero differences are
// dropped; ranks of tied |differences| are averaged. The statistic w is
// min(R+, R−). The p-value is exact (the null distribution enumerated) when
// at most 50 pairs remain and there are no zeros and no ties; otherwise it
// is the normal approximation with the tie correction of the variance.
// (SciPy 1.10 also uses its "exact" branch with ties, truncating R+ to an
// integer; this function uses the approximation there instead.)
func WilcoxonSignedRank(a, b []float64) (w, p float64, err error) {
	if err := checkPaired("WilcoxonSignedRank", a, b); err != nil {
		return 0, 0, err
	}
	if len(a) == 0 {
		return 0, 0, errors.New("eval: WilcoxonSignedRank: no pairs")
	}
	var d []float64
	zeros := 0
	for i := range a {
		if v := a[i] - b[i]; v != 0 {
			d = append(d, v)
		} else {
			zeros++
		}
	}
	n := len(d)
	if n == 0 {
		return 0, 0, ErrZeroDifferences
	}
	// Average ranks of |d|.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		ai, aj := math.Abs(d[i]), math.Abs(d[j])
		switch {
		case ai < aj:
			return -1
		case ai > aj:
			return 1
		}
		return 0
	})
	rank := make([]float64, n)
	var tieTerm float64 // Σ t(t²−1) over groups of ties
	ties := false
	for s := 0; s < n; {
		e := s + 1
		for e < n && math.Abs(d[order[e]]) == math.Abs(d[order[s]]) {
			e++
		}
		r := float64(s+e+1) / 2 // mean of ranks s+1 … e
		for q := s; q < e; q++ {
			rank[order[q]] = r
		}
		if t := float64(e - s); t > 1 {
			ties = true
			tieTerm += t * (t*t - 1)
		}
		s = e
	}
	var rPlus, rMinus float64
	for i, v := range d {
		if v > 0 {
			rPlus += rank[i]
		} else {
			rMinus += rank[i]
		}
	}
	w = math.Min(rPlus, rMinus)
	if n <= 50 && zeros == 0 && !ties {
		return w, wilcoxonExactP(n, int(rPlus)), nil
	}
	fn := float64(n)
	mn := fn * (fn + 1) * 0.25
	se := fn * (fn + 1) * (2*fn + 1)
	se -= 0.5 * tieTerm
	se = math.Sqrt(se / 24)
	z := (w - mn) / se
	p = 2 * distuv.UnitNormal.Survival(math.Abs(z))
	return w, min(p, 1), nil
}

// wilcoxonExactP is the exact two-sided p-value of R+ = rPlus for n pairs
// without ties: 2·min(P(R+ ≤ r), P(R+ ≥ r)), 1 at the centre.
func wilcoxonExactP(n, rPlus int) float64 {
	maxSum := n * (n + 1) / 2
	// counts[s] = number of subsets of {1..n} with sum s.
	counts := make([]float64, maxSum+1)
	counts[0] = 1
	for k := 1; k <= n; k++ {
		for s := maxSum; s >= k; s-- {
			counts[s] += counts[s-k]
		}
	}
	total := math.Ldexp(1, n)
	if rPlus == maxSum/2 { // the centre, as SciPy treats it
		return 1
	}
	var less, greater float64
	for s := 0; s <= rPlus; s++ {
		less += counts[s]
	}
	for s := rPlus; s <= maxSum; s++ {
		greater += counts[s]
	}
	return math.Min(1, 2*math.Min(less, greater)/total)
}

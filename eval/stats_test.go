package eval

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

// TestStatsMatchSciPy compares with NumPy/SciPy values recorded in
// testdata/sklearn_reference.json (np.mean, np.std, scipy.stats.ttest_rel,
// scipy.stats.wilcoxon).
func TestStatsMatchSciPy(t *testing.T) {
	ref := loadRef(t)
	t.Logf("reference: scipy %s", ref.Versions["scipy"])
	for _, key := range []string{"n12", "n60", "ties"} {
		st, ok := ref.Stats[key]
		if !ok {
			t.Fatalf("reference has no stats case %q", key)
		}
		m, s := MeanStd(st.A)
		if m != st.MeanA || s != st.StdA {
			t.Errorf("%s: MeanStd = %v, %v; numpy %v, %v (must be bit-identical)", key, m, s, st.MeanA, st.StdA)
		}
		tv, tp, err := PairedTTest(st.A, st.B)
		if err != nil {
			t.Fatalf("%s: PairedTTest: %v", key, err)
		}
		if relDiff(tv, st.T) > 1e-12 || relDiff(tp, st.TP) > 1e-9 {
			t.Errorf("%s: t = %v, p = %v; scipy t = %v, p = %v", key, tv, tp, st.T, st.TP)
		}
		w, wp, err := WilcoxonSignedRank(st.A, st.B)
		if err != nil {
			t.Fatalf("%s: WilcoxonSignedRank: %v", key, err)
		}
		if w != st.W || relDiff(wp, st.WP) > 1e-9 {
			t.Errorf("%s: W = %v, p = %v; scipy W = %v, p = %v", key, w, wp, st.W, st.WP)
		}
	}
}

// TestStatsKnownValues checks small cases computed by hand.
func TestStatsKnownValues(t *testing.T) {
	m, s := MeanStd([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if m != 5 || s != 2 {
		t.Errorf("MeanStd = %v, %v, want 5, 2 (population std)", m, s)
	}
	if m, s := MeanStd(nil); !math.IsNaN(m) || !math.IsNaN(s) {
		t.Errorf("MeanStd(nil) = %v, %v, want NaN, NaN", m, s)
	}
	// d = (1, 2, 3): mean 2, sd 1, t = 2/(1/√3) = 2√3, dof 2:
	// p = 2·(1 − F(2√3)) with F the t(2) CDF, F(x) = ½ + x/(2√(x²+2)).
	tv, p, err := PairedTTest([]float64{2, 4, 6}, []float64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	x := 2 * math.Sqrt(3)
	wantP := 2 * (0.5 - x/(2*math.Sqrt(x*x+2)))
	if relDiff(tv, x) > 1e-14 || relDiff(p, wantP) > 1e-10 {
		t.Errorf("PairedTTest = %v, %v, want %v, %v", tv, p, x, wantP)
	}
	tv, p, err = PairedTTest([]float64{2, 3, 4}, []float64{1, 2, 3})
	if err != nil || !math.IsInf(tv, 1) || p != 0 {
		t.Errorf("constant positive differences: %v, %v, %v; want +Inf, 0, nil", tv, p, err)
	}
	// Exact Wilcoxon, n = 4 all positive: W = min(10, 0) = 0,
	// P(R+ ≥ 10) = 1/16, two-sided 1/8.
	w, wp, err := WilcoxonSignedRank([]float64{1, 2, 3, 4}, []float64{0, 0, 0, 0})
	if err != nil || w != 0 || wp != 0.125 {
		t.Errorf("Wilcoxon n=4 all positive: %v, %v, %v; want 0, 0.125, nil", w, wp, err)
	}
	// Ranks 1..5 with signs + − + − +: R+ = 9, R− = 6, W = 6; p = 2·P(R+ ≥ 9)
	// = 2·P(R+ ≤ 6), and the subsets of {1..5} with sums 0…6 number
	// 1+1+1+2+2+3+3 = 13 of 32.
	w, wp, err = WilcoxonSignedRank([]float64{1, -2, 3, -4, 5}, []float64{0, 0, 0, 0, 0})
	if err != nil || w != 6 || relDiff(wp, 2*13.0/32) > 1e-15 {
		t.Errorf("Wilcoxon n=5: %v, %v, %v; want 6, %v, nil", w, wp, err, 2*13.0/32)
	}
}

func TestStatsErrors(t *testing.T) {
	if _, _, err := PairedTTest([]float64{1, 2}, []float64{1}); err == nil || !strings.Contains(err.Error(), "lengths 2 and 1") {
		t.Errorf("length mismatch: %v", err)
	}
	if _, _, err := PairedTTest([]float64{1}, []float64{0}); err == nil || !strings.Contains(err.Error(), "at least 2") {
		t.Errorf("one pair: %v", err)
	}
	if _, _, err := PairedTTest([]float64{1, math.NaN()}, []float64{0, 0}); err == nil || !strings.Contains(err.Error(), "pair 1") {
		t.Errorf("NaN: %v", err)
	}
	if _, _, err := PairedTTest([]float64{1, 2}, []float64{1, 2}); !errors.Is(err, ErrZeroDifferences) {
		t.Errorf("equal samples: %v, want ErrZeroDifferences", err)
	}
	if _, _, err := WilcoxonSignedRank([]float64{1, 2}, []float64{1, 2}); !errors.Is(err, ErrZeroDifferences) {
		t.Errorf("Wilcoxon equal samples: %v, want ErrZeroDifferences", err)
	}
	if _, _, err := WilcoxonSignedRank(nil, nil); err == nil {
		t.Error("Wilcoxon of no pairs: no error")
	}
	if _, _, err := WilcoxonSignedRank([]float64{1}, []float64{math.Inf(1)}); err == nil {
		t.Error("Wilcoxon with Inf: no error")
	}
}

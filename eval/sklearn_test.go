package eval

import (
	"math"
	"slices"
	"testing"
)

// TestSVCMatchesSklearnPlainFit compares single fits with scikit-learn's SVC
// on the fixture (rows 0-199 train, 200-299 test): γ, support vectors, dual
// coefficients, biases, decision values and predictions.
func TestSVCMatchesSklearnPlainFit(t *testing.T) {
	ref := loadRef(t)
	t.Logf("reference: scikit-learn %s, numpy %s", ref.Versions["sklearn"], ref.Versions["numpy"])
	for _, name := range []string{"embed2", "embed3"} {
		fx := loadEmbed(t, name)
		for _, pr := range ref.Datasets[name].Plain {
			svc := &SVC{C: pr.C, Gamma: pr.GammaParam}
			if err := svc.Fit(fx.rows64(0, 200), 200, fx.d, fx.y[:200]); err != nil {
				t.Fatalf("%s C=%v: Fit: %v", name, pr.C, err)
			}
			tag := name + " C=" + fmtF(pr.C) + " gamma=" + fmtF(pr.GammaParam)
			if g := svc.GammaUsed(); g != pr.Gamma {
				t.Errorf("%s: gamma %v, sklearn %v (must be bit-identical)", tag, g, pr.Gamma)
			}
			if !slices.Equal(svc.Support(), pr.Support) {
				t.Errorf("%s: support differs from sklearn:\n go %v\n sk %v", tag, svc.Support(), pr.Support)
			}
			if !slices.Equal(svc.NSupport(), pr.NSupport) {
				t.Errorf("%s: n_support %v, sklearn %v", tag, svc.NSupport(), pr.NSupport)
			}
			binary := len(svc.Classes()) == 2
			sign := 1.0
			if binary {
				sign = -1 // sklearn flips dual_coef_, intercept_ and decisions for two classes
			}
			coef := svc.DualCoef()
			var maxCoef float64
			if len(coef) == len(pr.DualCoef) {
				for i := range coef {
					if len(coef[i]) != len(pr.DualCoef[i]) {
						t.Fatalf("%s: dual_coef row %d has %d entries, sklearn %d", tag, i, len(coef[i]), len(pr.DualCoef[i]))
					}
					for k := range coef[i] {
						maxCoef = math.Max(maxCoef, math.Abs(sign*coef[i][k]-pr.DualCoef[i][k]))
					}
				}
			} else {
				t.Fatalf("%s: %d dual_coef rows, sklearn %d", tag, len(coef), len(pr.DualCoef))
			}
			// Dual coefficients lie in [−C, C]; the solver stops at a
			// tolerance of 1e-3 on the gradient, so compare relative to C.
			if maxCoef > 1e-3*pr.C {
				t.Errorf("%s: max |dual_coef − sklearn| = %.3g, want ≤ 1e-3·C", tag, maxCoef)
			}
			var maxRho float64
			for p, r := range svc.Rho() {
				// sklearn: intercept_ = −rho, and +rho for two classes.
				want := pr.Intercept[p]
				got := -r
				if binary {
					got = r
				}
				maxRho = math.Max(maxRho, math.Abs(got-want))
			}
			if maxRho > 1e-3 {
				t.Errorf("%s: max |intercept − sklearn| = %.3g, want ≤ 1e-3", tag, maxRho)
			}
			dec, err := svc.DecisionFunction(fx.rows64(200, fx.n), fx.n-200)
			if err != nil {
				t.Fatal(err)
			}
			var maxDec float64
			for i := range dec {
				for p := range dec[i] {
					maxDec = math.Max(maxDec, math.Abs(sign*dec[i][p]-pr.Decision[i][p]))
				}
			}
			if maxDec > 1e-3 {
				t.Errorf("%s: max |decision − sklearn| = %.3g, want ≤ 1e-3", tag, maxDec)
			}
			pred, err := svc.Predict(fx.rows64(200, fx.n), fx.n-200)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pred, pr.Predict) {
				t.Errorf("%s: predictions differ from sklearn", tag)
			}
			it, conv := svc.Iterations()
			t.Logf("%s: %d SVs, %d SMO iterations (converged %v), max diffs: dual_coef %.2g, intercept %.2g, decision %.2g",
				tag, len(svc.Support()), it, conv, maxCoef, maxRho, maxDec)
		}
	}
}

// TestSVMCrossValidateMatchesSklearn runs the whole protocol on the stored
// outer folds and compares with GridSearchCV + SVC per fold.
func TestSVMCrossValidateMatchesSklearn(t *testing.T) {
	ref := loadRef(t)
	for _, name := range []string{"embed2", "embed3"} {
		fx := loadEmbed(t, name)
		want := ref.Datasets[name].Protocol
		res, err := SVMCrossValidate(fx.x, fx.n, fx.d, fx.y, SVMOptions{FoldIDs: fx.folds, Cs: ref.Cs})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.FoldAcc) != len(want.FoldAcc) {
			t.Fatalf("%s: %d folds, sklearn %d", name, len(res.FoldAcc), len(want.FoldAcc))
		}
		for f := range want.FoldAcc {
			if res.ChosenC[f] != want.ChosenC[f] {
				t.Errorf("%s fold %d: chosen C %v, sklearn %v (inner means go %v, sklearn %v)",
					name, f, res.ChosenC[f], want.ChosenC[f], res.InnerMean[f], want.InnerMean[f])
			}
			if res.FoldAcc[f] != want.FoldAcc[f] {
				t.Errorf("%s fold %d: test accuracy %v, sklearn %v", name, f, res.FoldAcc[f], want.FoldAcc[f])
			}
			if res.Gamma[f] != want.Gamma[f] {
				t.Errorf("%s fold %d: gamma %v, sklearn %v (must be bit-identical)", name, f, res.Gamma[f], want.Gamma[f])
			}
			for c := range want.InnerMean[f] {
				if res.InnerMean[f][c] != want.InnerMean[f][c] {
					t.Errorf("%s fold %d C=%v: mean inner accuracy %v, sklearn %v", name, f, ref.Cs[c], res.InnerMean[f][c], want.InnerMean[f][c])
				}
			}
		}
		if res.Mean != want.Mean || res.Std != want.Std {
			t.Errorf("%s: mean ± std %v ± %v, sklearn %v ± %v", name, res.Mean, res.Std, want.Mean, want.Std)
		}
		if res.NotConverged != 0 {
			t.Errorf("%s: %d fits did not converge", name, res.NotConverged)
		}
		t.Logf("%s: %.4f ± %.4f, chosen C %v", name, res.Mean, res.Std, res.ChosenC)
	}
}

func fmtF(v float64) string { return strconvFormat(v) }

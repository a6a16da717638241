package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// separableData draws n rows of d standard-normal features (then shifted
// and scaled per column) labelled by argmax(x·W*) for a random W* (d×C),
// keeping only rows whose best score beats the runner-up by margin.
func separableData(rng *rand.Rand, wStar []float64, n, d, classes int, margin float64) ([]float32, []int) {
	x := make([]float32, 0, n*d)
	y := make([]int, 0, n)
	row := make([]float64, d)
	z := make([]float64, classes)
	for len(y) < n {
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		clear(z)
		for j, v := range row {
			for c := range z {
				z[c] += v * wStar[j*classes+c]
			}
		}
		best := argmax(z)
		second := math.Inf(-1)
		for c, v := range z {
			if c != best && v > second {
				second = v
			}
		}
		if z[best]-second < margin {
			continue
		}
		for j, v := range row {
			// Uneven column scales and offsets: standardisation matters.
			x = append(x, float32(v*float64(1+j%4)*3+float64(j)))
		}
		y = append(y, best)
	}
	return x, y
}

func randomW(rng *rand.Rand, d, classes int) []float64 {
	w := make([]float64, d*classes)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	return w
}

func TestProbeSeparable(t *testing.T) {
	for _, tc := range []struct {
		name           string
		d, classes     int
		nTrain, nTest  int
		seed           uint64
		margin, minAcc float64
	}{
		{"5 classes d=20", 20, 5, 2000, 1000, 1, 1, 0.95},
		{"10 classes d=64", 64, 10, 3000, 1000, 2, 1, 0.95},
		{"2 classes d=8", 8, 2, 500, 500, 3, 0.5, 0.95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 11))
			w := randomW(rng, tc.d, tc.classes)
			xTr, yTr := separableData(rng, w, tc.nTrain, tc.d, tc.classes, tc.margin)
			xTe, yTe := separableData(rng, w, tc.nTest, tc.d, tc.classes, tc.margin)
			p, err := TrainProbe(xTr, tc.nTrain, tc.d, yTr, tc.classes, ProbeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !p.Converged {
				t.Errorf("not converged: %s after %d iterations, |grad|∞ %.3g", p.Status, p.Iterations, p.GradNorm)
			}
			acc, err := p.Accuracy(xTe, tc.nTest, yTe)
			if err != nil {
				t.Fatal(err)
			}
			trainAcc, _ := p.Accuracy(xTr, tc.nTrain, yTr)
			t.Logf("train %.4f test %.4f, %d iterations, %d evaluations, loss %.4g, %s", trainAcc, acc, p.Iterations, p.Evaluations, p.Loss, p.Status)
			if acc < tc.minAcc {
				t.Errorf("test accuracy %.4f, want >= %.2f", acc, tc.minAcc)
			}
			acc2, err := LinearProbe(xTr, yTr, xTe, yTe, tc.d, tc.classes, ProbeOptions{})
			if err != nil || acc2 != acc {
				t.Errorf("LinearProbe = %v, %v; want %v as from TrainProbe+Accuracy", acc2, err, acc)
			}
		})
	}
}

func randomProblem(seed uint64, n, d, classes int) ([]float64, []int) {
	rng := rand.New(rand.NewPCG(seed, 5))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y := make([]int, n)
	for i := range y {
		y[i] = rng.IntN(classes)
	}
	return x, y
}

func TestProbeGradientFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name           string
		n, d, classes  int
		l2, thetaScale float64
		workers        int
		seed           uint64
	}{
		{"one chunk", 40, 5, 3, 0.3, 0.5, 1, 1},
		{"three chunks, 2 workers", 2*probeChunk + 77, 7, 4, 0.01, 1, 2, 2},
		{"large logits", 60, 4, 5, 1e-3, 20, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := randomProblem(tc.seed, tc.n, tc.d, tc.classes)
			obj := newProbeObjective(x, y, tc.n, tc.d, tc.classes, tc.l2, tc.workers)
			rng := rand.New(rand.NewPCG(tc.seed, 6))
			theta := make([]float64, obj.dim())
			for i := range theta {
				theta[i] = tc.thetaScale * rng.NormFloat64()
			}
			grad := make([]float64, obj.dim())
			f0 := obj.eval(theta, grad)
			if math.IsNaN(f0) || math.IsInf(f0, 0) {
				t.Fatalf("objective %v", f0)
			}
			const h = 1e-5
			tmp := make([]float64, obj.dim())
			worst := 0.0
			for i := range theta {
				save := theta[i]
				theta[i] = save + h
				fp := obj.eval(theta, tmp)
				theta[i] = save - h
				fm := obj.eval(theta, tmp)
				theta[i] = save
				fd := (fp - fm) / (2 * h)
				err := math.Abs(fd-grad[i]) / math.Max(1, math.Abs(grad[i]))
				worst = math.Max(worst, err)
				if err > 1e-6 {
					t.Errorf("∂F/∂θ[%d]: analytic %.10g, central difference %.10g", i, grad[i], fd)
				}
			}
			t.Logf("F = %.6g, worst relative gradient error %.2g", f0, worst)
		})
	}
}

// TestProbeObjectiveStable checks the log-sum-exp against known values for
// logits far beyond exp's range.
func TestProbeObjectiveStable(t *testing.T) {
	// One feature x = 1, no penalty worth counting, W = [1000, 0, −1000]:
	// logits (1000, 0, −1000).
	x := []float64{1, 1, 1}
	y := []int{0, 1, 2}
	obj := newProbeObjective(x, y, 3, 1, 3, 0, 1)
	theta := []float64{1000, 0, -1000, 0, 0, 0}
	grad := make([]float64, 6)
	f := obj.eval(theta, grad)
	// Per-row losses: log(1+e⁻¹⁰⁰⁰+e⁻²⁰⁰⁰) ≈ 0, 1000, 2000.
	if want := 1000.0; math.Abs(f-want) > 1e-9 {
		t.Errorf("F = %v, want %v", f, want)
	}
	// ∂F/∂b = mean(p − onehot(y)) with p ≈ (1,0,0) for every row: the
	// residuals are (0,0,0), (1,−1,0), (1,0,−1).
	wantB := []float64{2.0 / 3, -1.0 / 3, -1.0 / 3}
	for c, v := range grad[3:] {
		if math.Abs(v-wantB[c]) > 1e-12 {
			t.Errorf("∂F/∂b[%d] = %v, want %v", c, v, wantB[c])
		}
	}
	for i, v := range grad {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("gradient[%d] = %v", i, v)
		}
	}
}

func TestProbeLossDecreases(t *testing.T) {
	const n, d, classes = 400, 10, 4
	x, y := clusteredData(7, n, d, classes, 1)
	prev := math.Log(classes) // F(0) = log C
	for _, iters := range []int{1, 2, 3, 5, 8, 13, 21} {
		p, err := TrainProbe(x, n, d, y, classes, ProbeOptions{MaxIter: iters, GradTol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		if !(p.Loss < prev) {
			t.Errorf("MaxIter %d: loss %.10g, want < %.10g (loss of the previous budget)", iters, p.Loss, prev)
		}
		if p.Iterations > iters || (p.Iterations < iters && !p.Converged) {
			t.Errorf("MaxIter %d: ran %d iterations (%s)", iters, p.Iterations, p.Status)
		}
		prev = p.Loss
	}
}

// refBinaryGD fits the two-class probe objective with plain gradient descent
// written independently of probe.go: its own standardisation, the binary
// form of the loss (softplus of the logit difference), a fixed step.
func refBinaryGD(x []float32, n, d int, y []int, l2 float64, steps int) (w [][2]float64, b [2]float64, loss float64) {
	xs := make([][]float64, n)
	for i := range xs {
		xs[i] = make([]float64, d)
	}
	for j := 0; j < d; j++ {
		var s, ss float64
		for i := 0; i < n; i++ {
			s += float64(x[i*d+j])
		}
		mu := s / float64(n)
		for i := 0; i < n; i++ {
			v := float64(x[i*d+j]) - mu
			ss += v * v
		}
		sd := math.Sqrt(ss / float64(n))
		for i := 0; i < n; i++ {
			xs[i][j] = (float64(x[i*d+j]) - mu) / sd
		}
	}
	w = make([][2]float64, d)
	softplus := func(t float64) float64 {
		if t > 0 {
			return t + math.Log1p(math.Exp(-t))
		}
		return math.Log1p(math.Exp(t))
	}
	objective := func() float64 {
		f := 0.0
		for i := 0; i < n; i++ {
			var z [2]float64
			for c := 0; c < 2; c++ {
				z[c] = b[c]
				for j := 0; j < d; j++ {
					z[c] += xs[i][j] * w[j][c]
				}
			}
			f += softplus(z[1-y[i]] - z[y[i]])
		}
		f /= float64(n)
		for j := 0; j < d; j++ {
			f += l2 / 2 * (w[j][0]*w[j][0] + w[j][1]*w[j][1])
		}
		return f
	}
	// Lipschitz bound of the gradient: ‖x̃‖²max + 1 (for the bias) plus λ.
	lip := 0.0
	for i := 0; i < n; i++ {
		s := 1.0
		for _, v := range xs[i] {
			s += v * v
		}
		lip = math.Max(lip, s)
	}
	step := 1 / (lip + l2)
	for it := 0; it < steps; it++ {
		gw := make([][2]float64, d)
		var gb [2]float64
		for i := 0; i < n; i++ {
			var z [2]float64
			for c := 0; c < 2; c++ {
				z[c] = b[c]
				for j := 0; j < d; j++ {
					z[c] += xs[i][j] * w[j][c]
				}
			}
			// p(other) = σ(z_other − z_y); ∂/∂z_other = p, ∂/∂z_y = −p.
			o := 1 - y[i]
			p := 1 / (1 + math.Exp(z[y[i]]-z[o]))
			gb[o] += p
			gb[y[i]] -= p
			for j := 0; j < d; j++ {
				gw[j][o] += p * xs[i][j]
				gw[j][y[i]] -= p * xs[i][j]
			}
		}
		for c := 0; c < 2; c++ {
			b[c] -= step * gb[c] / float64(n)
			for j := 0; j < d; j++ {
				w[j][c] -= step * (gw[j][c]/float64(n) + l2*w[j][c])
			}
		}
	}
	return w, b, objective()
}

func TestProbeMatchesGradientDescent(t *testing.T) {
	const n, d = 300, 5
	x, y := clusteredData(3, n, d, 2, 0.8)
	for _, l2 := range []float64{0.3, 0.03} {
		w, b, refLoss := refBinaryGD(x, n, d, y, l2, 4000)
		p, err := TrainProbe(x, n, d, y, 2, ProbeOptions{L2: l2, GradTol: 1e-10})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("λ=%v: L-BFGS loss %.12f (%d iterations, %s), gradient descent %.12f", l2, p.Loss, p.Iterations, p.Status, refLoss)
		if math.Abs(p.Loss-refLoss) > 1e-9 {
			t.Errorf("λ=%v: loss %.12f, reference %.12f", l2, p.Loss, refLoss)
		}
		if p.Loss > refLoss+1e-12 {
			t.Errorf("λ=%v: L-BFGS loss %.14f above gradient descent's %.14f", l2, p.Loss, refLoss)
		}
		for j := 0; j < d; j++ {
			for c := 0; c < 2; c++ {
				if math.Abs(p.W[j*2+c]-w[j][c]) > 1e-4 {
					t.Errorf("λ=%v: W[%d][%d] = %.8f, reference %.8f", l2, j, c, p.W[j*2+c], w[j][c])
				}
			}
		}
		// The sum of the biases is not identified; their difference is.
		if got, want := p.B[1]-p.B[0], b[1]-b[0]; math.Abs(got-want) > 1e-4 {
			t.Errorf("λ=%v: b1−b0 = %.8f, reference %.8f", l2, got, want)
		}
	}
}

func TestProbeWorkersDeterministic(t *testing.T) {
	const n, d, classes = 3*probeChunk + 10, 12, 5
	x, y := clusteredData(9, n, d, classes, 0.5)
	base, err := TrainProbe(x, n, d, y, classes, ProbeOptions{Workers: 1, MaxIter: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{2, 3, 8} {
		p, err := TrainProbe(x, n, d, y, classes, ProbeOptions{Workers: w, MaxIter: 40})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.W, base.W) || !slices.Equal(p.B, base.B) || p.Loss != base.Loss {
			t.Errorf("Workers=%d: weights differ from Workers=1 (loss %v vs %v)", w, p.Loss, base.Loss)
		}
	}
}

// TestProbeStandardization checks the stored statistics and that a
// per-column affine change of the features does not change the fit.
func TestProbeStandardization(t *testing.T) {
	const n, d, classes = 200, 4, 3
	x, y := clusteredData(4, n, d, classes, 1)
	// Column 2 is constant.
	for i := 0; i < n; i++ {
		x[i*d+2] = 7
	}
	p, err := TrainProbe(x, n, d, y, classes, ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < d; j++ {
		var s float64
		for i := 0; i < n; i++ {
			s += float64(x[i*d+j])
		}
		mu := s / float64(n)
		var ss float64
		for i := 0; i < n; i++ {
			ss += (float64(x[i*d+j]) - mu) * (float64(x[i*d+j]) - mu)
		}
		sd := math.Sqrt(ss / float64(n))
		if j == 2 {
			sd = 1
		}
		if math.Abs(p.Mean[j]-mu) > 1e-12*math.Max(1, math.Abs(mu)) || math.Abs(p.Scale[j]-sd) > 1e-12*sd {
			t.Errorf("column %d: mean, scale %v, %v; want %v, %v", j, p.Mean[j], p.Scale[j], mu, sd)
		}
	}
	if w := p.W[2*classes : 3*classes]; slices.ContainsFunc(w, func(v float64) bool { return v != 0 }) {
		t.Errorf("weights of the constant column %v, want 0", w)
	}
	// Affine change: column j ↦ a_j·x + c_j with a_j > 0.
	x2 := slices.Clone(x)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x2[i*d+j] = x[i*d+j]*float32(1+3*j) + float32(100*j)
		}
	}
	p2, err := TrainProbe(x2, n, d, y, classes, ProbeOptions{GradTol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := TrainProbe(x, n, d, y, classes, ProbeOptions{GradTol: 1e-9})
	if math.Abs(p1.Loss-p2.Loss) > 1e-7 {
		t.Errorf("loss %v after an affine change of the features, %v before", p2.Loss, p1.Loss)
	}
	pr1, _ := p1.Predict(x, n)
	pr2, _ := p2.Predict(x2, n)
	if !slices.Equal(pr1, pr2) {
		t.Errorf("predictions change under an affine change of the features")
	}
	// Without standardisation the raw features are used, and the fit differs.
	p3, err := TrainProbe(x2, n, d, y, classes, ProbeOptions{NoStandardize: true, MaxIter: 5})
	if err != nil {
		t.Fatal(err)
	}
	if p3.Mean != nil || p3.Scale != nil {
		t.Errorf("NoStandardize: Mean, Scale = %v, %v, want nil", p3.Mean, p3.Scale)
	}
}

func TestProbeL2Grid(t *testing.T) {
	const n, d, classes = 600, 16, 4
	x, y := clusteredData(12, n, d, classes, 0.4)
	grid := []float64{1e-4, 1e-2, 1, 100}
	p, err := TrainProbe(x, n, d, y, classes, ProbeOptions{L2Grid: grid, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Selection) != len(grid) {
		t.Fatalf("%d selection scores for %d candidates", len(p.Selection), len(grid))
	}
	best := 0
	for i, s := range p.Selection {
		if s.L2 != grid[i] || !(s.Accuracy >= 0 && s.Accuracy <= 1) {
			t.Errorf("Selection[%d] = %+v", i, s)
		}
		if s.Accuracy >= p.Selection[best].Accuracy {
			best = i
		}
	}
	if p.L2 != grid[best] {
		t.Errorf("chose λ=%v, want %v (best validation accuracy, larger λ on ties): %+v", p.L2, grid[best], p.Selection)
	}
	t.Logf("selection %+v → λ=%v", p.Selection, p.L2)
	// The final probe is the refit on all rows with the chosen λ.
	q, err := TrainProbe(x, n, d, y, classes, ProbeOptions{L2: p.L2})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.W, p.W) || q.Loss != p.Loss {
		t.Errorf("final probe differs from a plain fit with λ=%v on all rows", p.L2)
	}
}

func TestStratifiedHoldout(t *testing.T) {
	y := []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, 0, 1, 1, 1, 1, 1}
	train, val := stratifiedHoldout(y, 3, 0.2, 1)
	all := append(slices.Clone(train), val...)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("train ∪ val = %v, want every row once", all)
		}
	}
	count := func(idx []int, c int) int {
		k := 0
		for _, i := range idx {
			if y[i] == c {
				k++
			}
		}
		return k
	}
	// Class sizes 11, 8, 1: round(0.2·size) held out, one kept for training.
	for c, want := range []int{2, 2, 0} {
		if got := count(val, c); got != want {
			t.Errorf("class %d: %d validation rows, want %d", c, got, want)
		}
	}
	t2, v2 := stratifiedHoldout(y, 3, 0.2, 2)
	if slices.Equal(v2, val) && slices.Equal(t2, train) {
		t.Logf("seeds 1 and 2 gave the same split (possible, not an error)")
	}
}

func TestProbeBadInputs(t *testing.T) {
	x := []float32{0, 1, 1, 0, 2, 2, 3, 1}
	y := []int{0, 1, 0, 1}
	nan := slices.Clone(x)
	nan[5] = float32(math.NaN())
	inf := slices.Clone(x)
	inf[0] = float32(math.Inf(1))
	for _, tc := range []struct {
		name    string
		x       []float32
		n, d    int
		y       []int
		classes int
		opt     ProbeOptions
		want    string
	}{
		{"short x", x[:7], 4, 2, y, 2, ProbeOptions{}, "7 values for 4 rows × 2 features"},
		{"zero d", nil, 4, 0, y, 2, ProbeOptions{}, "4 rows × 0 features"},
		{"no rows", nil, 0, 2, nil, 2, ProbeOptions{}, "0 rows"},
		{"labels count", x, 4, 2, y[:3], 2, ProbeOptions{}, "3 labels for 4 rows"},
		{"label high", x, 4, 2, []int{0, 1, 2, 0}, 2, ProbeOptions{}, "label 2 of row 2 is outside [0, 2)"},
		{"label negative", x, 4, 2, []int{0, -1, 1, 0}, 2, ProbeOptions{}, "label -1 of row 1"},
		{"one class", x, 4, 2, []int{0, 0, 0, 0}, 1, ProbeOptions{}, "1 classes, want at least 2"},
		{"NaN", nan, 4, 2, y, 2, ProbeOptions{}, "feature 1 of row 2 is NaN"},
		{"Inf", inf, 4, 2, y, 2, ProbeOptions{}, "feature 0 of row 0 is +Inf"},
		{"negative L2", x, 4, 2, y, 2, ProbeOptions{L2: -1}, "L2 = -1"},
		{"NaN L2", x, 4, 2, y, 2, ProbeOptions{L2: math.NaN()}, "L2 = NaN"},
		{"zero in grid", x, 4, 2, y, 2, ProbeOptions{L2Grid: []float64{1, 0}}, "L2Grid[1] = 0"},
		{"ValFraction 1", x, 4, 2, y, 2, ProbeOptions{ValFraction: 1}, "ValFraction = 1"},
		{"MaxIter", x, 4, 2, y, 2, ProbeOptions{MaxIter: -3}, "MaxIter = -3"},
		{"GradTol", x, 4, 2, y, 2, ProbeOptions{GradTol: math.Inf(1)}, "GradTol = +Inf"},
		{"nothing held out", x, 4, 2, y, 2, ProbeOptions{L2Grid: []float64{1}, ValFraction: 0.01}, "holds out no row"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := TrainProbe(tc.x, tc.n, tc.d, tc.y, tc.classes, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	p, err := TrainProbe(x, 4, 2, y, 2, ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"predict shape", func() error { _, err := p.Predict(x[:5], 3); return err }, "5 values for 3 rows × 2 features"},
		{"predict NaN", func() error { _, err := p.Predict(nan, 4); return err }, "feature 1 of row 2 is NaN"},
		{"accuracy labels", func() error { _, err := p.Accuracy(x, 4, y[:2]); return err }, "2 labels for 4 rows"},
		{"accuracy label range", func() error { _, err := p.Accuracy(x, 4, []int{0, 0, 5, 0}); return err }, "label 5 of row 2"},
		{"linear probe test shape", func() error {
			_, err := LinearProbe(x, y, x[:3], []int{0, 1}, 2, 2, ProbeOptions{})
			return err
		}, "3 values for 2 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

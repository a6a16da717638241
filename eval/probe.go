package eval

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// Defaults of ProbeOptions.
const (
	// DefaultProbeL2 is the weight λ of the penalty (λ/2)·‖W‖² added to the
	// mean cross-entropy. On standardised features it corresponds to
	// scikit-learn's LogisticRegression(C = 1/(λ·n)): C = 0.2 for n = 50,000
	// training rows, C = 2 for n = 5,000. It is small enough not to cost
	// accuracy when n ≫ d and keeps the optimum finite on separable data.
	DefaultProbeL2 = 1e-4
	// DefaultProbeMaxIter bounds the L-BFGS major iterations.
	DefaultProbeMaxIter = 1000
	// DefaultProbeGradTol stops L-BFGS when the largest absolute entry of
	// the gradient of the objective falls below it (scikit-learn's lbfgs
	// solver stops at tol = 1e-4 on a likewise averaged objective).
	DefaultProbeGradTol = 1e-5
	// DefaultProbeValFraction is the share of each class held out to choose
	// L2 when ProbeOptions.L2Grid is set.
	DefaultProbeValFraction = 0.1
)

// probeChunk is the number of rows of one unit of work of the objective.
// The partition into chunks does not depend on the number of workers, and
// chunk partials are reduced in chunk order, so results are bitwise
// independent of ProbeOptions.Workers.
const probeChunk = 512

// ProbeOptions configures TrainProbe and LinearProbe. The zero value means
// every default: L2 = DefaultProbeL2, standardised features, all cores.
type ProbeOptions struct {
	// L2 is λ in the objective (1/n)·Σᵢ CE(xᵢ) + (λ/2)·‖W‖² (the bias is not
	// penalised); 0 means DefaultProbeL2. Use a tiny positive value such as
	// 1e-12 for (almost) no penalty; negative values are an error.
	L2 float64
	// L2Grid, when not empty, replaces L2 by a choice: a stratified
	// ValFraction of the training rows is held out (seeded by Seed), a probe
	// is fitted on the rest for every value, the value with the highest
	// validation accuracy is kept (ties go to the larger value, the simpler
	// model), and the final probe is refitted on all training rows with it.
	L2Grid []float64
	// ValFraction is the held-out share of every class for L2Grid (default
	// DefaultProbeValFraction); each class keeps at least one training row.
	ValFraction float64
	// Seed seeds the validation split of L2Grid.
	Seed uint64
	// MaxIter bounds the L-BFGS major iterations (default
	// DefaultProbeMaxIter).
	MaxIter int
	// GradTol is the convergence threshold on the infinity norm of the
	// gradient (default DefaultProbeGradTol).
	GradTol float64
	// NoStandardize skips the standardisation of the features. By default
	// every feature is centred and scaled with the training set's mean and
	// population standard deviation (a constant feature gets scale 1, as in
	// scikit-learn's StandardScaler), and test features are transformed with
	// the same statistics.
	NoStandardize bool
	// Workers is the number of goroutines evaluating the objective (default
	// GOMAXPROCS). Results do not depend on it.
	Workers int
	// Context, when not nil, stops the training when it is cancelled: it is
	// checked after every evaluation of the objective, and TrainProbe then
	// returns an error wrapping Context.Err(). A context that is not
	// cancelled changes no result.
	Context context.Context
	// Progress, when not nil, is called after every L-BFGS iteration with
	// the number of iterations done and their bound: MaxIter per fit, times
	// len(L2Grid)+1 fits with L2Grid. A fit that converges early counts as
	// MaxIter iterations, so done jumps at its end and total is an upper
	// bound of the work. It changes no result.
	Progress func(done, total int)
}

// L2Score is the validation accuracy of one candidate of ProbeOptions.L2Grid.
type L2Score struct {
	L2       float64
	Accuracy float64
}

// Probe is a trained linear probe: multinomial logistic regression
// (softmax over Classes scores z = x̃·W + B, where x̃ is the standardised
// feature row) fitted by full-batch L-BFGS.
type Probe struct {
	// D is the feature dimension and Classes the number of classes.
	D, Classes int
	// Mean and Scale standardise a feature row, x̃ⱼ = (xⱼ − Mean[j]) / Scale[j];
	// both are nil when the probe was trained with NoStandardize.
	Mean, Scale []float64
	// W holds the weights, D × Classes row-major, and B the biases.
	W, B []float64
	// L2 is the penalty weight the probe was fitted with.
	L2 float64
	// Loss is the final value of the training objective (mean cross-entropy
	// plus penalty).
	Loss float64
	// Iterations and Evaluations count L-BFGS major iterations and
	// objective-and-gradient evaluations.
	Iterations, Evaluations int
	// GradNorm is the infinity norm of the final gradient.
	GradNorm float64
	// Status is gonum's termination status, followed by the optimiser's
	// error if it stopped on one; Converged is true when the status is
	// GradientThreshold or FunctionConvergence (no relative progress over
	// 25 iterations). A probe stopped by MaxIter or a line-search failure
	// keeps the best point found and is still returned, with Converged false
	// (check GradNorm).
	Status    string
	Converged bool
	// Selection holds the validation accuracy of every L2Grid candidate, in
	// grid order; nil without L2Grid.
	Selection []L2Score
}

// TrainProbe fits a linear probe on the n×d row-major features x with labels
// y in [0, classes). It returns an error naming the problem for bad shapes,
// labels out of range, fewer than two classes, non-finite features or bad
// options.
func TrainProbe(x []float32, n, d int, y []int, classes int, opt ProbeOptions) (*Probe, error) {
	if err := checkLabelled("eval: linear probe: training set", x, n, d, y, classes); err != nil {
		return nil, err
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	if len(opt.L2Grid) == 0 {
		l2 := opt.L2
		if l2 == 0 {
			l2 = DefaultProbeL2
		}
		return fitProbe(x, n, d, y, classes, l2, opt, probeFit{0, 1})
	}
	trainIdx, valIdx := stratifiedHoldout(y, classes, opt.valFraction(), opt.Seed)
	if len(valIdx) == 0 {
		return nil, fmt.Errorf("eval: linear probe: L2Grid: ValFraction %v holds out no row of %d", opt.valFraction(), n)
	}
	xt, yt := gatherRows(x, d, y, trainIdx)
	xv, yv := gatherRows(x, d, y, valIdx)
	sel := make([]L2Score, len(opt.L2Grid))
	best := -1
	for i, l2 := range opt.L2Grid {
		p, err := fitProbe(xt, len(trainIdx), d, yt, classes, l2, opt, probeFit{i, len(opt.L2Grid) + 1})
		if err != nil {
			return nil, fmt.Errorf("eval: linear probe: L2Grid[%d] = %v: %w", i, l2, err)
		}
		acc, err := p.Accuracy(xv, len(valIdx), yv)
		if err != nil {
			return nil, err
		}
		sel[i] = L2Score{L2: l2, Accuracy: acc}
		if best < 0 || acc > sel[best].Accuracy || (acc == sel[best].Accuracy && l2 > sel[best].L2) {
			best = i
		}
	}
	p, err := fitProbe(x, n, d, y, classes, sel[best].L2, opt, probeFit{len(opt.L2Grid), len(opt.L2Grid) + 1})
	if err != nil {
		return nil, err
	}
	p.Selection = sel
	return p, nil
}

// LinearProbe trains a probe on train (rows of d features, labels yTrain)
// and returns its top-1 accuracy in [0, 1] on test. The number of rows of
// each set is len(yTrain) and len(yTest).
func LinearProbe(train []float32, yTrain []int, test []float32, yTest []int, d, classes int, opt ProbeOptions) (float64, error) {
	p, err := TrainProbe(train, len(yTrain), d, yTrain, classes, opt)
	if err != nil {
		return math.NaN(), err
	}
	return p.Accuracy(test, len(yTest), yTest)
}

// Scores returns the n×Classes row-major class scores (logits) of the n×D
// row-major features x.
func (p *Probe) Scores(x []float32, n int) ([]float64, error) {
	if err := checkFeatures("eval: linear probe: predict", x, n, p.D); err != nil {
		return nil, err
	}
	d, c := p.D, p.Classes
	z := make([]float64, n*c)
	row := make([]float64, d)
	for i := 0; i < n; i++ {
		p.standardizeRow(x[i*d:(i+1)*d], row)
		logits(row, p.W, p.B, z[i*c:(i+1)*c])
	}
	return z, nil
}

// Predict returns the predicted class of each of the n rows of x (n×D
// row-major): the argmax of the scores, the lowest class on a tie.
func (p *Probe) Predict(x []float32, n int) ([]int, error) {
	z, err := p.Scores(x, n)
	if err != nil {
		return nil, err
	}
	pred := make([]int, n)
	for i := range pred {
		pred[i] = argmax(z[i*p.Classes : (i+1)*p.Classes])
	}
	return pred, nil
}

// Accuracy returns the share of the n rows of x (n×D row-major) whose
// prediction equals y, in [0, 1].
func (p *Probe) Accuracy(x []float32, n int, y []int) (float64, error) {
	if err := checkLabelled("eval: linear probe: accuracy", x, n, p.D, y, p.Classes); err != nil {
		return math.NaN(), err
	}
	pred, err := p.Predict(x, n)
	if err != nil {
		return math.NaN(), err
	}
	return accuracyOf(pred, y), nil
}

func (p *Probe) standardizeRow(src []float32, dst []float64) {
	if p.Mean == nil {
		for j, v := range src {
			dst[j] = float64(v)
		}
		return
	}
	for j, v := range src {
		dst[j] = (float64(v) - p.Mean[j]) / p.Scale[j]
	}
}

func (o ProbeOptions) check() error {
	bad := func(name string, v float64) error {
		return fmt.Errorf("eval: linear probe: ProbeOptions.%s = %v, want a finite value >= 0", name, v)
	}
	if !(o.L2 >= 0) || math.IsInf(o.L2, 0) {
		return bad("L2", o.L2)
	}
	for i, v := range o.L2Grid {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("eval: linear probe: ProbeOptions.L2Grid[%d] = %v, want a finite value > 0", i, v)
		}
	}
	if !(o.GradTol >= 0) || math.IsInf(o.GradTol, 0) {
		return bad("GradTol", o.GradTol)
	}
	if !(o.ValFraction >= 0 && o.ValFraction < 1) {
		return fmt.Errorf("eval: linear probe: ProbeOptions.ValFraction = %v, want a value in [0, 1)", o.ValFraction)
	}
	if o.MaxIter < 0 {
		return fmt.Errorf("eval: linear probe: ProbeOptions.MaxIter = %d, want >= 0", o.MaxIter)
	}
	return nil
}

func (o ProbeOptions) valFraction() float64 {
	if o.ValFraction == 0 {
		return DefaultProbeValFraction
	}
	return o.ValFraction
}

// checkFeatures validates an n×d row-major matrix of finite values.
func checkFeatures(what string, x []float32, n, d int) error {
	if n < 1 || d < 1 {
		return fmt.Errorf("%s: %d rows × %d features, want at least 1 × 1", what, n, d)
	}
	if len(x) != n*d {
		return fmt.Errorf("%s: %d values for %d rows × %d features, want n×d = %d", what, len(x), n, d, n*d)
	}
	for k, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%s: feature %d of row %d is %v, want a finite value", what, k%d, k/d, v)
		}
	}
	return nil
}

// checkLabelled validates features and their labels in [0, classes).
func checkLabelled(what string, x []float32, n, d int, y []int, classes int) error {
	if classes < 2 {
		return fmt.Errorf("%s: %d classes, want at least 2", what, classes)
	}
	if len(y) != n {
		return fmt.Errorf("%s: %d labels for %d rows", what, len(y), n)
	}
	for i, c := range y {
		if c < 0 || c >= classes {
			return fmt.Errorf("%s: label %d of row %d is outside [0, %d)", what, c, i, classes)
		}
	}
	return checkFeatures(what, x, n, d)
}

func accuracyOf(pred, y []int) float64 {
	hit := 0
	for i, c := range y {
		if pred[i] == c {
			hit++
		}
	}
	return float64(hit) / float64(len(y))
}

// argmax returns the index of the largest value, the lowest on a tie.
func argmax(v []float64) int {
	best := 0
	for i, x := range v[1:] {
		if x > v[best] {
			best = i + 1
		}
	}
	return best
}

// logits writes z = x·W + b for one row x of length d, W d×C row-major.
func logits(x, w, b, z []float64) {
	c := len(z)
	copy(z, b)
	for j, xv := range x {
		wr := w[j*c : j*c+c]
		for k := range z {
			z[k] += xv * wr[k]
		}
	}
}

// stratifiedHoldout returns the training and validation row indices of a
// seeded stratified split holding out round(frac·count) rows of every class,
// leaving at least one training row per class. Both lists are ascending.
func stratifiedHoldout(y []int, classes int, frac float64, seed uint64) (train, val []int) {
	byClass := make([][]int, classes)
	for i, c := range y {
		byClass[c] = append(byClass[c], i)
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for _, idx := range byClass {
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		nv := int(math.Round(frac * float64(len(idx))))
		nv = min(nv, len(idx)-1)
		nv = max(nv, 0)
		val = append(val, idx[:nv]...)
		train = append(train, idx[nv:]...)
	}
	slices.Sort(train)
	slices.Sort(val)
	return train, val
}

func gatherRows(x []float32, d int, y []int, idx []int) ([]float32, []int) {
	xs := make([]float32, len(idx)*d)
	ys := make([]int, len(idx))
	for k, i := range idx {
		copy(xs[k*d:(k+1)*d], x[i*d:(i+1)*d])
		ys[k] = y[i]
	}
	return xs, ys
}

// probeObjective is the training objective of a probe,
//
//	F(θ) = (1/n)·Σᵢ [logΣ_c exp(zᵢc) − zᵢ,yᵢ] + (λ/2)·‖W‖²,  zᵢ = x̃ᵢ·W + b,
//
// with θ = (Wᵀ, C×d row-major, then b): the weights are stored class by
// class so that the score of a class is one dot product. It evaluates F and
// ∇F together in float64, over fixed chunks of rows on a pool of
// goroutines.
type probeObjective struct {
	x          []float64 // standardised features, n×d row-major
	y          []int
	n, d, c    int
	l2         float64
	workers    int
	partLoss   []float64 // per chunk
	partGrad   []float64 // per chunk, len(θ) each
	evals      int
	lastX      []float64
	lastF      float64
	lastG      []float64
	haveCached bool
}

func newProbeObjective(x []float64, y []int, n, d, c int, l2 float64, workers int) *probeObjective {
	chunks := (n + probeChunk - 1) / probeChunk
	dim := d*c + c
	return &probeObjective{
		x: x, y: y, n: n, d: d, c: c, l2: l2,
		workers:  min(workers, chunks),
		partLoss: make([]float64, chunks),
		partGrad: make([]float64, chunks*dim),
		lastX:    make([]float64, dim),
		lastG:    make([]float64, dim),
	}
}

func (o *probeObjective) dim() int { return o.d*o.c + o.c }

// eval returns F(θ) and writes ∇F(θ) into grad.
func (o *probeObjective) eval(theta, grad []float64) float64 {
	o.evals++
	d, c, dim := o.d, o.c, o.dim()
	w := theta[:d*c]
	chunks := len(o.partLoss)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			z := make([]float64, probeRows*c)
			for {
				k := int(next.Add(1)) - 1
				if k >= chunks {
					return
				}
				lo, hi := k*probeChunk, min((k+1)*probeChunk, o.n)
				g := o.partGrad[k*dim : (k+1)*dim]
				clear(g)
				loss := 0.0
				for i := lo; i < hi; i += probeRows {
					loss += o.rows(theta, g, z, i, min(probeRows, hi-i))
				}
				o.partLoss[k] = loss
			}
		}()
	}
	wg.Wait()
	// Deterministic reduction in chunk order.
	clear(grad)
	loss := 0.0
	for k := 0; k < chunks; k++ {
		loss += o.partLoss[k]
		g := o.partGrad[k*dim : (k+1)*dim]
		for j, v := range g {
			grad[j] += v
		}
	}
	invN := 1 / float64(o.n)
	pen := 0.0
	for j := range grad {
		grad[j] *= invN
	}
	for j, v := range w {
		pen += v * v
		grad[j] += o.l2 * v
	}
	return loss*invN + 0.5*o.l2*pen
}

// probeRows is the number of rows processed together by probeObjective.rows
// (register blocking: each weight loaded serves four rows).
const probeRows = 4

// rows adds the gradient of the unnormalised loss of rows i … i+m−1
// (m <= probeRows) to g and returns their summed loss; z is scratch of
// probeRows×C.
func (o *probeObjective) rows(theta, g, z []float64, i, m int) float64 {
	d, c := o.d, o.c
	wt, b := theta[:d*c], theta[d*c:]
	gw, gb := g[:d*c], g[d*c:]
	x := o.x[i*d : (i+m)*d]
	if m == probeRows {
		x0, x1, x2, x3 := x[:d], x[d:2*d], x[2*d:3*d], x[3*d:4*d]
		for k := 0; k < c; k++ {
			wk := wt[k*d : (k+1)*d]
			x0, x1, x2, x3 := x0[:len(wk)], x1[:len(wk)], x2[:len(wk)], x3[:len(wk)]
			var s0, s1, s2, s3 float64
			for j, v := range wk {
				s0 += x0[j] * v
				s1 += x1[j] * v
				s2 += x2[j] * v
				s3 += x3[j] * v
			}
			z[k], z[c+k], z[2*c+k], z[3*c+k] = s0+b[k], s1+b[k], s2+b[k], s3+b[k]
		}
	} else {
		for r := 0; r < m; r++ {
			xr := x[r*d : (r+1)*d]
			for k := 0; k < c; k++ {
				wk := wt[k*d : (k+1)*d]
				xr := xr[:len(wk)]
				s := 0.0
				for j, v := range wk {
					s += xr[j] * v
				}
				z[r*c+k] = s + b[k]
			}
		}
	}
	loss := 0.0
	for r := 0; r < m; r++ {
		zr := z[r*c : (r+1)*c]
		yi := o.y[i+r]
		zy := zr[yi]
		// Stable log-sum-exp: mx + log Σ exp(z − mx).
		mx := zr[0]
		for _, v := range zr[1:] {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for k, v := range zr {
			e := math.Exp(v - mx)
			zr[k] = e
			s += e
		}
		loss += mx + math.Log(s) - zy
		inv := 1 / s
		for k := range zr {
			zr[k] *= inv // softmax probability
		}
		zr[yi]-- // residual p − onehot(y)
		for k, v := range zr {
			gb[k] += v
		}
	}
	if m == probeRows {
		x0, x1, x2, x3 := x[:d], x[d:2*d], x[2*d:3*d], x[3*d:4*d]
		for k := 0; k < c; k++ {
			gk := gw[k*d : (k+1)*d]
			x0, x1, x2, x3 := x0[:len(gk)], x1[:len(gk)], x2[:len(gk)], x3[:len(gk)]
			r0, r1, r2, r3 := z[k], z[c+k], z[2*c+k], z[3*c+k]
			for j := range gk {
				gk[j] += r0*x0[j] + r1*x1[j] + r2*x2[j] + r3*x3[j]
			}
		}
		return loss
	}
	for r := 0; r < m; r++ {
		xr := x[r*d : (r+1)*d]
		for k := 0; k < c; k++ {
			gk := gw[k*d : (k+1)*d]
			xr := xr[:len(gk)]
			rk := z[r*c+k]
			for j := range gk {
				gk[j] += rk * xr[j]
			}
		}
	}
	return loss
}

// cached evaluates at theta unless theta is the last point evaluated.
func (o *probeObjective) cached(theta []float64) {
	if o.haveCached && slices.Equal(theta, o.lastX) {
		return
	}
	o.lastF = o.eval(theta, o.lastG)
	copy(o.lastX, theta)
	o.haveCached = true
}

func (o *probeObjective) problem() optimize.Problem {
	return optimize.Problem{
		Func: func(theta []float64) float64 {
			o.cached(theta)
			return o.lastF
		},
		Grad: func(grad, theta []float64) {
			o.cached(theta)
			copy(grad, o.lastG)
		},
	}
}

// standardize returns the float64 copy of x, standardised with its own
// column means and population standard deviations (scale 1 for a constant
// column) unless raw, with the statistics used (nil when raw).
func standardize(x []float32, n, d int, raw bool) (xs, mean, scale []float64) {
	xs = make([]float64, n*d)
	for k, v := range x {
		xs[k] = float64(v)
	}
	if raw {
		return xs, nil, nil
	}
	mean = make([]float64, d)
	scale = make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range xs[i*d : (i+1)*d] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		for j, v := range xs[i*d : (i+1)*d] {
			dv := v - mean[j]
			scale[j] += dv * dv
		}
	}
	for j := range scale {
		s := math.Sqrt(scale[j] / float64(n))
		// StandardScaler's rule: a (numerically) constant column keeps scale 1.
		if s < 10*math.SmallestNonzeroFloat64 || s <= 1e-12*math.Abs(mean[j]) {
			s = 1
		}
		scale[j] = s
	}
	for i := 0; i < n; i++ {
		r := xs[i*d : (i+1)*d]
		for j := range r {
			r[j] = (r[j] - mean[j]) / scale[j]
		}
	}
	return xs, mean, scale
}

// probeFit locates one fit among those of TrainProbe, for Progress.
type probeFit struct{ index, count int }

// probeRecorder is the gonum Recorder of a fit with a Context or a
// Progress: it stops the optimisation on cancellation and reports the major
// iterations. It only observes.
type probeRecorder struct {
	ctx         context.Context
	progress    func(done, total int)
	base, total int // iterations before this fit, and of all fits
	maxIter     int
	last        int // last done reported
}

func (r *probeRecorder) Init() error { return nil }

func (r *probeRecorder) Record(_ *optimize.Location, op optimize.Operation, st *optimize.Stats) error {
	if r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return err
		}
	}
	if op == optimize.MajorIteration {
		// gonum counts the starting point as a major iteration.
		r.report(r.base + min(max(st.MajorIterations-1, 0), r.maxIter))
	}
	return nil
}

func (r *probeRecorder) report(done int) {
	if r.progress != nil && done > r.last {
		r.last = done
		r.progress(done, r.total)
	}
}

// fitProbe standardises x and minimises the objective from θ = 0 with
// L-BFGS. Inputs are already validated.
func fitProbe(x []float32, n, d int, y []int, classes int, l2 float64, opt ProbeOptions, fit probeFit) (*Probe, error) {
	xs, mean, scale := standardize(x, n, d, opt.NoStandardize)
	obj := newProbeObjective(xs, y, n, d, classes, l2, defaultWorkers(opt.Workers))
	maxIter := opt.MaxIter
	if maxIter == 0 {
		maxIter = DefaultProbeMaxIter
	}
	gradTol := opt.GradTol
	if gradTol == 0 {
		gradTol = DefaultProbeGradTol
	}
	settings := &optimize.Settings{
		GradientThreshold: gradTol,
		// gonum counts the starting point as a major iteration.
		MajorIterations: maxIter + 1,
		Converger:       &optimize.FunctionConverge{Relative: 1e-13, Absolute: 1e-15, Iterations: 25},
	}
	var rec *probeRecorder
	if opt.Context != nil || opt.Progress != nil {
		base := fit.index * maxIter
		rec = &probeRecorder{ctx: opt.Context, progress: opt.Progress, base: base, total: fit.count * maxIter, maxIter: maxIter, last: base}
		settings.Recorder = rec
	}
	method := &optimize.LBFGS{GradStopThreshold: gradTol, Linesearcher: &optimize.MoreThuente{}}
	res, err := optimize.Minimize(obj.problem(), make([]float64, obj.dim()), settings, method)
	if opt.Context != nil && opt.Context.Err() != nil {
		return nil, fmt.Errorf("eval: linear probe: %w", opt.Context.Err())
	}
	if rec != nil {
		rec.report(rec.base + maxIter) // the fit is done
	}
	if res == nil {
		return nil, fmt.Errorf("eval: linear probe: L-BFGS: %w", err)
	}
	if math.IsNaN(res.F) || math.IsInf(res.F, 0) {
		return nil, fmt.Errorf("eval: linear probe: L-BFGS ended with objective %v (status %v, error %v)", res.F, res.Status, err)
	}
	status := res.Status.String()
	if err != nil {
		// The best point found is kept; the line search fails like this at
		// the limit of floating-point precision near the optimum.
		status += ": " + err.Error()
	}
	p := &Probe{
		D: d, Classes: classes, Mean: mean, Scale: scale,
		W:           transpose(res.X[:d*classes], classes, d),
		B:           slices.Clone(res.X[d*classes:]),
		L2:          l2,
		Loss:        res.F,
		Iterations:  max(res.Stats.MajorIterations-1, 0),
		Evaluations: obj.evals,
		GradNorm:    floats.Norm(res.Gradient, math.Inf(1)),
		Status:      status,
		Converged:   res.Status == optimize.GradientThreshold || res.Status == optimize.FunctionConvergence,
	}
	return p, nil
}

// transpose returns the c×r row-major transpose of the r×c matrix a.
func transpose(a []float64, r, c int) []float64 {
	t := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			t[j*r+i] = a[i*c+j]
		}
	}
	return t
}

package eval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// GraphCLCs is the grid of C searched by GraphCL's svc_classify.
var GraphCLCs = []float64{0.001, 0.01, 0.1, 1, 10, 100, 1000}

// SVMOptions configures SVMCrossValidate. The zero value is GraphCL's
// protocol with shuffle seed 0.
type SVMOptions struct {
	// Folds is the number of outer folds (default 10), drawn by
	// StratifiedKFold(y, Folds, shuffle=true, Seed). Ignored with FoldIDs.
	Folds int
	// InnerFolds is the number of folds of the grid search on each outer
	// training part (default 5), drawn by StratifiedKFold without shuffle,
	// as GridSearchCV(cv=5) does.
	InnerFolds int
	// Cs is the grid of C (default GraphCLCs). With a single value the inner
	// search is skipped and that C is used (GraphCL's search=False uses 10).
	Cs []float64
	// Seed seeds the shuffle of the outer folds.
	Seed uint64
	// FoldIDs, when set, is the explicit outer test-fold id of every sample
	// (values 0 … K−1, every fold non-empty); Folds and Seed are then unused.
	FoldIDs []int
	// Tol is the SMO tolerance (default 1e-3).
	Tol float64
	// Workers is the number of goroutines (default GOMAXPROCS). Results do
	// not depend on it.
	Workers int
	// CacheBytes is the kernel-cache budget of one fit (default
	// DefaultCacheBytes); Workers fits run at once.
	CacheBytes int64
	// MaxPrecomputeBytes bounds the n×n float64 distance matrix computed once
	// for all fits (default 2 GiB); above it distances are computed on demand.
	MaxPrecomputeBytes int64
	// Context, when not nil, stops the cross-validation when it is
	// cancelled: it is checked before every fit and every ~1000 iterations
	// of the SMO solver, and SVMCrossValidate then returns an error wrapping
	// Context.Err(). A context that is not cancelled changes no result.
	Context context.Context
	// Progress, when not nil, is called after every finished fit with the
	// number of fits done and their total: Folds × (InnerFolds × len(Cs) + 1)
	// with a grid of C (an inner fit per fold, split and C, and the refit of
	// every fold), Folds with a single C. Calls come from the worker
	// goroutines one at a time, with done increasing by one; a slow Progress
	// holds the other workers up. It changes no result.
	Progress func(done, total int)
}

// CVResult is the outcome of SVMCrossValidate.
type CVResult struct {
	// Mean and Std are the mean and population standard deviation (np.std)
	// of FoldAcc. GraphCL reports Mean.
	Mean, Std float64
	// FoldAcc is the test accuracy of every outer fold, in [0, 1].
	FoldAcc []float64
	// ChosenC is the C chosen by the inner search in every outer fold.
	ChosenC []float64
	// InnerMean[f][c] is the mean inner validation accuracy of Cs[c] in outer
	// fold f (GridSearchCV's mean_test_score); nil with a single C.
	InnerMean [][]float64
	// Gamma is the γ (gamma="scale") of the refit of every outer fold.
	Gamma []float64
	// FoldIDs is the outer test-fold id of every sample.
	FoldIDs []int
	// NotConverged counts fits in which an SMO subproblem hit its iteration
	// cap (expected 0).
	NotConverged int
}

// SVMCrossValidate runs GraphCL's evaluation protocol (evaluate_embedding.
// svc_classify with search=True) on the n × d row-major embedding x with
// labels y: for every outer fold of a stratified k-fold split, an RBF SVC
// with gamma="scale" is tuned over C by GridSearchCV(cv=InnerFolds,
// scoring="accuracy") on the outer training part — the C with the highest
// mean inner accuracy, the first in Cs on a tie — refitted on the whole
// outer training part and scored on the outer test fold.
//
// Every fit agrees with scikit-learn's SVC to rounding (see SVC), the inner
// folds are scikit-learn's, and the mean inner accuracies are summed in
// NumPy's order, so with the same outer folds (FoldIDs) the chosen C and the
// accuracies are those of scikit-learn. Only the outer shuffle differs,
// since NumPy's random stream is not reproduced.
//
// Squared distances are computed once for the whole matrix; fits sharing a
// training set (the C grid on one inner split) share kernel rows; the
// (fold, inner split) tasks run on Workers goroutines.
func SVMCrossValidate(x []float32, n, d int, y []int, opt SVMOptions) (CVResult, error) {
	if err := checkMatrix("SVMCrossValidate x", x, n, d); err != nil {
		return CVResult{}, err
	}
	if len(y) != n {
		return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: %d labels for %d rows", len(y), n)
	}
	s, err := cvDefaults(opt)
	if err != nil {
		return CVResult{}, err
	}
	folds, nFolds, err := outerFoldIDs(y, s)
	if err != nil {
		return CVResult{}, err
	}
	splits, err := splitFolds(folds, nFolds, y, s)
	if err != nil {
		return CVResult{}, err
	}
	r := newCVRun(s, y, d, folds, splits)
	if err := r.cancelled(); err != nil {
		return CVResult{}, err
	}
	r.xf, r.src = cvDistances(x, n, d, s)
	if err := r.cancelled(); err != nil {
		return CVResult{}, err
	}
	r.runPool(s.workers)
	return r.result()
}

// cvSettings is SVMOptions checked and with its defaults filled in.
type cvSettings struct {
	SVMOptions             // Folds, InnerFolds and Cs with their defaults
	p          trainParams // the SMO parameters of every fit
	maxPre     int64       // byte budget of the precomputed distance matrix
	workers    int         // number of worker goroutines
}

// cvDefaults fills in the defaults of opt (10 outer folds, 5 inner folds,
// GraphCLCs, DefaultSVCTol, DefaultCacheBytes, a 2 GiB distance matrix,
// GOMAXPROCS workers) and checks the values given.
func cvDefaults(opt SVMOptions) (cvSettings, error) {
	if opt.Folds == 0 {
		opt.Folds = 10
	}
	if opt.InnerFolds == 0 {
		opt.InnerFolds = 5
	}
	if opt.InnerFolds < 2 {
		return cvSettings{}, fmt.Errorf("eval: SVMCrossValidate: InnerFolds = %d, want at least 2", opt.InnerFolds)
	}
	if len(opt.Cs) == 0 {
		opt.Cs = GraphCLCs
	}
	for i, c := range opt.Cs {
		if !(c > 0) || math.IsInf(c, 0) {
			return cvSettings{}, fmt.Errorf("eval: SVMCrossValidate: Cs[%d] = %v, want a finite value > 0", i, c)
		}
	}
	if opt.Tol < 0 || math.IsNaN(opt.Tol) {
		return cvSettings{}, fmt.Errorf("eval: SVMCrossValidate: Tol = %v, want 0 (default) or > 0", opt.Tol)
	}
	s := cvSettings{
		SVMOptions: opt,
		p:          trainParams{eps: opt.Tol, shrinking: true, cacheBytes: opt.CacheBytes, ctx: opt.Context},
		maxPre:     opt.MaxPrecomputeBytes,
		workers:    defaultWorkers(opt.Workers),
	}
	if s.p.eps == 0 {
		s.p.eps = DefaultSVCTol
	}
	if s.p.cacheBytes <= 0 {
		s.p.cacheBytes = DefaultCacheBytes
	}
	if s.maxPre <= 0 {
		s.maxPre = 2 << 30
	}
	return s, nil
}

// outerFoldIDs returns the outer test-fold id of every sample — a copy of
// FoldIDs, or a shuffled stratified k-fold split of y — and the number of
// outer folds, which must be at least 2.
func outerFoldIDs(y []int, s cvSettings) (folds []int, nFolds int, err error) {
	if s.FoldIDs != nil {
		if len(s.FoldIDs) != len(y) {
			return nil, 0, fmt.Errorf("eval: SVMCrossValidate: FoldIDs has %d entries for %d rows", len(s.FoldIDs), len(y))
		}
		folds = slices.Clone(s.FoldIDs)
	} else if folds, err = StratifiedKFold(y, s.Folds, true, s.Seed); err != nil {
		return nil, 0, fmt.Errorf("eval: SVMCrossValidate outer folds: %w", err)
	}
	for i, f := range folds {
		if f < 0 {
			return nil, 0, fmt.Errorf("eval: SVMCrossValidate: FoldIDs[%d] = %d, want >= 0", i, f)
		}
		nFolds = max(nFolds, f+1)
	}
	if nFolds < 2 {
		return nil, 0, fmt.Errorf("eval: SVMCrossValidate: %d outer fold(s), want at least 2", nFolds)
	}
	return folds, nFolds, nil
}

// foldSplit holds the rows of one outer fold.
type foldSplit struct {
	train, test []int
	inner       [][2][]int // per inner split: training and validation rows
}

// splitFolds gathers the training and test rows of every outer fold and,
// with a grid of more than one C, the inner splits of its training rows.
// Every outer fold must be non-empty.
func splitFolds(folds []int, nFolds int, y []int, s cvSettings) ([]foldSplit, error) {
	splits := make([]foldSplit, nFolds)
	for i, f := range folds {
		splits[f].test = append(splits[f].test, i)
	}
	for f := range splits {
		if len(splits[f].test) == 0 {
			return nil, fmt.Errorf("eval: SVMCrossValidate: outer fold %d of %d is empty", f, nFolds)
		}
		for i, g := range folds {
			if g != f {
				splits[f].train = append(splits[f].train, i)
			}
		}
		if len(s.Cs) == 1 {
			continue
		}
		inner, err := innerSplits(splits[f].train, y, s.InnerFolds)
		if err != nil {
			return nil, fmt.Errorf("eval: SVMCrossValidate inner folds of outer fold %d: %w", f, err)
		}
		splits[f].inner = inner
	}
	return splits, nil
}

// innerSplits splits the rows tr by StratifiedKFold without shuffle into k
// (training, validation) pairs, as GridSearchCV(cv=k) does.
func innerSplits(tr []int, y []int, k int) ([][2][]int, error) {
	ytr := make([]int, len(tr))
	for q, i := range tr {
		ytr[q] = y[i]
	}
	ids, err := StratifiedKFold(ytr, k, false, 0)
	if err != nil {
		return nil, err
	}
	inner := make([][2][]int, k)
	for q, s := range ids {
		for t := range inner {
			if t == s {
				inner[t][1] = append(inner[t][1], tr[q])
			} else {
				inner[t][0] = append(inner[t][0], tr[q])
			}
		}
	}
	return inner, nil
}

// cvDistances converts x to float64 and returns it with its squared
// distances: an n×n matrix computed once when it fits in s.maxPre bytes,
// computed on demand otherwise.
func cvDistances(x []float32, n, d int, s cvSettings) ([]float64, sqDist) {
	xf := make([]float64, len(x))
	for i, v := range x {
		xf[i] = float64(v)
	}
	if int64(n)*int64(n)*8 <= s.maxPre {
		return xf, newDenseDist(xf, n, d, s.workers)
	}
	return xf, newLazyDist(xf, n, d)
}

// cvRun is the state the fits of one cross-validation share: its inputs,
// the result filled in fold by fold, the first error and the progress count.
type cvRun struct {
	s      cvSettings
	ctx    context.Context // s.Context or context.Background()
	y      []int
	d      int
	xf     []float64
	src    sqDist
	splits []foldSplit

	res      CVResult
	innerAcc [][][]float64 // [fold][split][c]; nil with a single C
	// remaining counts the inner splits of every fold not yet fitted.
	remaining []atomic.Int64

	mu       sync.Mutex // guards firstErr
	firstErr error
	notConv  atomic.Int64

	progMu    sync.Mutex // guards fitsDone and the calls of s.Progress
	fitsDone  int
	totalFits int // units of work for Progress: every fit of one C
}

// newCVRun allocates the result of a cross-validation over the given outer
// folds; xf and src are set by the caller.
func newCVRun(s cvSettings, y []int, d int, folds []int, splits []foldSplit) *cvRun {
	nFolds := len(splits)
	r := &cvRun{
		s:      s,
		ctx:    s.Context,
		y:      y,
		d:      d,
		splits: splits,
		res: CVResult{
			FoldAcc: make([]float64, nFolds),
			ChosenC: make([]float64, nFolds),
			Gamma:   make([]float64, nFolds),
			FoldIDs: folds,
		},
		remaining: make([]atomic.Int64, nFolds),
		totalFits: nFolds,
	}
	if r.ctx == nil {
		r.ctx = context.Background()
	}
	if len(s.Cs) > 1 {
		r.res.InnerMean = make([][]float64, nFolds)
		r.innerAcc = make([][][]float64, nFolds)
		for f := range r.innerAcc {
			r.innerAcc[f] = make([][]float64, s.InnerFolds)
		}
		r.totalFits = nFolds * (s.InnerFolds*len(s.Cs) + 1)
	}
	return r
}

// cancelled returns an error wrapping the context's error once it is
// cancelled, nil before.
func (r *cvRun) cancelled() error {
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("eval: SVMCrossValidate: %w", err)
	}
	return nil
}

// setErr records err unless an error was recorded before.
func (r *cvRun) setErr(err error) {
	r.mu.Lock()
	if r.firstErr == nil {
		r.firstErr = err
	}
	r.mu.Unlock()
}

// failed reports whether an error was recorded.
func (r *cvRun) failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.firstErr != nil
}

// fitDone is called after every fit of one C: it reports the progress and
// returns the cancellation, if any.
func (r *cvRun) fitDone() error {
	if err := r.cancelled(); err != nil {
		return err
	}
	if r.s.Progress != nil {
		r.progMu.Lock()
		r.fitsDone++
		r.s.Progress(r.fitsDone, r.totalFits)
		r.progMu.Unlock()
	}
	return nil
}

// chooseC returns the C of outer fold f: the only one of the grid, or the
// one with the highest mean inner accuracy (the first on a tie), whose
// means it records in InnerMean.
func (r *cvRun) chooseC(f int) float64 {
	cs := r.s.Cs
	if len(cs) == 1 {
		return cs[0]
	}
	means := make([]float64, len(cs))
	col := make([]float64, r.s.InnerFolds)
	best := 0
	for ci := range cs {
		for s := range col {
			col[s] = r.innerAcc[f][s][ci]
		}
		means[ci] = npMean(col)
		if means[ci] > means[best] {
			best = ci
		}
	}
	r.res.InnerMean[f] = means
	return cs[best]
}

// refit fits outer fold f's training rows with its chosen C and records the
// accuracy on its test rows and the γ used.
func (r *cvRun) refit(f int) {
	if err := r.cancelled(); err != nil {
		r.setErr(err)
		return
	}
	c := r.chooseC(f)
	r.res.ChosenC[f] = c
	sp := r.splits[f]
	acc, gamma, nc, err := fitEvaluate(r.src, r.xf, r.d, r.y, sp.train, sp.test, []float64{c}, r.s.p, r.fitDone)
	if err != nil {
		r.setErr(fmt.Errorf("eval: SVMCrossValidate refit of outer fold %d (C = %v): %w", f, c, err))
		return
	}
	r.notConv.Add(int64(nc))
	r.res.FoldAcc[f] = acc[0]
	r.res.Gamma[f] = gamma
}

// cvTask is one unit of the worker pool: inner split split of outer fold
// fold, or the refit of fold when split < 0.
type cvTask struct{ fold, split int }

// tasks lists the work of the pool — every inner split of every fold with a
// grid of C, every refit with a single C — and sets the count of inner
// splits remaining in every fold.
func (r *cvRun) tasks() []cvTask {
	var tasks []cvTask
	for f := range r.splits {
		if len(r.s.Cs) == 1 {
			tasks = append(tasks, cvTask{f, -1})
			continue
		}
		r.remaining[f].Store(int64(r.s.InnerFolds))
		for s := 0; s < r.s.InnerFolds; s++ {
			tasks = append(tasks, cvTask{f, s})
		}
	}
	return tasks
}

// innerFit fits the inner split t with every C and records the validation
// accuracies; the call finishing the last inner split of a fold refits it.
func (r *cvRun) innerFit(t cvTask) {
	sp := r.splits[t.fold].inner[t.split]
	acc, _, nc, err := fitEvaluate(r.src, r.xf, r.d, r.y, sp[0], sp[1], r.s.Cs, r.s.p, r.fitDone)
	if err != nil {
		r.setErr(fmt.Errorf("eval: SVMCrossValidate outer fold %d, inner split %d: %w", t.fold, t.split, err))
	} else {
		r.notConv.Add(int64(nc))
		r.innerAcc[t.fold][t.split] = acc
	}
	if r.remaining[t.fold].Add(-1) == 0 && !r.failed() {
		r.refit(t.fold)
	}
}

// runPool runs the tasks on the given number of goroutines and waits for
// them. After a cancellation the workers drain the queue without fitting.
func (r *cvRun) runPool(workers int) {
	tasks := r.tasks()
	queue := make(chan cvTask, len(tasks))
	for _, t := range tasks {
		queue <- t
	}
	close(queue)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range queue {
				if err := r.cancelled(); err != nil {
					r.setErr(err)
				} else if t.split < 0 {
					r.refit(t.fold)
				} else {
					r.innerFit(t)
				}
			}
		}()
	}
	wg.Wait()
}

// result returns the cross-validation's result with its mean and standard
// deviation, or its first error; an error caused by a cancellation is
// reported as the cancellation.
func (r *cvRun) result() (CVResult, error) {
	if r.firstErr != nil {
		if err := r.cancelled(); err != nil {
			return CVResult{}, err
		}
		return CVResult{}, r.firstErr
	}
	r.res.NotConverged = int(r.notConv.Load())
	r.res.Mean, r.res.Std = MeanStd(r.res.FoldAcc)
	return r.res, nil
}

// fitEvaluate fits an RBF SVC with gamma="scale" on the dataset rows train
// for every C in cs (sharing one kernel cache) and returns the accuracy of
// each on the rows test, the γ used and the number of non-converged fits.
// fitDone, when not nil, is called after every C; an error from it (a
// cancellation) stops the remaining fits and is returned.
func fitEvaluate(src sqDist, xf []float64, d int, y []int, train, test []int, cs []float64, p trainParams, fitDone func() error) (acc []float64, gamma float64, notConverged int, err error) {
	// gamma="scale" over the training matrix, rows in training order.
	xt := make([]float64, 0, len(train)*d)
	for _, i := range train {
		xt = append(xt, xf[i*d:(i+1)*d]...)
	}
	gamma = scaleGamma(xt, d)
	xt = nil
	// The solver groups the training rows by class (as LIBSVM does) and its
	// result depends only on the grouped sequence; handing it the rows
	// already grouped gives the same model, and cache rows that are in the
	// solver's position order until it first shrinks (posRows).
	train = groupByClass(train, y)
	cache := newKernelCache(src, train, gamma, p.cacheBytes)
	ytr := make([]int, len(train))
	for q, i := range train {
		ytr[q] = y[i]
	}
	// Kernel values between the evaluation rows and every training row, in
	// float64 as LIBSVM's prediction computes them, shared by all C when they
	// fit in the cache budget. They are kept training-major (the values of
	// training row o for every evaluation row together) so that decisionsT
	// scores all evaluation rows reading them row by row.
	ng := -gamma
	var testKT []float64
	if len(cs) > 1 && int64(len(test))*int64(len(train))*8 <= p.cacheBytes {
		testKT = testKernelsT(src, train, test, ng)
	}
	acc = make([]float64, len(cs))
	for ci, c := range cs {
		pc := p
		pc.C = c
		m, err := trainSVMCached(cache, ytr, pc)
		if err != nil {
			return nil, 0, 0, err
		}
		if !m.converged {
			notConverged++
		}
		var correct int
		if testKT != nil {
			correct = m.correctT(testKT, test, y)
		} else {
			correct = m.correctOnDemand(src, train, test, y, ng)
		}
		// accuracy_score: mean of a boolean array, count/n exactly.
		acc[ci] = float64(correct) / float64(len(test))
		if fitDone != nil {
			if err := fitDone(); err != nil {
				return nil, 0, 0, err
			}
		}
	}
	return acc, gamma, notConverged, nil
}

// testKernelsT returns the kernel values exp(ng·‖x_t − x_o‖²) between the
// evaluation rows test and the training rows train, training-major: the
// value of training row o and evaluation row q at o·len(test)+q.
func testKernelsT(src sqDist, train, test []int, ng float64) []float64 {
	stride := len(test)
	testKT := make([]float64, stride*len(train))
	row := make([]float64, len(train))
	for q, t := range test {
		src.rowInto(t, train, row)
		expScaledInto(row, row, ng)
		for o, v := range row {
			testKT[o*stride+q] = v
		}
	}
	return testKT
}

// correctT counts the evaluation rows test that m classifies as y says,
// from their kernel values testKT (testKernelsT).
func (m *svmModel) correctT(testKT []float64, test []int, y []int) int {
	dec := make([]float64, len(m.rho)*len(test))
	win := make([]int, len(test))
	m.decisionsT(testKT, len(test), len(test), dec, win)
	correct := 0
	for b, t := range test {
		if m.labels[win[b]] == y[t] {
			correct++
		}
	}
	return correct
}

// correctOnDemand counts the evaluation rows test that m, fitted on the
// training rows train with γ = −ng, classifies as y says, computing the
// kernel values of its support vectors row by row.
func (m *svmModel) correctOnDemand(src sqDist, train, test []int, y []int, ng float64) int {
	svRows := make([]int, len(m.svIdx))
	for k, o := range m.svIdx {
		svRows[k] = train[o]
	}
	kv := make([]float64, len(svRows))
	dec := make([]float64, len(m.rho))
	correct := 0
	for _, t := range test {
		src.rowInto(t, svRows, kv)
		expScaledInto(kv, kv, ng)
		if m.labels[m.decision(kv, dec)] == y[t] {
			correct++
		}
	}
	return correct
}

// groupByClass returns rows reordered by ascending label, keeping their
// order within a class (LIBSVM's svm_group_classes order).
func groupByClass(rows []int, y []int) []int {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(y[a], y[b]) })
	return out
}

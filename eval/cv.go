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
	if opt.Folds == 0 {
		opt.Folds = 10
	}
	if opt.InnerFolds == 0 {
		opt.InnerFolds = 5
	}
	if opt.InnerFolds < 2 {
		return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: InnerFolds = %d, want at least 2", opt.InnerFolds)
	}
	cs := opt.Cs
	if len(cs) == 0 {
		cs = GraphCLCs
	}
	for i, c := range cs {
		if !(c > 0) || math.IsInf(c, 0) {
			return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: Cs[%d] = %v, want a finite value > 0", i, c)
		}
	}
	if opt.Tol < 0 || math.IsNaN(opt.Tol) {
		return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: Tol = %v, want 0 (default) or > 0", opt.Tol)
	}
	p := trainParams{eps: opt.Tol, shrinking: true, cacheBytes: opt.CacheBytes}
	if p.eps == 0 {
		p.eps = DefaultSVCTol
	}
	if p.cacheBytes <= 0 {
		p.cacheBytes = DefaultCacheBytes
	}
	maxPre := opt.MaxPrecomputeBytes
	if maxPre <= 0 {
		maxPre = 2 << 30
	}
	workers := defaultWorkers(opt.Workers)

	var folds []int
	if opt.FoldIDs != nil {
		if len(opt.FoldIDs) != n {
			return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: FoldIDs has %d entries for %d rows", len(opt.FoldIDs), n)
		}
		folds = slices.Clone(opt.FoldIDs)
	} else {
		var err error
		if folds, err = StratifiedKFold(y, opt.Folds, true, opt.Seed); err != nil {
			return CVResult{}, fmt.Errorf("eval: SVMCrossValidate outer folds: %w", err)
		}
	}
	nFolds := 0
	for i, f := range folds {
		if f < 0 {
			return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: FoldIDs[%d] = %d, want >= 0", i, f)
		}
		nFolds = max(nFolds, f+1)
	}
	if nFolds < 2 {
		return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: %d outer fold(s), want at least 2", nFolds)
	}
	type foldSplit struct {
		train, test []int
		inner       [][2][]int // per inner split: training and validation rows
	}
	splits := make([]foldSplit, nFolds)
	for i, f := range folds {
		splits[f].test = append(splits[f].test, i)
	}
	for f := range splits {
		if len(splits[f].test) == 0 {
			return CVResult{}, fmt.Errorf("eval: SVMCrossValidate: outer fold %d of %d is empty", f, nFolds)
		}
		for i, g := range folds {
			if g != f {
				splits[f].train = append(splits[f].train, i)
			}
		}
		if len(cs) == 1 {
			continue
		}
		tr := splits[f].train
		ytr := make([]int, len(tr))
		for q, i := range tr {
			ytr[q] = y[i]
		}
		inner, err := StratifiedKFold(ytr, opt.InnerFolds, false, 0)
		if err != nil {
			return CVResult{}, fmt.Errorf("eval: SVMCrossValidate inner folds of outer fold %d: %w", f, err)
		}
		splits[f].inner = make([][2][]int, opt.InnerFolds)
		for q, s := range inner {
			for t := range splits[f].inner {
				if t == s {
					splits[f].inner[t][1] = append(splits[f].inner[t][1], tr[q])
				} else {
					splits[f].inner[t][0] = append(splits[f].inner[t][0], tr[q])
				}
			}
		}
	}

	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	p.ctx = opt.Context
	cancelled := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("eval: SVMCrossValidate: %w", err)
		}
		return nil
	}
	if err := cancelled(); err != nil {
		return CVResult{}, err
	}

	xf := make([]float64, len(x))
	for i, v := range x {
		xf[i] = float64(v)
	}
	var src sqDist
	if int64(n)*int64(n)*8 <= maxPre {
		src = newDenseDist(xf, n, d, workers)
	} else {
		src = newLazyDist(xf, n, d)
	}

	if err := cancelled(); err != nil {
		return CVResult{}, err
	}

	res := CVResult{
		FoldAcc: make([]float64, nFolds),
		ChosenC: make([]float64, nFolds),
		Gamma:   make([]float64, nFolds),
		FoldIDs: folds,
	}
	var innerAcc [][][]float64 // [fold][split][c]
	if len(cs) > 1 {
		res.InnerMean = make([][]float64, nFolds)
		innerAcc = make([][][]float64, nFolds)
		for f := range innerAcc {
			innerAcc[f] = make([][]float64, opt.InnerFolds)
		}
	}

	var (
		mu       sync.Mutex
		firstErr error
		notConv  atomic.Int64
	)
	setErr := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	// Units of work for Progress: every fit of one C.
	totalFits := nFolds
	if len(cs) > 1 {
		totalFits = nFolds * (opt.InnerFolds*len(cs) + 1)
	}
	var (
		progMu   sync.Mutex
		fitsDone int
	)
	fitDone := func() error {
		if err := cancelled(); err != nil {
			return err
		}
		if opt.Progress != nil {
			progMu.Lock()
			fitsDone++
			opt.Progress(fitsDone, totalFits)
			progMu.Unlock()
		}
		return nil
	}
	refit := func(f int) {
		if err := cancelled(); err != nil {
			setErr(err)
			return
		}
		c := cs[0]
		if len(cs) > 1 {
			means := make([]float64, len(cs))
			col := make([]float64, opt.InnerFolds)
			best := 0
			for ci := range cs {
				for s := range col {
					col[s] = innerAcc[f][s][ci]
				}
				means[ci] = npMean(col)
				if means[ci] > means[best] {
					best = ci
				}
			}
			res.InnerMean[f] = means
			c = cs[best]
		}
		res.ChosenC[f] = c
		acc, gamma, nc, err := fitEvaluate(src, xf, d, y, splits[f].train, splits[f].test, []float64{c}, p, fitDone)
		if err != nil {
			setErr(fmt.Errorf("eval: SVMCrossValidate refit of outer fold %d (C = %v): %w", f, c, err))
			return
		}
		notConv.Add(int64(nc))
		res.FoldAcc[f] = acc[0]
		res.Gamma[f] = gamma
	}

	type task struct{ fold, split int }
	var tasks []task
	remaining := make([]atomic.Int64, nFolds)
	for f := range splits {
		if len(cs) == 1 {
			tasks = append(tasks, task{f, -1})
			continue
		}
		remaining[f].Store(int64(opt.InnerFolds))
		for s := 0; s < opt.InnerFolds; s++ {
			tasks = append(tasks, task{f, s})
		}
	}
	queue := make(chan task, len(tasks))
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
				if err := cancelled(); err != nil {
					setErr(err)
					continue // drain the queue
				}
				if t.split < 0 {
					refit(t.fold)
					continue
				}
				sp := splits[t.fold].inner[t.split]
				acc, _, nc, err := fitEvaluate(src, xf, d, y, sp[0], sp[1], cs, p, fitDone)
				if err != nil {
					setErr(fmt.Errorf("eval: SVMCrossValidate outer fold %d, inner split %d: %w", t.fold, t.split, err))
				} else {
					notConv.Add(int64(nc))
					innerAcc[t.fold][t.split] = acc
				}
				// The worker finishing the last inner split of a fold refits it.
				if remaining[t.fold].Add(-1) == 0 {
					mu.Lock()
					failed := firstErr != nil
					mu.Unlock()
					if !failed {
						refit(t.fold)
					}
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		// An error caused by the cancellation is reported as the cancellation.
		if err := cancelled(); err != nil {
			return CVResult{}, err
		}
		return CVResult{}, firstErr
	}
	res.NotConverged = int(notConv.Load())
	res.Mean, res.Std = MeanStd(res.FoldAcc)
	return res, nil
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
	stride := len(test)
	if len(cs) > 1 && int64(stride)*int64(len(train))*8 <= p.cacheBytes {
		testKT = make([]float64, stride*len(train))
		row := make([]float64, len(train))
		for q, t := range test {
			src.rowInto(t, train, row)
			expScaledInto(row, row, ng)
			for o, v := range row {
				testKT[o*stride+q] = v
			}
		}
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
		correct := 0
		if testKT != nil {
			dec := make([]float64, len(m.rho)*len(test))
			win := make([]int, len(test))
			m.decisionsT(testKT, stride, len(test), dec, win)
			for b, t := range test {
				if m.labels[win[b]] == y[t] {
					correct++
				}
			}
		} else {
			svRows := make([]int, len(m.svIdx))
			for k, o := range m.svIdx {
				svRows[k] = train[o]
			}
			kv := make([]float64, len(svRows))
			dec := make([]float64, len(m.rho))
			for _, t := range test {
				src.rowInto(t, svRows, kv)
				expScaledInto(kv, kv, ng)
				if m.labels[m.decision(kv, dec)] == y[t] {
					correct++
				}
			}
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

// groupByClass returns rows reordered by ascending label, keeping their
// order within a class (LIBSVM's svm_group_classes order).
func groupByClass(rows []int, y []int) []int {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(y[a], y[b]) })
	return out
}

package train

import (
	"fmt"
	"strings"
)

// checkData checks what Config.Validate cannot, because it depends on the
// loaded dataset: Run calls it right after loading the data, before a run
// directory is made or any training starts, so that a config that would
// fail mid-run or after training fails at once, naming the key.
//
//   - train.batch_size must be at least 2 and at most N, the number of
//     training instances (the samplers reject B > N; with N mod B = 1 the
//     leftover instance joins the epoch's last batch, see sampler.Sampler).
//   - eval.kind svm: a stratified k-fold needs every class to have at least
//     eval.folds members, and the inner grid search (run when eval.cs has
//     more than one C) at least eval.inner_folds members of every class in
//     each outer training part, where the smallest class of m instances has
//     only m − ⌈m/folds⌉.
func checkData(cfg *Config, ds Dataset) error {
	n := ds.NumInstances()
	var errs []string
	switch b := cfg.Train.BatchSize; {
	case b < 2:
		errs = append(errs, fmt.Sprintf("train.batch_size: must be at least 2 (a contrastive loss needs a negative in every batch), got %d", b))
	case b > n:
		errs = append(errs, fmt.Sprintf("train.batch_size: %d is larger than the dataset (N = %d instances in %s); use at most %d", b, n, ds.Name(), n))
	}
	if cfg.Eval.Kind == "svm" {
		errs = append(errs, checkFolds(cfg, ds)...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid config for dataset %s (%d instances):\n  %s", ds.Name(), n, strings.Join(errs, "\n  "))
	}
	return nil
}

// checkFolds checks eval.folds and eval.inner_folds against the class sizes
// of the training split (see checkData).
func checkFolds(cfg *Config, ds Dataset) []string {
	labels := ds.Labels()
	if len(labels) == 0 {
		return []string{fmt.Sprintf("eval.kind: svm cross-validates on class labels, and dataset %s has none", ds.Name())}
	}
	count := map[int]int{}
	for _, y := range labels {
		count[y]++
	}
	// the smallest class (the smallest label among equals)
	small, m := 0, -1
	for y, c := range count {
		if m < 0 || c < m || c == m && y < small {
			small, m = y, c
		}
	}
	folds, inner := cfg.Eval.Folds, cfg.Eval.InnerFolds
	if folds > m {
		return []string{fmt.Sprintf("eval.folds: %d folds need at least %d instances of every class, but the smallest class, %d, has %d; use eval.folds <= %d",
			folds, folds, small, m, m)}
	}
	if len(cfg.Eval.Cs) > 1 {
		// In the outer fold that tests ⌈m/folds⌉ of the smallest class, its
		// training part keeps m − ⌈m/folds⌉ of them.
		left := m - (m+folds-1)/folds
		if inner > left {
			return []string{fmt.Sprintf("eval.inner_folds: %d inner folds need at least %d instances of every class in each outer training part, but the smallest class, %d (%d instances), keeps only %d there with eval.folds = %d; use eval.inner_folds <= %d",
				inner, inner, small, m, left, folds, left)}
		}
	}
	return nil
}

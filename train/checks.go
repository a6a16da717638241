package train

import (
	"fmt"
	"path/filepath"
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
//   - the labels a classifying protocol fits on (eval.kind svm, knn,
//     linear_probe: ProtocolSpec.MinClasses) must hold at least 2 classes.
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
	classErr := checkClasses(cfg, ds)
	if classErr != "" {
		errs = append(errs, classErr)
	}
	if cfg.Eval.Kind == "svm" && classErr == "" {
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

// checkClasses checks that the labels the protocol fits on hold at least
// its MinClasses classes (see checkData), and names the data they came
// from.
func checkClasses(cfg *Config, ds Dataset) string {
	ps, ok := protocolSpecs[cfg.Eval.Kind]
	if !ok || ps.MinClasses == 0 {
		return ""
	}
	labels, split := ds.Labels(), "training"
	if p, ok := ds.(ProbeSplitter); ok {
		var s string
		if s, labels = p.ProbeSplit(); s != "train" {
			split = s
		}
	}
	if len(labels) == 0 {
		return "" // no labels at all: the protocol's own check says so (checkFolds for svm)
	}
	seen := map[int]bool{}
	for _, y := range labels {
		seen[y] = true
	}
	if len(seen) >= ps.MinClasses {
		return ""
	}
	return fmt.Sprintf("eval.kind %s: the %s labels of dataset %s (%s) hold %d class, but the protocol scores a classifier of the classes and needs at least %d classes",
		cfg.Eval.Kind, split, ds.Name(), labelSource(cfg), len(seen), ps.MinClasses)
}

// labelSource says where a dataset's labels come from, for messages: the
// file or directory read, or the generator's setting.
func labelSource(cfg *Config) string {
	d := cfg.Data
	switch {
	case cfg.Modality == "graph" && d.Source == "synthetic":
		return fmt.Sprintf("generated graphs, data.synthetic.classes = %d", d.Synthetic.Classes)
	case cfg.Modality == "image" && d.Source == "synthetic":
		return fmt.Sprintf("generated images, data.image.classes = %d", d.Image.Classes)
	case d.Source == "tu":
		return filepath.Join(d.ResolvedPath(), d.Name+"_graph_labels.txt")
	case d.Path != "":
		return "data.source " + d.Source + ", " + d.ResolvedPath()
	}
	return "data.source " + d.Source
}

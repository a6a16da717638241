package train

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/eval"
)

func init() {
	RegisterProtocol("svm", ProtocolSpec{Modalities: []string{"graph"}, MinClasses: 2, Validate: validateSVM, New: func(*Config) Protocol { return svmProtocol{} },
		EvalKeys: []string{"kind", "folds", "inner_folds", "cs", "select_every"}})
}

// validateSVM checks the keys of GraphCL's SVM protocol.
func validateSVM(c *Config) []string {
	var errs []string
	if c.Eval.Folds < 2 {
		errs = append(errs, fmt.Sprintf("eval.folds: must be >= 2, got %d", c.Eval.Folds))
	}
	if c.Eval.InnerFolds < 2 {
		errs = append(errs, fmt.Sprintf("eval.inner_folds: must be >= 2, got %d", c.Eval.InnerFolds))
	}
	if len(c.Eval.Cs) == 0 {
		errs = append(errs, "eval.cs: need at least one value of C")
	}
	for i, v := range c.Eval.Cs {
		if !(v > 0) {
			errs = append(errs, fmt.Sprintf("eval.cs[%d]: C must be positive, got %v", i, v))
		}
	}
	return errs
}

// svmProtocol is GraphCL's evaluation: an RBF SVC on the frozen encoder
// embeddings of the training split, C chosen by inner cross-validation
// inside a shuffled stratified k-fold; the score is the mean test accuracy.
type svmProtocol struct{}

func (svmProtocol) Evaluate(env EvalEnv) (Score, error) {
	ec, emb := env.Cfg.Eval, env.Train
	res, err := eval.SVMCrossValidate(emb.Data, emb.N, emb.D, env.Data.Labels(), eval.SVMOptions{
		Folds: ec.Folds, InnerFolds: ec.InnerFolds, Cs: ec.Cs, Seed: env.Seed,
		Context: env.Ctx, Progress: env.Progress,
	})
	if err != nil {
		return Score{}, fmt.Errorf("svm evaluation: %w", err)
	}
	return Score{
		Metric: "svm_accuracy", Value: 100 * res.Mean, Std: 100 * res.Std,
		Detail: map[string]any{"fold_accuracy": res.FoldAcc, "chosen_c": res.ChosenC},
	}, nil
}

package train

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/eval"
)

func init() {
	for _, kind := range []string{"linear_probe", "knn"} {
		RegisterProtocol(kind, ProtocolSpec{Modalities: []string{"image"}, MinClasses: 2, Validate: validateProbe,
			EvalKeys: []string{"kind", "knn_k", "knn_temperature", "probe_l2", "select_every"},
			New:      func(*Config) Protocol { return probeProtocol{kind: kind} }})
	}
}

// validateProbe checks the keys of the image protocols.
func validateProbe(c *Config) []string {
	var errs []string
	if err := positive("eval.knn_k", c.Eval.KNNK); err != nil {
		errs = append(errs, err.Error())
	}
	if !(c.Eval.KNNTemperature > 0) {
		errs = append(errs, fmt.Sprintf("eval.knn_temperature: must be > 0, got %v", c.Eval.KNNTemperature))
	}
	if c.Eval.ProbeL2 < 0 {
		errs = append(errs, fmt.Sprintf("eval.probe_l2: must be >= 0 (0 = default), got %v", c.Eval.ProbeL2))
	}
	return errs
}

// probeProtocol scores frozen encoder embeddings of the training split
// against those of the test split: top-1 test accuracy of a linear probe
// trained on the training embeddings (kind linear_probe) and of the
// weighted kNN monitor (kind knn; also in the probe's detail).
type probeProtocol struct{ kind string }

func (p probeProtocol) Evaluate(env EvalEnv) (Score, error) {
	test, err := env.Embed("test", "encoder")
	if err != nil {
		return Score{}, err
	}
	ec, emb, labels := env.Cfg.Eval, env.Train, env.Data.Labels()
	tl, ok := env.Data.(TestLabeler)
	if !ok {
		return Score{}, fmt.Errorf("eval.kind %s needs test labels; %T has none", p.kind, env.Data)
	}
	// With unlabeled pre-training images (STL-10's), the probe and the
	// kNN monitor are fitted on the labelled training images only.
	if ps, ok := env.Data.(ProbeSplitter); ok {
		var split string
		if split, labels = ps.ProbeSplit(); split != "train" {
			if emb, err = env.Embed(split, "encoder"); err != nil {
				return Score{}, err
			}
		}
	}
	classes := env.Data.NumClasses()
	knn, err := eval.KNNAccuracy(emb.Data, labels, test.Data, tl.TestLabels(), emb.D, classes,
		eval.KNNOptions{K: ec.KNNK, Temperature: ec.KNNTemperature, Context: env.Ctx, Progress: env.Progress})
	if err != nil {
		return Score{}, fmt.Errorf("knn monitor: %w", err)
	}
	if p.kind == "knn" {
		return Score{Metric: "knn_accuracy", Value: 100 * knn}, nil
	}
	acc, err := eval.LinearProbe(emb.Data, labels, test.Data, tl.TestLabels(), emb.D, classes,
		eval.ProbeOptions{L2: ec.ProbeL2, Context: env.Ctx, Progress: env.Progress})
	if err != nil {
		return Score{}, fmt.Errorf("linear probe: %w", err)
	}
	return Score{Metric: "linear_probe_accuracy", Value: 100 * acc, Detail: map[string]any{"knn_accuracy": 100 * knn}}, nil
}

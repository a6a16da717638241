package train

import (
	"fmt"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// Protocol is an evaluation protocol: frozen embeddings of the dataset's
// splits in, a score out.
type Protocol interface {
	Evaluate(env EvalEnv) (Score, error)
}

// EvalEnv is what a protocol evaluates.
type EvalEnv struct {
	Cfg    *Config
	Data   Dataset
	Method Method
	// Train is the encoder embedding of the training split (computed once by
	// the runner: it is also what export_embeddings writes).
	Train sampler.Embeddings
	// Seed fixes the protocol's randomness (cross-validation folds), so two
	// samplers trained with the same seed are evaluated on the same folds.
	Seed uint64
}

// DevScorer is an optional interface of a Protocol with a development set:
// the model-selection hook (eval.select_every) keeps the parameters with the
// best DevScore.
type DevScorer interface {
	DevScore(env EvalEnv) (float64, error)
}

// UntrainedScorer is an optional interface of a Protocol that also scores
// the untrained networks (and data baselines) for reference: the runner calls
// it on a fresh method, before training or restoring a checkpoint, and puts
// the values into the result's detail.
type UntrainedScorer interface {
	Untrained(env EvalEnv) (map[string]any, error)
}

// Score is an evaluation result.
type Score struct {
	Metric string  // e.g. "svm_accuracy"
	Value  float64 // in percent for accuracies
	Std    float64 // spread over folds, when the protocol has folds
	// Detail holds protocol-specific values (per-fold accuracies, chosen C).
	Detail map[string]any
}

// ProtocolSpec makes an evaluation protocol.
type ProtocolSpec struct {
	// EvalKeys are the keys of the eval section the protocol reads (see
	// DataSpec.Keys).
	EvalKeys []string
	// Modalities lists the kinds of data the protocol scores.
	Modalities []string
	// Validate checks the eval section.
	Validate func(cfg *Config) []string
	// New returns the protocol for an experiment.
	New func(cfg *Config) Protocol
}

var protocolSpecs = map[string]ProtocolSpec{}

// RegisterProtocol makes a protocol available under `eval.kind: name`.
func RegisterProtocol(name string, s ProtocolSpec) { protocolSpecs[name] = s }

func protocolFor(cfg *Config) (ProtocolSpec, error) {
	var allowed []string
	for _, k := range keys(protocolSpecs) {
		if slices.Contains(protocolSpecs[k].Modalities, cfg.Modality) {
			allowed = append(allowed, k)
		}
	}
	ps, ok := protocolSpecs[cfg.Eval.Kind]
	if !ok || !slices.Contains(ps.Modalities, cfg.Modality) {
		return ProtocolSpec{}, fmt.Errorf("eval.kind: %q is not allowed for modality %s; allowed values: %s", cfg.Eval.Kind, cfg.Modality, strings.Join(allowed, ", "))
	}
	return ps, nil
}

package train

import (
	"context"
	"fmt"
	"math"
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
	// Ctx, when not nil, is the run's context: a protocol passes it to the
	// eval package and returns an error wrapping Ctx.Err() when it is
	// cancelled (Ctrl-C), which the runner reports as ErrInterrupted.
	Ctx context.Context
	// Progress, when not nil, receives the protocol's progress: units of
	// work done and their total. A protocol may go through several phases
	// (the kNN monitor, then the linear probe), each counting from 1 again.
	Progress func(done, total int)
}

// Embed returns the embeddings of split with representation repr, and an
// error when they hold a NaN or an infinity. Protocols embed through it, so
// that a diverged encoder is reported by the run (which knows the step and
// the remedy) rather than by the evaluation code.
func (e EvalEnv) Embed(split, repr string) (sampler.Embeddings, error) {
	emb, err := e.Method.Embed(split, repr)
	if err != nil {
		return emb, err
	}
	for _, v := range emb.Data {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return sampler.Embeddings{}, &nonFiniteError{split: split, repr: repr, value: f}
		}
	}
	return emb, nil
}

// nonFiniteError is a NaN or an infinity in the embeddings handed to a
// protocol.
type nonFiniteError struct {
	split, repr string
	value       float64
}

// what names the embeddings: "the encoder's embeddings" of the training
// split, "the projection embeddings of the test split".
func (e *nonFiniteError) what() string {
	s := "the encoder's embeddings"
	if e.repr != "" && e.repr != "encoder" {
		s = "the " + e.repr + " embeddings"
	}
	if e.split != "train" {
		s += " of the " + e.split + " split"
	}
	return s
}

func (e *nonFiniteError) Error() string { return fmt.Sprintf("%s contain %v", e.what(), e.value) }

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
	// MinClasses is the number of classes the labels the protocol fits on
	// must hold at least (2 for a classifier of the classes: svm, knn,
	// linear_probe; 0 for a protocol that reads no classes). Run checks it
	// on the loaded data before training (checkData).
	MinClasses int
	// DevSet says that the protocol is a DevScorer: it has a development
	// set that eval.select_every selects on (a config asking for selection
	// with another protocol is refused).
	DevSet bool
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

package train

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// A run pairs three things a config chooses independently:
//
//   - the data (`modality` + `data:`): a Dataset with named splits, loaded
//     once per experiment by the modality's DataSpec (dataset.go; data_graph.go,
//     data_image.go, data_text.go);
//   - the method (`method:`): which networks exist, how two views of a batch
//     are encoded and scored, and its per-step work (graphcl.go, mvgrl.go,
//     simclr.go, mocov3.go, simcse.go; a MethodSpec says which modalities
//     it trains on);
//   - the evaluation protocol (`eval.kind`): frozen embeddings in, a score out
//     (protocol_svm.go: svm; protocol_probe.go: linear_probe, knn;
//     protocol_sts.go: sts).
//
// The loop (loop.go) knows none of them: it asks the sampler for a batch,
// the method for a step, the optimizer for an update, and runs its named
// hooks (hooks.go).

// Method is a contrastive method bound to a dataset: its networks,
// parameters, training step and evaluation-mode embeddings.
type Method interface {
	// Params are every parameter and buffer of the method's networks
	// (trainable weights, BatchNorm statistics, momentum-encoder copies),
	// in a stable order with unique names; checkpoints save and restore them
	// by name. The loop's optimizer steps the Trainable ones; the others are
	// updated by the method itself (AfterStep) or by the forward pass.
	Params() []*model.Param
	// Step runs the forward and backward pass on two views of the training
	// instances idx and returns the loss, the gradients of the trainable
	// parameters (in Params order) and the projections of the first view
	// (and of the second, StepResult.Proj2, if MethodSpec.ViewProjections).
	Step(idx []int, rng *rand.Rand) (StepResult, error)
	// Embed returns evaluation-mode embeddings of every instance of a split
	// of the dataset ("train" is what the sampler draws from): which is
	// "encoder" (the representation that is evaluated), "projection" (the
	// head's output, from which the proximity graph is built) or another
	// representation the method lists in Representations.
	Embed(split, which string) (sampler.Embeddings, error)
}

// AfterStepper is an optional interface of a Method: per-step work that
// belongs between two optimizer steps (a momentum encoder's EMA update, an
// embedding table stepped by its own sparse optimizer). The loop calls it
// after the optimizer's step with step = the number of finished steps and
// writes the records it returns to metrics.jsonl.
type AfterStepper interface {
	AfterStep(step, total int) ([]map[string]any, error)
}

// Stateful is an optional interface of a Method (and of the loop's own
// hooks, such as model selection) whose state beyond its Params must
// survive a checkpoint (an optimizer of its own, a best-so-far copy). The
// checkpoint stores the bytes under the method's or hook's name.
type Stateful interface {
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
}

// Representer is an optional interface of a Method with representations
// beyond "encoder" and "projection" that an evaluation protocol may report
// side by side (the text method's "bag").
type Representer interface {
	Representations() []string
}

// StepResult is what one training step returns.
type StepResult struct {
	Loss  float64
	Grads [][]float32
	// Proj holds the first view's projections, row-major B×ProjDim.
	Proj    []float32
	ProjDim int
	// Proj2 holds the second view's projections (B×ProjDim, as Proj) when
	// the method hands them over (MethodSpec.ViewProjections); else nil.
	// The sampler's embedding cached_views reads both.
	Proj2 []float32
	// Nodes is the number of nodes in the batch's graphs as sampled
	// (before augmentation; graph methods, 0 elsewhere). The loop writes it
	// to metrics.jsonl as batch_nodes: a step's cost grows with it, and
	// samplers that group similar graphs change it.
	Nodes int
}

// MethodSpec makes a method for one run.
type MethodSpec struct {
	// ModelKeys and AugmentKeys are the keys of the model and augment
	// sections the method reads (see DataSpec.Keys).
	ModelKeys, AugmentKeys []string
	// Modalities lists the kinds of data the method trains on.
	Modalities []string
	// Validate checks the keys the method reads (model, augment, loss...).
	Validate func(cfg *Config) []string
	// New builds the method for one run; seed decides its initialisation.
	New func(cfg *Config, ds Dataset, seed uint64) (Method, error)
	// Defaults, when not nil, adjusts the modality's defaults for a config
	// that names this method (its loss, optimizer, model sizes); the
	// config file's keys are decoded over the result.
	Defaults func(cfg *Config)
	// ViewProjections says that Step fills StepResult.Proj2, the second
	// view's projections, which a sampler with embedding cached_views
	// needs; a config asking for it with another method is refused.
	ViewProjections bool
	// LossKinds are the values of loss.kind the method trains with; nil
	// means the InfoNCE family (loss.ContrastiveKinds: infonce, dcl, hcl).
	// A config with another kind is refused.
	LossKinds []string
}

// methodSpecs are the registered methods by name.
var methodSpecs = map[string]MethodSpec{}

// RegisterMethod makes a method available under `method: name`. Adding a
// method is a file with a Method implementation and one RegisterMethod call
// in its init function (see simcse.go for the smallest one).
func RegisterMethod(name string, s MethodSpec) { methodSpecs[name] = s }

func keys[V any](m map[string]V) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// methodFor returns the method spec of cfg, checking that it trains on the
// config's modality.
func methodFor(cfg *Config) (MethodSpec, error) {
	name := cfg.method()
	ms, ok := methodSpecs[name]
	if !ok {
		return MethodSpec{}, fmt.Errorf("method: %q is not allowed; allowed values: %s", name, strings.Join(keys(methodSpecs), ", "))
	}
	if !slices.Contains(ms.Modalities, cfg.Modality) {
		return MethodSpec{}, fmt.Errorf("method: %s trains on %s data, not on modality %s", name, strings.Join(ms.Modalities, ", "), cfg.Modality)
	}
	return ms, nil
}

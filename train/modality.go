package train

import (
	"math/rand/v2"
	"slices"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// Modality is one kind of data (graphs, images, text) with its encoder,
// augmentations, objective and evaluation. The loop, checkpoints, metrics
// and sweeps are written once against this interface; a modality plugs in by
// implementing it and registering a Builder.
type Modality interface {
	// NumInstances is N, the size of the training set the sampler draws from.
	NumInstances() int
	// Labels are the class labels of the training instances, used for
	// evaluation and for diagnostics (false-negative ratio), never for training.
	Labels() []int
	// Params are the encoder's parameters and buffers (BatchNorm statistics),
	// in a stable order; checkpoints save and restore them by name.
	Params() []*model.Param
	// Step runs the forward and backward pass on two views of the instances
	// idx and returns the loss, the gradients of the trainable parameters (in
	// Params order) and the projections of the first view (len(idx)×d).
	Step(idx []int, rng *rand.Rand) (StepResult, error)
	// Embed returns evaluation-mode embeddings of every training instance:
	// which is "encoder" (the representation that is evaluated) or
	// "projection" (the head's output, from which the proximity graph is built).
	Embed(which string) (sampler.Embeddings, error)
	// Evaluate scores frozen encoder embeddings; seed fixes the evaluation's
	// randomness (cross-validation folds), so two samplers trained with the
	// same seed are evaluated on the same folds.
	Evaluate(emb sampler.Embeddings, seed uint64) (Score, error)
}

// AfterStepper is an optional interface of a Modality. The loop calls
// AfterStep after every optimiser step (step = number of finished steps,
// total = the run's number of steps) and writes the records it returns to
// metrics.jsonl (with the run's id added). A modality uses it for work that
// belongs between two steps: the text modality steps its own optimiser for
// the embedding table there and scores STS-B dev every n steps to keep the
// best parameters.
type AfterStepper interface {
	AfterStep(step, total int) ([]map[string]any, error)
}

// StepResult is what one training step returns.
type StepResult struct {
	Loss  float64
	Grads [][]float32
	// Proj holds the first view's projections, row-major B×ProjDim.
	Proj    []float32
	ProjDim int
}

// Score is an evaluation result.
type Score struct {
	Metric string  // e.g. "svm_accuracy"
	Value  float64 // in percent for accuracies
	Std    float64 // spread over folds, when the protocol has folds
	// Detail holds protocol-specific values (per-fold accuracies, chosen C).
	Detail map[string]any
}

// Dataset is a loaded dataset shared by all runs of an experiment.
type Dataset interface {
	Name() string
	NumInstances() int
	Labels() []int
	NumClasses() int
}

// Builder makes the modality for one run from the experiment's dataset.
type Builder interface {
	// Load reads or generates the dataset described by cfg.Data.
	Load(cfg *Config) (Dataset, error)
	// New builds a fresh model for one run; seed decides its initialisation.
	New(cfg *Config, ds Dataset, seed uint64) (Modality, error)
}

var builders = map[string]Builder{}

func registered() []string {
	var names []string
	for k := range builders {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Register makes a modality available under the config value `modality: name`.
func Register(name string, b Builder) { builders[name] = b }

package train

import "github.com/batchsampler-go/batchsampler/data"

// Dataset is the data side of a run (see method.go): a loaded dataset with
// named splits, its optional interfaces, and the registry of modalities.

// Dataset is a loaded dataset shared by all runs of an experiment. The
// sampler draws from its "train" split.
type Dataset interface {
	Name() string
	// NumInstances is N, the size of the training split.
	NumInstances() int
	// Labels are the class labels of the training split (nil without
	// labels), used for evaluation and for diagnostics (false-negative
	// ratio), never for training.
	Labels() []int
	NumClasses() int
	// Splits names the splits a method can embed, "train" first.
	Splits() []string
}

// DataSpec loads the datasets of one modality.
type DataSpec struct {
	// Keys are the keys of the data section this modality reads; a config
	// that sets any other is refused, and the written config.yaml leaves
	// the others out.
	Keys []string
	// Validate checks the data section (and the keys the modality reads).
	Validate func(cfg *Config) []string
	// Load reads or generates the dataset described by cfg.Data.
	Load func(cfg *Config) (Dataset, error)
	// Defaults returns the config a file of this modality starts from.
	Defaults func() Config
}

// TestLabeler is an optional interface of a Dataset with a labelled
// "test" split (the image datasets): the labels of its instances, in the
// order Embed("test", ...) returns them. The linear probe and the kNN
// monitor need it.
type TestLabeler interface {
	TestLabels() []int
}

// ProbeSplitter is an optional interface of a Dataset whose labelled
// training instances are a split of their own (STL-10's labelled images
// beside its unlabelled pre-training ones): ProbeSplit names the split an
// evaluation probe is fitted on ("train" when every training instance is
// labelled) and returns its labels.
type ProbeSplitter interface {
	ProbeSplit() (split string, labels []int)
}

// GraphData is the Dataset of the graph modality, what a method for
// graphs trains on (a method written outside this package asserts it).
type GraphData interface {
	Dataset
	// GraphSet returns the training graphs with their node features and
	// labels (shared by every run: not to be modified).
	GraphSet() *data.GraphSet
}

var (
	// dataSpecs are the registered modalities by name.
	dataSpecs = map[string]DataSpec{}
	// defaultMethod is the method of a modality when the config names none.
	defaultMethod = map[string]string{}
)

// RegisterData makes a modality available under `modality: name`; method
// is the method a config of this modality uses when it names none.
func RegisterData(name string, s DataSpec, method string) {
	dataSpecs[name] = s
	defaultMethod[name] = method
}

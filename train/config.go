// Package train wires a modality (graphs today; images and text plug in the
// same way) from the data, augment, model, loss, sampler and eval packages,
// runs the training loop with checkpoints, and writes the run directory:
// config.yaml, metrics.jsonl, results.json, results.md and plots/.
package train

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/batchsampler-go/batchsampler/loss"
)

// Config is one experiment: a dataset, a model, a loss, one or more samplers
// and one or more seeds. Every (sampler, seed) pair is one training run.
type Config struct {
	Name     string          `yaml:"name"`
	Modality string          `yaml:"modality"`
	Data     DataConfig      `yaml:"data"`
	Model    ModelConfig     `yaml:"model"`
	Augment  AugmentConfig   `yaml:"augment"`
	Loss     loss.Config     `yaml:"loss"`
	Sampler  *SamplerConfig  `yaml:"sampler,omitempty"`
	Samplers []SamplerConfig `yaml:"samplers,omitempty"`
	Train    TrainConfig     `yaml:"train"`
	Eval     EvalConfig      `yaml:"eval"`
	// Text holds the text modality's options (see TextOptions).
	Text  TextOptions `yaml:"text,omitempty"`
	Seeds []uint64    `yaml:"seeds"`
	// ExportEmbeddings writes the frozen evaluation embeddings and labels of
	// every run as NumPy .npy files under DIR/embeddings/.
	ExportEmbeddings bool `yaml:"export_embeddings"`
}

// DataConfig says where the dataset comes from.
type DataConfig struct {
	// Source is "tu" (TU Dortmund files), "gin" (GIN/DGCNN text format) or
	// "synthetic" (generated from the seed).
	Source string `yaml:"source"`
	// Name is the dataset name (TU: the NAME of NAME_A.txt).
	Name string `yaml:"name"`
	// Root is the shared data directory; "" means $BATCHSAMPLER_DATA or
	// ../shared/data.
	Root string `yaml:"root"`
	// Path is the TU directory or the GIN file, relative to Root unless absolute.
	Path string `yaml:"path"`
	// Features selects node features: auto, labels, attributes,
	// labels+attributes, constant, degree.
	Features  string          `yaml:"features"`
	MaxDegree int             `yaml:"max_degree"`
	Synthetic SyntheticConfig `yaml:"synthetic"`
	// Text describes the sentence corpus and STS data of source "corpus"
	// (modality text).
	Text TextDataConfig `yaml:"text"`
	// Image configures the image modality (see ImageDataConfig).
	Image ImageDataConfig `yaml:"image"`
}

// TextDataConfig is the text modality's data: a sentence corpus, the
// PPMI-SVD word vectors computed from it, and STS Benchmark for evaluation.
type TextDataConfig struct {
	// Corpus lists the corpus files (one sentence a line), relative to the
	// data root unless absolute.
	Corpus []string `yaml:"corpus"`
	// MaxSentences keeps the first n sentences of the concatenated corpus
	// (0: all).
	MaxSentences int `yaml:"max_sentences"`
	// STSDir holds sts-dev.csv and sts-test.csv (relative to the data root
	// unless absolute).
	STSDir string `yaml:"sts_dir"`
	// MinCount and MaxVocab bound the vocabulary; Window and Dim are the
	// PPMI co-occurrence window and the SVD dimension of the word vectors.
	MinCount int `yaml:"min_count"`
	MaxVocab int `yaml:"max_vocab"`
	Window   int `yaml:"window"`
	Dim      int `yaml:"dim"`
	// VectorsCache is a directory where the word vectors are cached as
	// wordvec-<hash of corpus and options>.bin ("" disables the cache).
	VectorsCache string `yaml:"vectors_cache"`
}

// SyntheticConfig parameterises the generated graph dataset.
type SyntheticConfig struct {
	Graphs     int     `yaml:"graphs"`
	Classes    int     `yaml:"classes"`
	MinNodes   int     `yaml:"min_nodes"`
	MaxNodes   int     `yaml:"max_nodes"`
	NodeLabels int     `yaml:"node_labels"`
	Noise      float64 `yaml:"noise"`
	Seed       uint64  `yaml:"seed"`
}

// ModelConfig describes the encoder.
type ModelConfig struct {
	// Kind is "gin" for graphs, "mlp" for text (embedding bag → MLP).
	Kind    string `yaml:"kind"`
	Hidden  int    `yaml:"hidden"`
	Layers  int    `yaml:"layers"`
	ProjDim int    `yaml:"proj_dim"`
	// Dropout is the text MLP's dropout probability (the SimCSE views).
	Dropout float64 `yaml:"dropout"`
	// TrainEmbeddings fine-tunes the text model's word-vector table.
	TrainEmbeddings bool `yaml:"train_embeddings"`
	// Arch names a ResNet preset (resnet8, resnet14, resnet20,
	// resnet18-narrow) for model.kind resnet; Widths and Blocks, when given,
	// override the preset's stage widths and blocks per stage.
	Arch   string `yaml:"arch"`
	Widths []int  `yaml:"widths"`
	Blocks []int  `yaml:"blocks"`
	// ProjHidden is the projection head's hidden width (resnet; 0 = the
	// encoder's output width).
	ProjHidden int `yaml:"proj_hidden"`
}

// AugmentConfig lists the augmentations that make the second view.
type AugmentConfig struct {
	// Mode is "random_choice" (one augmentation per instance, GraphCL's
	// random4) or "compose" (all in sequence).
	Mode string        `yaml:"mode"`
	List []AugmentSpec `yaml:"list"`
	// DropIsolated also removes nodes left without edges by an augmentation.
	// Off by default: NodeDrop and Subgraph already remove their nodes, which
	// is what GraphCL's loader achieves (its graphs carry self-loops, so only
	// the dropped nodes are isolated there).
	DropIsolated bool `yaml:"drop_isolated"`
	// Image selects the image views: "simclr" (SimCLR's CIFAR pipeline),
	// "crop_flip" (random resized crop and flip only) or "none".
	Image string `yaml:"image"`
}

// AugmentSpec is one augmentation with its ratio.
type AugmentSpec struct {
	Kind  string  `yaml:"kind"`
	Ratio float64 `yaml:"ratio"`
}

// SamplerConfig chooses how mini-batches are formed.
type SamplerConfig struct {
	// Kind is "uniform", "knn" or "batchsampler".
	Kind string `yaml:"kind"`
	// Label names the sampler in results (default: Kind, or a description
	// of the walk and graph for ablations).
	Label string `yaml:"label"`
	M     int    `yaml:"m"`
	K     int    `yaml:"k"`
	// Walk is rwr, rw, bfs or dfs; Graph is proximity or knn.
	Walk  string        `yaml:"walk"`
	Graph string        `yaml:"graph"`
	Alpha AlphaSchedule `yaml:"alpha"`
	// RefreshEvery is t, the number of iterations between graph rebuilds.
	RefreshEvery int `yaml:"refresh_every"`
	// Embedding is the representation the graph is built from:
	// "projection" (default: the whole dataset re-embedded by the current
	// encoder in evaluation mode at every refresh), "encoder" (the same with
	// the encoder's output), or "cached" (the projections of the first view
	// computed during training, kept per instance, as the published code
	// does: no re-embedding cost, but stale for instances not seen recently;
	// the dataset is embedded once before the first step).
	Embedding string `yaml:"embedding"`
	// MaxWalkSteps caps one walk; 0 is the sampler's default.
	MaxWalkSteps int `yaml:"max_walk_steps"`
}

// AlphaSchedule is the restart probability: a number (constant) or
// {start, end} (linear decay over training).
type AlphaSchedule struct {
	Start float64 `yaml:"start"`
	End   float64 `yaml:"end"`
	// Constant is true when the YAML gave a single number.
	Constant bool `yaml:"-"`
}

// UnmarshalYAML accepts `alpha: 0.2` or `alpha: {start: 0.2, end: 0.05}`.
func (a *AlphaSchedule) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var v float64
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: alpha must be a number or {start, end}: %w", n.Line, err)
		}
		*a = AlphaSchedule{Start: v, End: v, Constant: true}
		return nil
	}
	type plain AlphaSchedule
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = AlphaSchedule(p)
	return nil
}

// MarshalYAML writes a constant schedule as a number.
func (a AlphaSchedule) MarshalYAML() (any, error) {
	if a.Constant {
		return a.Start, nil
	}
	return map[string]float64{"start": a.Start, "end": a.End}, nil
}

// TrainConfig holds the optimisation settings.
type TrainConfig struct {
	Epochs    int     `yaml:"epochs"`
	BatchSize int     `yaml:"batch_size"`
	LR        float64 `yaml:"lr"`
	// EvalEvery evaluates every k epochs as well as at the end (0: only at the end).
	EvalEvery int `yaml:"eval_every"`
	// LogEvery writes a metrics line every k steps (1: every step).
	LogEvery int `yaml:"log_every"`
	// Checkpoint enables the end-of-epoch checkpoints (default true).
	Checkpoint bool `yaml:"checkpoint"`
}

// EvalConfig chooses the evaluation protocol.
type EvalConfig struct {
	// Kind is "svm" (GraphCL's SVC with inner grid search in k-fold CV)
	// or "sts" (STS-B Spearman of cosine similarities, text).
	Kind       string    `yaml:"kind"`
	Folds      int       `yaml:"folds"`
	InnerFolds int       `yaml:"inner_folds"`
	Cs         []float64 `yaml:"cs"`
	// Image evaluation: the weighted kNN monitor's k and temperature, and
	// the linear probe's L2 penalty (0 = the probe's default).
	KNNK           int     `yaml:"knn_k"`
	KNNTemperature float64 `yaml:"knn_temperature"`
	ProbeL2        float64 `yaml:"probe_l2"`
}

// DefaultConfig returns the defaults every config file starts from (the
// GraphCL setting of the paper's appendix).
func DefaultConfig() Config {
	return Config{
		Modality: "graph",
		Data:     DataConfig{Source: "tu", Features: "auto"},
		Model:    ModelConfig{Kind: "gin", Hidden: 32, Layers: 3},
		Augment: AugmentConfig{Mode: "random_choice", List: []AugmentSpec{
			{Kind: "node_drop", Ratio: 0.1}, {Kind: "edge_remove", Ratio: 0.1},
			{Kind: "subgraph", Ratio: 0.2}, {Kind: "attr_mask", Ratio: 0.1},
		}},
		Loss:  loss.Default("graph"),
		Train: TrainConfig{Epochs: 20, BatchSize: 128, LR: 0.01, LogEvery: 1, Checkpoint: true},
		Eval:  EvalConfig{Kind: "svm", Folds: 10, InnerFolds: 5, Cs: []float64{1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}},
		Seeds: []uint64{0},
	}
}

// DefaultConfigFor returns the defaults of a modality: DefaultConfig for
// graphs, and for "text" SimCSE's setting (the two shared corpora, STS-B,
// PPMI-SVD vectors of dimension 300, an MLP of width 512 with dropout 0.1,
// InfoNCE τ=0.05, B=64, Adam lr 1e-3, one epoch). The config file's
// `modality` key selects the defaults before the rest is decoded over them.
func DefaultConfigFor(modality string) Config {
	c := DefaultConfig()
	if modality == "image" {
		return defaultImageConfig()
	}
	if modality != "text" {
		return c
	}
	c.Modality = "text"
	c.Data = DataConfig{Source: "corpus", Text: TextDataConfig{
		Corpus: []string{"text/gutenberg_sentences.txt", "text/wiki_sentences.txt"}, STSDir: "sts",
		MinCount: 5, MaxVocab: 20000, Window: 5, Dim: 300, VectorsCache: filepath.Join("runs", "cache"),
	}}
	c.Model = ModelConfig{Kind: "mlp", Hidden: 512, Dropout: 0.1, TrainEmbeddings: true}
	c.Augment = AugmentConfig{Mode: "random_choice"}
	c.Loss = loss.Default("text")
	c.Train = TrainConfig{Epochs: 1, BatchSize: 64, LR: 1e-3, LogEvery: 10, Checkpoint: true}
	c.Eval = EvalConfig{Kind: "sts"}
	return c
}

// modalityOf returns the value of the top-level `modality` key ("" if absent).
func modalityOf(doc *yaml.Node) string {
	n := doc.Content[0]
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == "modality" && n.Content[j+1].Kind == yaml.ScalarNode {
			return n.Content[j+1].Value
		}
	}
	return ""
}

// LoadConfig reads a YAML config, applies the -set overrides ("a.b.c=value",
// value in YAML syntax) and validates the result. Unknown keys and wrong
// types are errors that name the key path and what is allowed.
func LoadConfig(path string, sets []string) (Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := ParseConfig(src, sets)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// ParseConfig is LoadConfig on the bytes of a YAML document.
func ParseConfig(src []byte, sets []string) (Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return Config{}, fmt.Errorf("not valid YAML: %w", err)
	}
	if root.Kind == 0 { // empty document
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	for _, s := range sets {
		if err := applySet(&root, s); err != nil {
			return Config{}, err
		}
	}
	c := DefaultConfigFor(modalityOf(&root))
	if err := checkKeys(root.Content[0], typeOfConfig, ""); err != nil {
		return Config{}, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(&root); err != nil {
		return Config{}, err
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// applySet sets key.path=value on a YAML document node, creating mappings
// on the way.
func applySet(doc *yaml.Node, s string) error {
	key, val, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("-set %q: want key.path=value", s)
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(val), &v); err != nil {
		return fmt.Errorf("-set %s: value %q is not valid YAML: %w", key, val, err)
	}
	var vn *yaml.Node
	if v.Kind == yaml.DocumentNode && len(v.Content) == 1 {
		vn = v.Content[0]
	} else {
		vn = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	}
	n := doc.Content[0]
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("-set %s: %s is not a mapping", key, strings.Join(parts[:i], "."))
		}
		var child *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == p {
				child = n.Content[j+1]
				if i == len(parts)-1 {
					n.Content[j+1] = vn
				}
				break
			}
		}
		if i == len(parts)-1 {
			if child == nil {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, vn)
			}
			return nil
		}
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p}, child)
		}
		n = child
	}
	return nil
}

// SamplerList returns the samplers of the experiment (Uniform when none is given).
func (c *Config) SamplerList() []SamplerConfig {
	switch {
	case len(c.Samplers) > 0:
		return c.Samplers
	case c.Sampler != nil:
		return []SamplerConfig{*c.Sampler}
	default:
		return []SamplerConfig{{Kind: "uniform"}}
	}
}

func oneOf(key, v string, allowed ...string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("%s: %q is not allowed; allowed values: %s", key, v, strings.Join(allowed, ", "))
}

func positive(key string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be a positive integer, got %d", key, v)
	}
	return nil
}

// Validate checks every value and returns the first error, naming its key.
func (c *Config) Validate() error {
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	add(oneOf("modality", c.Modality, registered()...))
	errs = append(errs, c.validateTextOptions()...)
	if c.Modality == "text" {
		errs = append(errs, c.validateText()...)
	} else if c.Modality == "image" {
		errs = append(errs, c.validateImage()...)
	} else {
		errs = append(errs, c.validateGraph()...)
	}
	add(oneOf("augment.mode", c.Augment.Mode, "random_choice", "compose"))
	if err := c.Loss.Validate(); err != nil {
		errs = append(errs, err.Error())
	}
	if c.Sampler != nil && len(c.Samplers) > 0 {
		errs = append(errs, "sampler, samplers: give one of them, not both")
	}
	for i, s := range c.SamplerList() {
		key := "sampler"
		if len(c.Samplers) > 0 {
			key = fmt.Sprintf("samplers[%d]", i)
		}
		add(s.validate(key))
	}
	add(positive("train.epochs", c.Train.Epochs))
	add(positive("train.batch_size", c.Train.BatchSize))
	if !(c.Train.LR > 0) || math.IsInf(c.Train.LR, 0) {
		errs = append(errs, fmt.Sprintf("train.lr: must be a positive number, got %v", c.Train.LR))
	}
	if c.Train.EvalEvery < 0 {
		errs = append(errs, fmt.Sprintf("train.eval_every: must be >= 0, got %d", c.Train.EvalEvery))
	}
	add(positive("train.log_every", c.Train.LogEvery))
	if len(c.Seeds) == 0 {
		errs = append(errs, "seeds: need at least one seed")
	}
	seen := map[uint64]bool{}
	for _, s := range c.Seeds {
		if seen[s] {
			errs = append(errs, fmt.Sprintf("seeds: seed %d is listed twice", s))
		}
		seen[s] = true
	}
	labels := map[string]bool{}
	for _, s := range c.SamplerList() {
		if labels[s.DisplayName()] {
			errs = append(errs, fmt.Sprintf("samplers: two samplers are named %q; give them distinct labels", s.DisplayName()))
		}
		labels[s.DisplayName()] = true
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid config:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// validateText checks the keys the text modality reads.
func (c *Config) validateText() []string {
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	t := c.Data.Text
	add(oneOf("data.source", c.Data.Source, "corpus"))
	if len(t.Corpus) == 0 {
		errs = append(errs, "data.text.corpus: need at least one corpus file")
	}
	for i, f := range t.Corpus {
		if f == "" {
			errs = append(errs, fmt.Sprintf("data.text.corpus[%d]: empty file name", i))
		}
	}
	if t.MaxSentences < 0 {
		errs = append(errs, fmt.Sprintf("data.text.max_sentences: must be >= 0 (0 = all), got %d", t.MaxSentences))
	}
	if t.STSDir == "" {
		errs = append(errs, "data.text.sts_dir: required (the directory of sts-dev.csv and sts-test.csv)")
	}
	add(positive("data.text.min_count", t.MinCount))
	if t.MaxVocab < 0 {
		errs = append(errs, fmt.Sprintf("data.text.max_vocab: must be >= 0 (0 = no limit), got %d", t.MaxVocab))
	}
	add(positive("data.text.window", t.Window))
	add(positive("data.text.dim", t.Dim))
	add(oneOf("model.kind", c.Model.Kind, "mlp"))
	add(positive("model.hidden", c.Model.Hidden))
	if c.Model.ProjDim < 0 {
		errs = append(errs, fmt.Sprintf("model.proj_dim: must be >= 0 (0 = hidden), got %d", c.Model.ProjDim))
	}
	if !(c.Model.Dropout >= 0 && c.Model.Dropout < 1) {
		errs = append(errs, fmt.Sprintf("model.dropout: must be in [0, 1), got %v", c.Model.Dropout))
	}
	add(oneOf("eval.kind", c.Eval.Kind, "sts"))
	return errs
}

// validateGraph checks the keys the graph modality reads.
func (c *Config) validateGraph() []string {
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	add(oneOf("data.source", c.Data.Source, "tu", "gin", "synthetic"))
	if c.Data.Source != "synthetic" && c.Data.Path == "" {
		errs = append(errs, "data.path: required for source "+c.Data.Source+" (a directory for tu, a file for gin)")
	}
	if c.Data.Source == "tu" && c.Data.Name == "" {
		errs = append(errs, "data.name: required for source tu (the NAME of NAME_A.txt)")
	}
	add(oneOf("data.features", c.Data.Features, "auto", "labels", "attributes", "labels+attributes", "constant", "degree"))
	if c.Data.MaxDegree < 0 {
		errs = append(errs, fmt.Sprintf("data.max_degree: must be >= 0, got %d", c.Data.MaxDegree))
	}
	add(oneOf("model.kind", c.Model.Kind, "gin"))
	add(positive("model.hidden", c.Model.Hidden))
	add(positive("model.layers", c.Model.Layers))
	if c.Model.ProjDim < 0 {
		errs = append(errs, fmt.Sprintf("model.proj_dim: must be >= 0 (0 = layers*hidden), got %d", c.Model.ProjDim))
	}
	add(oneOf("eval.kind", c.Eval.Kind, "svm"))
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

func (s SamplerConfig) validate(key string) error {
	if err := oneOf(key+".kind", s.Kind, "uniform", "knn", "batchsampler"); err != nil {
		return err
	}
	if s.Kind == "uniform" {
		return nil
	}
	if err := oneOf(key+".embedding", s.Embedding, "", "projection", "encoder", "cached"); err != nil {
		return err
	}
	if s.RefreshEvery < 0 {
		return fmt.Errorf("%s.refresh_every: must be >= 0, got %d", key, s.RefreshEvery)
	}
	if s.Kind == "knn" {
		return nil
	}
	if err := oneOf(key+".walk", s.Walk, "", "rwr", "rw", "bfs", "dfs"); err != nil {
		return err
	}
	if err := oneOf(key+".graph", s.Graph, "", "proximity", "knn"); err != nil {
		return err
	}
	if s.K <= 0 {
		return fmt.Errorf("%s.k: must be a positive integer, got %d", key, s.K)
	}
	if s.M < s.K {
		return fmt.Errorf("%s.m: must be >= k (%d), got %d", key, s.K, s.M)
	}
	for _, a := range []struct {
		k string
		v float64
	}{{"alpha.start", s.Alpha.Start}, {"alpha.end", s.Alpha.End}} {
		if !(a.v >= 0 && a.v <= 1) {
			return fmt.Errorf("%s.%s: must be in [0, 1], got %v", key, a.k, a.v)
		}
	}
	return nil
}

// DisplayName is the sampler's name in results.
func (s SamplerConfig) DisplayName() string {
	if s.Label != "" {
		return s.Label
	}
	return s.Kind
}

// DataRoot resolves data.root: the config value, $BATCHSAMPLER_DATA, or ../shared/data.
func (d DataConfig) DataRoot() string {
	if d.Root != "" {
		return d.Root
	}
	if e := os.Getenv("BATCHSAMPLER_DATA"); e != "" {
		return e
	}
	return filepath.Join("..", "shared", "data")
}

// ResolvedPath is data.path joined to the data root unless absolute.
func (d DataConfig) ResolvedPath() string {
	if filepath.IsAbs(d.Path) {
		return d.Path
	}
	return filepath.Join(d.DataRoot(), d.Path)
}

// WriteConfig writes cfg as YAML.
func WriteConfig(w io.Writer, cfg *Config) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return err
	}
	return enc.Close()
}

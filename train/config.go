package train

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/yamlcfg"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// Config is one experiment: a dataset, a model, a loss, one or more samplers
// and one or more seeds. Every (sampler, seed) pair is one training run.
type Config struct {
	Name string `yaml:"name"`
	// Modality is the kind of data: graph, image or text.
	Modality string `yaml:"modality"`
	// Method is the contrastive method: graphcl or mvgrl (graph), simclr
	// or mocov3 (image), simcse (text); empty: the modality's default
	// (graphcl, simclr, simcse).
	Method  string        `yaml:"method"`
	Data    DataConfig    `yaml:"data"`
	Model   ModelConfig   `yaml:"model"`
	Augment AugmentConfig `yaml:"augment"`
	Loss    loss.Config   `yaml:"loss"`
	// Optim is the optimizer and its learning-rate schedule; the base
	// learning rate is train.lr.
	Optim    optim.Config   `yaml:"optim"`
	Sampler  *sampler.Spec  `yaml:"sampler,omitempty"`
	Samplers []sampler.Spec `yaml:"samplers,omitempty"`
	Train    TrainConfig    `yaml:"train"`
	Eval     EvalConfig     `yaml:"eval"`
	// Text holds the text modality's options (see TextOptions).
	Text  TextOptions `yaml:"text,omitempty"`
	Seeds []uint64    `yaml:"seeds"`
	// ExportEmbeddings writes the frozen evaluation embeddings and labels of
	// every run as NumPy .npy files under DIR/embeddings/.
	ExportEmbeddings bool `yaml:"export_embeddings"`
	// Sweep makes the config a sweep: one experiment per point, each
	// compared with a baseline sampler (see SweepConfig; package sweep
	// runs it). Nil for an ordinary experiment.
	Sweep *SweepConfig `yaml:"sweep,omitempty"`
}

// DataConfig says where the dataset comes from.
type DataConfig struct {
	// Source is where the modality's data comes from. Graphs: "tu" (TU
	// Dortmund files), "gin" (GIN/DGCNN text format) or "synthetic"
	// (generated from the seed). Images: "cifar10", "cifar100" (fine
	// labels), "cifar100-coarse", "idx" (MNIST, Fashion-MNIST), "stl10",
	// "folder" (torchvision's ImageFolder layout) or "synthetic". Text:
	// "corpus" (see Text).
	Source string `yaml:"source"`
	// Name is the dataset name (TU: the NAME of NAME_A.txt).
	Name string `yaml:"name"`
	// Root is the data root; "" means data.DefaultRoot() (see DataRoot).
	Root string `yaml:"root"`
	// Path is the dataset's directory or file (a TU directory, a GIN file,
	// a CIFAR, STL-10 or IDX directory, an image folder), relative to Root
	// unless absolute.
	Path string `yaml:"path"`
	// Features selects node features: auto, auto-degree, labels, attributes,
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
	// unless absolute): STS Benchmark, whose dev set is the development set
	// of model selection and whose test set is the run's score.
	STSDir string `yaml:"sts_dir"`
	// SentEvalDir is a directory laid out as SentEval's data/downstream
	// (relative to the data root unless absolute; default "senteval"):
	// STS/STS12-en-test … STS/STS16-en-test, each with
	// STS.input.<subset>.txt and STS.gs.<subset>.txt, and
	// SICK/SICK_test_annotated.txt. The sts protocol scores what it finds
	// there besides STS-B, as SimCSE reports it: STS12-16 each with the
	// year's subsets concatenated, SICK-R's test set, and the average of the
	// seven tasks. A year whose folder is missing, or SICK-R without
	// SICK_test_annotated.txt, is reported absent and the average partial;
	// a folder that is there but incomplete or malformed is an error. ""
	// scores STS-B alone. SentEval's own data/downstream (or SimCSE's
	// SentEval/data/downstream) can be given as it is; cmd/download
	// -dataset senteval-sts and -dataset sick fill DATA_ROOT/senteval.
	SentEvalDir string `yaml:"senteval_dir"`
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

// ModelConfig describes the encoder. Kind, Hidden, Layers and ProjDim are
// shared; the keys that one method alone reads are a struct in that
// method's file, inlined here (the YAML model section stays flat, its keys
// in this order): TextModel (simcse.go), ResNetModel (resnet.go: simclr and
// mocov3), MomentumModel (mocov3.go) and MVGRLModel (mvgrl.go).
type ModelConfig struct {
	// Kind is the encoder, one per method: "gin" (graphcl), "gcn"
	// (mvgrl's two GCN encoders), "resnet" (simclr, mocov3) or "mlp"
	// (simcse: embedding bag → residual MLP).
	Kind          string `yaml:"kind"`
	Hidden        int    `yaml:"hidden"`
	Layers        int    `yaml:"layers"`
	ProjDim       int    `yaml:"proj_dim"`
	TextModel     `yaml:",inline"`
	ResNetModel   `yaml:",inline"`
	MomentumModel `yaml:",inline"`
	MVGRLModel    `yaml:",inline"`
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

// TrainConfig holds the optimisation settings.
type TrainConfig struct {
	// Epochs is the length of training. 0 trains no step: every run's
	// protocol scores the initial (untrained) encoder of its seed, a
	// reference point; the run still writes the run directory, and a
	// checkpoint of step 0 that -evaluate and -embed read.
	Epochs    int     `yaml:"epochs"`
	BatchSize int     `yaml:"batch_size"`
	LR        float64 `yaml:"lr"`
	// EvalEvery evaluates every k epochs as well as at the end (0: only at the end).
	EvalEvery int `yaml:"eval_every"`
	// LogEvery writes a metrics line every k steps (1: every step).
	LogEvery int `yaml:"log_every"`
	// Checkpoint enables the end-of-epoch checkpoints (default true). Without
	// them one checkpoint is still written when training ends, before the
	// final evaluation, so that an interrupted evaluation resumes without
	// training again (and Ctrl-C during training saves one).
	Checkpoint bool `yaml:"checkpoint"`
}

// EvalConfig chooses the evaluation protocol.
type EvalConfig struct {
	// Kind is the protocol, by modality: "svm" (graphs: GraphCL's SVC with
	// inner grid search in k-fold CV), "linear_probe" or "knn" (images: a
	// logistic-regression probe or the weighted kNN monitor on frozen
	// features), "sts" (text: Spearman of cosine similarities on STS-B and
	// the SentEval STS tasks found).
	Kind       string    `yaml:"kind"`
	Folds      int       `yaml:"folds"`
	InnerFolds int       `yaml:"inner_folds"`
	Cs         []float64 `yaml:"cs"`
	// Image evaluation: the weighted kNN monitor's k and temperature, and
	// the linear probe's L2 penalty (0 = the probe's default).
	KNNK           int     `yaml:"knn_k"`
	KNNTemperature float64 `yaml:"knn_temperature"`
	ProbeL2        float64 `yaml:"probe_l2"`
	// SelectEvery scores the protocol's development set every n steps and
	// at the last step and keeps the parameters with the best score; the
	// reported score is then that of the selected parameters (SimCSE's
	// model selection on STS-B dev). 0: report the final parameters.
	SelectEvery int `yaml:"select_every"`
}

// defaultOptim is the optimizer of every shipped setting: Adam with
// PyTorch's defaults and a constant learning rate.
func defaultOptim() optim.Config {
	o := optim.Default()
	o.LR = 0
	return o
}

// DefaultConfigFor returns the config a file of the given modality starts
// from (DefaultConfig for an unknown or empty modality).
func DefaultConfigFor(modality string) Config {
	if ds, ok := dataSpecs[modality]; ok {
		return ds.Defaults()
	}
	return DefaultConfig()
}

// LoadConfig reads a YAML config, applies the -set overrides ("a.b.c=value",
// value in YAML syntax; list entries by index: "samplers[1].m=500") and
// validates the result. Unknown keys and wrong types are errors that name the
// file or the override, the key path and what is allowed.
func LoadConfig(path string, sets []string) (Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return parseConfig(src, path, sets)
}

// ParseConfig is LoadConfig on the bytes of a YAML document.
func ParseConfig(src []byte, sets []string) (Config, error) {
	return parseConfig(src, "config", sets)
}

// ParseNamedConfig is ParseConfig with the name errors give the document
// (a file path).
func ParseNamedConfig(src []byte, name string, sets []string) (Config, error) {
	return parseConfig(src, name, sets)
}

func parseConfig(src []byte, name string, sets []string) (Config, error) {
	doc, err := yamlcfg.Parse(src, name, sets)
	if err != nil {
		return Config{}, err
	}
	modality, _ := doc.Value("modality")
	method, _ := doc.Value("method")
	c := DefaultConfigFor(modality)
	if ms, ok := methodSpecs[method]; ok && ms.Defaults != nil && slices.Contains(ms.Modalities, c.Modality) {
		ms.Defaults(&c)
	}
	if err := doc.Decode(&c); err != nil {
		return Config{}, err
	}
	c.Method = c.method() // the modality's default, written out
	if err := c.Validate(); err != nil {
		if doc.Blank() {
			return Config{}, fmt.Errorf("%s sets no key (the file is empty, or holds comments only): a config gives at least its modality and its data, as the files in configs/ do (cmd/train without -config runs the embedded demo)", name)
		}
		return Config{}, fmt.Errorf("%s: %s", name, locateKeys(err.Error(), doc))
	}
	return c, nil
}

// locateKeys adds to every "key: message" line of a validation error where
// the key's value came from: "train.batch_size (line 5): must be a positive
// integer, got -5", or "(-set train.batch_size=-5)"; and to the other keys
// the message names, when an override set them, so that a limit one key
// puts on another blames the override that broke it: "samplers[1].m (line
// 7): must be >= samplers[1].k (-set samplers[1].k=200) = 200, got 100".
func locateKeys(msg string, doc *yamlcfg.Doc) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		key, rest, ok := strings.Cut(strings.TrimLeft(l, " "), ": ")
		if !ok || strings.ContainsAny(key, " ,") {
			continue
		}
		rest = keyPath.ReplaceAllStringFunc(rest, func(k string) string {
			if loc := doc.Locate(k); strings.Contains(loc, "(-set ") {
				return loc
			}
			return k
		})
		lines[i] = indent + doc.Locate(key) + ": " + rest
	}
	return strings.Join(lines, "\n")
}

// keyPath matches the key paths a validation message names
// ("samplers[1].k", "data.text.sts_dir"): two or more lower-case names,
// each with an optional list index, joined by dots.
var keyPath = regexp.MustCompile(`\b[a-z_][a-z0-9_]*(?:\[[0-9]+\])?(?:\.[a-z_][a-z0-9_]*(?:\[[0-9]+\])?)+`)

// SamplerList returns the samplers of the experiment (Uniform when none is given).
func (c *Config) SamplerList() []sampler.Spec {
	switch {
	case len(c.Samplers) > 0:
		return c.Samplers
	case c.Sampler != nil:
		return []sampler.Spec{*c.Sampler}
	default:
		return []sampler.Spec{{Kind: sampler.KindUniform}}
	}
}

// problems collects the messages of a validation.
type problems []string

// add records err, if any.
func (p *problems) add(err error) {
	if err != nil {
		*p = append(*p, err.Error())
	}
}

func oneOf(key, v string, allowed ...string) error { return yamlcfg.OneOf(key, v, allowed...) }

func positive(key string, v int) error { return yamlcfg.Positive(key, v) }

// method is the config's method: Method, or the modality's default when
// it names none (LoadConfig and Run write the default into Method).
func (c *Config) method() string {
	if c.Method != "" {
		return c.Method
	}
	return defaultMethod[c.Modality]
}

// Validate checks every value and returns the first error, naming its key.
// It changes nothing: an empty method is checked as the modality's
// default.
func (c *Config) Validate() error {
	var errs problems
	add := errs.add
	add(oneOf("modality", c.Modality, keys(dataSpecs)...))
	if ds, ok := dataSpecs[c.Modality]; ok {
		if ds.Validate != nil {
			errs = append(errs, ds.Validate(c)...)
		}
		errs = append(errs, foreignKeys("data", c.Data, c.Modality+" data", ds.Keys...)...)
		if ms, err := methodFor(c); err != nil {
			add(err)
		} else {
			if ms.Validate != nil {
				errs = append(errs, ms.Validate(c)...)
			}
			if p := lossKindProblem(c, ms); p != "" {
				errs = append(errs, p)
			}
			errs = append(errs, foreignKeys("model", c.Model, "method "+c.method(), ms.ModelKeys...)...)
			errs = append(errs, foreignKeys("augment", c.Augment, "method "+c.method(), ms.AugmentKeys...)...)
			errs = append(errs, viewProjectionsProblems(c, ms)...)
		}
		if ps, err := protocolFor(c); err != nil {
			add(err)
		} else {
			if ps.Validate != nil {
				errs = append(errs, ps.Validate(c)...)
			}
			errs = append(errs, foreignKeys("eval", c.Eval, "eval.kind "+c.Eval.Kind, ps.EvalKeys...)...)
			if c.Eval.SelectEvery > 0 && !ps.DevSet {
				errs = append(errs, fmt.Sprintf("eval.select_every: eval.kind %s has no development set to select on", c.Eval.Kind))
			}
		}
	}
	errs = append(errs, c.validateTextOptions()...)
	oc := c.Optim
	oc.LR = 1 // train.lr is checked below
	for _, err := range oc.Validate("optim") {
		add(err)
	}
	if c.Eval.SelectEvery < 0 {
		errs = append(errs, fmt.Sprintf("eval.select_every: must be >= 0 (0: no model selection), got %d", c.Eval.SelectEvery))
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
		add(s.Validate(key))
		if (s.Kind == sampler.KindSpectral || s.Kind == sampler.KindOSGD) && s.Temperature == 0 && !(c.Loss.Temperature > 0) {
			errs = append(errs, fmt.Sprintf("%s.temperature: kind %s scores at loss.temperature when it has none of its own, and loss.kind %s has none: set one", key, s.Kind, c.Loss.Kind))
		}
	}
	if c.Train.Epochs < 0 {
		errs = append(errs, fmt.Sprintf("train.epochs: must be >= 0 (0: evaluate the untrained encoder), got %d", c.Train.Epochs))
	}
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
	if c.Sweep != nil {
		errs = append(errs, c.Sweep.problems(c)...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid config:\n  %s", strings.Join(errs, "\n  "))
	}
	return nil
}

// lossKindProblem says why loss.kind does not fit the method (its
// MethodSpec.LossKinds, by default the InfoNCE family), or returns "".
func lossKindProblem(c *Config, ms MethodSpec) string {
	kinds := ms.LossKinds
	if kinds == nil {
		kinds = loss.ContrastiveKinds
	}
	if slices.Contains(kinds, c.Loss.Kind) || c.Loss.Validate() != nil {
		return "" // fits, or loss.Validate reports the unknown kind
	}
	msg := fmt.Sprintf("loss.kind: %q does not apply to method %s; allowed: %s", c.Loss.Kind, c.method(), strings.Join(kinds, ", "))
	if slices.Contains(loss.ContrastiveKinds, c.Loss.Kind) && c.Loss.Kind != loss.KindInfoNCE {
		msg += fmt.Sprintf(" (%s debiases the negatives of an InfoNCE loss between two views' projections, which method %s does not compute)", c.Loss.Kind, c.method())
	}
	var users []string
	for _, name := range keys(methodSpecs) {
		if slices.Contains(methodSpecs[name].LossKinds, c.Loss.Kind) {
			users = append(users, name)
		}
	}
	if len(users) > 0 {
		msg += fmt.Sprintf(" (%s is the objective of method %s)", c.Loss.Kind, strings.Join(users, ", "))
	}
	return msg
}

// DataRoot resolves data.root: the config value, else data.DefaultRoot
// ($BATCHSAMPLER_DATA, ../shared/data if it exists, or the user data root
// where cmd/download writes by default).
func (d DataConfig) DataRoot() string {
	if d.Root != "" {
		return d.Root
	}
	return data.DefaultRoot()
}

// ResolvedPath is data.path joined to the data root unless absolute.
func (d DataConfig) ResolvedPath() string {
	if filepath.IsAbs(d.Path) {
		return d.Path
	}
	return filepath.Join(d.DataRoot(), d.Path)
}

// WriteConfig writes cfg as YAML with only the keys that apply: the data,
// model, augment and eval sections keep the keys their modality, method and
// protocol read (DataSpec.Keys, MethodSpec.ModelKeys, AugmentKeys,
// ProtocolSpec.EvalKeys). Reading it back gives the same config.
func WriteConfig(w io.Writer, cfg *Config) error {
	var doc yaml.Node
	if err := doc.Encode(cfg); err != nil {
		return err
	}
	used := map[string][]string{}
	if ds, ok := dataSpecs[cfg.Modality]; ok {
		used["data"] = ds.Keys
	}
	if ms, ok := methodSpecs[cfg.method()]; ok {
		used["model"], used["augment"] = ms.ModelKeys, ms.AugmentKeys
	}
	if ps, ok := protocolSpecs[cfg.Eval.Kind]; ok {
		used["eval"] = ps.EvalKeys
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		keep, ok := used[doc.Content[i].Value]
		sec := doc.Content[i+1]
		if !ok || keep == nil || sec.Kind != yaml.MappingNode {
			continue
		}
		var kept []*yaml.Node
		for j := 0; j+1 < len(sec.Content); j += 2 {
			if slices.Contains(keep, sec.Content[j].Value) {
				kept = append(kept, sec.Content[j], sec.Content[j+1])
			}
		}
		sec.Content = kept
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	return enc.Close()
}

// foreignKeys reports the keys of a config section (a struct with yaml
// tags) that are set although the part of the run reading the section does
// not use them: e.g. `model.arch` with a GIN encoder. what names that part
// ("the gin encoder"); used lists its keys.
func foreignKeys(section string, v any, what string, used ...string) []string {
	if used == nil {
		return nil // the spec does not declare its keys
	}
	var errs []string
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		name, flags, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		if flags == "inline" && rv.Field(i).Kind() == reflect.Struct {
			// A method's own keys (ModelConfig.ResNetModel...): one section.
			errs = append(errs, foreignKeys(section, rv.Field(i).Interface(), what, used...)...)
			continue
		}
		if name == "" || name == "-" || slices.Contains(used, name) || isEmpty(rv.Field(i)) {
			continue
		}
		errs = append(errs, fmt.Sprintf("%s.%s: not used by %s; its keys are %s", section, name, what, strings.Join(used, ", ")))
	}
	return errs
}

// isEmpty reports whether v is its zero value, an empty list or map, or a
// struct of empty fields (what a written config.yaml holds for a section
// that does not apply).
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !isEmpty(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return v.IsZero()
}

// viewProjectionsProblems refuses a sampler whose embedding is cached_views
// (set, or implied by published: true) when the method does not hand over
// its second view's projections (MethodSpec.ViewProjections).
func viewProjectionsProblems(c *Config, ms MethodSpec) []string {
	if ms.ViewProjections {
		return nil
	}
	var errs []string
	for i, s := range c.SamplerList() {
		if s.Effective().Embedding != sampler.EmbedCachedViews {
			continue
		}
		key := "sampler"
		if len(c.Samplers) > 0 {
			key = fmt.Sprintf("samplers[%d]", i)
		}
		how := "embedding: cached_views"
		if s.Embedding == "" {
			how = "published: true (which implies embedding: cached_views)"
		}
		errs = append(errs, fmt.Sprintf("%s.embedding: %s needs both views' projections, which method %s does not hand over; set embedding to projection, encoder or cached", key, how, c.method()))
	}
	return errs
}

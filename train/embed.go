package train

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"codeberg.org/sbinet/npyio/npy"

	"github.com/batchsampler-go/batchsampler/internal/tempfile"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// EmbedOptions choose what Embed embeds.
type EmbedOptions struct {
	// Sets are overrides of the run's data section ("data.root=DIR",
	// "data.name=PROTEINS", "data.path=tu/PROTEINS"): another dataset of
	// the same modality, read by the same readers. Other keys are refused:
	// the method and its networks are the run's.
	Sets []string
	// Split is the split to embed: "train" (the default; the instances the
	// sampler drew from), "test" (images), "sts-dev.1", ... (text).
	Split string
	// Repr is the representation: "encoder" (the default; what the
	// protocol evaluates), "projection" (the head's output) or another one
	// the method lists (the text method's "bag").
	Repr string
}

// Embedding is what Embed returns: N×D float32 rows, one per instance of
// the split, in the dataset's order.
type Embedding struct {
	sampler.Embeddings
	// Labels are the class labels of the split's instances (nil when the
	// dataset has none for the split).
	Labels []int
	// Run is the run's id, Step the training step of its checkpoint,
	// Dataset the name of the embedded dataset.
	Run     string
	Step    int
	Dataset string
}

// Embed loads the encoder a run trained and embeds a dataset with it:
// path is a run's directory DIR/runs/<id> (or DIR itself when it holds a
// single run). The config is DIR/config.yaml with opt.Sets applied to its
// data section; the dataset is loaded by the modality's readers, the method
// is rebuilt and its parameters are restored from DIR/runs/<id>/checkpoint.gob
// (the last one: the finished training, or the step an interrupted run
// reached). A dataset that does not fit the trained networks (graphs: node
// features of another dimension) is an error naming the parameter and both
// sizes.
func Embed(path string, opt EmbedOptions) (*Embedding, error) {
	if opt.Split == "" {
		opt.Split = "train"
	}
	if opt.Repr == "" {
		opt.Repr = "encoder"
	}
	for _, s := range opt.Sets {
		if key, _, _ := strings.Cut(s, "="); key != "data" && !strings.HasPrefix(key, "data.") {
			return nil, fmt.Errorf("-set %s: embed takes data.* overrides only (the dataset to embed); the method and its networks are the trained run's", s)
		}
	}
	dir, runID, err := resolveRunDir(path)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	trained, err := LoadConfig(cfgPath, nil)
	if err != nil {
		return nil, err
	}
	var spec *RunSpec
	var ids []string
	for _, sc := range trained.SamplerList() {
		for _, seed := range trained.Seeds {
			sp := RunSpec{Sampler: sc, Seed: seed}
			ids = append(ids, sp.ID())
			if sp.ID() == runID {
				spec = &sp
			}
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("%s: %s is not a run of %s (its runs: %s)", path, runID, cfgPath, strings.Join(ids, ", "))
	}
	cfg, err := LoadConfig(cfgPath, opt.Sets)
	if err != nil {
		return nil, err
	}
	if cfg.Modality == "text" {
		for _, s := range opt.Sets {
			key, _, _ := strings.Cut(s, "=")
			k, sub := strings.CutPrefix(key, "data.text.")
			if key == "data" || key == "data.text" || sub && k != "sts_dir" && k != "senteval_dir" && k != "vectors_cache" {
				return nil, fmt.Errorf("-set %s: the text encoder's vocabulary and word vectors come from its training corpus, which must stay; other sentences are embedded through data.text.sts_dir and data.text.senteval_dir", s)
			}
		}
	}
	ckpt := filepath.Join(dir, "runs", runID, "checkpoint.gob")
	c, err := loadCheckpoint(ckpt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no checkpoint %s: the run has not trained yet (-resume %s trains it)", runID, ckpt, dir)
	}
	if err != nil {
		return nil, err
	}
	if c.RunID != runID {
		return nil, fmt.Errorf("%s belongs to run %s, not %s", ckpt, c.RunID, runID)
	}
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ds.Splits(), opt.Split) {
		return nil, fmt.Errorf("split %q: dataset %s has the splits %s", opt.Split, ds.Name(), strings.Join(ds.Splits(), ", "))
	}
	ms, err := methodFor(&cfg)
	if err != nil {
		return nil, err
	}
	method, err := ms.New(&cfg, ds, subSeed(spec.Seed, "model"))
	if err != nil {
		return nil, fmt.Errorf("build method %s for dataset %s: %w", cfg.Method, ds.Name(), err)
	}
	reprs := []string{"encoder", "projection"}
	if rp, ok := method.(Representer); ok {
		reprs = rp.Representations()
	}
	if !slices.Contains(reprs, opt.Repr) {
		return nil, fmt.Errorf("representation %q: method %s embeds %s", opt.Repr, cfg.Method, strings.Join(reprs, ", "))
	}
	for _, p := range method.Params() {
		v, ok := c.Params[p.Name]
		if !ok {
			return nil, fmt.Errorf("%s has no parameter %s (the config changed?)", ckpt, p.Name)
		}
		dst := p.Value.Data().([]float32)
		if len(v) != len(dst) {
			return nil, misfitError(&cfg, ds.Name(), ckpt, p.Name, p.Value.Shape(), len(v))
		}
		copy(dst, v)
	}
	emb, err := (EvalEnv{Cfg: &cfg, Data: ds, Method: method}).Embed(opt.Split, opt.Repr)
	var nf *nonFiniteError
	if errors.As(err, &nf) {
		return nil, fmt.Errorf("%s: %s contain %v after step %d (the encoder diverged)", runID, nf.what(), nf.value, c.Step)
	}
	if err != nil {
		return nil, err
	}
	e := &Embedding{Embeddings: emb, Run: runID, Step: c.Step, Dataset: ds.Name(), Labels: splitLabels(ds, opt.Split)}
	if e.Labels != nil && len(e.Labels) != emb.N {
		return nil, fmt.Errorf("split %s of %s: %d labels for %d instances", opt.Split, ds.Name(), len(e.Labels), emb.N)
	}
	return e, nil
}

// resolveRunDir splits a run's directory DIR/runs/<id> into DIR and the
// run id; DIR itself names its run when it holds a single one.
func resolveRunDir(path string) (dir, id string, err error) {
	clean := filepath.Clean(path)
	if _, err := os.Stat(filepath.Join(clean, "config.yaml")); err == nil {
		ents, err := os.ReadDir(filepath.Join(clean, "runs"))
		if err != nil {
			return "", "", fmt.Errorf("%s holds no runs: %w", path, err)
		}
		var runs []string
		for _, e := range ents {
			if e.IsDir() {
				runs = append(runs, filepath.Join(clean, "runs", e.Name()))
			}
		}
		if len(runs) != 1 {
			return "", "", fmt.Errorf("%s holds %d runs; name one: %s", path, len(runs), strings.Join(runs, ", "))
		}
		return clean, filepath.Base(runs[0]), nil
	}
	parent := filepath.Dir(clean)
	dir = filepath.Dir(parent)
	if filepath.Base(parent) != "runs" {
		return "", "", fmt.Errorf("%s is not a run directory: expected DIR/runs/<id> beside DIR/config.yaml (or DIR itself when it holds one run)", path)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err != nil {
		return "", "", fmt.Errorf("%s is not a run directory: %w", path, err)
	}
	return dir, filepath.Base(clean), nil
}

// misfitError says that a dataset does not fit the trained networks.
func misfitError(cfg *Config, dataset, ckpt, param string, shape []int, trained int) error {
	want := 1
	for _, d := range shape {
		want *= d
	}
	dims := func(s []int) string {
		parts := make([]string, len(s))
		for i, d := range s {
			parts[i] = fmt.Sprint(d)
		}
		return strings.Join(parts, "×")
	}
	msg := fmt.Sprintf("dataset %s does not fit the encoder of %s: parameter %s holds %d values there, and this dataset needs %s = %d",
		dataset, ckpt, param, trained, dims(shape), want)
	if len(shape) == 2 && shape[1] > 0 && trained%shape[1] == 0 {
		// An input layer: the first dimension is the input's.
		msg += fmt.Sprintf(" (input dimension %d, trained on %d)", shape[0], trained/shape[1])
	}
	switch cfg.Modality {
	case "graph":
		msg += "; a graph's node features decide the input dimension: data.features, data.max_degree and the node labels or attributes the dataset has"
	case "text":
		msg += "; the vocabulary comes from data.text.corpus"
	}
	return errors.New(msg)
}

// splitLabels returns the class labels of a split (nil when there are
// none).
func splitLabels(ds Dataset, split string) []int {
	switch split {
	case "train":
		return ds.Labels()
	case "test":
		if tl, ok := ds.(TestLabeler); ok {
			return tl.TestLabels()
		}
	case "labeled":
		if ps, ok := ds.(ProbeSplitter); ok {
			_, labels := ps.ProbeSplit()
			return labels
		}
	}
	return nil
}

// LabelsPath is where WriteNPY writes the labels of an embedding written to
// path: out.npy → out_labels.npy.
func LabelsPath(path string) string {
	return strings.TrimSuffix(path, ".npy") + "_labels.npy"
}

// WriteNPY writes the embedding to path as an N×D float32 NumPy array and,
// when it has labels, the labels to LabelsPath(path) as N int64. It returns
// the paths written. The files are written atomically.
func (e *Embedding) WriteNPY(path string) ([]string, error) {
	if e.N == 0 {
		return nil, fmt.Errorf("%s: the split has no instances", path)
	}
	rows := make([][]float32, e.N)
	for i := range rows {
		rows[i] = e.Data[i*e.D : (i+1)*e.D]
	}
	if err := writeNPYAtomic(path, rows); err != nil {
		return nil, err
	}
	written := []string{path}
	if e.Labels != nil {
		ys := make([]int64, len(e.Labels))
		for i, y := range e.Labels {
			ys[i] = int64(y)
		}
		lp := LabelsPath(path)
		if err := writeNPYAtomic(lp, ys); err != nil {
			return nil, err
		}
		written = append(written, lp)
	}
	return written, nil
}

// writeNPYAtomic writes v as a .npy file through a temporary file renamed
// into place.
func writeNPYAtomic(path string, v any) error {
	f, err := tempfile.Create(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	w := bufio.NewWriterSize(f, 1<<20)
	err = npy.Write(w, v)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

package train

import (
	"fmt"
	"math/rand/v2"
	"slices"

	G "gorgonia.org/gorgonia"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// TextModel holds the model keys of method simcse (config key model;
// inlined in ModelConfig).
type TextModel struct {
	// Dropout is the text MLP's dropout probability (the SimCSE views).
	Dropout float64 `yaml:"dropout"`
	// TrainEmbeddings fine-tunes the text model's word-vector table.
	TrainEmbeddings bool `yaml:"train_embeddings"`
}

func init() {
	RegisterMethod("simcse", MethodSpec{Modalities: []string{"text"}, Validate: validateTextModel, New: newSimCSE,
		ModelKeys: []string{"kind", "hidden", "proj_dim", "dropout", "train_embeddings"}, AugmentKeys: []string{"mode"},
		ViewProjections: true})
}

func newSimCSE(cfg *Config, ds Dataset, seed uint64) (Method, error) {
	td, ok := ds.(*textDataset)
	if !ok {
		return nil, fmt.Errorf("simcse needs a text dataset, got %T", ds)
	}
	mc, o := cfg.Model, cfg.Text
	m, err := model.NewTextMLP(model.TextConfig{
		VocabSize: td.vecs.Vocab.Len(), EmbDim: td.vecs.Dim, Vectors: td.vecs.Data,
		Hidden: mc.Hidden, ProjDim: mc.ProjDim, Dropout: mc.Dropout, NoDropout: mc.Dropout == 0,
		TrainEmbeddings: mc.TrainEmbeddings,
		WordWeights:     td.weights, Remove: td.remove, WordDropout: o.WordDropout, InputDropout: o.InputDropout,
		Residual: o.Residual,
	}, seed)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	t := &simCSE{cfg: cfg, ds: td, m: m, params: slices.Clone(m.Params())}
	if o.TableOptimizer == "dense" || o.TableOptimizer == "sparse" {
		lr := o.TableLR
		if lr == 0 {
			lr = cfg.Train.LR
		}
		if t.tableOpt, err = model.NewRowAdam(lr, td.vecs.Vocab.Len(), td.vecs.Dim, o.TableOptimizer == "sparse", "embedding.weight"); err != nil {
			return nil, fmt.Errorf("text.table_optimizer: %w", err)
		}
		// The loop's optimiser must leave the table alone: hand it a
		// non-trainable view of the table, and the table optimiser's state as
		// buffers (so that checkpoints save it).
		t.params[0] = &model.Param{Name: t.params[0].Name, Value: t.params[0].Value}
		t.params = append(t.params, t.tableOpt.State()...)
	}
	return t, nil
}

// simCSE is SimCSE without a transformer: the two views of a batch
// are two training-mode passes of the same sentences through the embedding
// bag + MLP encoder with different dropout masks (and, with text options,
// different word deletions and bag masks); the loss is SimCSE's in-batch
// InfoNCE on the projections; evaluation is STS-B Spearman of the
// text.eval_repr representation.
//
// With text.table_optimizer dense or sparse the embedding table is stepped
// by the method's own model.RowAdam in AfterStep (the loop's optimizer
// steps the rest); Step alone then leaves the table's gradient pending.
// SimCSE's model selection on STS-B dev is the loop's select hook
// (eval.select_every) with the STS protocol's DevScore.
type simCSE struct {
	cfg *Config
	ds  *textDataset
	m   *model.TextMLP
	// params is what Params returns: the model's parameters, with the table
	// seen as non-trainable and the table optimiser's state appended when
	// tableOpt is set.
	params   []*model.Param
	tableOpt *model.RowAdam
	// pendingGrad and pendingRows are the table gradient of the last Step
	// and its nonzero rows, for AfterStep.
	pendingGrad []float32
	pendingRows []int32
	// arena lends the step graphs' op outputs (see newStepGraph).
	arena *ops.Arena
}

func (t *simCSE) Params() []*model.Param { return t.params }

func (t *simCSE) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	batch := make([][]int32, len(idx))
	for i, j := range idx {
		if j < 0 || j >= len(t.ds.tokens) {
			return StepResult{}, fmt.Errorf("instance %d out of range [0, %d)", j, len(t.ds.tokens))
		}
		batch[i] = t.ds.tokens[j]
	}
	eg, release, err := newStepGraph(&t.arena)
	if err != nil {
		return StepResult{}, err
	}
	defer release()
	bound := t.m.Bind(eg)
	// The two SimCSE views: the same sentences, two dropout masks.
	views, err := bound.EncodeViews(batch, 2, true, rng)
	if err != nil {
		return StepResult{}, fmt.Errorf("encode: %w", err)
	}
	var proj [2]*G.Node
	for i, emb := range views {
		if proj[i], err = bound.Project(emb); err != nil {
			return StepResult{}, fmt.Errorf("project view %d: %w", i+1, err)
		}
	}
	res, err := contrastiveStep(eg, t.cfg.Loss, proj, bound.Learnables(), bound.Grads)
	if err != nil || t.tableOpt == nil {
		return res, err
	}
	// The table is the first trainable parameter; its optimiser runs in
	// AfterStep.
	t.pendingGrad, t.pendingRows = res.Grads[0], t.m.TableRows()
	res.Grads = res.Grads[1:]
	return res, nil
}

// AfterStep steps the embedding table with its own optimizer (when
// text.table_optimizer is dense or sparse).
func (t *simCSE) AfterStep(step, total int) ([]map[string]any, error) {
	if t.tableOpt != nil && t.pendingGrad != nil {
		if err := t.tableOpt.Step(t.m.Params()[0].Value.Float32s(), t.pendingGrad, t.pendingRows); err != nil {
			return nil, fmt.Errorf("embedding table: %w", err)
		}
		t.pendingGrad, t.pendingRows = nil, nil
	}
	return nil, nil
}

// Representations are the sentence representations the method embeds:
// the encoder output, the projection, and the embedding bag (the MLP's
// input: the fine-tuned, weighted word vectors).
func (t *simCSE) Representations() []string { return []string{"encoder", "projection", "bag"} }

func (t *simCSE) Embed(split, which string) (sampler.Embeddings, error) {
	tokens, err := t.ds.split(split)
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed: %w", err)
	}
	var (
		e []float32
		d int
	)
	switch which {
	case "projection":
		d = t.m.ProjDim()
		e, err = t.m.EmbedProjected(tokens)
	case "encoder":
		d = t.m.EmbedDim()
		e, err = t.m.Embed(tokens)
	case "bag":
		d = t.m.Config().EmbDim
		e, err = t.m.EmbedBag(tokens)
	default:
		return sampler.Embeddings{}, fmt.Errorf("embed: unknown representation %q (encoder, projection, bag)", which)
	}
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d sentences: %w", len(tokens), err)
	}
	return sampler.Embeddings{N: len(tokens), D: d, Data: e}, nil
}

// validateTextModel checks the model keys of the text encoder.
func validateTextModel(c *Config) []string {
	var errs problems
	add := errs.add
	add(oneOf("model.kind", c.Model.Kind, "mlp"))
	add(positive("model.hidden", c.Model.Hidden))
	if c.Model.ProjDim < 0 {
		errs = append(errs, fmt.Sprintf("model.proj_dim: must be >= 0 (0 = hidden), got %d", c.Model.ProjDim))
	}
	if !(c.Model.Dropout >= 0 && c.Model.Dropout < 1) {
		errs = append(errs, fmt.Sprintf("model.dropout: must be in [0, 1), got %v", c.Model.Dropout))
	}
	return errs
}

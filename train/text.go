package train

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/sampler"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

func init() { Register("text", textBuilder{}) }

// textDataset is a sentence corpus with its word vectors and the STS-B
// dev and test pairs, tokenised once.
type textDataset struct {
	name      string
	sentences []string
	tokens    [][]int32 // per sentence, ids in vecs.Vocab (UnkID for unknown words)
	vecs      *wordvec.Vectors
	dev, test stsSet
	// VectorsPath is the cache file the vectors came from or went to ("" without a cache).
	vectorsPath string
	cached      bool
	// baselines are the untrained STS baselines (Spearman × 100): the mean
	// of the initial word vectors, TF-IDF cosine with the corpus's IDF (all
	// tokens, and only the vocabulary's), and, with a weighting or removed
	// directions, the bag of the initial vectors the encoder starts from.
	baselines map[string]float64
	// weights are the bag's word weights (nil: the mean) and remove the
	// common directions projected out of every bag (text.weighting,
	// text.remove_pc); the same for every run.
	weights []float32
	remove  []float32
}

// stsSet is an STS split with both sides tokenised.
type stsSet struct {
	s1, s2 [][]int32
	gold   []float64
}

func (d *textDataset) Name() string      { return d.name }
func (d *textDataset) NumInstances() int { return len(d.sentences) }
func (d *textDataset) Labels() []int     { return nil }
func (d *textDataset) NumClasses() int   { return 0 }

type textBuilder struct{}

// resolve joins p to the data root unless p is absolute.
func resolve(dc DataConfig, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dc.DataRoot(), p)
}

// vectorsKey hashes everything the word vectors depend on: the sentences
// and the vocabulary and PPMI-SVD options.
func vectorsKey(sentences []string, tc TextDataConfig, opt wordvec.Options) string {
	h := fnv.New64a()
	var b [8]byte
	for _, s := range sentences {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	fmt.Fprintf(h, "|min_count=%d|max_vocab=%d|%+v", tc.MinCount, tc.MaxVocab, opt)
	return fmt.Sprintf("%016x", h.Sum64())
}

func (textBuilder) Load(cfg *Config) (Dataset, error) {
	dc := cfg.Data
	tc := dc.Text
	if dc.Source != "corpus" {
		return nil, fmt.Errorf("data.source %q is not a text source (corpus)", dc.Source)
	}
	hint := func(err error) error {
		if dc.Root == "" {
			return fmt.Errorf("load text dataset (data root %s; set data.root or $BATCHSAMPLER_DATA to change it): %w", dc.DataRoot(), err)
		}
		return fmt.Errorf("load text dataset: %w", err)
	}
	var sentences []string
	for i, f := range tc.Corpus {
		s, err := data.ReadCorpus(resolve(dc, f), data.CorpusOptions{})
		if err != nil {
			return nil, hint(fmt.Errorf("data.text.corpus[%d]: %w", i, err))
		}
		sentences = append(sentences, s...)
		if tc.MaxSentences > 0 && len(sentences) >= tc.MaxSentences {
			sentences = sentences[:tc.MaxSentences]
			break
		}
	}
	if len(sentences) == 0 {
		return nil, fmt.Errorf("data.text.corpus: no sentences in %v", tc.Corpus)
	}
	opt := wordvec.DefaultOptions()
	opt.Window, opt.Dim = tc.Window, tc.Dim
	ds := &textDataset{name: "corpus", sentences: sentences}
	if dc.Name != "" {
		ds.name = dc.Name
	}
	if tc.VectorsCache != "" {
		ds.vectorsPath = filepath.Join(tc.VectorsCache, "wordvec-"+vectorsKey(sentences, tc, opt)+".bin")
		v, err := wordvec.Load(ds.vectorsPath)
		switch {
		case err == nil:
			ds.vecs, ds.cached = v, true
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, fmt.Errorf("data.text.vectors_cache: %w (delete the file to rebuild it)", err)
		}
	}
	if ds.vecs == nil {
		vocab, err := data.BuildVocab(sentences, data.Tokenizer{}, data.VocabOptions{MinCount: int64(tc.MinCount), MaxSize: tc.MaxVocab})
		if err != nil {
			return nil, fmt.Errorf("data.text: vocabulary: %w", err)
		}
		v, _, err := wordvec.Train(sentences, vocab, opt)
		if err != nil {
			return nil, fmt.Errorf("data.text: word vectors (vocabulary of %d words): %w", vocab.Len(), err)
		}
		ds.vecs = v
		if ds.vectorsPath != "" {
			if err := os.MkdirAll(tc.VectorsCache, 0o755); err != nil {
				return nil, fmt.Errorf("data.text.vectors_cache: %w", err)
			}
			if err := v.Save(ds.vectorsPath); err != nil {
				return nil, fmt.Errorf("data.text.vectors_cache: %w", err)
			}
		}
	}
	ds.tokens = make([][]int32, len(sentences))
	for i, s := range sentences {
		ds.tokens[i] = ds.vecs.Vocab.Encode(s)
	}
	bagModel, err := ds.bagWeighting(cfg.Text)
	if err != nil {
		return nil, err
	}
	for _, sp := range []struct {
		file string
		dst  *stsSet
	}{{"sts-dev.csv", &ds.dev}, {"sts-test.csv", &ds.test}} {
		pairs, err := data.ReadSTS(filepath.Join(resolve(dc, tc.STSDir), sp.file))
		if err != nil {
			return nil, hint(fmt.Errorf("data.text.sts_dir: %w", err))
		}
		avg, err := eval.BaselineAvgWordVec(pairs, ds.vecs)
		if err != nil {
			return nil, fmt.Errorf("baseline on %s: %w", sp.file, err)
		}
		tfidf, err := eval.BaselineTFIDF(pairs, sentences, ds.vecs.Vocab.Tokenizer())
		if err != nil {
			return nil, fmt.Errorf("baseline on %s: %w", sp.file, err)
		}
		split := strings.TrimSuffix(strings.TrimPrefix(sp.file, "sts-"), ".csv")
		if ds.baselines == nil {
			ds.baselines = map[string]float64{}
		}
		ds.baselines["avg_wordvec_"+split] = avg
		ds.baselines["tfidf_"+split] = tfidf
		for _, p := range pairs {
			sp.dst.s1 = append(sp.dst.s1, ds.vecs.Vocab.Encode(p.S1))
			sp.dst.s2 = append(sp.dst.s2, ds.vecs.Vocab.Encode(p.S2))
			sp.dst.gold = append(sp.dst.gold, p.Score)
		}
		// TF-IDF restricted to the vocabulary: the information the encoder
		// sees (TF-IDF above also matches out-of-vocabulary words: names,
		// numbers).
		if ds.baselines["tfidf_vocab_"+split], err = tfidfVocab(pairs, sentences, ds.vecs.Vocab); err != nil {
			return nil, fmt.Errorf("baseline on %s: %w", sp.file, err)
		}
		if bagModel != nil {
			if ds.baselines["bag_"+split], err = stsOf(bagModel.EmbedBag, *sp.dst, ds.vecs.Dim); err != nil {
				return nil, fmt.Errorf("baseline on %s: %w", sp.file, err)
			}
		}
	}
	return ds, nil
}

// bagWeighting computes the word weights and the common directions of
// text.weighting and text.remove_pc. With either set it returns a model
// whose EmbedBag is the untrained bag (for the baseline).
func (ds *textDataset) bagWeighting(o TextOptions) (*model.TextMLP, error) {
	var err error
	switch o.Weighting {
	case "sif":
		a := o.SIFA
		if a == 0 {
			a = wordvec.DefaultSIFA
		}
		ds.weights, err = wordvec.SIFWeights(ds.vecs.Vocab, a)
	case "idf":
		ds.weights, err = wordvec.IDFWeights(ds.tokens, ds.vecs.Vocab.Len())
	}
	if err != nil {
		return nil, fmt.Errorf("text.weighting: %w", err)
	}
	if ds.weights == nil && o.RemovePC == 0 {
		return nil, nil
	}
	cfg := model.TextConfig{VocabSize: ds.vecs.Vocab.Len(), EmbDim: ds.vecs.Dim, Vectors: ds.vecs.Data, WordWeights: ds.weights, Hidden: 1, NoDropout: true}
	m, err := model.NewTextMLP(cfg, 0)
	if err != nil {
		return nil, fmt.Errorf("text.weighting: %w", err)
	}
	if o.RemovePC == 0 {
		return m, nil
	}
	bags, err := m.EmbedBag(ds.tokens)
	if err != nil {
		return nil, fmt.Errorf("text.remove_pc: %w", err)
	}
	if ds.remove, err = wordvec.CommonDirections(bags, len(ds.tokens), ds.vecs.Dim, o.RemovePC); err != nil {
		return nil, fmt.Errorf("text.remove_pc: %w", err)
	}
	cfg.Remove = ds.remove
	if m, err = model.NewTextMLP(cfg, 0); err != nil {
		return nil, fmt.Errorf("text.remove_pc: %w", err)
	}
	return m, nil
}

// stsOf scores an STS split with the representation embed (d values per
// sentence).
func stsOf(embed func([][]int32) ([]float32, error), s stsSet, d int) (float64, error) {
	e1, err := embed(s.s1)
	if err != nil {
		return 0, err
	}
	e2, err := embed(s.s2)
	if err != nil {
		return 0, err
	}
	return eval.STSScore(e1, e2, len(s.gold), d, s.gold)
}

// tfidfVocab is eval.BaselineTFIDF on the sentences rewritten to their
// in-vocabulary tokens.
func tfidfVocab(pairs []data.STSPair, corpus []string, vocab *data.Vocab) (float64, error) {
	tok := vocab.Tokenizer()
	keep := func(s string) string {
		var kept []string
		for _, w := range tok.Tokenize(s) {
			if vocab.Has(w) && w != data.UnkToken {
				kept = append(kept, w)
			}
		}
		return strings.Join(kept, " ")
	}
	vp := make([]data.STSPair, len(pairs))
	for i, p := range pairs {
		vp[i] = data.STSPair{S1: keep(p.S1), S2: keep(p.S2), Score: p.Score}
	}
	vc := make([]string, len(corpus))
	for i, s := range corpus {
		vc[i] = keep(s)
	}
	return eval.BaselineTFIDF(vp, vc, tok)
}

func (textBuilder) New(cfg *Config, ds Dataset, seed uint64) (Modality, error) {
	td, ok := ds.(*textDataset)
	if !ok {
		return nil, fmt.Errorf("text modality needs a text dataset, got %T", ds)
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
	t := &textModality{cfg: cfg, ds: td, m: m, params: slices.Clone(m.Params())}
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
	if o.DevEvalEvery > 0 {
		// The dev-selected parameters are buffers too, so that a resumed run
		// selects among all the dev evaluations of the run.
		for _, p := range m.Params() {
			t.best = append(t.best, &model.Param{Name: "best." + p.Name,
				Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(p.Value.Shape()...))})
		}
		t.bestMeta = &model.Param{Name: "best.step", Value: tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{-1}))}
		t.params = append(t.params, t.best...)
		t.params = append(t.params, t.bestMeta)
	}
	if t.untrained, err = t.byRepr(); err != nil {
		return nil, err
	}
	return t, nil
}

// textModality is SimCSE without a transformer: the two views of a batch
// are two training-mode passes of the same sentences through the embedding
// bag + MLP encoder with different dropout masks (and, with text options,
// different word deletions and bag masks); the loss is SimCSE's in-batch
// InfoNCE on the projections; evaluation is STS-B Spearman of the
// text.eval_repr representation.
//
// With text.table_optimizer dense or sparse the embedding table is stepped
// by the modality's own model.RowAdam in AfterStep (the loop's Adam steps
// the rest); Step alone then leaves the table's gradient pending. With
// text.dev_eval_every, AfterStep scores STS-B dev and keeps a copy of the
// best parameters, which Evaluate tests (without changing the model).
type textModality struct {
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

	// untrained holds the initial model's STS scores by representation
	// (byRepr).
	untrained map[string]any
	// With text.dev_eval_every: best holds a copy of the model's parameter
	// values at the step with the highest dev score so far, bestMeta that
	// step (-1: none yet). Both are non-trainable Params, so checkpoints
	// keep them. bestDev caches the dev score of best (valid when
	// bestDevOK; after a resume it is recomputed from best).
	best      []*model.Param
	bestMeta  *model.Param
	bestDev   float64
	bestDevOK bool
}

// bestStep returns the step of the dev-selected parameters, or -1.
func (t *textModality) bestStep() int {
	if t.bestMeta == nil {
		return -1
	}
	return int(t.bestMeta.Value.Float32s()[0])
}

// devOfBest returns the dev score of the dev-selected parameters.
func (t *textModality) devOfBest() (float64, error) {
	if !t.bestDevOK {
		t.swap()
		dev, err := t.stsScore(t.ds.dev)
		t.swap()
		if err != nil {
			return 0, fmt.Errorf("sts dev of the best parameters (step %d): %w", t.bestStep(), err)
		}
		t.bestDev, t.bestDevOK = dev, true
	}
	return t.bestDev, nil
}

func (t *textModality) NumInstances() int      { return len(t.ds.sentences) }
func (t *textModality) Labels() []int          { return nil }
func (t *textModality) Params() []*model.Param { return t.params }

func (t *textModality) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	batch := make([][]int32, len(idx))
	for i, j := range idx {
		if j < 0 || j >= len(t.ds.tokens) {
			return StepResult{}, fmt.Errorf("instance %d out of range [0, %d)", j, len(t.ds.tokens))
		}
		batch[i] = t.ds.tokens[j]
	}
	eg := G.NewGraph()
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

// AfterStep steps the embedding table with its own optimiser (when
// text.table_optimizer is dense or sparse) and, every text.dev_eval_every
// steps and at the last step, scores STS-B dev and keeps the parameters if
// they are the best so far; it returns a "dev_eval" record for
// metrics.jsonl.
func (t *textModality) AfterStep(step, total int) ([]map[string]any, error) {
	if t.tableOpt != nil && t.pendingGrad != nil {
		if err := t.tableOpt.Step(t.m.Params()[0].Value.Float32s(), t.pendingGrad, t.pendingRows); err != nil {
			return nil, fmt.Errorf("embedding table: %w", err)
		}
		t.pendingGrad, t.pendingRows = nil, nil
	}
	every := t.cfg.Text.DevEvalEvery
	if every <= 0 || (step%every != 0 && step != total) {
		return nil, nil
	}
	dev, err := t.stsScore(t.ds.dev)
	if err != nil {
		return nil, fmt.Errorf("sts dev at step %d: %w", step, err)
	}
	better := t.bestStep() < 0
	if !better {
		bd, err := t.devOfBest()
		if err != nil {
			return nil, err
		}
		better = dev > bd
	}
	if better {
		t.bestDev, t.bestDevOK = dev, true
		t.bestMeta.Value.Float32s()[0] = float32(step)
		for i, p := range t.m.Params() {
			copy(t.best[i].Value.Float32s(), p.Value.Float32s())
		}
	}
	return []map[string]any{{"event": "dev_eval", "step": step, "dev": dev, "best_dev": t.bestDev, "best_step": t.bestStep()}}, nil
}
func (t *textModality) Embed(which string) (sampler.Embeddings, error) {
	var (
		e   []float32
		err error
		d   int
	)
	switch which {
	case "projection":
		d = t.m.ProjDim()
		e, err = t.m.EmbedProjected(t.ds.tokens)
	case "encoder":
		d = t.m.EmbedDim()
		e, err = t.m.Embed(t.ds.tokens)
	default:
		return sampler.Embeddings{}, fmt.Errorf("embed: unknown representation %q (encoder, projection)", which)
	}
	if err != nil {
		return sampler.Embeddings{}, fmt.Errorf("embed %d sentences: %w", len(t.ds.tokens), err)
	}
	return sampler.Embeddings{N: len(t.ds.tokens), D: d, Data: e}, nil
}

// stsScore embeds both sides of an STS split with the text.eval_repr
// representation and returns Spearman × 100.
func (t *textModality) stsScore(s stsSet) (float64, error) {
	return t.stsScoreOf(t.cfg.Text.EvalRepr, s)
}

// evalReprs are the representations Evaluate scores side by side.
var evalReprs = []string{"encoder", "projection", "bag"}

// byRepr scores dev and test with every representation of evalReprs:
// {"encoder": {"dev": …, "test": …}, …}.
func (t *textModality) byRepr() (map[string]any, error) {
	out := map[string]any{}
	for _, r := range evalReprs {
		dev, err := t.stsScoreOf(r, t.ds.dev)
		if err != nil {
			return nil, fmt.Errorf("sts dev (%s): %w", r, err)
		}
		test, err := t.stsScoreOf(r, t.ds.test)
		if err != nil {
			return nil, fmt.Errorf("sts test (%s): %w", r, err)
		}
		out[r] = map[string]float64{"dev": dev, "test": test}
	}
	return out, nil
}

// stsScoreOf is stsScore with the representation repr.
func (t *textModality) stsScoreOf(repr string, s stsSet) (float64, error) {
	switch repr {
	case "projection":
		return stsOf(t.m.EmbedProjected, s, t.m.ProjDim())
	case "bag":
		return stsOf(t.m.EmbedBag, s, t.m.Config().EmbDim)
	default:
		return stsOf(t.m.Embed, s, t.m.EmbedDim())
	}
}

// swap exchanges the model's parameter values with t.best.
func (t *textModality) swap() {
	for i, p := range t.m.Params() {
		v := p.Value.Float32s()
		b := t.best[i].Value.Float32s()
		for k, x := range b {
			v[k], b[k] = x, v[k]
		}
	}
}

// Evaluate ignores the training embeddings: it embeds the STS-B dev and test
// pairs with the text.eval_repr representation in evaluation mode and
// returns the test Spearman × 100 (SentEval's protocol) of the final
// parameters, or with text.dev_eval_every of the parameters with the best
// dev score (the model is left as it was). Detail holds dev and test of the
// reported parameters, dev_final and test_final of the final ones,
// best_step, dev_untrained and test_untrained of the initial model, the
// scores of every representation (final_by_repr, best_by_repr,
// untrained_by_repr: {"encoder": {"dev", "test"}, "projection": …,
// "bag": …}), and
// the untrained baselines: baseline_avg_wordvec_{dev,test} (mean of the
// initial word vectors), baseline_tfidf_{dev,test} (TF-IDF cosine, IDF from
// the training corpus), baseline_tfidf_vocab_{dev,test} (the same on
// in-vocabulary words only) and, with a weighting or removed directions,
// baseline_bag_{dev,test} (the weighted bag of the initial vectors).
func (t *textModality) Evaluate(_ sampler.Embeddings, _ uint64) (Score, error) {
	devF, err := t.stsScore(t.ds.dev)
	if err != nil {
		return Score{}, fmt.Errorf("sts dev: %w", err)
	}
	testF, err := t.stsScore(t.ds.test)
	if err != nil {
		return Score{}, fmt.Errorf("sts test: %w", err)
	}
	dev, test := devF, testF
	final, err := t.byRepr()
	if err != nil {
		return Score{}, err
	}
	repr := cmp.Or(t.cfg.Text.EvalRepr, "encoder")
	u := t.untrained[repr].(map[string]float64)
	detail := map[string]any{"eval_repr": repr, "dev_final": devF, "test_final": testF, "dev_untrained": u["dev"], "test_untrained": u["test"],
		"final_by_repr": final, "untrained_by_repr": t.untrained}
	if t.bestStep() >= 0 {
		t.swap()
		dev, err = t.stsScore(t.ds.dev)
		if err == nil {
			test, err = t.stsScore(t.ds.test)
		}
		var best map[string]any
		if err == nil {
			best, err = t.byRepr()
		}
		t.swap()
		if err != nil {
			return Score{}, fmt.Errorf("sts with the best dev parameters (step %d): %w", t.bestStep(), err)
		}
		detail["best_step"], detail["best_by_repr"] = t.bestStep(), best
	}
	detail["dev"], detail["test"] = dev, test
	for k, v := range t.ds.baselines {
		detail["baseline_"+k] = v
	}
	return Score{Metric: "sts_test_spearman", Value: test, Detail: detail}, nil
}

package train

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	G "gorgonia.org/gorgonia"

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
	// of the initial word vectors and TF-IDF cosine with the corpus's IDF.
	baselines map[string]float64
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
	}
	return ds, nil
}

func (textBuilder) New(cfg *Config, ds Dataset, seed uint64) (Modality, error) {
	td, ok := ds.(*textDataset)
	if !ok {
		return nil, fmt.Errorf("text modality needs a text dataset, got %T", ds)
	}
	mc := cfg.Model
	m, err := model.NewTextMLP(model.TextConfig{
		VocabSize: td.vecs.Vocab.Len(), EmbDim: td.vecs.Dim, Vectors: td.vecs.Data,
		Hidden: mc.Hidden, ProjDim: mc.ProjDim, Dropout: mc.Dropout, NoDropout: mc.Dropout == 0,
		TrainEmbeddings: mc.TrainEmbeddings,
	}, seed)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return &textModality{cfg: cfg, ds: td, m: m}, nil
}

// textModality is SimCSE without a transformer: the two views of a batch
// are two training-mode passes of the same sentences through the embedding
// bag + MLP encoder with different dropout masks; the loss is SimCSE's
// in-batch InfoNCE on the projections; evaluation is STS-B Spearman of the
// encoder's sentence embeddings.
type textModality struct {
	cfg *Config
	ds  *textDataset
	m   *model.TextMLP
}

func (t *textModality) NumInstances() int      { return len(t.ds.sentences) }
func (t *textModality) Labels() []int          { return nil }
func (t *textModality) Params() []*model.Param { return t.m.Params() }

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
	return contrastiveStep(eg, t.cfg.Loss, proj, bound.Learnables(), bound.Grads)
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

// stsScore embeds both sides of an STS split and returns Spearman × 100.
func (t *textModality) stsScore(s stsSet) (float64, error) {
	e1, err := t.m.Embed(s.s1)
	if err != nil {
		return 0, err
	}
	e2, err := t.m.Embed(s.s2)
	if err != nil {
		return 0, err
	}
	return eval.STSScore(e1, e2, len(s.gold), t.m.EmbedDim(), s.gold)
}

// Evaluate ignores the training embeddings: it embeds the STS-B dev and test
// pairs with the encoder in evaluation mode and returns the test Spearman
// × 100 (SentEval's protocol), with dev and test in Detail beside the
// untrained baselines (baseline_avg_wordvec_{dev,test}: mean of the initial
// word vectors; baseline_tfidf_{dev,test}: TF-IDF cosine, IDF from the
// training corpus).
func (t *textModality) Evaluate(_ sampler.Embeddings, _ uint64) (Score, error) {
	dev, err := t.stsScore(t.ds.dev)
	if err != nil {
		return Score{}, fmt.Errorf("sts dev: %w", err)
	}
	test, err := t.stsScore(t.ds.test)
	if err != nil {
		return Score{}, fmt.Errorf("sts test: %w", err)
	}
	detail := map[string]any{"dev": dev, "test": test}
	for k, v := range t.ds.baselines {
		detail["baseline_"+k] = v
	}
	return Score{Metric: "sts_test_spearman", Value: test, Detail: detail}, nil
}

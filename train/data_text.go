package train

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

func init() {
	RegisterData("text", DataSpec{Validate: validateTextData, Load: loadText, Defaults: defaultTextConfig,
		Keys: []string{"source", "name", "root", "text"}}, "simcse")
}

// textDataset is a sentence corpus with its word vectors, the STS-B dev
// and test pairs and the other STS tasks found under data.text.senteval_dir,
// tokenised once.
type textDataset struct {
	name      string
	sentences []string
	tokens    [][]int32 // per sentence, ids in vecs.Vocab (UnkID for unknown words)
	vecs      *wordvec.Vectors
	dev, test stsSet
	// tasks are the SentEval STS tasks other than STS-B that are present
	// (STS12-16 "all", SICK-R test), in stsTaskNames order; absent lists the
	// names of those that are not.
	tasks  []stsTask
	absent []string
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

// stsTask is one SentEval STS task read from data.text.senteval_dir.
type stsTask struct {
	name  string // "STS12", …, "SICK-R"
	split string // the split prefix: "sts12" (sides "sts12.1", "sts12.2")
	path  string // the folder or file it was read from
	set   stsSet
}

// stsBName is STS Benchmark's name among the STS tasks.
const stsBName = "STS-B"

// stsTaskNames are the seven STS tasks of SimCSE's evaluation
// (evaluation.py, --task_set sts), in its order.
var stsTaskNames = []string{"STS12", "STS13", "STS14", "STS15", "STS16", stsBName, "SICK-R"}

// task returns the task named name, nil when it is absent.
func (d *textDataset) task(name string) *stsTask {
	for i := range d.tasks {
		if d.tasks[i].name == name {
			return &d.tasks[i]
		}
	}
	return nil
}

func (d *textDataset) Name() string      { return d.name }
func (d *textDataset) NumInstances() int { return len(d.sentences) }
func (d *textDataset) Labels() []int     { return nil }
func (d *textDataset) NumClasses() int   { return 0 }

// Splits are the corpus ("train"), the two sides of the STS-B dev and
// test pairs ("sts-dev.1" holds the first sentence of every dev pair) and
// those of every SentEval task present ("sts12.1", …, "sick-r.2"; an STS
// year's subsets concatenated in SentEval's order, unscored pairs left out).
func (d *textDataset) Splits() []string {
	s := []string{"train", "sts-dev.1", "sts-dev.2", "sts-test.1", "sts-test.2"}
	for _, t := range d.tasks {
		s = append(s, t.split+".1", t.split+".2")
	}
	return s
}

// split returns the token lists of a split.
func (d *textDataset) split(name string) ([][]int32, error) {
	switch name {
	case "train":
		return d.tokens, nil
	case "sts-dev.1":
		return d.dev.s1, nil
	case "sts-dev.2":
		return d.dev.s2, nil
	case "sts-test.1":
		return d.test.s1, nil
	case "sts-test.2":
		return d.test.s2, nil
	}
	for _, t := range d.tasks {
		switch name {
		case t.split + ".1":
			return t.set.s1, nil
		case t.split + ".2":
			return t.set.s2, nil
		}
	}
	return nil, fmt.Errorf("text data has no split %q (%s)", name, strings.Join(d.Splits(), ", "))
}

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

func loadText(cfg *Config) (Dataset, error) {
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
		*sp.dst = ds.encodePairs(pairs)
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
	if err := ds.loadSentEval(dc); err != nil {
		return nil, hint(err)
	}
	return ds, nil
}

// encodePairs tokenises the pairs into an stsSet.
func (ds *textDataset) encodePairs(pairs []data.STSPair) stsSet {
	var s stsSet
	for _, p := range pairs {
		s.s1 = append(s.s1, ds.vecs.Vocab.Encode(p.S1))
		s.s2 = append(s.s2, ds.vecs.Vocab.Encode(p.S2))
		s.gold = append(s.gold, p.Score)
	}
	return s
}

// loadSentEval reads the SentEval STS tasks under data.text.senteval_dir:
// each STS year whose folder exists (all its subsets, concatenated) and
// SICK-R when SICK/SICK_test_annotated.txt exists; the others are recorded
// as absent.
func (ds *textDataset) loadSentEval(dc DataConfig) error {
	root := dc.Text.SentEvalDir
	if root != "" {
		root = resolve(dc, root)
	}
	exists := func(p string) (bool, error) {
		if root == "" {
			return false, nil
		}
		_, err := os.Stat(p)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		}
		return false, fmt.Errorf("data.text.senteval_dir: %w", err)
	}
	for _, y := range data.STSYears {
		dir := y.Path(root)
		ok, err := exists(dir)
		if err != nil {
			return err
		}
		if !ok {
			ds.absent = append(ds.absent, y.Name)
			continue
		}
		subs, err := data.ReadSTSYear(dir, y)
		if err != nil {
			return fmt.Errorf("data.text.senteval_dir: %w (a year's folder must hold every subset SentEval lists: %s)", err, strings.Join(y.Subsets, ", "))
		}
		ds.tasks = append(ds.tasks, stsTask{name: y.Name, split: strings.ToLower(y.Name), path: dir, set: ds.encodePairs(data.ConcatSTSSubsets(subs))})
	}
	sick := filepath.Join(root, filepath.FromSlash(data.SICKTestPath))
	ok, err := exists(sick)
	if err != nil {
		return err
	}
	if !ok {
		ds.absent = append(ds.absent, "SICK-R")
		return nil
	}
	sp, err := data.ReadSICK(sick)
	if err != nil {
		return fmt.Errorf("data.text.senteval_dir: SICK-R: %w", err)
	}
	pairs := make([]data.STSPair, len(sp))
	for i, p := range sp {
		pairs[i] = p.STS()
	}
	ds.tasks = append(ds.tasks, stsTask{name: "SICK-R", split: "sick-r", path: sick, set: ds.encodePairs(pairs)})
	return nil
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

// validateTextData checks the data keys the text modality reads.
func validateTextData(c *Config) []string {
	var errs problems
	add := errs.add
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
	return errs
}

// defaultTextConfig is the text modality's defaults: SimCSE's setting (the
// two shared corpora, STS-B, PPMI-SVD vectors of dimension 300, an MLP of
// width 512 with dropout 0.1, InfoNCE τ=0.05, B=64, Adam lr 1e-3, one
// epoch).
func defaultTextConfig() Config {
	c := DefaultConfig()
	c.Modality = "text"
	c.Data = DataConfig{Source: "corpus", Text: TextDataConfig{
		Corpus: []string{"text/gutenberg_sentences.txt", "text/wiki_sentences.txt"}, STSDir: "sts", SentEvalDir: "senteval",
		MinCount: 5, MaxVocab: 20000, Window: 5, Dim: 300, VectorsCache: filepath.Join("runs", "cache"),
	}}
	c.Model = ModelConfig{Kind: "mlp", Hidden: 512, TextModel: TextModel{Dropout: 0.1, TrainEmbeddings: true}}
	c.Augment = AugmentConfig{Mode: "random_choice"}
	c.Loss = loss.Default("text")
	c.Train = TrainConfig{Epochs: 1, BatchSize: 64, LR: 1e-3, LogEvery: 10, Checkpoint: true}
	c.Eval = EvalConfig{Kind: "sts"}
	return c
}

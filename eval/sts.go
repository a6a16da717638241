package eval

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

// CosineSimilarities returns the cosine similarity of row i of a and row i
// of b, two n×d row-major matrices, for every i (in float64). A pair with a
// zero row has similarity 0 (a sentence without known words is unrelated to
// everything).
func CosineSimilarities(a, b []float32, n, d int) ([]float64, error) {
	if n < 0 || d < 1 || len(a) != n*d || len(b) != n*d {
		return nil, fmt.Errorf("eval: cosine similarities: %d and %d values for %d rows × %d: expected n×d each with d >= 1", len(a), len(b), n, d)
	}
	out := make([]float64, n)
	for i := range out {
		x, y := a[i*d:(i+1)*d], b[i*d:(i+1)*d]
		var dot, nx, ny float64
		for j := range x {
			xf, yf := float64(x[j]), float64(y[j])
			dot += xf * yf
			nx += xf * xf
			ny += yf * yf
		}
		if nx > 0 && ny > 0 {
			out[i] = dot / math.Sqrt(nx*ny)
		}
	}
	return out, nil
}

// STSScore is the STS evaluation of SentEval's unsupervised STS tasks as
// SimCSE reports it: 100 × the Spearman correlation between the cosine
// similarities of the sentence embeddings emb1[i] and emb2[i] (n×d
// row-major each) and the gold scores. Errors come from CosineSimilarities
// and Spearman (a constant similarity gives NaN and ErrConstantInput).
func STSScore(emb1, emb2 []float32, n, d int, gold []float64) (float64, error) {
	if len(gold) != n {
		return math.NaN(), fmt.Errorf("eval: STS score: %d gold scores for %d pairs", len(gold), n)
	}
	sims, err := CosineSimilarities(emb1, emb2, n, d)
	if err != nil {
		return math.NaN(), err
	}
	rho, err := Spearman(sims, gold)
	return 100 * rho, err
}

// goldScores returns the scores of pairs.
func goldScores(pairs []data.STSPair) []float64 {
	g := make([]float64, len(pairs))
	for i, p := range pairs {
		g[i] = p.Score
	}
	return g
}

// BaselineAvgWordVec is the untrained bag-of-words baseline: each sentence
// is the mean of the word vectors of its in-vocabulary tokens (tokenized with
// the vectors' vocabulary; unknown words skipped, a sentence with none is the
// zero vector), scored with STSScore.
func BaselineAvgWordVec(pairs []data.STSPair, wv *wordvec.Vectors) (float64, error) {
	n := len(pairs)
	s1, s2 := make([]string, n), make([]string, n)
	for i, p := range pairs {
		s1[i], s2[i] = p.S1, p.S2
	}
	return STSScore(wv.EmbedAll(s1), wv.EmbedAll(s2), n, wv.Dim, goldScores(pairs))
}

// TFIDF holds inverse document frequencies learnt from a corpus whose
// documents are sentences, with scikit-learn's TfidfVectorizer defaults:
// idf(w) = ln((1 + N) / (1 + df(w))) + 1 for N documents, df(w) of which
// contain w; a word absent from the corpus gets ln(1 + N) + 1. A sentence's
// vector is raw term count × idf over its tokens.
type TFIDF struct {
	tok    data.Tokenizer
	docs   int
	df     map[string]int
	unseen float64
}

// NewTFIDF counts document frequencies over corpus with tok.
func NewTFIDF(corpus []string, tok data.Tokenizer) *TFIDF {
	t := &TFIDF{tok: tok, docs: len(corpus), df: make(map[string]int)}
	seen := make(map[string]struct{})
	var buf []string
	for _, s := range corpus {
		buf = tok.AppendTokens(buf[:0], s)
		clear(seen)
		for _, w := range buf {
			if _, ok := seen[w]; !ok {
				seen[w] = struct{}{}
				t.df[w]++
			}
		}
	}
	t.unseen = math.Log(float64(1+t.docs)) + 1
	return t
}

// IDF returns the inverse document frequency of word.
func (t *TFIDF) IDF(word string) float64 {
	df, ok := t.df[word]
	if !ok {
		return t.unseen
	}
	return math.Log(float64(1+t.docs)/float64(1+df)) + 1
}

// TermWeight is one entry of a sparse TF-IDF vector.
type TermWeight struct {
	Term   string
	Weight float64
}

// Vector returns the sparse TF-IDF vector of sentence, sorted by term.
func (t *TFIDF) Vector(sentence string) []TermWeight {
	toks := t.tok.Tokenize(sentence)
	slices.Sort(toks)
	var v []TermWeight
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j] == toks[i] {
			j++
		}
		v = append(v, TermWeight{toks[i], float64(j-i) * t.IDF(toks[i])})
		i = j
	}
	return v
}

// Cosine returns the cosine similarity of the TF-IDF vectors of a and b, 0
// when either has no tokens. Sums run in term order, so the result is
// deterministic to the last bit.
func (t *TFIDF) Cosine(a, b string) float64 {
	va, vb := t.Vector(a), t.Vector(b)
	var dot, na, nb float64
	for _, x := range va {
		na += x.Weight * x.Weight
	}
	for _, y := range vb {
		nb += y.Weight * y.Weight
	}
	for i, j := 0, 0; i < len(va) && j < len(vb); {
		switch c := strings.Compare(va[i].Term, vb[j].Term); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			dot += va[i].Weight * vb[j].Weight
			i++
			j++
		}
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// BaselineTFIDF is the TF-IDF cosine baseline: 100 × the Spearman
// correlation between the TF-IDF cosine of each pair (IDF from idfCorpus,
// tokens from tok) and the gold scores.
func BaselineTFIDF(pairs []data.STSPair, idfCorpus []string, tok data.Tokenizer) (float64, error) {
	t := NewTFIDF(idfCorpus, tok)
	sims := make([]float64, len(pairs))
	for i, p := range pairs {
		sims[i] = t.Cosine(p.S1, p.S2)
	}
	rho, err := Spearman(sims, goldScores(pairs))
	return 100 * rho, err
}

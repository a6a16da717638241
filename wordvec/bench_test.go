package wordvec

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// sharedCorpus reads the shared wiki and Gutenberg sentence corpora.
func sharedCorpus(b *testing.B, names ...string) []string {
	b.Helper()
	var all []string
	for _, name := range names {
		s, err := data.ReadCorpus(testenv.Path(b, "text", name), data.CorpusOptions{})
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, s...)
	}
	return all
}

// BenchmarkSVDMethods compares the dense and the randomized SVD on the PPMI
// matrix of the wiki corpus restricted to its most frequent words, and
// reports the randomized method's largest relative error on the top
// singular values. Run with
//
//	go test ./wordvec -run '^$' -bench SVDMethods -benchtime 1x
func BenchmarkSVDMethods(b *testing.B) {
	sents := sharedCorpus(b, "wiki_sentences.txt")
	for _, size := range []int{500, 1000, 1500} {
		vocab, err := data.BuildVocab(sents, data.Tokenizer{}, data.VocabOptions{MaxSize: size})
		if err != nil {
			b.Fatal(err)
		}
		ids := make([][]int32, len(sents))
		for i, s := range sents {
			ids[i] = vocab.Encode(s)
		}
		cooc, err := Cooccurrence(ids, vocab.Len(), 5, false)
		if err != nil {
			b.Fatal(err)
		}
		ppmi, err := PPMI(cooc, 0.75)
		if err != nil {
			b.Fatal(err)
		}
		k := min(300, size/2)
		var ref []float64
		for _, method := range []SVDMethod{SVDDense, SVDRandomized} {
			b.Run(method.String()+"/n="+strconv.Itoa(vocab.Len()), func(b *testing.B) {
				opt := DefaultSVDOptions()
				opt.Method = method
				var s []float64
				for b.Loop() {
					_, s, _, err = TruncatedSVD(ppmi, k, opt)
					if err != nil {
						b.Fatal(err)
					}
				}
				if method == SVDDense {
					ref = s
					return
				}
				var worst, mean float64
				for i := range s {
					e := math.Abs(s[i]-ref[i]) / ref[i]
					worst = max(worst, e)
					mean += e / float64(len(s))
				}
				b.ReportMetric(worst, "max-rel-err-σ")
				b.ReportMetric(mean, "mean-rel-err-σ")
				b.Logf("n=%d k=%d nnz=%d: σ1 %.4g (dense %.4g), σ%d %.4g (dense %.4g)", vocab.Len(), k, ppmi.NNZ(), s[0], ref[0], k, s[k-1], ref[k-1])
			})
		}
	}
}

// BenchmarkTrainShared trains the default 300-dimensional vectors on the
// shared wiki + Gutenberg corpora (vocabulary: words seen at least 5 times,
// at most 20,000) and reports the time of each stage. Run with
//
//	go test ./wordvec -run '^$' -bench TrainShared -benchtime 1x
func BenchmarkTrainShared(b *testing.B) {
	sents := sharedCorpus(b, "wiki_sentences.txt", "gutenberg_sentences.txt")
	t0 := time.Now()
	vocab, err := data.BuildVocab(sents, data.Tokenizer{}, data.VocabOptions{MinCount: 5, MaxSize: 20000})
	if err != nil {
		b.Fatal(err)
	}
	vocabTime := time.Since(t0)
	for b.Loop() {
		_, info, err := Train(sents, vocab, DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(info.CountTime.Seconds(), "count-s")
		b.ReportMetric(info.PPMITime.Seconds(), "ppmi-s")
		b.ReportMetric(info.SVDTime.Seconds(), "svd-s")
		b.Logf("%d sentences, %d tokens (%d unknown), vocab %d (built in %v), cooc nnz %d, PPMI nnz %d, %v SVD; σ1 %.4g σ300 %.4g",
			info.Sentences, info.Tokens, info.Unknown, vocab.Len(), vocabTime.Round(time.Millisecond), info.CoocNNZ, info.PPMINNZ, info.Method, info.Singular[0], info.Singular[len(info.Singular)-1])
	}
}

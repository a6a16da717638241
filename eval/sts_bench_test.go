package eval

import (
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

// BenchmarkBaselinesSTS trains the default PPMI-SVD vectors on the shared
// wiki + Gutenberg corpora (vocabulary: min count 5, at most 20,000 words)
// and reports the two untrained baselines, Spearman × 100, on STS Benchmark
// dev and test in both copies (the original release and SentEval's
// tokenised one). TF-IDF takes its IDF from the training corpora ("corpus")
// and, for comparison, from the sentences of the evaluated split itself
// ("self"). Run with
//
//	go test ./eval -run '^$' -bench BaselinesSTS -benchtime 1x
func BenchmarkBaselinesSTS(b *testing.B) {
	var corpus []string
	for _, name := range []string{"wiki_sentences.txt", "gutenberg_sentences.txt"} {
		s, err := data.ReadCorpus(testenv.Path(b, "text", name), data.CorpusOptions{})
		if err != nil {
			b.Fatal(err)
		}
		corpus = append(corpus, s...)
	}
	type split struct {
		name  string
		pairs []data.STSPair
	}
	var splits []split
	for _, copyDir := range []string{"", "senteval"} {
		for _, s := range []string{"dev", "test"} {
			path := testenv.Path(b, "sts", copyDir, "sts-"+s+".csv")
			pairs, err := data.ReadSTS(path)
			if err != nil {
				b.Fatal(err)
			}
			name := s
			if copyDir != "" {
				name = copyDir + "-" + s
			}
			splits = append(splits, split{name, pairs})
		}
	}
	tok := data.Tokenizer{}
	for b.Loop() {
		t0 := time.Now()
		vocab, err := data.BuildVocab(corpus, tok, data.VocabOptions{MinCount: 5, MaxSize: 20000})
		if err != nil {
			b.Fatal(err)
		}
		wv, info, err := wordvec.Train(corpus, vocab, wordvec.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("vectors: %d sentences, %d tokens, vocab %d, dim %d, %v SVD; count %v, PPMI %v, SVD %v, total with vocab %v",
			info.Sentences, info.Tokens, vocab.Len(), wv.Dim, info.Method, info.CountTime.Round(time.Millisecond),
			info.PPMITime.Round(time.Millisecond), info.SVDTime.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
		for _, s := range splits {
			avg, err := BaselineAvgWordVec(s.pairs, wv)
			if err != nil {
				b.Fatal(err)
			}
			tfCorpus, err := BaselineTFIDF(s.pairs, corpus, tok)
			if err != nil {
				b.Fatal(err)
			}
			var self []string
			for _, p := range s.pairs {
				self = append(self, p.S1, p.S2)
			}
			tfSelf, err := BaselineTFIDF(s.pairs, self, tok)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(avg, s.name+"-avgwv")
			b.ReportMetric(tfCorpus, s.name+"-tfidf-corpus")
			b.ReportMetric(tfSelf, s.name+"-tfidf-self")
			b.Logf("%-13s %4d pairs: avg word vectors %.2f, TF-IDF (corpus IDF) %.2f, TF-IDF (self IDF) %.2f", s.name, len(s.pairs), avg, tfCorpus, tfSelf)
		}
	}
}

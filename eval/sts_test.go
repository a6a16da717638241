package eval

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

func TestCosineSimilarities(t *testing.T) {
	a := []float32{1, 0, 3, 4, 0, 0, 2, 2}
	b := []float32{1, 1, -3, -4, 1, 2, 5, 5}
	got, err := CosineSimilarities(a, b, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1 / math.Sqrt2, -1, 0, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("pair %d: %v, want %v", i, got[i], want[i])
		}
	}
	for _, c := range []struct{ n, d int }{{3, 2}, {4, 0}, {-1, 2}, {2, 3}} {
		if _, err := CosineSimilarities(a, b, c.n, c.d); err == nil {
			t.Errorf("n=%d d=%d: no error", c.n, c.d)
		}
	}
}

func TestSTSScore(t *testing.T) {
	// emb1 rows are e1; emb2 row i is at angle θ_i, so the cosine is cos θ_i.
	thetas := []float64{0.1, 1.2, 0.5, 2.0, 0.8}
	gold := []float64{5, 1.5, 3.8, 0, 3.8}
	n := len(thetas)
	e1, e2 := make([]float32, 2*n), make([]float32, 2*n)
	cos := make([]float64, n)
	for i, th := range thetas {
		e1[2*i] = 2
		e2[2*i], e2[2*i+1] = float32(math.Cos(th)), float32(math.Sin(th))
		cos[i] = math.Cos(th)
	}
	// cos order: 0.1 > 0.5 > 0.8 > 1.2 > 2.0, gold order 5 > 3.8 = 3.8 > 1.5 > 0
	// with the tie: ranks cos [5,2,4,1,3], gold [5,2,3.5,1,3.5].
	want, _ := Spearman([]float64{5, 2, 4, 1, 3}, []float64{5, 2, 3.5, 1, 3.5})
	got, err := STSScore(e1, e2, n, 2, gold)
	if err != nil || math.Abs(got-100*want) > 1e-12 {
		t.Fatalf("STSScore = %v (%v), want %v", got, err, 100*want)
	}
	if want < 0.97 || want >= 1 {
		t.Fatalf("hand value %v unexpected", want)
	}
	if _, err := STSScore(e1, e2, n, 2, gold[:3]); err == nil {
		t.Error("gold length mismatch: no error")
	}
	same := slices.Repeat([]float32{1, 0}, n)
	if r, err := STSScore(same, same, n, 2, gold); !errors.Is(err, ErrConstantInput) || !math.IsNaN(r) {
		t.Errorf("constant similarities: %v %v", r, err)
	}
}

func TestTFIDF(t *testing.T) {
	tf := NewTFIDF([]string{"a b", "A c!", "a a"}, data.Tokenizer{})
	// N = 3; df a = 3, b = 1, c = 1.
	ln2 := math.Log(2)
	for w, want := range map[string]float64{"a": 1, "b": 1 + ln2, "c": 1 + ln2, "zzz": math.Log(4) + 1} {
		if got := tf.IDF(w); math.Abs(got-want) > 1e-15 {
			t.Errorf("idf(%s) = %v, want %v", w, got, want)
		}
	}
	v := tf.Vector("b a a, zzz")
	wantV := []TermWeight{{"a", 2}, {"b", 1 + ln2}, {"zzz", math.Log(4) + 1}}
	if !slices.Equal(v, wantV) {
		t.Errorf("Vector = %v, want %v", v, wantV)
	}
	b := 1 + ln2
	if got, want := tf.Cosine("a b", "a c"), 1/(1+b*b); math.Abs(got-want) > 1e-15 {
		t.Errorf("Cosine(a b, a c) = %v, want %v", got, want)
	}
	if got := tf.Cosine("a b", "B, a"); math.Abs(got-1) > 1e-15 {
		t.Errorf("Cosine of the same bag = %v", got)
	}
	if got := tf.Cosine("...", "a"); got != 0 {
		t.Errorf("Cosine with an empty sentence = %v", got)
	}
}

func TestBaselines(t *testing.T) {
	pairs := []data.STSPair{
		{S1: "a b c", S2: "a b c", Score: 5},
		{S1: "a b", S2: "a c", Score: 3},
		{S1: "a b", S2: "c d", Score: 1},
		{S1: "a", S2: "d d", Score: 0.5},
		{S1: "b", S2: "zzz", Score: 0},
	}
	corpus := []string{"a b", "a c", "c d", "a b c d", "b"}
	tok := data.Tokenizer{}
	got, err := BaselineTFIDF(pairs, corpus, tok)
	if err != nil {
		t.Fatal(err)
	}
	tf := NewTFIDF(corpus, tok)
	sims := make([]float64, len(pairs))
	gold := make([]float64, len(pairs))
	for i, p := range pairs {
		sims[i], gold[i] = tf.Cosine(p.S1, p.S2), p.Score
	}
	want, _ := Spearman(sims, gold)
	if got != 100*want || !(want > 0.8) {
		t.Errorf("BaselineTFIDF = %v, want %v", got, 100*want)
	}

	vocab, err := data.NewVocabFromWords([]string{data.UnkToken, "a", "b", "c", "d"}, nil, tok)
	if err != nil {
		t.Fatal(err)
	}
	wv := &wordvec.Vectors{Vocab: vocab, Dim: 2, Data: []float32{0, 0, 1, 0, 0.8, 0.6, 0, 1, -0.6, 0.8}}
	got, err = BaselineAvgWordVec(pairs, wv)
	if err != nil {
		t.Fatal(err)
	}
	// Means by hand: "a b c" = (0.6, 0.5333…); "a b" = (0.9, 0.3);
	// "a c" = (0.5, 0.5); "c d" = (−0.3, 0.9); "a" = (1, 0); "d d" = d;
	// "b" vs "zzz": the unknown sentence is the zero vector, cosine 0.
	mean := func(v ...[2]float64) [2]float64 {
		var m [2]float64
		for _, x := range v {
			m[0] += x[0] / float64(len(v))
			m[1] += x[1] / float64(len(v))
		}
		return m
	}
	a, bb, c, d := [2]float64{1, 0}, [2]float64{0.8, 0.6}, [2]float64{0, 1}, [2]float64{-0.6, 0.8}
	cosine := func(x, y [2]float64) float64 {
		return (x[0]*y[0] + x[1]*y[1]) / math.Hypot(x[0], x[1]) / math.Hypot(y[0], y[1])
	}
	hand := []float64{1, cosine(mean(a, bb), mean(a, c)), cosine(mean(a, bb), mean(c, d)), cosine(a, d), 0}
	want, _ = Spearman(hand, gold)
	if math.Abs(got-100*want) > 1e-9 {
		t.Errorf("BaselineAvgWordVec = %v, want %v (similarities %v)", got, 100*want, hand)
	}
}

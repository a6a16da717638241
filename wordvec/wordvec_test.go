package wordvec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/batchsampler-go/batchsampler/data"
)

// abcVocab is the vocabulary [<unk>, a, b, c] with the default tokenizer.
func abcVocab(t *testing.T) *data.Vocab {
	t.Helper()
	v, err := data.NewVocabFromWords([]string{data.UnkToken, "a", "b", "c"}, nil, data.Tokenizer{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refCooc is a brute-force co-occurrence count: every ordered pair of
// distinct positions within the window.
func refCooc(sents [][]int32, n, window int, weight bool) [][]float64 {
	c := make([][]float64, n)
	for i := range c {
		c[i] = make([]float64, n)
	}
	for _, s := range sents {
		for p := range s {
			for q := range s {
				d := max(p-q, q-p)
				if d == 0 || d > window || s[p] == data.UnkID || s[q] == data.UnkID {
					continue
				}
				w := 1.0
				if weight {
					w = 1 / float64(d)
				}
				c[s[p]][s[q]] += w
			}
		}
	}
	return c
}

func checkAgainstDense(t *testing.T, name string, got *CSR, want [][]float64, tol float64) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if g := got.At(i, j); math.Abs(g-want[i][j]) > tol {
				t.Fatalf("%s (%d,%d) = %v, want %v", name, i, j, g, want[i][j])
			}
		}
	}
	for i := 0; i < got.Rows; i++ {
		cols := got.ColIdx[got.RowPtr[i]:got.RowPtr[i+1]]
		if !slices.IsSorted(cols) {
			t.Fatalf("%s row %d columns not sorted: %v", name, i, cols)
		}
		for k := got.RowPtr[i]; k < got.RowPtr[i+1]; k++ {
			if got.Val[k] == 0 {
				t.Fatalf("%s stores a zero at (%d,%d)", name, i, got.ColIdx[k])
			}
		}
	}
}

func TestCooccurrence(t *testing.T) {
	const a, b, c, u = 1, 2, 3, data.UnkID
	sents := [][]int32{{a, b}, {a, b}, {a, b}, {a, c}, {c, c}, {a, u, b, c, a}}
	for _, window := range []int{1, 2, 3} {
		for _, weight := range []bool{false, true} {
			got, err := Cooccurrence(sents, 4, window, weight)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstDense(t, fmt.Sprintf("window %d weight %v", window, weight), got, refCooc(sents, 4, window, weight), 1e-12)
		}
	}
	// By hand, window 1: the last sentence adds b-c and c-a; the unknown
	// token separates a from b.
	got, _ := Cooccurrence(sents, 4, 1, false)
	hand := map[[2]int]float64{{a, b}: 3, {b, a}: 3, {a, c}: 2, {c, a}: 2, {c, c}: 2, {b, c}: 1, {c, b}: 1}
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			if got.At(i, j) != hand[[2]int{i, j}] {
				t.Errorf("window 1 (%d,%d) = %v, want %v", i, j, got.At(i, j), hand[[2]int{i, j}])
			}
		}
	}
	// Window 2 with 1/d weighting: a _ b adds 1/2 to a-b.
	got, _ = Cooccurrence([][]int32{{a, u, b}}, 4, 2, true)
	if got.At(a, b) != 0.5 || got.At(b, a) != 0.5 || got.NNZ() != 2 {
		t.Errorf("a <unk> b with window 2 weighted: %v", got.Dense())
	}
	if _, err := Cooccurrence([][]int32{{a, 9}}, 4, 1, false); err == nil {
		t.Error("id outside the vocabulary: no error")
	}
	if _, err := Cooccurrence(sents, 4, 0, false); err == nil {
		t.Error("window 0: no error")
	}
}

func TestPPMIHand(t *testing.T) {
	// Corpus "a b" ×3, "a c", "c c", window 1: C(a,b) = C(b,a) = 3,
	// C(a,c) = C(c,a) = 1, C(c,c) = 2. Row (= column) sums a 4, b 3, c 3.
	const a, b, c = 1, 2, 3
	v := abcVocab(t)
	var ids [][]int32
	for _, s := range []string{"a b", "a b", "a b", "a c", "c c"} {
		ids = append(ids, v.Encode(s))
	}
	cooc, err := Cooccurrence(ids, v.Len(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	ln := math.Log
	// α = 1: PMI = ln(C(w,c)·D / (C(w)·C(c))) with D = 10.
	want1 := [][]float64{
		{0, 0, 0, 0},
		{0, 0, ln(3 * 10.0 / (4 * 3)), 0}, // a-b = ln 2.5; a-c = ln(10/12) < 0 → 0
		{0, ln(2.5), 0, 0},
		{0, 0, 0, ln(2 * 10.0 / (3 * 3))}, // c-c = ln(20/9); c-a < 0 → 0
	}
	p1, err := PPMI(cooc, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstDense(t, "PPMI α=1", p1, want1, 1e-15)
	if p1.NNZ() != 3 {
		t.Errorf("α=1: %d stored entries, want 3", p1.NNZ())
	}
	// α = 0.75: the context probability is C(c)^0.75 / Z with
	// Z = 4^0.75 + 2·3^0.75.
	z := math.Pow(4, 0.75) + 2*math.Pow(3, 0.75)
	pmi := func(cwc, cw, cc float64) float64 { return max(0, ln(cwc*z/(cw*math.Pow(cc, 0.75)))) }
	want75 := [][]float64{
		{0, 0, 0, 0},
		{0, 0, pmi(3, 4, 3), pmi(1, 4, 3)},
		{0, pmi(3, 3, 4), 0, 0},
		{0, pmi(1, 3, 4), 0, pmi(2, 3, 3)},
	}
	p75, err := PPMI(cooc, 0.75)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstDense(t, "PPMI α=0.75", p75, want75, 1e-14)
	// Smoothing lowers the PMI with rare contexts: a-b and b-a are equal
	// at α = 1 but the rarer context b loses at α = 0.75.
	if p1.At(a, b) != p1.At(b, a) || !(p75.At(a, b) < p75.At(b, a)) {
		t.Errorf("smoothing effect missing: α=1 a-b %v b-a %v; α=0.75 a-b %v b-a %v", p1.At(a, b), p1.At(b, a), p75.At(a, b), p75.At(b, a))
	}
	for _, bad := range []float64{0, -1, 1.5, math.NaN()} {
		if _, err := PPMI(cooc, bad); err == nil {
			t.Errorf("alpha %v: no error", bad)
		}
	}
}

func TestPPMIRandomAgainstLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 30
	dense := make([][]float64, n)
	m := &CSR{Rows: n, Cols: n, RowPtr: make([]int, n+1)}
	for i := range dense {
		dense[i] = make([]float64, n)
		for j := range dense[i] {
			if i > 0 && rng.Float64() < 0.3 {
				dense[i][j] = float64(1 + rng.IntN(20))
				m.ColIdx = append(m.ColIdx, int32(j))
				m.Val = append(m.Val, dense[i][j])
			}
		}
		m.RowPtr[i+1] = len(m.Val)
	}
	for _, alpha := range []float64{1, 0.75, 0.5} {
		// Reference: probabilities exactly as Levy et al. write them.
		var total float64
		rs, cs := make([]float64, n), make([]float64, n)
		for i := range dense {
			for j, v := range dense[i] {
				total += v
				rs[i] += v
				cs[j] += v
			}
		}
		var zc float64
		for _, v := range cs {
			zc += math.Pow(v, alpha)
		}
		want := make([][]float64, n)
		for i := range want {
			want[i] = make([]float64, n)
			for j, v := range dense[i] {
				if v > 0 {
					pwc, pw, pc := v/total, rs[i]/total, math.Pow(cs[j], alpha)/zc
					want[i][j] = max(0, math.Log(pwc/(pw*pc)))
				}
			}
		}
		got, err := PPMI(m, alpha)
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstDense(t, fmt.Sprintf("α=%v", alpha), got, want, 1e-12)
	}
}

// lowRankCSR returns a dense-filled m×n CSR matrix U·diag(s)·Vᵀ with random
// orthonormal U, V.
func lowRankCSR(rng *rand.Rand, m, n int, s []float64) *CSR {
	orth := func(rows, cols int) *mat.Dense {
		x := mat.NewDense(rows, cols, nil)
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				x.Set(i, j, rng.NormFloat64())
			}
		}
		var qr mat.QR
		qr.Factorize(x)
		var q mat.Dense
		qr.QTo(&q)
		return mat.DenseCopyOf(q.Slice(0, rows, 0, cols))
	}
	u, v := orth(m, len(s)), orth(n, len(s))
	var us, a mat.Dense
	us.Mul(u, mat.NewDiagDense(len(s), s))
	a.Mul(&us, v.T())
	c := &CSR{Rows: m, Cols: n, RowPtr: make([]int, m+1)}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			if x := a.At(i, j); x != 0 {
				c.ColIdx = append(c.ColIdx, int32(j))
				c.Val = append(c.Val, x)
			}
		}
		c.RowPtr[i+1] = len(c.Val)
	}
	return c
}

func TestTruncatedSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 80, 60, 8
	s := make([]float64, 40)
	for i := range s {
		s[i] = 10 * math.Pow(0.7, float64(i)) // decaying spectrum, full rank 40
	}
	a := lowRankCSR(rng, m, n, s)
	// Independent reference for the singular values: eigenvalues of AᵀA.
	ad := a.Dense()
	var ata mat.SymDense
	ata.SymOuterK(1, ad.T())
	var eig mat.EigenSym
	if !eig.Factorize(&ata, false) {
		t.Fatal("eigen decomposition failed")
	}
	ev := eig.Values(nil)
	slices.Reverse(ev)
	for _, method := range []SVDMethod{SVDDense, SVDRandomized} {
		opt := DefaultSVDOptions()
		opt.Method = method
		u, sv, got, err := TruncatedSVD(a, k, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got != method || len(sv) != k {
			t.Fatalf("method %v, %d values", got, len(sv))
		}
		for i := 0; i < k; i++ {
			if want := math.Sqrt(ev[i]); math.Abs(sv[i]-want) > 1e-9*want {
				t.Errorf("%v: σ%d = %v, want %v (true %v)", method, i, sv[i], want, s[i])
			}
		}
		// Columns are orthonormal, left singular vectors (‖Aᵀu‖ = σ and
		// A Aᵀ u = σ² u) and sign-fixed.
		var utu mat.Dense
		utu.Mul(u.T(), u)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				want := 0.0
				if i == j {
					want = 1
				}
				if math.Abs(utu.At(i, j)-want) > 1e-9 {
					t.Fatalf("%v: UᵀU(%d,%d) = %v", method, i, j, utu.At(i, j))
				}
			}
		}
		var atu, aatu mat.Dense
		atu.Mul(ad.T(), u)
		aatu.Mul(ad, &atu)
		for j := 0; j < k; j++ {
			col := mat.Col(nil, j, u)
			best := 0
			for i := range col {
				if math.Abs(col[i]) > math.Abs(col[best]) {
					best = i
				}
			}
			if col[best] < 0 {
				t.Errorf("%v: column %d has a negative largest entry", method, j)
			}
			for i := range col {
				if d := aatu.At(i, j) - sv[j]*sv[j]*col[i]; math.Abs(d) > 1e-8 {
					t.Fatalf("%v: column %d is not a singular vector (residual %v)", method, j, d)
				}
			}
		}
	}
	if _, _, _, err := TruncatedSVD(a, n+1, DefaultSVDOptions()); err == nil {
		t.Error("k > min(m, n): no error")
	}
	if _, _, _, err := TruncatedSVD(a, 0, DefaultSVDOptions()); err == nil {
		t.Error("k = 0: no error")
	}
	if _, _, m, _ := TruncatedSVD(a, 2, DefaultSVDOptions()); m != SVDDense {
		t.Errorf("auto on a small matrix chose %v", m)
	}
}

func TestRandomizedSVDSeeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := []float64{9, 7, 5, 4, 3, 2, 1.5, 1, 0.5, 0.2}
	a := lowRankCSR(rng, 50, 45, s)
	opt := DefaultSVDOptions()
	opt.Method = SVDRandomized
	opt.Oversample = 2
	opt.PowerIters = 0
	u1, s1, _, _ := TruncatedSVD(a, 5, opt)
	u2, s2, _, _ := TruncatedSVD(a, 5, opt)
	if !mat.Equal(u1, u2) || !slices.Equal(s1, s2) {
		t.Fatal("same seed, different result")
	}
	opt.Seed = 99
	u3, _, _, _ := TruncatedSVD(a, 5, opt)
	if mat.Equal(u1, u3) {
		t.Fatal("different seeds, identical result: the seed is not used")
	}
	// Rank 10 ≤ k + oversample = 10: the range is found exactly.
	opt.Oversample = 5
	_, s4, _, _ := TruncatedSVD(a, 5, opt)
	for i := range s4 {
		if math.Abs(s4[i]-s[i]) > 1e-9 {
			t.Errorf("exact-rank σ%d = %v, want %v", i, s4[i], s[i])
		}
	}
}

// topicCorpus draws sentences of 6 words, each sentence from one topic.
func topicCorpus(seed uint64, topics [][]string, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	var out []string
	for i := 0; i < n; i++ {
		words := topics[i%len(topics)]
		var s []string
		for range 6 {
			s = append(s, words[rng.IntN(len(words))])
		}
		out = append(out, strings.Join(s, " "))
	}
	return out
}

func TestTrainTwoTopics(t *testing.T) {
	topics := [][]string{
		{"apple", "banana", "cherry", "grape", "lemon", "mango"},
		{"car", "truck", "bus", "train", "plane", "boat"},
	}
	sents := topicCorpus(11, topics, 400)
	vocab, err := data.BuildVocab(sents, data.Tokenizer{}, data.VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []SVDMethod{SVDDense, SVDRandomized} {
		opt := DefaultOptions()
		opt.Dim = 6
		opt.Window = 2
		opt.SVD.Method = method
		vec, info, err := Train(sents, vocab, opt)
		if err != nil {
			t.Fatal(err)
		}
		if info.Tokens != 2400 || info.Unknown != 0 || info.Method != method {
			t.Fatalf("info %+v", info)
		}
		minIn, maxOut := 2.0, -2.0
		for ti, words := range topics {
			for _, w := range words {
				for tj, other := range topics {
					for _, o := range other {
						if o == w {
							continue
						}
						c, ok := vec.Similarity(w, o)
						if !ok {
							t.Fatalf("no similarity for %s %s", w, o)
						}
						if ti == tj {
							minIn = min(minIn, c)
						} else {
							maxOut = max(maxOut, c)
						}
					}
				}
				nn := vec.Nearest(w, 5)
				for _, x := range nn {
					if !slices.Contains(topics[ti], x.Word) {
						t.Errorf("%v: a nearest neighbour of %s is %s from the other topic", method, w, x.Word)
					}
				}
			}
		}
		// Disjoint topics give a block-diagonal PPMI matrix: words of
		// different topics are orthogonal, words of one topic are close.
		t.Logf("%v: within-topic cosine ≥ %.3f, across ≤ %.3g", method, minIn, maxOut)
		if !(maxOut < 1e-6 && minIn > 0.5) {
			t.Errorf("%v: within-topic cosine ≥ %.3f, across ≤ %.3g", method, minIn, maxOut)
		}
		for id := int32(1); int(id) < vocab.Len(); id++ {
			var ss float64
			for _, x := range vec.Row(id) {
				ss += float64(x) * float64(x)
			}
			if math.Abs(ss-1) > 1e-5 {
				t.Errorf("row %d has squared norm %v", id, ss)
			}
		}
		for _, x := range vec.Row(data.UnkID) {
			if x != 0 {
				t.Fatal("the unknown token's vector is not zero")
			}
		}
	}
}

func TestTrainDenseMatchesRandomized(t *testing.T) {
	// A Zipf-like corpus with overlapping topics: the two SVD methods must
	// give the same word similarities (rotation-invariant comparison).
	rng := rand.New(rand.NewPCG(21, 22))
	const nWords, nTopics = 300, 12
	word := func(i int) string { return fmt.Sprintf("w%d", i) }
	var sents []string
	for range 3000 {
		topic := rng.IntN(nTopics)
		var s []string
		for range 8 {
			// mostly the topic's words, sometimes a frequent shared word
			if rng.Float64() < 0.3 {
				s = append(s, word(rng.IntN(10)))
			} else {
				s = append(s, word(10+topic*(nWords-10)/nTopics+rng.IntN((nWords-10)/nTopics)))
			}
		}
		sents = append(sents, strings.Join(s, " "))
	}
	vocab, err := data.BuildVocab(sents, data.Tokenizer{}, data.VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Dim = 20
	opt.SVD.Method = SVDDense
	vd, infoD, err := Train(sents, vocab, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.SVD.Method = SVDRandomized
	vr, infoR, err := Train(sents, vocab, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range infoD.Singular {
		if d := math.Abs(infoD.Singular[i]-infoR.Singular[i]) / infoD.Singular[i]; d > 1e-3 {
			t.Errorf("σ%d: dense %v randomized %v", i, infoD.Singular[i], infoR.Singular[i])
		}
	}
	var worst float64
	for i := 1; i < vocab.Len(); i++ {
		for j := i + 1; j < vocab.Len(); j++ {
			a, _ := vd.Similarity(vocab.Word(int32(i)), vocab.Word(int32(j)))
			b, _ := vr.Similarity(vocab.Word(int32(i)), vocab.Word(int32(j)))
			worst = max(worst, math.Abs(a-b))
		}
	}
	t.Logf("largest difference of a word similarity between dense and randomized SVD: %.2g", worst)
	if worst > 0.02 {
		t.Errorf("word similarities differ by up to %v between dense and randomized SVD", worst)
	}
}

func TestTrainOptionsErrors(t *testing.T) {
	v := abcVocab(t)
	for _, mod := range []func(*Options){
		func(o *Options) { o.Window = 0 },
		func(o *Options) { o.Alpha = 0 },
		func(o *Options) { o.Alpha = 2 },
		func(o *Options) { o.Dim = 5 },
		func(o *Options) { o.Dim = 0 },
		func(o *Options) { o.Power = -1 },
		func(o *Options) { o.Power = math.Inf(1) },
		func(o *Options) { o.SVD.Oversample = -1 },
		func(o *Options) { o.SVD.Method = 7 },
	} {
		opt := DefaultOptions()
		opt.Dim = 2
		mod(&opt)
		if _, _, err := Train([]string{"a b c"}, v, opt); err == nil {
			t.Errorf("options %+v: no error", opt)
		}
	}
}

func TestEmbed(t *testing.T) {
	v := abcVocab(t)
	vec := &Vectors{Vocab: v, Dim: 2, Data: []float32{0, 0, 1, 0, 0, 1, 0.6, 0.8}}
	dst := []float32{9, 9}
	if n := vec.Embed("A b, zzz a!", dst); n != 3 || math.Abs(float64(dst[0])-2.0/3) > 1e-7 || math.Abs(float64(dst[1])-1.0/3) > 1e-7 {
		t.Fatalf("Embed = %v (%d known)", dst, n)
	}
	if n := vec.Embed("zzz yyy", dst); n != 0 || dst[0] != 0 || dst[1] != 0 {
		t.Fatalf("all unknown: %v (%d known)", dst, n)
	}
	all := vec.EmbedAll([]string{"c", "", "b"})
	if !slices.Equal(all, []float32{0.6, 0.8, 0, 0, 0, 1}) {
		t.Fatalf("EmbedAll = %v", all)
	}
	if _, ok := vec.Lookup(data.UnkToken); ok {
		t.Error("Lookup of the unknown token succeeded")
	}
	if c, ok := vec.Similarity("a", "c"); !ok || math.Abs(c-0.6) > 1e-7 {
		t.Errorf("Similarity(a, c) = %v %v", c, ok)
	}
}

func TestSaveLoad(t *testing.T) {
	sents := topicCorpus(2, [][]string{{"x", "y", "z", "w"}, {"p", "q", "r", "s"}}, 50)
	vocab, _ := data.BuildVocab(sents, data.Tokenizer{KeepPunct: true}, data.VocabOptions{})
	opt := DefaultOptions()
	opt.Dim = 3
	vec, _, err := Train(sents, vocab, opt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vec.bin")
	if err := vec.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dim != vec.Dim || !slices.Equal(got.Data, vec.Data) || !slices.Equal(got.Vocab.Words(), vocab.Words()) || got.Vocab.Tokenizer() != vocab.Tokenizer() {
		t.Fatal("round trip changed the vectors or the vocabulary")
	}
	for id := range int32(vocab.Len()) {
		if got.Vocab.Count(id) != vocab.Count(id) {
			t.Fatal("round trip changed the counts")
		}
	}
	var buf bytes.Buffer
	if err := vec.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	nl := bytes.IndexByte(good, '\n')
	bin := len(good) - 4*len(vec.Data)
	flip := slices.Clone(good)
	flip[bin+5] ^= 1
	nan := slices.Clone(vec.Data)
	nan[4] = float32(math.NaN())
	var nanBuf bytes.Buffer
	(&Vectors{Vocab: vocab, Dim: 3, Data: nan}).Write(&nanBuf)
	cases := map[string][]byte{
		"empty":          nil,
		"bad magic":      append([]byte("batchsampler-wordvecs"), good[20:]...),
		"bad header":     bytes.Replace(good, []byte("float32le"), []byte("float64le"), 1),
		"header spaces":  bytes.Replace(good, []byte(" dim="), []byte("  dim="), 1),
		"huge":           bytes.Replace(good, []byte("dim=3"), []byte("dim=3000000000"), 1),
		"truncated text": good[:nl+5],
		"truncated data": good[:len(good)-1],
		"extra data":     append(slices.Clone(good), 0),
		"corrupt data":   flip,
		"bad vocab":      bytes.Replace(good, []byte("<unk>"), []byte("<unK>"), 1),
		"nan":            nanBuf.Bytes(),
	}
	for name, in := range cases {
		if _, err := Read(bytes.NewReader(in), "vec.bin"); err == nil || !strings.Contains(err.Error(), "vec.bin") {
			t.Errorf("%s: error %v, want one naming vec.bin", name, err)
		}
	}
	if err := (&Vectors{Vocab: vocab, Dim: 2, Data: vec.Data}).Write(&buf); err == nil {
		t.Error("Write of inconsistent Vectors: no error")
	}
}

func TestLUNormalizeKeepsSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n, l = 40, 7
	x := mat.NewDense(n, l, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < l; j++ {
			x.Set(i, j, rng.NormFloat64()*float64(j+1))
		}
	}
	pl := mat.DenseCopyOf(x)
	if err := luNormalize(pl); err != nil {
		t.Fatal(err)
	}
	// P·L is a row permutation of a unit lower trapezoidal matrix with
	// entries bounded by 1 (partial pivoting).
	ones := 0
	for i := 0; i < n; i++ {
		for j := 0; j < l; j++ {
			v := pl.At(i, j)
			if math.Abs(v) > 1+1e-12 {
				t.Fatalf("|PL(%d,%d)| = %v > 1", i, j, v)
			}
			if v == 1 {
				ones++
			}
		}
	}
	if ones < l {
		t.Fatalf("only %d unit entries, want at least %d", ones, l)
	}
	// span(P·L) = span(x): projecting x on an orthonormal basis of P·L
	// leaves no residual.
	q := mat.DenseCopyOf(pl)
	if err := orthonormalize(q); err != nil {
		t.Fatal(err)
	}
	var qtx, proj mat.Dense
	qtx.Mul(q.T(), x)
	proj.Mul(q, &qtx)
	proj.Sub(&proj, x)
	if r := mat.Norm(&proj, 2) / mat.Norm(x, 2); r > 1e-12 {
		t.Fatalf("relative residual %v: the span changed", r)
	}
}

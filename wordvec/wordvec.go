// Package wordvec computes word vectors from a sentence corpus: symmetric
// window co-occurrence counts, positive pointwise mutual information with
// context-distribution smoothing, and a truncated SVD (Levy, Goldberg &
// Dagan, "Improving distributional similarity with lessons learned from word
// embeddings", TACL 2015). They are the pure-Go stand-in for a pretrained
// language model in the text modality: the initialisation of the
// bag-of-words encoder and the "averaged word vectors" STS baseline.
//
// A word's vector is its row of U_k·Σ_k^p (p = 0.5 by default, Levy et al.'s
// "eigenvalue weighting"), L2-normalised. The unknown token's row is zero.
//
// SVD method. The PPMI matrix is n×n for a vocabulary of n words. A dense
// SVD (gonum mat.SVD, pure Go) costs O(n³) time and 8n² bytes per copy; the
// randomized SVD (SVDRandomized) costs a few sparse×dense products with
// n×(k+oversample) blocks plus LU/QR factorisations of that size. Measured
// with GOMAXPROCS=1 on the 2-core machine while other jobs ran
// (BenchmarkSVDMethods: PPMI of the wiki corpus restricted to its n−1 most
// frequent words):
//
//	n      k    dense     randomized   randomized σ error, max / mean
//	501    250  0.20 s    0.28 s       0.002% / 0.0001%
//	1001   300  1.5 s     0.74 s       0.49% / 0.055%
//	1501   300  16.7 s    1.3 s        1.2% / 0.23%
//
// The default vocabulary of the shared corpora (wiki + Gutenberg, min count
// 5, 19,921 words, k = 300) would need 3.2 GB per dense copy and hours;
// the randomized SVD takes 20-26 s on one core (BenchmarkTrainShared: whole
// Train 22-29 s, counting 2-3 s, PPMI 0.2 s; peak RSS 450 MB). SVDAuto
// therefore uses the dense SVD only up to DenseSVDMaxRows = 1000 rows.
//
// File format (Save/Load): one file, a text header and vocabulary followed
// by binary vectors:
//
//	batchsampler-wordvec 1 words=N dim=D keep_punct=false float32le crc32=XXXXXXXX
//	<unk>\tCOUNT
//	word\tCOUNT            (N lines in id order)
//	<N·D float32 values, little-endian, row-major>
//
// crc32 is the IEEE CRC-32 (hex) of the binary part.
package wordvec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/data"
)

// Options controls Train. Every field is used as given: start from
// DefaultOptions.
type Options struct {
	Window            int     // co-occurrence window on each side, >= 1
	DistanceWeighting bool    // weight a co-occurrence at distance d by 1/d
	Alpha             float64 // context-distribution smoothing, in (0, 1]
	Dim               int     // vector dimension k, in [1, vocabulary size]
	Power             float64 // exponent p of the singular values, >= 0
	SVD               SVDOptions
}

// DefaultOptions returns window 5 without distance weighting, α = 0.75,
// 300 dimensions, p = 0.5 and DefaultSVDOptions.
func DefaultOptions() Options {
	return Options{Window: 5, Alpha: 0.75, Dim: 300, Power: 0.5, SVD: DefaultSVDOptions()}
}

// TrainInfo reports what Train did.
type TrainInfo struct {
	Sentences int
	Tokens    int64 // tokens of the corpus, unknown ones included
	Unknown   int64 // tokens mapped to data.UnkID
	CoocNNZ   int   // nonzero co-occurrence entries
	PPMINNZ   int   // positive PPMI entries
	Method    SVDMethod
	Singular  []float64 // the Dim largest singular values of the PPMI matrix
	CountTime time.Duration
	PPMITime  time.Duration
	SVDTime   time.Duration
}

// Vectors holds one vector per word of a vocabulary.
type Vectors struct {
	Vocab *data.Vocab
	Dim   int
	// Data is Vocab.Len() × Dim, row-major: row id is the vector of
	// Vocab.Word(id). Rows are unit length or zero.
	Data []float32
}

// Train computes PPMI-SVD word vectors for the words of vocab from
// sentences (tokenized with vocab's Tokenizer).
func Train(sentences []string, vocab *data.Vocab, opt Options) (*Vectors, TrainInfo, error) {
	var info TrainInfo
	n := vocab.Len()
	switch {
	case opt.Window < 1:
		return nil, info, fmt.Errorf("wordvec: Window %d: expected >= 1", opt.Window)
	case !(opt.Alpha > 0 && opt.Alpha <= 1):
		return nil, info, fmt.Errorf("wordvec: Alpha %v: expected in (0, 1]", opt.Alpha)
	case opt.Dim < 1 || opt.Dim > n:
		return nil, info, fmt.Errorf("wordvec: Dim %d: expected in [1, %d] (the vocabulary size)", opt.Dim, n)
	case !(opt.Power >= 0) || math.IsInf(opt.Power, 0):
		return nil, info, fmt.Errorf("wordvec: Power %v: expected finite and >= 0", opt.Power)
	}
	t0 := time.Now()
	ids := make([][]int32, len(sentences))
	for i, s := range sentences {
		ids[i] = vocab.Encode(s)
		info.Tokens += int64(len(ids[i]))
		for _, id := range ids[i] {
			if id == data.UnkID {
				info.Unknown++
			}
		}
	}
	info.Sentences = len(sentences)
	cooc, err := Cooccurrence(ids, n, opt.Window, opt.DistanceWeighting)
	if err != nil {
		return nil, info, err
	}
	info.CoocNNZ = cooc.NNZ()
	info.CountTime = time.Since(t0)
	t0 = time.Now()
	ppmi, err := PPMI(cooc, opt.Alpha)
	if err != nil {
		return nil, info, err
	}
	cooc = nil
	info.PPMINNZ = ppmi.NNZ()
	info.PPMITime = time.Since(t0)
	t0 = time.Now()
	u, s, method, err := TruncatedSVD(ppmi, opt.Dim, opt.SVD)
	if err != nil {
		return nil, info, err
	}
	info.SVDTime = time.Since(t0)
	info.Method = method
	info.Singular = s
	v := &Vectors{Vocab: vocab, Dim: opt.Dim, Data: make([]float32, n*opt.Dim)}
	scale := make([]float64, opt.Dim)
	for j, sv := range s {
		scale[j] = math.Pow(sv, opt.Power)
	}
	row := make([]float64, opt.Dim)
	for i := 0; i < n; i++ {
		var ss float64
		for j := range row {
			row[j] = u.At(i, j) * scale[j]
			ss += row[j] * row[j]
		}
		if ss == 0 || i == int(data.UnkID) {
			continue
		}
		inv := 1 / math.Sqrt(ss)
		for j, x := range row {
			v.Data[i*opt.Dim+j] = float32(x * inv)
		}
	}
	return v, info, nil
}

// Row returns the vector of id (a view into Data).
func (v *Vectors) Row(id int32) []float32 {
	return v.Data[int(id)*v.Dim : (int(id)+1)*v.Dim]
}

// Lookup returns the vector of word; ok is false when the vocabulary does
// not hold word (the unknown token's zero vector is not returned).
func (v *Vectors) Lookup(word string) (vec []float32, ok bool) {
	if word == data.UnkToken || !v.Vocab.Has(word) {
		return nil, false
	}
	return v.Row(v.Vocab.ID(word)), true
}

// Similarity returns the cosine similarity of two words; ok is false when
// either is unknown or has a zero vector.
func (v *Vectors) Similarity(a, b string) (cos float64, ok bool) {
	x, ok1 := v.Lookup(a)
	y, ok2 := v.Lookup(b)
	if !ok1 || !ok2 {
		return 0, false
	}
	var dot, nx, ny float64
	for i := range x {
		dot += float64(x[i]) * float64(y[i])
		nx += float64(x[i]) * float64(x[i])
		ny += float64(y[i]) * float64(y[i])
	}
	if nx == 0 || ny == 0 {
		return 0, false
	}
	return dot / math.Sqrt(nx*ny), true
}

// Neighbor is a word and its cosine similarity to a query.
type Neighbor struct {
	Word string
	Cos  float64
}

// Nearest returns the k words most similar to word (itself and the unknown
// token excluded), most similar first, ties in id order; nil when word is
// unknown.
func (v *Vectors) Nearest(word string, k int) []Neighbor {
	if _, ok := v.Lookup(word); !ok || k <= 0 {
		return nil
	}
	self := v.Vocab.ID(word)
	var out []Neighbor
	for id := int32(1); int(id) < v.Vocab.Len(); id++ {
		if id == self {
			continue
		}
		c, ok := v.Similarity(word, v.Vocab.Word(id))
		if !ok {
			continue
		}
		out = append(out, Neighbor{v.Vocab.Word(id), c})
	}
	slices.SortStableFunc(out, func(a, b Neighbor) int {
		switch {
		case a.Cos > b.Cos:
			return -1
		case a.Cos < b.Cos:
			return 1
		}
		return 0
	})
	return out[:min(k, len(out))]
}

// Embed writes into dst (length Dim) the mean of the vectors of the tokens
// of sentence that the vocabulary holds (unknown tokens are skipped) and
// returns how many tokens were averaged; with none, dst is all zero.
func (v *Vectors) Embed(sentence string, dst []float32) int {
	clear(dst[:v.Dim])
	acc := make([]float64, v.Dim)
	known := 0
	for _, id := range v.Vocab.Encode(sentence) {
		if id == data.UnkID {
			continue
		}
		known++
		for j, x := range v.Row(id) {
			acc[j] += float64(x)
		}
	}
	if known > 0 {
		for j, a := range acc {
			dst[j] = float32(a / float64(known))
		}
	}
	return known
}

// EmbedAll returns the Embed vectors of sentences as one len(sentences)×Dim
// row-major matrix.
func (v *Vectors) EmbedAll(sentences []string) []float32 {
	out := make([]float32, len(sentences)*v.Dim)
	for i, s := range sentences {
		v.Embed(s, out[i*v.Dim:(i+1)*v.Dim])
	}
	return out
}

const fileMagic = "batchsampler-wordvec"

// Write writes v in the format described in the package documentation.
func (v *Vectors) Write(w io.Writer) error {
	if err := v.check(); err != nil {
		return err
	}
	raw := make([]byte, 4*len(v.Data))
	for i, x := range v.Data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s 1 words=%d dim=%d keep_punct=%t float32le crc32=%08x\n",
		fileMagic, v.Vocab.Len(), v.Dim, v.Vocab.Tokenizer().KeepPunct, crc32.ChecksumIEEE(raw))
	for id := int32(0); int(id) < v.Vocab.Len(); id++ {
		bw.WriteString(v.Vocab.Word(id))
		bw.WriteByte('\t')
		bw.WriteString(strconv.FormatInt(v.Vocab.Count(id), 10))
		bw.WriteByte('\n')
	}
	bw.Write(raw)
	return bw.Flush()
}

func (v *Vectors) check() error {
	if v.Vocab == nil || v.Dim < 1 || len(v.Data) != v.Vocab.Len()*v.Dim {
		n := -1
		if v.Vocab != nil {
			n = v.Vocab.Len()
		}
		return fmt.Errorf("wordvec: malformed Vectors: %d values for %d words × dim %d", len(v.Data), n, v.Dim)
	}
	return nil
}

// Save writes v to path (see Write).
func (v *Vectors) Save(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save word vectors: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("save word vectors: %w", cerr)
		}
	}()
	if err := v.Write(f); err != nil {
		return fmt.Errorf("save word vectors %s: %w", path, err)
	}
	return nil
}

// Load reads word vectors written by Save.
func Load(path string) (*Vectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load word vectors: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// maxFileValues bounds words×dim in a file (4 GiB of float32) so a corrupt
// header cannot demand an absurd allocation.
const maxFileValues = 1 << 30

// Read reads word vectors in the format of Write from r; file names the
// input in errors, which give the line for problems in the text part.
func Read(r io.Reader, file string) (*Vectors, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	lineNo := 0
	readLine := func() (string, error) {
		lineNo++
		s, err := br.ReadString('\n')
		if err == io.EOF {
			return "", fmt.Errorf("%s line %d: unexpected end of file", file, lineNo)
		}
		if err != nil {
			return "", fmt.Errorf("%s line %d: %w", file, lineNo, err)
		}
		if len(s) > 1<<16 {
			return "", fmt.Errorf("%s line %d: line of %d bytes: expected a short text line", file, lineNo, len(s))
		}
		return s[:len(s)-1], nil
	}
	h, err := readLine()
	if err != nil {
		return nil, err
	}
	var n, dim int
	var keep bool
	var sum uint32
	if _, err := fmt.Sscanf(h, fileMagic+" 1 words=%d dim=%d keep_punct=%t float32le crc32=%x", &n, &dim, &keep, &sum); err != nil ||
		h != fmt.Sprintf("%s 1 words=%d dim=%d keep_punct=%t float32le crc32=%08x", fileMagic, n, dim, keep, sum) {
		return nil, fmt.Errorf("%s line 1: header %q: expected %q", file, truncate(h, 100), fileMagic+" 1 words=N dim=D keep_punct=BOOL float32le crc32=HEX")
	}
	if n < 1 || dim < 1 || n > maxFileValues/dim {
		return nil, fmt.Errorf("%s line 1: words=%d dim=%d: expected both >= 1 and words×dim <= %d", file, n, dim, maxFileValues)
	}
	words := make([]string, 0, min(n, 1<<20))
	counts := make([]int64, 0, min(n, 1<<20))
	for i := 0; i < n; i++ {
		s, err := readLine()
		if err != nil {
			return nil, err
		}
		w, c, ok := strings.Cut(s, "\t")
		cnt, cerr := strconv.ParseInt(c, 10, 64)
		if !ok || cerr != nil || cnt < 0 {
			return nil, fmt.Errorf("%s line %d: %q: expected word<TAB>count with a non-negative count", file, lineNo, truncate(s, 80))
		}
		words = append(words, w)
		counts = append(counts, cnt)
	}
	vocab, err := data.NewVocabFromWords(words, counts, data.Tokenizer{KeepPunct: keep})
	if err != nil {
		return nil, fmt.Errorf("%s lines 2-%d: %w", file, n+1, err)
	}
	var raw bytes.Buffer
	want := int64(4 * n * dim)
	if got, err := io.CopyN(&raw, br, want); err != nil {
		return nil, fmt.Errorf("%s: vector data: %d of %d bytes: %w", file, got, want, err)
	}
	if extra, _ := br.Peek(1); len(extra) > 0 {
		return nil, fmt.Errorf("%s: data after the %d×%d vectors: expected end of file", file, n, dim)
	}
	rb := raw.Bytes()
	if got := crc32.ChecksumIEEE(rb); got != sum {
		return nil, fmt.Errorf("%s: vector data crc32 %08x: expected %08x from the header (corrupt file)", file, got, sum)
	}
	v := &Vectors{Vocab: vocab, Dim: dim, Data: make([]float32, n*dim)}
	for i := range v.Data {
		x := math.Float32frombits(binary.LittleEndian.Uint32(rb[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%s: vector of %q, component %d is %v: expected a finite number", file, vocab.Word(int32(i/dim)), i%dim, x)
		}
		v.Data[i] = x
	}
	return v, nil
}

// truncate shortens s to at most n bytes for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xc0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

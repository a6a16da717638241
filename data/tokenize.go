package data

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenizer splits a sentence into lower-cased word tokens. The rules, in
// order of precedence, for each rune of the input:
//
//   - Apostrophes (U+0027 ', U+2019 ’, U+02BC ʼ) between two word runes are
//     kept inside the word and written as U+0027: "Don’t" → "don't". An
//     apostrophe anywhere else ends the word ("'tis" → "tis", "dogs'" →
//     "dogs") and is punctuation.
//   - A '.' or ',' between two decimal digits stays inside the word, so
//     numbers survive: "3.14", "1,000". Elsewhere it is punctuation.
//   - Letters and numbers (Unicode categories L and N) are word runes and
//     are lower-cased rune by rune with unicode.ToLower ("ÉCOLE" → "école",
//     "ΣΟΦΊΑ" → "σοφία"; there is no locale-specific casing and no Unicode
//     normalisation, so a precomposed "é" and "e"+U+0301 stay different).
//   - Combining marks (category M) continue a word ("e"+U+0301, Devanagari
//     vowel signs); a mark that does not follow a word rune is dropped.
//   - Punctuation and symbols (categories P and S, including emoji, '-' and
//     '_') end the word. They are dropped unless KeepPunct is set, in which
//     case each one is a token of its own ("well-known" → "well", "-",
//     "known"; "👍" → "👍").
//   - Everything else (white space, control and format characters such as
//     U+200D, unassigned code points, invalid UTF-8) separates words and is
//     dropped.
//
// Scripts written without spaces (Chinese, Japanese, Thai) therefore come out
// as one token per run of letters; the tokenizer is meant for English text.
// Tokens are never empty, contain no white space and are valid UTF-8.
type Tokenizer struct {
	// KeepPunct makes every punctuation or symbol rune a token of its own
	// instead of dropping it.
	KeepPunct bool
}

// Tokenize splits s with the default Tokenizer (punctuation dropped).
func Tokenize(s string) []string { return Tokenizer{}.Tokenize(s) }

// Tokenize splits s into tokens following the rules in the Tokenizer doc.
func (t Tokenizer) Tokenize(s string) []string {
	return t.AppendTokens(nil, s)
}

func isApostrophe(r rune) bool { return r == '\'' || r == '\u2019' || r == '\u02BC' }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

func isDigit(r rune) bool { return unicode.Is(unicode.Nd, r) }

// AppendTokens appends the tokens of s to dst and returns the result.
func (t Tokenizer) AppendTokens(dst []string, s string) []string {
	var word []byte
	var prev rune = -1 // last rune appended to word, -1 when word is empty
	flush := func() {
		if len(word) > 0 {
			dst = append(dst, string(word))
			word = word[:0]
		}
		prev = -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		next, _ := utf8.DecodeRuneInString(s[i+n:]) // RuneError at the end
		if r == utf8.RuneError && n <= 1 {
			flush()
			i += n
			continue
		}
		switch {
		case isApostrophe(r) && prev >= 0 && isWordRune(prev) && isWordRune(next):
			word = append(word, '\'')
			prev = '\''
		case (r == '.' || r == ',') && prev >= 0 && isDigit(prev) && isDigit(next):
			word = append(word, byte(r))
			prev = r
		case isWordRune(r):
			word = utf8.AppendRune(word, unicode.ToLower(r))
			prev = r
		case unicode.IsMark(r):
			if prev >= 0 {
				word = utf8.AppendRune(word, r)
				// prev stays the base rune: a mark does not change whether
				// an apostrophe or a decimal point may follow.
			}
		case isApostrophe(r) || unicode.IsPunct(r) || unicode.IsSymbol(r):
			flush()
			if t.KeepPunct {
				if isApostrophe(r) {
					r = '\''
				}
				dst = append(dst, string(r))
			}
		default:
			flush()
		}
		i += n
	}
	flush()
	return dst
}

// UnkToken is the unknown token. It always has id UnkID in a Vocab and
// stands for every word the vocabulary does not hold.
const UnkToken = "<unk>"

// UnkID is the id of UnkToken.
const UnkID int32 = 0

// VocabOptions controls which words NewVocab and BuildVocab keep.
type VocabOptions struct {
	// MinCount drops words seen fewer than MinCount times (0 or 1 keeps all).
	MinCount int64
	// MaxSize caps the number of words kept, not counting UnkToken (0 means
	// no cap). The most frequent words are kept; equal counts are ordered by
	// the words' bytes, so the result does not depend on map order.
	MaxSize int
}

// Vocab maps words to dense int32 ids: id 0 is UnkToken, then the kept words
// by decreasing count (ties in byte order of the words). It carries the
// Tokenizer it was built with, so Encode tokenizes the same way. A Vocab is
// immutable and safe for concurrent use.
type Vocab struct {
	tok    Tokenizer
	words  []string
	counts []int64
	index  map[string]int32
}

// CountTokens tokenizes every sentence with tok and counts the tokens.
func CountTokens(sentences []string, tok Tokenizer) map[string]int64 {
	counts := make(map[string]int64)
	var buf []string
	for _, s := range sentences {
		buf = tok.AppendTokens(buf[:0], s)
		for _, w := range buf {
			counts[w]++
		}
	}
	return counts
}

// BuildVocab counts the tokens of sentences with tok and builds a Vocab
// with opt.
func BuildVocab(sentences []string, tok Tokenizer, opt VocabOptions) (*Vocab, error) {
	return NewVocab(CountTokens(sentences, tok), tok, opt)
}

// NewVocab builds a Vocab from word counts. Words below opt.MinCount or
// beyond opt.MaxSize are dropped and their counts added to UnkToken's (a
// "<unk>" key in counts is added there too). Empty words, words with white
// space or control characters, invalid UTF-8 and negative counts are errors.
func NewVocab(counts map[string]int64, tok Tokenizer, opt VocabOptions) (*Vocab, error) {
	if opt.MinCount < 0 || opt.MaxSize < 0 {
		return nil, fmt.Errorf("vocab: MinCount %d and MaxSize %d: expected >= 0", opt.MinCount, opt.MaxSize)
	}
	type wc struct {
		w string
		c int64
	}
	var unk int64
	kept := make([]wc, 0, len(counts))
	for w, c := range counts {
		if c < 0 {
			return nil, fmt.Errorf("vocab: word %q has count %d: expected >= 0", w, c)
		}
		if w == UnkToken {
			unk += c
			continue
		}
		if err := checkVocabWord(w); err != nil {
			return nil, fmt.Errorf("vocab: %w", err)
		}
		if c < opt.MinCount {
			unk += c
			continue
		}
		kept = append(kept, wc{w, c})
	}
	slices.SortFunc(kept, func(a, b wc) int {
		if c := cmp.Compare(b.c, a.c); c != 0 {
			return c
		}
		return strings.Compare(a.w, b.w)
	})
	if opt.MaxSize > 0 && len(kept) > opt.MaxSize {
		for _, x := range kept[opt.MaxSize:] {
			unk += x.c
		}
		kept = kept[:opt.MaxSize]
	}
	words := make([]string, 0, len(kept)+1)
	cs := make([]int64, 0, len(kept)+1)
	words = append(words, UnkToken)
	cs = append(cs, unk)
	for _, x := range kept {
		words = append(words, x.w)
		cs = append(cs, x.c)
	}
	return newVocab(words, cs, tok), nil
}

// NewVocabFromWords builds a Vocab whose id i is words[i], with the given
// counts (nil for all zero). words[0] must be UnkToken; the words must be
// distinct and valid (see NewVocab). The order is kept as given.
func NewVocabFromWords(words []string, counts []int64, tok Tokenizer) (*Vocab, error) {
	if len(words) == 0 || words[0] != UnkToken {
		return nil, fmt.Errorf("vocab: first word must be %q", UnkToken)
	}
	if counts != nil && len(counts) != len(words) {
		return nil, fmt.Errorf("vocab: %d counts for %d words", len(counts), len(words))
	}
	if len(words) > 1<<31-1 {
		return nil, fmt.Errorf("vocab: %d words: expected fewer than 2^31", len(words))
	}
	seen := make(map[string]struct{}, len(words))
	for i, w := range words {
		if i > 0 {
			if err := checkVocabWord(w); err != nil {
				return nil, fmt.Errorf("vocab: word %d: %w", i, err)
			}
		}
		if _, dup := seen[w]; dup {
			return nil, fmt.Errorf("vocab: word %d %q appears twice", i, w)
		}
		seen[w] = struct{}{}
		if counts != nil && counts[i] < 0 {
			return nil, fmt.Errorf("vocab: word %d %q has count %d: expected >= 0", i, w, counts[i])
		}
	}
	cs := make([]int64, len(words))
	copy(cs, counts)
	return newVocab(slices.Clone(words), cs, tok), nil
}

func newVocab(words []string, counts []int64, tok Tokenizer) *Vocab {
	idx := make(map[string]int32, len(words))
	for i, w := range words {
		idx[w] = int32(i)
	}
	return &Vocab{tok: tok, words: words, counts: counts, index: idx}
}

// checkVocabWord rejects words that the text format cannot hold or that no
// Tokenizer can produce.
func checkVocabWord(w string) error {
	if w == "" {
		return errors.New("empty word")
	}
	if !utf8.ValidString(w) {
		return fmt.Errorf("word %q is not valid UTF-8", w)
	}
	if w == UnkToken {
		return fmt.Errorf("word %q is reserved for the unknown token", w)
	}
	for _, r := range w {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("word %q contains white space or a control character", w)
		}
	}
	return nil
}

// Len is the number of ids, UnkToken included.
func (v *Vocab) Len() int { return len(v.words) }

// Tokenizer returns the tokenizer Encode uses.
func (v *Vocab) Tokenizer() Tokenizer { return v.tok }

// ID returns the id of word, UnkID when the vocabulary does not hold it.
func (v *Vocab) ID(word string) int32 {
	if id, ok := v.index[word]; ok {
		return id
	}
	return UnkID
}

// Has reports whether word has an id of its own (UnkToken does).
func (v *Vocab) Has(word string) bool {
	_, ok := v.index[word]
	return ok
}

// Word returns the word of id; it panics when id is out of [0, Len()).
func (v *Vocab) Word(id int32) string { return v.words[id] }

// Count returns the corpus count of id (for UnkToken: the total count of the
// words that were dropped).
func (v *Vocab) Count(id int32) int64 { return v.counts[id] }

// Words returns a copy of the words in id order.
func (v *Vocab) Words() []string { return slices.Clone(v.words) }

// Encode tokenizes sentence with the vocabulary's Tokenizer and returns the
// ids of the tokens, UnkID for unknown ones.
func (v *Vocab) Encode(sentence string) []int32 {
	return v.EncodeTokens(v.tok.Tokenize(sentence))
}

// EncodeTokens returns the ids of already tokenized words.
func (v *Vocab) EncodeTokens(tokens []string) []int32 {
	ids := make([]int32, len(tokens))
	for i, w := range tokens {
		ids[i] = v.ID(w)
	}
	return ids
}

const vocabMagic = "batchsampler-vocab"

// Write writes v in its text format: a header line
//
//	batchsampler-vocab 1 words=N keep_punct=false
//
// then N lines "word<TAB>count" in id order, the first being UnkToken.
func (v *Vocab) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s 1 words=%d keep_punct=%t\n", vocabMagic, len(v.words), v.tok.KeepPunct)
	for i, word := range v.words {
		bw.WriteString(word)
		bw.WriteByte('\t')
		bw.WriteString(strconv.FormatInt(v.counts[i], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Save writes v to path in the format of Write.
func (v *Vocab) Save(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save vocab: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("save vocab: %w", cerr)
		}
	}()
	if err := v.Write(f); err != nil {
		return fmt.Errorf("save vocab %s: %w", path, err)
	}
	return nil
}

// LoadVocab reads a vocabulary written by Save.
func LoadVocab(path string) (*Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load vocab: %w", err)
	}
	defer f.Close()
	return ReadVocab(f, path)
}

// ReadVocab reads a vocabulary in the format of Write from r; file names the
// input in errors (*ParseError with the line). Nothing may follow the last
// word but blank lines.
func ReadVocab(r io.Reader, file string) (*Vocab, error) {
	const maxLine = 1 << 16
	lr := newTextLines(r, file, maxLine)
	line := func() ([]byte, error) {
		b, tooLong, ok, err := lr.next()
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, parseErr(file, lr.line+1, "unexpected end of file")
		case tooLong:
			return nil, parseErr(file, lr.line, "line of %d bytes: expected at most %d", lr.lineLen, maxLine)
		}
		return b, nil
	}
	h, err := line()
	if err != nil {
		return nil, err
	}
	var n int
	var keep bool
	if _, err := fmt.Sscanf(string(h), vocabMagic+" 1 words=%d keep_punct=%t", &n, &keep); err != nil ||
		string(h) != fmt.Sprintf("%s 1 words=%d keep_punct=%t", vocabMagic, n, keep) {
		return nil, parseErr(file, 1, "header %q: expected %q", truncate(string(h), 80), vocabMagic+" 1 words=N keep_punct=BOOL")
	}
	if n < 1 || n > 1<<31-1 {
		return nil, parseErr(file, 1, "words=%d: expected at least 1 (the unknown token) and fewer than 2^31", n)
	}
	words := make([]string, 0, min(n, 1<<20))
	counts := make([]int64, 0, min(n, 1<<20))
	seen := make(map[string]struct{}, min(n, 1<<20))
	for i := 0; i < n; i++ {
		b, err := line()
		if err != nil {
			return nil, err
		}
		w, c, ok := strings.Cut(string(b), "\t")
		if !ok {
			return nil, parseErr(file, lr.line, "%q: expected word<TAB>count", truncate(string(b), 80))
		}
		cnt, err := strconv.ParseInt(c, 10, 64)
		if err != nil || cnt < 0 {
			return nil, parseErr(file, lr.line, "count %q: expected a non-negative integer", truncate(c, 40))
		}
		if i == 0 && w != UnkToken {
			return nil, parseErr(file, lr.line, "first word %q: expected the unknown token %q", truncate(w, 40), UnkToken)
		}
		if i > 0 {
			if err := checkVocabWord(w); err != nil {
				return nil, parseErr(file, lr.line, "%v", err)
			}
		}
		if _, dup := seen[w]; dup {
			return nil, parseErr(file, lr.line, "word %q appears twice", truncate(w, 40))
		}
		seen[w] = struct{}{}
		words = append(words, w)
		counts = append(counts, cnt)
	}
	for {
		b, tooLong, ok, err := lr.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if tooLong || len(strings.TrimSpace(string(b))) > 0 {
			return nil, parseErr(file, lr.line, "data after the %d words the header announced", n)
		}
	}
	v, err := NewVocabFromWords(words, counts, Tokenizer{KeepPunct: keep})
	if err != nil {
		return nil, &ParseError{File: file, Msg: err.Error()}
	}
	return v, nil
}

// truncate shortens s to at most n bytes (on a rune boundary) for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

package data

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string // punctuation dropped
		keep []string // KeepPunct; nil means same as want
	}{
		{"empty", "", nil, nil},
		{"only punctuation", " ... !? ", nil, []string{".", ".", ".", "!", "?"}},
		{"punctuation", "Hello, World!", []string{"hello", "world"}, []string{"hello", ",", "world", "!"}},
		{"case", "ThE QUICK bRoWn", []string{"the", "quick", "brown"}, nil},
		{"apostrophe inside", "Don't stop", []string{"don't", "stop"}, nil},
		{"curly apostrophe", "Don’t, won’t", []string{"don't", "won't"}, []string{"don't", ",", "won't"}},
		{"modifier apostrophe", "Hawaiʼi", []string{"hawai'i"}, nil},
		{"apostrophe at edges", "'tis the dogs' bone", []string{"tis", "the", "dogs", "bone"}, []string{"'", "tis", "the", "dogs", "'", "bone"}},
		{"rock n roll", "rock 'n' roll", []string{"rock", "n", "roll"}, []string{"rock", "'", "n", "'", "roll"}},
		{"double apostrophe", "a''b", []string{"a", "b"}, []string{"a", "'", "'", "b"}},
		{"possessive of number", "the 1990's", []string{"the", "1990's"}, nil},
		{"digits", "In 2024, 1,000 people paid 3.14 each.", []string{"in", "2024", "1,000", "people", "paid", "3.14", "each"}, []string{"in", "2024", ",", "1,000", "people", "paid", "3.14", "each", "."}},
		{"version number", "v2.0.1 rc", []string{"v2.0.1", "rc"}, nil},
		{"decimal point at edges", ".5 and 5.", []string{"5", "and", "5"}, []string{".", "5", "and", "5", "."}},
		{"comma between words", "a,b 1,a", []string{"a", "b", "1", "a"}, []string{"a", ",", "b", "1", ",", "a"}},
		{"hyphen", "well-known state-of-the-art", []string{"well", "known", "state", "of", "the", "art"}, []string{"well", "-", "known", "state", "-", "of", "-", "the", "-", "art"}},
		{"underscore", "snake_case", []string{"snake", "case"}, []string{"snake", "_", "case"}},
		{"accents", "ÉCOLE Straße Ärger", []string{"école", "straße", "ärger"}, nil},
		{"greek", "ΣΟΦΊΑ Ωμέγα", []string{"σοφία", "ωμέγα"}, nil},
		{"cyrillic", "Война и МИР", []string{"война", "и", "мир"}, nil},
		{"turkish dotted I", "İzmir", []string{"izmir"}, nil},
		{"combining mark", "Cafe\u0301 naïve", []string{"cafe\u0301", "naïve"}, nil},
		{"leading combining mark", "\u0301abc", []string{"abc"}, nil},
		{"devanagari", "नमस्ते दुनिया", []string{"नमस्ते", "दुनिया"}, nil},
		{"cjk run", "東京タワーへ行く", []string{"東京タワーへ行く"}, nil},
		{"arabic-indic digits", "٣٤ apples", []string{"٣٤", "apples"}, nil},
		{"superscript and fraction", "x² ½", []string{"x²", "½"}, nil},
		{"emoji", "I ❤️ Go 👍🏽!", []string{"i", "go"}, []string{"i", "❤", "go", "👍", "🏽", "!"}},
		{"zwj sequence", "👨‍👩‍👧 family", []string{"family"}, []string{"👨", "👩", "👧", "family"}},
		{"symbols", "$5 + 3% = €8 @home #tag", []string{"5", "3", "8", "home", "tag"}, []string{"$", "5", "+", "3", "%", "=", "€", "8", "@", "home", "#", "tag"}},
		{"quotes and dashes", "“Yes”—she said…", []string{"yes", "she", "said"}, []string{"“", "yes", "”", "—", "she", "said", "…"}},
		{"unicode spaces", "a\u00a0b\tc\u2003d\ne", []string{"a", "b", "c", "d", "e"}, nil},
		{"control and format chars", "a\x00b\u200bc\u00adD", []string{"a", "b", "c", "d"}, nil},
		{"invalid utf-8", "ab\xffcd\xc3", []string{"ab", "cd"}, nil},
		{"moses tokenised input", "a woman ' s ankle .", []string{"a", "woman", "s", "ankle"}, []string{"a", "woman", "'", "s", "ankle", "."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Tokenize(c.in); !slices.Equal(got, c.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", c.in, got, c.want)
			}
			keep := c.keep
			if keep == nil {
				keep = c.want
			}
			if got := (Tokenizer{KeepPunct: true}).Tokenize(c.in); !slices.Equal(got, keep) {
				t.Errorf("KeepPunct Tokenize(%q) = %q, want %q", c.in, got, keep)
			}
		})
	}
}

func TestTokenizeAppend(t *testing.T) {
	got := Tokenizer{}.AppendTokens([]string{"x"}, "A b")
	if !slices.Equal(got, []string{"x", "a", "b"}) {
		t.Fatalf("AppendTokens = %q", got)
	}
}

func TestBuildVocab(t *testing.T) {
	sents := []string{
		"the cat sat on the mat",
		"the dog sat",
		"a cat and a dog",
		"zebra",
	}
	// counts (15 tokens): the 3, cat 2, sat 2, dog 2, a 2, on 1, mat 1,
	// and 1, zebra 1
	cases := []struct {
		name    string
		opt     VocabOptions
		words   []string
		unkCnt  int64
		wantErr bool
	}{
		{"all", VocabOptions{}, []string{UnkToken, "the", "a", "cat", "dog", "sat", "and", "mat", "on", "zebra"}, 0, false},
		{"min count 2", VocabOptions{MinCount: 2}, []string{UnkToken, "the", "a", "cat", "dog", "sat"}, 4, false},
		{"max size 3 breaks the tie by bytes", VocabOptions{MaxSize: 3}, []string{UnkToken, "the", "a", "cat"}, 8, false},
		{"both", VocabOptions{MinCount: 3, MaxSize: 10}, []string{UnkToken, "the"}, 12, false},
		{"negative", VocabOptions{MinCount: -1}, nil, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := BuildVocab(sents, Tokenizer{}, c.opt)
			if c.wantErr {
				if err == nil {
					t.Fatal("expected an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(v.Words(), c.words) {
				t.Fatalf("words %q, want %q", v.Words(), c.words)
			}
			if v.Count(UnkID) != c.unkCnt {
				t.Errorf("unk count %d, want %d", v.Count(UnkID), c.unkCnt)
			}
			var total int64
			for id := range int32(v.Len()) {
				total += v.Count(id)
				if id > 0 && v.ID(v.Word(id)) != id {
					t.Errorf("ID(Word(%d)) = %d", id, v.ID(v.Word(id)))
				}
			}
			if total != 15 {
				t.Errorf("counts sum to %d, want the 15 tokens", total)
			}
		})
	}
}

func TestVocabDeterministic(t *testing.T) {
	// Many equal counts: the order must not depend on map iteration.
	counts := map[string]int64{}
	for i := range 200 {
		counts[string(rune('a'+i%26))+strings.Repeat("x", i/26)] = int64(i % 3)
	}
	first, err := NewVocab(counts, Tokenizer{}, VocabOptions{MaxSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		v, _ := NewVocab(counts, Tokenizer{}, VocabOptions{MaxSize: 50})
		if !slices.Equal(v.Words(), first.Words()) {
			t.Fatal("vocabulary order differs between builds")
		}
	}
	w := first.Words()
	for i := 2; i < len(w); i++ {
		a, b := first.Count(int32(i-1)), first.Count(int32(i))
		if a < b || (a == b && w[i-1] >= w[i]) {
			t.Fatalf("ids %d,%d out of order: %q(%d) %q(%d)", i-1, i, w[i-1], a, w[i], b)
		}
	}
}

func TestVocabEncode(t *testing.T) {
	v, err := BuildVocab([]string{"The cat's hat. The cat!"}, Tokenizer{}, VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := v.Encode("the CAT’S dog, the hat")
	want := []int32{v.ID("the"), v.ID("cat's"), UnkID, v.ID("the"), v.ID("hat")}
	if !slices.Equal(got, want) || v.ID("dog") != UnkID || v.Has("dog") || !v.Has("cat's") {
		t.Fatalf("Encode = %v, want %v", got, want)
	}
	if v.Word(UnkID) != UnkToken || !v.Has(UnkToken) {
		t.Fatal("id 0 must be the unknown token")
	}
}

func TestNewVocabErrors(t *testing.T) {
	bad := []map[string]int64{
		{"": 1},
		{"a b": 1},
		{"tab\there": 1},
		{"bad\xff": 1},
		{"neg": -1},
	}
	for _, c := range bad {
		if _, err := NewVocab(c, Tokenizer{}, VocabOptions{}); err == nil {
			t.Errorf("NewVocab(%v) succeeded", c)
		}
	}
	v, err := NewVocab(map[string]int64{UnkToken: 4, "a": 2}, Tokenizer{}, VocabOptions{})
	if err != nil || v.Len() != 2 || v.Count(UnkID) != 4 {
		t.Fatalf("an <unk> key must be merged into the unknown count: %v %v", v, err)
	}
	if _, err := NewVocabFromWords([]string{"a", UnkToken}, nil, Tokenizer{}); err == nil {
		t.Error("unknown token not first: no error")
	}
	if _, err := NewVocabFromWords([]string{UnkToken, "a", "a"}, nil, Tokenizer{}); err == nil {
		t.Error("duplicate word: no error")
	}
	if _, err := NewVocabFromWords([]string{UnkToken, "a"}, []int64{1}, Tokenizer{}); err == nil {
		t.Error("count length mismatch: no error")
	}
}

func TestVocabSaveLoad(t *testing.T) {
	v, err := BuildVocab([]string{"Hello, wörld! Hello again 👍", "don't panic"}, Tokenizer{KeepPunct: true}, VocabOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "vocab.txt")
	if err := v.Save(path); err != nil {
		t.Fatal(err)
	}
	w, err := LoadVocab(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Words(), w.Words()) || w.Tokenizer() != v.Tokenizer() {
		t.Fatalf("round trip: %q %v, want %q %v", w.Words(), w.Tokenizer(), v.Words(), v.Tokenizer())
	}
	for id := range int32(v.Len()) {
		if v.Count(id) != w.Count(id) {
			t.Fatalf("count of %q: %d, want %d", v.Word(id), w.Count(id), v.Count(id))
		}
	}
	var buf bytes.Buffer
	if err := v.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if !strings.HasPrefix(good, "batchsampler-vocab 1 words=9 keep_punct=true\n<unk>\t0\nhello\t2\n") {
		t.Fatalf("unexpected format:\n%s", good)
	}
	bad := []struct {
		name, text string
		line       int
	}{
		{"header", strings.Replace(good, "vocab 1", "vocab 2", 1), 1},
		{"header trailing", strings.Replace(good, "keep_punct=true", "keep_punct=true x", 1), 1},
		{"first not unk", strings.Replace(good, "<unk>", "unk", 1), 2},
		{"bad count", strings.Replace(good, "hello\t2", "hello\ttwo", 1), 3},
		{"negative count", strings.Replace(good, "hello\t2", "hello\t-2", 1), 3},
		{"no tab", strings.Replace(good, "hello\t2", "hello 2", 1), 3},
		{"duplicate", strings.Replace(good, "hello\t2", "again\t2", 1), 6},
		{"truncated in a line", good[:len(good)-10], 9},
		{"truncated at a line end", good[:len(good)-7], 10},
		{"extra data", good + "more\t1\n", 11},
		{"zero words", "batchsampler-vocab 1 words=0 keep_punct=false\n", 1},
	}
	for _, c := range bad {
		_, err := ReadVocab(strings.NewReader(c.text), "v.txt")
		var pe *ParseError
		if !errors.As(err, &pe) || pe.File != "v.txt" || pe.Line != c.line {
			t.Errorf("%s: error %v, want a ParseError at v.txt line %d", c.name, err, c.line)
		}
	}
}

func TestReadCorpusFixture(t *testing.T) {
	got, st, err := readCorpusFile(t, filepath.Join("testdata", "text", "corpus.txt"), CorpusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"The first sentence.", "Second one, with spaces around.", "École et café — “quoted”.", "Last line without a newline"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if st != (CorpusStats{Lines: 7, Sentences: 4, Blank: 3}) {
		t.Errorf("stats %+v", st)
	}
}

func readCorpusFile(t *testing.T, path string, opt CorpusOptions) ([]string, CorpusStats, error) {
	t.Helper()
	s1, err1 := ReadCorpus(path, opt)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s2, st, err2 := ReadCorpusFrom(bytes.NewReader(b), path, opt)
	if (err1 == nil) != (err2 == nil) || !slices.Equal(s1, s2) {
		t.Fatalf("ReadCorpus and ReadCorpusFrom disagree: %v / %v", err1, err2)
	}
	return s2, st, err2
}

func TestReadCorpusErrors(t *testing.T) {
	long := strings.Repeat("x", 20)
	cases := []struct {
		name    string
		in      string
		opt     CorpusOptions
		line    int
		msg     string
		skipped CorpusStats // expected stats with SkipBad
	}{
		{"invalid utf-8", "ok\nbad \xff here\nok\n", CorpusOptions{}, 2, "invalid UTF-8 at byte 5", CorpusStats{Lines: 3, Sentences: 2, Invalid: 1}},
		{"truncated rune", "ok\n\n\xe2\x82", CorpusOptions{}, 3, "invalid UTF-8 at byte 1", CorpusStats{Lines: 3, Sentences: 1, Blank: 1, Invalid: 1}},
		{"too long", "ok\n" + long + "\nfine\n", CorpusOptions{MaxLineBytes: 19}, 2, "line of 20 bytes", CorpusStats{Lines: 3, Sentences: 2, TooLong: 1}},
		{"too long crlf", "ok\r\n" + long + "\r\nfine\r\n", CorpusOptions{MaxLineBytes: 19}, 2, "line of 20 bytes", CorpusStats{Lines: 3, Sentences: 2, TooLong: 1}},
		{"too long at eof", "ok\n" + long, CorpusOptions{MaxLineBytes: 19}, 2, "line of 20 bytes", CorpusStats{Lines: 2, Sentences: 1, TooLong: 1}},
		{"far too long", "ok\n" + strings.Repeat("y", 200000) + "\nz\n", CorpusOptions{MaxLineBytes: 10}, 2, "line of 200000 bytes", CorpusStats{Lines: 3, Sentences: 2, TooLong: 1}},
		{"default limit", strings.Repeat("w", DefaultMaxLineBytes+1), CorpusOptions{}, 1, "at most 10000 bytes", CorpusStats{Lines: 1, TooLong: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadCorpusFrom(strings.NewReader(c.in), "corpus.txt", c.opt)
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != "corpus.txt" || pe.Line != c.line || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v: want corpus.txt line %d containing %q", err, c.line, c.msg)
			}
			opt := c.opt
			opt.SkipBad = true
			s, st, err := ReadCorpusFrom(strings.NewReader(c.in), "corpus.txt", opt)
			if err != nil {
				t.Fatal(err)
			}
			if st.FirstSkipped == nil || st.FirstSkipped.Error() != pe.Error() {
				t.Errorf("FirstSkipped %v, want %v", st.FirstSkipped, pe)
			}
			st.FirstSkipped = nil
			if st != c.skipped || len(s) != c.skipped.Sentences || st.Skipped() != c.skipped.Invalid+c.skipped.TooLong {
				t.Errorf("stats %+v, want %+v", st, c.skipped)
			}
		})
	}
	if _, _, err := ReadCorpusFrom(strings.NewReader("a"), "c", CorpusOptions{MaxLineBytes: -1}); err == nil {
		t.Error("negative MaxLineBytes: no error")
	}
	if _, err := ReadCorpus(filepath.Join(t.TempDir(), "missing.txt"), CorpusOptions{}); err == nil {
		t.Error("missing file: no error")
	}
}

func TestReadCorpusLineLimitBoundary(t *testing.T) {
	// A line of exactly MaxLineBytes is accepted with every ending and with
	// a byte order mark (which does not count); one byte more is not.
	for _, max := range []int{1, 2, 5, 100, 70000} {
		exact := strings.Repeat("a", max)
		for _, in := range []string{exact, exact + "\n", exact + "\r\n", "\xef\xbb\xbf" + exact + "\r\n", "b\n" + exact + "\r\nc"} {
			s, _, err := ReadCorpusFrom(strings.NewReader(in), "c", CorpusOptions{MaxLineBytes: max})
			if err != nil || !slices.Contains(s, exact) {
				t.Fatalf("max %d input %q...: %v", max, in[:min(len(in), 12)], err)
			}
			_, _, err = ReadCorpusFrom(strings.NewReader(strings.Replace(in, exact, exact+"a", 1)), "c", CorpusOptions{MaxLineBytes: max})
			if err == nil {
				t.Fatalf("max %d: a line of %d bytes was accepted", max, max+1)
			}
		}
	}
}

func TestReadCorpusShared(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines int
		first string
	}{
		{"wiki_sentences.txt", 11914, "YMCA in South Australia"},
		{"gutenberg_sentences.txt", 127270, "“Well, Prince, so Genoa and Lucca are now just family estates of the Buonapartes."},
	} {
		path := testenv.Path(t, "text", c.name)
		s, err := ReadCorpus(path, CorpusOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(s) != c.lines || s[0] != c.first {
			t.Errorf("%s: %d sentences starting %q, want %d starting %q", c.name, len(s), s[0], c.lines, c.first)
		}
	}
}

package data

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refCorpus is a plain reference implementation of ReadCorpusFrom with
// SkipBad set, on an in-memory input.
func refCorpus(in []byte, max int) ([]string, CorpusStats) {
	var st CorpusStats
	var out []string
	lines := bytes.Split(in, []byte("\n"))
	last := len(lines) - 1 // index of the line without a "\n" ending
	if len(lines[last]) == 0 {
		lines = lines[:last] // the input ended with "\n" (or was empty)
	}
	for i, l := range lines {
		st.Lines++
		if i < last {
			l = bytes.TrimSuffix(l, []byte("\r"))
		}
		if i == 0 {
			l = bytes.TrimPrefix(l, utf8BOM)
		}
		switch {
		case len(l) > max:
			st.TooLong++
		case !utf8.Valid(l):
			st.Invalid++
		default:
			s := strings.TrimFunc(string(l), unicode.IsSpace)
			if s == "" {
				st.Blank++
			} else {
				out = append(out, s)
			}
		}
	}
	st.Sentences = len(out)
	return out, st
}

func FuzzReadCorpus(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "text", "corpus.txt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw, uint8(0))
	f.Add(raw, uint8(20))
	f.Add([]byte("a\r\n\r\nbb\xff\n\xef\xbb\xbf\n"), uint8(1))
	f.Add([]byte("\xef\xbb\xbfabc\r"), uint8(2))
	f.Add([]byte(strings.Repeat("long line ", 30)+"\nshort\n"), uint8(9))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		opt := CorpusOptions{MaxLineBytes: int(max)} // 0 is the default
		limit := DefaultMaxLineBytes
		if max > 0 {
			limit = int(max)
		}
		wantS, wantSt := refCorpus(in, limit)
		s, st, err := ReadCorpusFrom(bytes.NewReader(in), "fuzz.txt", opt)
		if (err == nil) != (wantSt.Skipped() == 0) {
			t.Fatalf("error %v, but the reference skipped %d lines", err, wantSt.Skipped())
		}
		opt.SkipBad = true
		s, st, err = ReadCorpusFrom(bytes.NewReader(in), "fuzz.txt", opt)
		if err != nil {
			t.Fatal(err)
		}
		st.FirstSkipped = nil
		if !slices.Equal(s, wantS) || st != wantSt {
			t.Fatalf("got %q %+v\nwant %q %+v", s, st, wantS, wantSt)
		}
	})
}

func FuzzReadSTS(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "text", "sts-fixture.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte("g\tf\t2012\t1\t2.5\tA\tB\n\ng\tf\t2012\t1\t1e0\t\"x\t\"y\"\tsrc\tsrc\r\n"))
	f.Add([]byte("g\tf\t2012\t1\t5.000\tA\tB\t\t\n"))
	f.Add([]byte("\t\t\t\t0x1p-2\t.\t.\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		pairs, err := ReadSTSFrom(bytes.NewReader(in), "fuzz.csv")
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if n := len(pairs); n > bytes.Count(in, []byte("\n"))+1 {
			t.Fatalf("%d pairs from %d lines", n, bytes.Count(in, []byte("\n"))+1)
		}
		for i, p := range pairs {
			if !(p.Score >= 0 && p.Score <= 5) {
				t.Fatalf("pair %d: score %v", i, p.Score)
			}
			for _, s := range []string{p.S1, p.S2} {
				if s == "" || !utf8.ValidString(s) || strings.ContainsAny(s, "\t\n") || strings.TrimSpace(s) != s {
					t.Fatalf("pair %d: bad sentence %q", i, s)
				}
			}
		}
	})
}

func FuzzReadSICK(f *testing.F) {
	for _, name := range []string{"SICK_annotated_fixture.txt", "SICK_full_fixture.txt"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "text", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte("6\tA b\tC d\t3.3\tNEUTRAL\n"))
	f.Add([]byte("relatedness_score\tsentence_B\tpair_ID\tsentence_A\n2\tB b\t7\tA a\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		pairs, err := ReadSICKFrom(bytes.NewReader(in), "fuzz.txt")
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		for i, p := range pairs {
			if !(p.Score >= 1 && p.Score <= 5) || p.ID == "" || p.S1 == "" || p.S2 == "" {
				t.Fatalf("pair %d: %+v", i, p)
			}
		}
	})
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Hello, World!", "Don’t 3.14 1,000", "I ❤️ Go 👍🏽!", "ΣΟΦΊΑ İzmir Cafe\u0301", "a\xffb '' x'y'z 5.,5", "東京タワー"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, keep bool) {
		tok := Tokenizer{KeepPunct: keep}
		toks := tok.Tokenize(s)
		for _, w := range toks {
			if w == "" || !utf8.ValidString(w) || strings.IndexFunc(w, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
				t.Fatalf("bad token %q from %q", w, s)
			}
			if err := checkVocabWord(w); err != nil {
				t.Fatalf("token %q cannot enter a vocabulary: %v", w, err)
			}
		}
		// Tokenizing the tokens again changes nothing.
		if again := tok.Tokenize(strings.Join(toks, " ")); !slices.Equal(again, toks) {
			t.Fatalf("not idempotent on %q: %q then %q", s, toks, again)
		}
	})
}

func FuzzReadVocab(f *testing.F) {
	v, err := BuildVocab([]string{"Hello, wörld! Hello again 👍", "don't panic"}, Tokenizer{KeepPunct: true}, VocabOptions{})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := v.Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("batchsampler-vocab 1 words=2 keep_punct=false\n<unk>\t0\na\t-1\n"))
	f.Add([]byte("batchsampler-vocab 1 words=99999999999 keep_punct=false\n<unk>\t0\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		v, err := ReadVocab(bytes.NewReader(in), "fuzz.txt")
		if err != nil {
			return
		}
		// What was read writes back to the same vocabulary.
		var out bytes.Buffer
		if err := v.Write(&out); err != nil {
			t.Fatal(err)
		}
		w, err := ReadVocab(&out, "again")
		if err != nil || !slices.Equal(w.Words(), v.Words()) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}

// refSTSLines splits a file as ReadSTSSubsetFrom documents it: lines end at
// "\n" (a "\r" before it is dropped), the last line needs no ending, and a
// byte order mark opens the first line.
func refSTSLines(in []byte) []string {
	if len(in) == 0 {
		return nil
	}
	lines := strings.Split(string(in), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i := range lines {
		if i < len(lines)-1 || strings.HasSuffix(string(in), "\n") {
			lines[i] = strings.TrimSuffix(lines[i], "\r")
		}
	}
	if len(lines) > 0 {
		lines[0] = strings.TrimPrefix(lines[0], "\ufeff")
	}
	return lines
}

// refSTSSubset is a plain reading of an STS subset (SentEval's loadFile with
// the documented differences); ok is false where the reader must fail.
func refSTSSubset(input, gold []byte) (pairs []STSPair, unscored int, ok bool) {
	in, gs := refSTSLines(input), refSTSLines(gold)
	for _, l := range append(slices.Clone(in), gs...) {
		if !utf8.ValidString(l) {
			return nil, 0, false
		}
	}
	if len(in) != len(gs) {
		return nil, 0, false
	}
	for i, l := range in {
		f := strings.Split(l, "\t")
		if len(f) < 2 {
			return nil, 0, false
		}
		g := strings.TrimFunc(gs[i], unicode.IsSpace)
		if g == "" {
			unscored++
			continue
		}
		v, err := strconv.ParseFloat(g, 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 5 {
			return nil, 0, false
		}
		pairs = append(pairs, STSPair{strings.TrimFunc(f[0], unicode.IsSpace), strings.TrimFunc(f[1], unicode.IsSpace), v})
	}
	return pairs, unscored, len(pairs) > 0
}

func FuzzReadSTSSubset(f *testing.F) {
	f.Add([]byte("A b.\tC d.\r\nE\tF\tsrc\tsrc\n\"q\tr\"\n"), []byte("\xef\xbb\xbf4.2\r\n\n1e0"))
	f.Add([]byte("\xef\xbb\xbfA\tB"), []byte(" 5 \n"))
	f.Add([]byte("A\tB\nC\tD\n"), []byte("\n\n"))
	f.Add([]byte("A\tB\n\nC"), []byte("1\n2\n3\n"))
	f.Add([]byte("A\t\xffB\n"), []byte("0x1p1\n"))
	f.Fuzz(func(t *testing.T, input, gold []byte) {
		got, err := ReadSTSSubsetFrom(bytes.NewReader(input), "in.txt", bytes.NewReader(gold), "gs.txt")
		want, unscored, ok := refSTSSubset(input, gold)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if ok {
				t.Fatalf("error %v, but the reference reads %d pairs", err, len(want))
			}
			return
		}
		if !ok {
			t.Fatalf("read %+v, but the reference fails", got)
		}
		if !slices.Equal(got.Pairs, want) || got.Unscored != unscored || got.Lines != len(want)+unscored {
			t.Fatalf("got %+v\nwant %+v, %d unscored", got, want, unscored)
		}
	})
}

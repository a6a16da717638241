package data

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxLineBytes is the longest corpus line (in bytes, without the line
// ending) ReadCorpus accepts when CorpusOptions.MaxLineBytes is 0. The
// longest line of the shared corpora is a few hundred bytes; a line of more
// than 10,000 bytes is almost surely not a sentence (a table, a binary file,
// a file with the wrong line endings).
const DefaultMaxLineBytes = 10000

// CorpusOptions controls ReadCorpus.
type CorpusOptions struct {
	// MaxLineBytes is the longest accepted line in bytes, not counting the
	// "\n" or "\r\n" ending; 0 means DefaultMaxLineBytes. Negative is an error.
	MaxLineBytes int
	// SkipBad skips lines that are not valid UTF-8 or are longer than
	// MaxLineBytes, counting them in CorpusStats, instead of failing on the
	// first one.
	SkipBad bool
}

// CorpusStats describes what ReadCorpusFrom read.
type CorpusStats struct {
	Lines     int // lines in the input (a last line without "\n" counts)
	Sentences int // sentences returned
	Blank     int // lines that were empty or only white space
	Invalid   int // lines skipped because they were not valid UTF-8 (SkipBad)
	TooLong   int // lines skipped because they exceeded MaxLineBytes (SkipBad)
	// FirstSkipped is the error describing the first skipped line, nil when
	// none was skipped.
	FirstSkipped error
}

// Skipped is the number of lines skipped as bad (Invalid + TooLong).
func (s CorpusStats) Skipped() int { return s.Invalid + s.TooLong }

// ReadCorpus reads a sentence corpus: a UTF-8 text file with one sentence a
// line. Line endings "\n" and "\r\n" are accepted and a leading UTF-8 byte
// order mark is ignored. Each sentence is trimmed of surrounding Unicode
// white space; lines that are empty after trimming are skipped. A line that
// is not valid UTF-8 or is longer than opt.MaxLineBytes is an error (a
// *ParseError naming the file and the 1-based line) unless opt.SkipBad is
// set, in which case it is skipped. Use ReadCorpusFrom to learn how many
// lines were skipped.
func ReadCorpus(path string, opt CorpusOptions) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read corpus: %w", err)
	}
	defer f.Close()
	s, _, err := ReadCorpusFrom(f, path, opt)
	return s, err
}

// ReadCorpusFrom is ReadCorpus on a reader; file names the input in errors.
// It also returns statistics on the lines read (blank and skipped lines).
func ReadCorpusFrom(r io.Reader, file string, opt CorpusOptions) ([]string, CorpusStats, error) {
	var st CorpusStats
	maxLen := opt.MaxLineBytes
	if maxLen < 0 {
		return nil, st, fmt.Errorf("read corpus %s: CorpusOptions.MaxLineBytes = %d: expected >= 0 (0 for the default %d)", file, maxLen, DefaultMaxLineBytes)
	}
	if maxLen == 0 {
		maxLen = DefaultMaxLineBytes
	}
	lr := newTextLines(r, file, maxLen)
	var out []string
	for {
		b, tooLong, ok, err := lr.next()
		if err != nil {
			return nil, st, err
		}
		if !ok {
			break
		}
		st.Lines++
		var bad error
		switch {
		case tooLong:
			bad = parseErr(file, lr.line, "line of %d bytes: expected at most %d bytes (CorpusOptions.MaxLineBytes)", lr.lineLen, maxLen)
			st.TooLong++
		case !utf8.Valid(b):
			bad = parseErr(file, lr.line, "invalid UTF-8 at byte %d of the line: expected UTF-8 text", invalidUTF8At(b)+1)
			st.Invalid++
		}
		if bad != nil {
			if !opt.SkipBad {
				return nil, st, bad
			}
			if st.FirstSkipped == nil {
				st.FirstSkipped = bad
			}
			continue
		}
		s := strings.TrimFunc(string(b), unicode.IsSpace)
		if s == "" {
			st.Blank++
			continue
		}
		out = append(out, s)
	}
	st.Sentences = len(out)
	return out, st, nil
}

// invalidUTF8At returns the index of the first byte of b that does not start
// a valid UTF-8 encoding, or -1 when b is valid.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// textLines reads lines of any content (blank ones included) with a length
// limit: a line longer than max bytes is consumed without being kept.
type textLines struct {
	br      *bufio.Reader
	file    string
	max     int
	line    int // 1-based number of the line returned last
	lineLen int // length in bytes of the line returned last (without its ending)
	buf     []byte
	done    bool
}

func newTextLines(r io.Reader, file string, max int) *textLines {
	return &textLines{br: bufio.NewReaderSize(r, 1<<16), file: file, max: max}
}

// nextText is next for readers that take every line as text: a line of
// more than max bytes or not in UTF-8 is an error (a *ParseError naming
// the file and the line), so ok false means the end of the input.
func (t *textLines) nextText() (b []byte, ok bool, err error) {
	b, tooLong, ok, err := t.next()
	switch {
	case err != nil || !ok:
		return nil, false, err
	case tooLong:
		return nil, false, parseErr(t.file, t.line, "line of %d bytes: expected at most %d", t.lineLen, t.max)
	case !utf8.Valid(b):
		return nil, false, parseErr(t.file, t.line, "invalid UTF-8 at byte %d of the line: expected UTF-8 text", invalidUTF8At(b)+1)
	}
	return b, true, nil
}

// next returns the next line without its "\n" or "\r\n" ending (and without
// a leading byte order mark on line 1). tooLong reports a line of more than
// max bytes, in which case b is nil and only lineLen is set. ok is false at
// the end of the input. b is valid until the following call.
func (t *textLines) next() (b []byte, tooLong, ok bool, err error) {
	if t.done {
		return nil, false, false, nil
	}
	t.buf = t.buf[:0]
	keep := t.max + len(utf8BOM) + 2 // room for a BOM and "\r\n" around max bytes
	n := 0                           // bytes of the line, ending included
	var tail [2]byte                 // the last two bytes of the line
	for {
		frag, e := t.br.ReadSlice('\n')
		n += len(frag)
		if room := keep - len(t.buf); room > 0 {
			t.buf = append(t.buf, frag[:min(room, len(frag))]...)
		}
		for _, c := range frag[max(0, len(frag)-2):] {
			tail[0], tail[1] = tail[1], c
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if e == io.EOF {
			t.done = true
			if n == 0 {
				return nil, false, false, nil
			}
		} else if e != nil {
			return nil, false, false, fmt.Errorf("%s line %d: %w", t.file, t.line+1, e)
		}
		break
	}
	t.line++
	end := 0
	if tail[1] == '\n' {
		end = 1
		if n >= 2 && tail[0] == '\r' {
			end = 2
		}
	}
	start := 0
	if t.line == 1 && bytes.HasPrefix(t.buf, utf8BOM) {
		start = len(utf8BOM)
	}
	t.lineLen = n - end - start
	if t.lineLen > t.max {
		return nil, true, true, nil
	}
	return t.buf[start : start+t.lineLen], false, true, nil
}

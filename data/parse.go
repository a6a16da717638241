package data

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
)

// ParseError reports malformed input: the file, the 1-based line (0 when the
// problem concerns the file as a whole) and what was expected.
type ParseError struct {
	File string // the file as it was named to the reader
	Line int    // 1-based line number; 0 for whole-file problems
	Msg  string // what was found and what was expected
}

// Error implements error as "FILE line N: MSG".
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

func parseErr(file string, line int, format string, args ...any) error {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// readPath opens the file at path and hands it to the reader from with
// path as its name in errors; a file that cannot be opened is an error
// "what: …" (what names the reading, as "read STS").
func readPath[T any](path, what string, from func(io.Reader, string) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	return from(f, path)
}

// lineReader yields the non-blank lines of a text file, trimmed of
// surrounding blanks and of "\r\n"/"\n". Blank lines are tolerated only at
// the end of the file.
type lineReader struct {
	br      *bufio.Reader
	file    string
	line    int // number of the line returned last (1-based)
	blankAt int // first blank line seen so far, 0 if none
	long    []byte
	done    bool
}

func newLineReader(r io.Reader, file string) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < 1<<16 {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	return &lineReader{br: br, file: file}
}

var utf8BOM = []byte("\xef\xbb\xbf")

// next returns the next non-blank line, or ok == false at the end of the
// file. The returned slice is valid until the following call.
func (r *lineReader) next() (b []byte, ok bool, err error) {
	for !r.done {
		b, err = r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.long = append(r.long[:0], b...)
			for err == bufio.ErrBufferFull {
				b, err = r.br.ReadSlice('\n')
				r.long = append(r.long, b...)
			}
			b = r.long
		}
		if err == io.EOF {
			r.done = true
			if len(b) == 0 {
				break
			}
		} else if err != nil {
			return nil, false, fmt.Errorf("%s line %d: %w", r.file, r.line+1, err)
		}
		r.line++
		if r.line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM)
		}
		b = trimBlank(b)
		if len(b) == 0 {
			if r.blankAt == 0 {
				r.blankAt = r.line
			}
			continue
		}
		if r.blankAt != 0 {
			return nil, false, parseErr(r.file, r.blankAt, "blank line: expected data (blank lines are allowed only at the end of the file)")
		}
		return b, true, nil
	}
	return nil, false, nil
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func trimBlank(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isBlank(b[i]) {
		i++
	}
	for j > i && isBlank(b[j-1]) {
		j--
	}
	return b[i:j]
}

func skipBlank(b []byte, i int) int {
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	return i
}

// scanInt parses a decimal integer (optional sign) starting at b[i]. It
// returns the value and the index after the last digit; ok is false when
// there is no digit or the value overflows int64.
func scanInt(b []byte, i int) (v int64, j int, ok bool) {
	neg := false
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	start := i
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var u uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		d := uint64(b[i] - '0')
		if u > (limit-d)/10 {
			return 0, i, false
		}
		u = u*10 + d
		i++
	}
	if i == start {
		return 0, i, false
	}
	if neg {
		return -int64(u), i, true // -(1<<63) wraps to MinInt64, as wanted
	}
	return int64(u), i, true
}

// quote shortens a line for an error message.
func quote(b []byte) string {
	if len(b) > 60 {
		return strconv.Quote(string(b[:57])) + "..."
	}
	return strconv.Quote(string(b))
}

// parseOneInt parses a line holding exactly one integer.
func parseOneInt(b []byte) (int64, bool) {
	v, j, ok := scanInt(b, skipBlank(b, 0))
	if !ok || skipBlank(b, j) != len(b) {
		return 0, false
	}
	return v, true
}

// parseTwoInts parses "a, b", "a,b" or "a b".
func parseTwoInts(b []byte) (x, y int64, ok bool) {
	x, j, ok := scanInt(b, skipBlank(b, 0))
	if !ok {
		return 0, 0, false
	}
	k := skipBlank(b, j)
	if k < len(b) && b[k] == ',' {
		k = skipBlank(b, k+1)
	} else if k == j {
		return 0, 0, false // neither a comma nor a blank between the numbers
	}
	y, j, ok = scanInt(b, k)
	if !ok || skipBlank(b, j) != len(b) {
		return 0, 0, false
	}
	return x, y, true
}

// parseFloat32 parses one finite float32.
func parseFloat32(s []byte) (float32, bool) {
	f, err := strconv.ParseFloat(string(s), 32)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return float32(f), true
}

// classIndex maps raw class values to 0..C-1 in sorted order.
func classIndex(raw []int64) (idx []int, values []int) {
	u := slices.Clone(raw)
	slices.Sort(u)
	u = slices.Compact(u)
	values = make([]int, len(u))
	for i, v := range u {
		values[i] = int(v)
	}
	idx = make([]int, len(raw))
	for i, v := range raw {
		k, _ := slices.BinarySearch(u, v)
		idx[i] = k
	}
	return idx, values
}

// edgeDedup turns directed adjacency entries into undirected edges stored
// once with u <= v (self-loops once), sorted by (u, v). Its buffers are
// reused between calls.
type edgeDedup struct {
	start []int32
	cur   []int32
	keys  []uint64
}

// build deduplicates the entries (a[i], b[i]), all in [0, n). It appends the
// edges to out and, when first != nil, the index of the first entry of each
// edge to *first.
func (d *edgeDedup) build(n int, a, b []int32, out [][2]int32, first *[]int32) [][2]int32 {
	d.start = slices.Grow(d.start[:0], n+1)[:n+1]
	clear(d.start)
	for i := range a {
		lo := min(a[i], b[i])
		d.start[lo+1]++
	}
	for u := 1; u <= n; u++ {
		d.start[u] += d.start[u-1]
	}
	d.cur = append(d.cur[:0], d.start[:n]...)
	d.keys = slices.Grow(d.keys[:0], len(a))[:len(a)]
	for i := range a {
		lo, hi := a[i], b[i]
		if lo > hi {
			lo, hi = hi, lo
		}
		d.keys[d.cur[lo]] = uint64(hi)<<32 | uint64(uint32(i))
		d.cur[lo]++
	}
	for u := 0; u < n; u++ {
		seg := d.keys[d.start[u]:d.start[u+1]]
		if len(seg) > 1 {
			slices.Sort(seg)
		}
		prev := int64(-1)
		for _, k := range seg {
			v := int64(k >> 32)
			if v == prev {
				continue
			}
			prev = v
			out = append(out, [2]int32{int32(u), int32(v)})
			if first != nil {
				*first = append(*first, int32(uint32(k)))
			}
		}
	}
	return out
}

// Package npy reads and writes NumPy .npy files strictly: the header
// (format versions 1.0, 2.0 and 3.0, a dict with exactly the keys 'descr',
// 'fortran_order' and 'shape') and the data of simple numeric dtypes, as
// numpy.save writes them.
//
// It exists next to the module's general reader (codeberg.org/sbinet/npyio)
// for three reasons: embeddings of a million rows are read straight into a
// []float32 (no per-element reflection), float16 is converted on the fly
// (or kept as float16 bits, ReadFloat16Matrix, at half the memory), and
// every failure says what was expected (the dtype, the shape, how many
// bytes were missing), which an HTTP server can hand back to its client.
// The reader never allocates more than the caller's byte limit, whatever a
// header claims, so it is safe on untrusted input (FuzzRead checks that it
// never panics).
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// Magic is the first six bytes of every .npy file.
const Magic = "\x93NUMPY"

// MaxHeaderLen bounds the header dict a reader accepts (numpy itself
// refuses headers over 10,000 bytes by default).
const MaxHeaderLen = 1 << 16

// maxDims bounds the number of dimensions of a shape (numpy's NPY_MAXDIMS
// is 32 or 64).
const maxDims = 64

// DType is a simple numeric dtype: Kind 'f' (float), 'i' (signed int), 'u'
// (unsigned int) or 'b' (bool), Size bytes, and byte order.
type DType struct {
	Kind      byte
	Size      int
	BigEndian bool
}

// String is the dtype's descr as numpy writes it: "<f4", ">i8", "|u1".
func (t DType) String() string {
	o := byte('<')
	switch {
	case t.Size == 1:
		o = '|'
	case t.BigEndian:
		o = '>'
	}
	return fmt.Sprintf("%c%c%d", o, t.Kind, t.Size)
}

// Common dtypes.
var (
	Float16 = DType{Kind: 'f', Size: 2}
	Float32 = DType{Kind: 'f', Size: 4}
	Float64 = DType{Kind: 'f', Size: 8}
	Int32   = DType{Kind: 'i', Size: 4}
	Int64   = DType{Kind: 'i', Size: 8}
)

// Header is a parsed .npy header.
type Header struct {
	// Major and Minor are the format version (1.0, 2.0 or 3.0).
	Major, Minor byte
	// DType is the parsed 'descr'.
	DType DType
	// Fortran is 'fortran_order'.
	Fortran bool
	// Shape is 'shape'; () is a scalar (one element).
	Shape []int
	// Len is the number of bytes before the data (magic, version, header
	// length field and header).
	Len int
}

// Elements returns the number of elements the shape holds.
func (h Header) Elements() int64 {
	n := int64(1)
	for _, d := range h.Shape {
		n *= int64(d) // checked against overflow by ReadHeader
	}
	return n
}

// DataBytes returns the size of the data in bytes.
func (h Header) DataBytes() int64 { return h.Elements() * int64(h.DType.Size) }

// ShapeString formats the shape as Python does: "(3, 4)", "(5,)", "()".
func ShapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.Itoa(d)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Matrix returns the rows and columns of a 2-D C-order array; any other
// shape or Fortran order is an error that says so.
func (h Header) Matrix() (rows, cols int, err error) {
	if len(h.Shape) != 2 {
		return 0, 0, fmt.Errorf("npy: shape %s: want a 2-D array (rows, columns)", ShapeString(h.Shape))
	}
	if h.Fortran {
		return 0, 0, errors.New("npy: fortran_order is True: want a C-order array (numpy.ascontiguousarray before numpy.save)")
	}
	return h.Shape[0], h.Shape[1], nil
}

// CheckSize checks, before any data is read, that an input of total bytes
// (header included; a file's or a request body's size) holds exactly the
// header's data: fewer bytes give the truncation error the readers would
// give at the end, more the trailing-data error.
func (h Header) CheckSize(total int64) error {
	have, want := total-int64(h.Len), h.DataBytes()
	switch {
	case have < want:
		return fmt.Errorf("npy: data truncated: got %d of %d bytes (shape %s of %s)", max(have, 0), want, ShapeString(h.Shape), h.DType)
	case have > want:
		return fmt.Errorf("npy: data continues after the array (numpy.save writes nothing after it): %d bytes more than the %d of shape %s of %s", have-want, want, ShapeString(h.Shape), h.DType)
	}
	return nil
}

// ReadHeader reads and checks the magic, the version and the header dict.
func ReadHeader(r io.Reader) (Header, error) {
	var pre [10]byte
	if n, err := io.ReadFull(r, pre[:8]); err != nil {
		if n == 0 && err == io.EOF {
			return Header{}, errors.New("npy: empty input: want a .npy file (magic \\x93NUMPY)")
		}
		return Header{}, fmt.Errorf("npy: %d bytes, shorter than the magic and version (8 bytes)", n)
	}
	if string(pre[:6]) != Magic {
		return Header{}, fmt.Errorf("npy: starts with %q, want the magic %q: not a .npy file", pre[:6], Magic)
	}
	h := Header{Major: pre[6], Minor: pre[7]}
	var hlen int
	switch h.Major {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return Header{}, errors.New("npy: truncated in the header length field")
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
		h.Len = 10
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return Header{}, errors.New("npy: truncated in the header length field")
		}
		n := binary.LittleEndian.Uint32(l[:])
		if n > MaxHeaderLen {
			return Header{}, fmt.Errorf("npy: header of %d bytes, want at most %d", n, MaxHeaderLen)
		}
		hlen = int(n)
		h.Len = 12
	default:
		return Header{}, fmt.Errorf("npy: format version %d.%d, want 1.0, 2.0 or 3.0", h.Major, h.Minor)
	}
	if h.Minor != 0 {
		return Header{}, fmt.Errorf("npy: format version %d.%d, want 1.0, 2.0 or 3.0", h.Major, h.Minor)
	}
	buf := make([]byte, hlen)
	if n, err := io.ReadFull(r, buf); err != nil {
		return Header{}, fmt.Errorf("npy: header truncated: got %d of %d bytes", n, hlen)
	}
	h.Len += hlen
	if err := parseDict(string(buf), &h); err != nil {
		return Header{}, fmt.Errorf("npy: header %q: %w", clip(string(buf), 120), err)
	}
	return h, nil
}

func clip(s string, n int) string {
	s = strings.TrimRight(s, " \n")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// parseDict parses the header dict: a Python literal with exactly the keys
// 'descr' (a simple dtype string), 'fortran_order' (True or False) and
// 'shape' (a tuple of non-negative ints), then spaces and a newline.
func parseDict(s string, h *Header) error {
	p := &lexer{s: s}
	if !p.eat('{') {
		return errors.New("want a dict starting with '{'")
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return fmt.Errorf("dict key: %w", err)
		}
		if seen[key] {
			return fmt.Errorf("key %q appears twice", key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return fmt.Errorf("want ':' after key %q", key)
		}
		p.space()
		switch key {
		case "descr":
			if p.peek() == '[' || p.peek() == '(' {
				return errors.New("descr is a structured dtype: want a simple numeric dtype such as '<f4'")
			}
			d, err := p.str()
			if err != nil {
				return fmt.Errorf("descr: %w", err)
			}
			if h.DType, err = ParseDType(d); err != nil {
				return err
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				h.Fortran = true
			case p.word("False"):
				h.Fortran = false
			default:
				return errors.New("fortran_order: want True or False")
			}
		case "shape":
			shape, err := p.tuple()
			if err != nil {
				return fmt.Errorf("shape: %w", err)
			}
			h.Shape = shape
		default:
			return fmt.Errorf("unexpected key %q: want exactly 'descr', 'fortran_order' and 'shape'", key)
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return errors.New("want ',' or '}' after a value")
		}
		break
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return fmt.Errorf("key %q is missing", k)
		}
	}
	rest, ok := strings.CutSuffix(s[p.i:], "\n")
	if !ok {
		return errors.New("does not end with a newline")
	}
	if rest = strings.Trim(rest, " \t\x00"); rest != "" {
		return fmt.Errorf("unexpected %q after the dict", clip(rest, 20))
	}
	// The element count and the byte count must fit in an int64.
	n := int64(1)
	for _, d := range h.Shape {
		if d != 0 && n > math.MaxInt64/int64(d) {
			return fmt.Errorf("shape %s: too many elements", ShapeString(h.Shape))
		}
		n *= int64(d)
	}
	if n > math.MaxInt64/8 {
		return fmt.Errorf("shape %s: too many elements", ShapeString(h.Shape))
	}
	return nil
}

// ParseDType parses a simple dtype string: byte order '<', '>', '|' or '='
// (native: little-endian here), kind f, i, u or b, and a size.
func ParseDType(d string) (DType, error) {
	bad := func() (DType, error) {
		return DType{}, fmt.Errorf("descr %q: want a simple numeric dtype such as '<f4', '<f2', '<f8', '<i4' or '<i8'", d)
	}
	if len(d) < 3 {
		return bad()
	}
	var t DType
	switch d[0] {
	case '<', '=':
	case '>':
		t.BigEndian = true
	case '|':
	default:
		return bad()
	}
	t.Kind = d[1]
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return bad()
	}
	t.Size = size
	ok := false
	switch t.Kind {
	case 'f':
		ok = size == 2 || size == 4 || size == 8
	case 'i', 'u':
		ok = size == 1 || size == 2 || size == 4 || size == 8
	case 'b':
		ok = size == 1
	}
	if !ok {
		return bad()
	}
	if size == 1 {
		t.BigEndian = false
	} else if d[0] == '|' {
		return bad() // a multi-byte type needs a byte order
	}
	return t, nil
}

type lexer struct {
	s string
	i int
}

func (p *lexer) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *lexer) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *lexer) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *lexer) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *lexer) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", errors.New("want a quoted string")
	}
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.ContainsAny(v, "\\\n") {
		return "", errors.New("escapes or newlines in a string")
	}
	p.i += end + 2
	return v, nil
}

// tuple reads (), (3,), (3, 4) or (3, 4,).
func (p *lexer) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, errors.New("want a tuple such as (3, 4)")
	}
	shape := []int{}
	comma := false // the last element was followed by a comma
	for {
		p.space()
		if p.eat(')') {
			break
		}
		j := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		if j == p.i {
			return nil, errors.New("want non-negative integers")
		}
		if p.i-j > 18 {
			return nil, fmt.Errorf("dimension %s is too large", p.s[j:p.i])
		}
		v, _ := strconv.ParseInt(p.s[j:p.i], 10, 64)
		shape = append(shape, int(v))
		if len(shape) > maxDims {
			return nil, fmt.Errorf("more than %d dimensions", maxDims)
		}
		p.space()
		if comma = p.eat(','); comma {
			continue
		}
		p.space()
		if !p.eat(')') {
			return nil, errors.New("want ',' or ')' in the tuple")
		}
		break
	}
	if len(shape) == 1 && !comma {
		// "(3)" is an int in Python, not a tuple; numpy always writes "(3,)".
		return nil, errors.New("a one-element tuple needs a trailing comma, as in (3,)")
	}
	return shape, nil
}

// ErrLimit is wrapped by the errors of data larger than the reader's limit.
var ErrLimit = errors.New("larger than the limit")

// Float32Matrix is an N×D row-major float32 matrix read from a .npy file.
type Float32Matrix struct {
	Rows, Cols int
	Data       []float32
	// From is the dtype the file held (float16, float32 or float64).
	From DType
}

// Int32Matrix is an N×K row-major int32 matrix read from a .npy file.
type Int32Matrix struct {
	Rows, Cols int
	Data       []int32
	From       DType
}

// ReadFloat32Matrix reads a whole .npy file holding a 2-D C-order float16,
// float32 or float64 array, converting it to float32; maxBytes bounds the
// data size the header may declare (0: no bound). Data after the array is
// an error (numpy.save writes none).
func ReadFloat32Matrix(r io.Reader, maxBytes int64) (Float32Matrix, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return Float32Matrix{}, err
	}
	if h.DType.Kind != 'f' {
		return Float32Matrix{}, fmt.Errorf("npy: dtype %s: want float16, float32 or float64 ('<f2', '<f4', '<f8')", h.DType)
	}
	rows, cols, err := h.Matrix()
	if err != nil {
		return Float32Matrix{}, err
	}
	if err := checkLimit(h, maxBytes); err != nil {
		return Float32Matrix{}, err
	}
	m := Float32Matrix{Rows: rows, Cols: cols, Data: make([]float32, rows*cols), From: h.DType}
	if err := ReadFloat32s(r, h, m.Data); err != nil {
		return Float32Matrix{}, err
	}
	return m, ExpectEOF(r)
}

// Float16Matrix is an N×D row-major matrix of IEEE 754 half-precision
// values (their bits) read from a .npy file, for programs that keep
// float16 data at half the memory of float32.
type Float16Matrix struct {
	Rows, Cols int
	Bits       []uint16
	// From is the dtype the file held (float16; float32 or float64 when
	// rounding was asked for).
	From DType
}

// ReadFloat16Matrix reads a whole .npy file holding a 2-D C-order float
// array as float16 bits: float16 data exactly as stored; float32 or float64
// data only with round set, rounded to the nearest float16 (ties to even,
// magnitudes from 65520 up to ±Inf: ReadFloat16s). maxBytes bounds the
// data size the header may declare, as for ReadFloat32Matrix.
func ReadFloat16Matrix(r io.Reader, maxBytes int64, round bool) (Float16Matrix, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return Float16Matrix{}, err
	}
	if h.DType.Kind != 'f' || (h.DType.Size != 2 && !round) {
		if round {
			return Float16Matrix{}, fmt.Errorf("npy: dtype %s: want float16, float32 or float64 ('<f2', '<f4', '<f8')", h.DType)
		}
		return Float16Matrix{}, fmt.Errorf("npy: dtype %s: want float16 ('<f2'); float32 or float64 only when rounding to float16 is asked for", h.DType)
	}
	rows, cols, err := h.Matrix()
	if err != nil {
		return Float16Matrix{}, err
	}
	if err := checkLimit(h, maxBytes); err != nil {
		return Float16Matrix{}, err
	}
	m := Float16Matrix{Rows: rows, Cols: cols, Bits: make([]uint16, rows*cols), From: h.DType}
	if err := ReadFloat16s(r, h, m.Bits); err != nil {
		return Float16Matrix{}, err
	}
	return m, ExpectEOF(r)
}

// ReadInt32Matrix reads a whole .npy file holding a 2-D C-order int32 or
// int64 array (int64 values must fit in an int32); maxBytes as for
// ReadFloat32Matrix.
func ReadInt32Matrix(r io.Reader, maxBytes int64) (Int32Matrix, error) {
	h, err := ReadHeader(r)
	if err != nil {
		return Int32Matrix{}, err
	}
	if h.DType.Kind != 'i' || (h.DType.Size != 4 && h.DType.Size != 8) {
		return Int32Matrix{}, fmt.Errorf("npy: dtype %s: want int32 or int64 ('<i4', '<i8')", h.DType)
	}
	rows, cols, err := h.Matrix()
	if err != nil {
		return Int32Matrix{}, err
	}
	if err := checkLimit(h, maxBytes); err != nil {
		return Int32Matrix{}, err
	}
	m := Int32Matrix{Rows: rows, Cols: cols, Data: make([]int32, rows*cols), From: h.DType}
	if err := ReadInt32s(r, h, m.Data); err != nil {
		return Int32Matrix{}, err
	}
	return m, ExpectEOF(r)
}

func checkLimit(h Header, maxBytes int64) error {
	if maxBytes > 0 && h.DataBytes() > maxBytes {
		return fmt.Errorf("npy: shape %s of %s is %d bytes, %w of %d bytes", ShapeString(h.Shape), h.DType, h.DataBytes(), ErrLimit, maxBytes)
	}
	if h.Elements() > math.MaxInt32*int64(1<<16) {
		return fmt.Errorf("npy: shape %s: too many elements", ShapeString(h.Shape))
	}
	return nil
}

// ExpectEOF returns an error when r has data left.
func ExpectEOF(r io.Reader) error {
	var b [1]byte
	n, err := r.Read(b[:])
	for i := 0; i < 100 && n == 0 && err == nil; i++ {
		n, err = r.Read(b[:])
	}
	if n > 0 {
		return errors.New("npy: data continues after the array (numpy.save writes nothing after it): not one .npy array")
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("npy: after the array: %w", err)
	}
	return nil
}

// chunkBytes is the size of the conversion buffer.
const chunkBytes = 1 << 20

var littleEndianHost = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// truncated is the error of data that ended early.
func truncated(h Header, got, want int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("npy: data truncated: got %d of %d bytes (shape %s of %s)", got, want, ShapeString(h.Shape), h.DType)
	}
	return fmt.Errorf("npy: data: after %d of %d bytes: %w", got, want, err)
}

// ReadFloat32s reads the data of a float16, float32 or float64 array with
// header h into dst (len(dst) must be h.Elements()), converting to float32.
func ReadFloat32s(r io.Reader, h Header, dst []float32) error {
	return readFloats(r, h, dst, 4, func(bits uint64, size int) float32 {
		switch size {
		case 2:
			return Float16ToFloat32(uint16(bits))
		case 4:
			return math.Float32frombits(uint32(bits))
		}
		return float32(math.Float64frombits(bits))
	})
}

// ReadFloat16s reads the data of a float16, float32 or float64 array with
// header h into dst (len(dst) must be h.Elements()) as float16 bits:
// float16 values are copied exactly (NaN payloads included), float32 and
// float64 values are rounded by Float64ToFloat16 (so a finite value of
// magnitude 65520 or more becomes ±Inf, for the caller to reject).
func ReadFloat16s(r io.Reader, h Header, dst []uint16) error {
	return readFloats(r, h, dst, 2, func(bits uint64, size int) uint16 {
		switch size {
		case 2:
			return uint16(bits)
		case 4:
			return Float64ToFloat16(float64(math.Float32frombits(uint32(bits))))
		}
		return Float64ToFloat16(math.Float64frombits(bits))
	})
}

// readFloats reads the data of a float array with header h into dst: a
// file of dst's own little-endian dtype (native bytes) is read straight
// into dst, any other float16/32/64 value by conv from its bits and size
// in bytes.
func readFloats[T float32 | uint16](r io.Reader, h Header, dst []T, native int, conv func(bits uint64, size int) T) error {
	t := h.DType
	if t.Kind != 'f' {
		return fmt.Errorf("npy: dtype %s: want a float dtype", t)
	}
	if int64(len(dst)) != h.Elements() {
		return fmt.Errorf("npy: destination holds %d values, the array %d", len(dst), h.Elements())
	}
	want := h.DataBytes()
	if t.Size == native && !t.BigEndian && littleEndianHost && len(dst) > 0 {
		// Read straight into dst.
		b := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), native*len(dst))
		if n, err := io.ReadFull(r, b); err != nil {
			return truncated(h, int64(n), want, err)
		}
		return nil
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if t.BigEndian {
		bo = binary.BigEndian
	}
	size := t.Size
	return readChunks(r, h, want, func(b []byte, off int) {
		for i := 0; i+size <= len(b); i += size {
			var bits uint64
			switch size {
			case 2:
				bits = uint64(bo.Uint16(b[i:]))
			case 4:
				bits = uint64(bo.Uint32(b[i:]))
			case 8:
				bits = bo.Uint64(b[i:])
			}
			dst[off+i/size] = conv(bits, size)
		}
	})
}

// ReadInt32s reads the data of an int32 or int64 array with header h into
// dst (len(dst) must be h.Elements()); int64 values outside the int32 range
// are an error.
func ReadInt32s(r io.Reader, h Header, dst []int32) error {
	t := h.DType
	if t.Kind != 'i' || (t.Size != 4 && t.Size != 8) {
		return fmt.Errorf("npy: dtype %s: want int32 or int64", t)
	}
	if int64(len(dst)) != h.Elements() {
		return fmt.Errorf("npy: destination holds %d values, the array %d", len(dst), h.Elements())
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if t.BigEndian {
		bo = binary.BigEndian
	}
	bad := -1
	var badV int64
	err := readChunks(r, h, h.DataBytes(), func(b []byte, off int) {
		if t.Size == 4 {
			for i := 0; i+4 <= len(b); i += 4 {
				dst[off+i/4] = int32(bo.Uint32(b[i:]))
			}
			return
		}
		for i := 0; i+8 <= len(b); i += 8 {
			v := int64(bo.Uint64(b[i:]))
			if v != int64(int32(v)) && bad < 0 {
				bad, badV = off+i/8, v
			}
			dst[off+i/8] = int32(v)
		}
	})
	if err != nil {
		return err
	}
	if bad >= 0 {
		return fmt.Errorf("npy: element %d is %d, outside the int32 range", bad, badV)
	}
	return nil
}

// readChunks reads want bytes in chunks of whole elements and hands each to
// conv with the index of its first element.
func readChunks(r io.Reader, h Header, want int64, conv func(b []byte, off int)) error {
	size := int64(h.DType.Size)
	buf := make([]byte, min(want, chunkBytes))
	var got int64
	for got < want {
		c := buf[:min(int64(len(buf)), want-got)]
		n, err := io.ReadFull(r, c)
		if err != nil {
			return truncated(h, got+int64(n), want, err)
		}
		conv(c, int(got/size))
		got += int64(n)
	}
	return nil
}

// Float16ToFloat32 converts an IEEE 754 half-precision value (its bits) to
// float32 exactly (subnormals, infinities and NaN included).
func Float16ToFloat32(x uint16) float32 {
	sign := uint32(x>>15) << 31
	exp := uint32(x>>10) & 0x1f
	mant := uint32(x) & 0x3ff
	switch exp {
	case 0:
		f := float32(mant) * (1.0 / (1 << 24)) // subnormal (or zero)
		if sign != 0 {
			f = -f
		}
		return f
	case 31:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// Float64ToFloat16 rounds x to the nearest IEEE 754 half-precision value
// and returns its bits: ties to even, subnormals included, magnitudes of
// 65520 (halfway between the largest float16, 65504, and 2¹⁶) and up to
// ±Inf, NaN to a quiet NaN of the same sign. A float32 converts exactly to
// float64, so this is also the correctly rounded float32 conversion (as
// numpy's astype(np.float16) and torch's .half() round).
func Float64ToFloat16(x float64) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign = 0x8000
	}
	a := math.Abs(x)
	switch {
	case math.IsNaN(x):
		return sign | 0x7e00
	case a >= 65520: // Inf included
		return sign | 0x7c00
	case a < 1.0/(1<<14): // subnormal range: units of 2⁻²⁴
		// q ≤ 1024; 1024 is the bits of the smallest normal, 2⁻¹⁴.
		return sign | uint16(math.RoundToEven(a*(1<<24)))
	}
	frac, exp := math.Frexp(a) // a = frac·2^exp, frac in [0.5, 1)
	q := uint16(math.RoundToEven(frac * (1 << 11)))
	if q == 1<<11 { // rounded up to the next power of two
		q, exp = 1<<10, exp+1
	}
	e := uint16(exp - 1 + 15) // biased exponent of a = 1.m·2^(exp−1); ≤ 30 as a < 65520
	return sign | e<<10 | (q - 1<<10)
}

// AppendHeader appends a version 1.0 .npy header for a C-order array of
// dtype t and the given shape, padded with spaces so that the data starts
// at a multiple of 64 bytes, as numpy.save does.
func AppendHeader(dst []byte, t DType, shape []int) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", t, ShapeString(shape))
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	dst = append(dst, Magic...)
	dst = append(dst, 1, 0)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(hlen))
	dst = append(dst, dict...)
	dst = append(dst, bytes.Repeat([]byte{' '}, pad)...)
	return append(dst, '\n')
}

// WriteInt64s writes a C-order int64 array of the given shape.
func WriteInt64s(w io.Writer, shape []int, data []int64) error {
	b := AppendHeader(make([]byte, 0, 128+8*len(data)), Int64, shape)
	for _, v := range data {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	_, err := w.Write(b)
	return err
}

// WriteInt32s writes a C-order int32 array of the given shape, in chunks.
func WriteInt32s(w io.Writer, shape []int, data []int32) error {
	if _, err := w.Write(AppendHeader(nil, Int32, shape)); err != nil {
		return err
	}
	return WriteInt32Data(w, data)
}

// WriteInt32Data writes the little-endian bytes of data (the data part of
// an int32 array whose header was written before).
func WriteInt32Data(w io.Writer, data []int32) error {
	buf := make([]byte, 0, min(4*len(data), chunkBytes))
	for len(data) > 0 {
		n := min(len(data), chunkBytes/4)
		buf = buf[:0]
		for _, v := range data[:n] {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// WriteFloat32s writes a C-order float32 array of the given shape.
func WriteFloat32s(w io.Writer, shape []int, data []float32) error {
	if _, err := w.Write(AppendHeader(nil, Float32, shape)); err != nil {
		return err
	}
	buf := make([]byte, 0, min(4*len(data), chunkBytes))
	for len(data) > 0 {
		n := min(len(data), chunkBytes/4)
		buf = buf[:0]
		for _, v := range data[:n] {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

package npy

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
)

// The files in testdata were written by numpy 1.24's numpy.save (see the
// names: dtype and byte order) from base[i, j] = (3i + j)/4 − 3 (floats)
// and 3i + j − 5 (ints), 5×3.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadFloat32MatrixNumpyFiles(t *testing.T) {
	for _, name := range []string{"m_f2_le.npy", "m_f4_le.npy", "m_f8_le.npy", "m_f4_be.npy", "m_f8_be.npy", "v2_f4.npy"} {
		t.Run(name, func(t *testing.T) {
			m, err := ReadFloat32Matrix(bytes.NewReader(readFile(t, name)), 0)
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows != 5 || m.Cols != 3 {
				t.Fatalf("shape %d×%d, want 5×3", m.Rows, m.Cols)
			}
			for i, v := range m.Data {
				if want := float32(i)*0.25 - 3; v != want {
					t.Fatalf("element %d = %v, want %v", i, v, want)
				}
			}
		})
	}
}

func TestReadInt32MatrixNumpyFiles(t *testing.T) {
	for _, name := range []string{"m_i4_le.npy", "m_i8_le.npy", "m_i8_be.npy"} {
		t.Run(name, func(t *testing.T) {
			m, err := ReadInt32Matrix(bytes.NewReader(readFile(t, name)), 0)
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows != 5 || m.Cols != 3 {
				t.Fatalf("shape %d×%d, want 5×3", m.Rows, m.Cols)
			}
			for i, v := range m.Data {
				if want := int32(i) - 5; v != want {
					t.Fatalf("element %d = %v, want %v", i, v, want)
				}
			}
		})
	}
}

func TestFloat16Special(t *testing.T) {
	m, err := ReadFloat32Matrix(bytes.NewReader(readFile(t, "special_f2.npy")), 0)
	if err != nil {
		t.Fatal(err)
	}
	// [0, -0, 6e-8 (the smallest subnormal, 2^-24), 65504, +Inf, -Inf, NaN, 1/3 in half precision]
	want := []float32{0, float32(math.Copysign(0, -1)), 1.0 / (1 << 24), 65504, float32(math.Inf(1)), float32(math.Inf(-1))}
	for i, w := range want {
		if m.Data[i] != w || math.Signbit(float64(m.Data[i])) != math.Signbit(float64(w)) {
			t.Errorf("element %d = %v, want %v", i, m.Data[i], w)
		}
	}
	if !math.IsNaN(float64(m.Data[6])) {
		t.Errorf("element 6 = %v, want NaN", m.Data[6])
	}
	if m.Data[7] != 0.33325195 {
		t.Errorf("element 7 = %v, want 0.33325195 (1/3 in float16)", m.Data[7])
	}
}

func TestReadErrors(t *testing.T) {
	f4 := readFile(t, "m_f4_le.npy")
	for _, tc := range []struct {
		name  string
		data  []byte
		ints  bool
		limit int64
		want  string
	}{
		{"empty", nil, false, 0, "empty input"},
		{"short", []byte("\x93NUM"), false, 0, "shorter than the magic"},
		{"magic", []byte("PK\x03\x04zipfile..."), false, 0, "not a .npy file"},
		{"version", append([]byte(Magic+"\x04\x00"), 0, 0), false, 0, "format version 4.0"},
		{"header truncated", f4[:40], false, 0, "header truncated"},
		{"data truncated", f4[:150], false, 0, "data truncated: got 22 of 60 bytes"},
		{"trailing", append(append([]byte{}, f4...), 0), false, 0, "data continues after the array"},
		{"int dtype for floats", readFile(t, "m_i4_le.npy"), false, 0, "dtype <i4: want float16, float32 or float64"},
		{"float dtype for ints", f4, true, 0, "dtype <f4: want int32 or int64"},
		{"u1", readFile(t, "u1.npy"), false, 0, "dtype |u1"},
		{"fortran", readFile(t, "fortran_f4.npy"), false, 0, "fortran_order is True"},
		{"1-D", readFile(t, "vec_f4.npy"), false, 0, "shape (4,): want a 2-D array"},
		{"3-D", readFile(t, "cube_f4.npy"), false, 0, "shape (2, 2, 2): want a 2-D array"},
		{"structured", readFile(t, "struct.npy"), false, 0, "structured dtype"},
		{"limit", f4, false, 59, "larger than the limit"},
		{"bad descr", bytes.Replace(f4, []byte("'<f4'"), []byte("'<f3'"), 1), false, 0, `descr "<f3"`},
		{"extra key", bytes.Replace(f4, []byte("'fortran_order'"), []byte("'fortran_ordeX'"), 1), false, 0, `unexpected key "fortran_ordeX"`},
		{"missing key", bytes.Replace(f4, []byte("'shape': (5, 3), "), []byte("                 "), 1), false, 0, `key "shape" is missing`},
		{"negative dim", bytes.Replace(f4, []byte("(5, 3)"), []byte("(-5, 3)"), 1), false, 0, "want non-negative integers"},
		{"one-element tuple", bytes.Replace(f4, []byte("(5, 3)"), []byte("(15)  "), 1), false, 0, "trailing comma"},
		{"huge shape", AppendHeader(nil, Float32, []int{1 << 40, 1 << 40}), false, 0, "too many elements"},
		{"huge data", AppendHeader(nil, Float32, []int{1 << 30, 1 << 20}), false, 0, "too many elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.ints {
				_, err = ReadInt32Matrix(bytes.NewReader(tc.data), tc.limit)
			} else {
				_, err = ReadFloat32Matrix(bytes.NewReader(tc.data), tc.limit)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestInt64OutOfRange(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteInt64s(&buf, []int{1, 2}, []int64{1, 1 << 40}); err != nil {
		t.Fatal(err)
	}
	_, err := ReadInt32Matrix(&buf, 0)
	if err == nil || !strings.Contains(err.Error(), "element 1 is 1099511627776, outside the int32 range") {
		t.Fatalf("error %v, want element 1 outside the int32 range", err)
	}
}

// TestWriteRoundTrip checks the writers against this reader and against
// npyio (an independent reader of the format).
func TestWriteRoundTrip(t *testing.T) {
	f := []float32{1, -2.5, 3e-9, 4, 5, 6}
	var buf bytes.Buffer
	if err := WriteFloat32s(&buf, []int{2, 3}, f); err != nil {
		t.Fatal(err)
	}
	if (buf.Len()-4*len(f))%64 != 0 {
		t.Errorf("data starts at byte %d, want a multiple of 64", buf.Len()-4*len(f))
	}
	raw := append([]byte(nil), buf.Bytes()...)
	m, err := ReadFloat32Matrix(&buf, 0)
	if err != nil || m.Rows != 2 || m.Cols != 3 || !slicesEqual(m.Data, f) {
		t.Fatalf("read back %+v, %v", m, err)
	}
	var viaNpyio []float32
	if err := npyio.Read(bytes.NewReader(raw), &viaNpyio); err != nil || !slicesEqual(viaNpyio, f) {
		t.Fatalf("npyio read %v, %v; want %v", viaNpyio, err, f)
	}

	i32 := []int32{7, -1, 2, 3}
	buf.Reset()
	if err := WriteInt32s(&buf, []int{2, 2}, i32); err != nil {
		t.Fatal(err)
	}
	raw = append([]byte(nil), buf.Bytes()...)
	mi, err := ReadInt32Matrix(&buf, 0)
	if err != nil || !slicesEqual(mi.Data, i32) {
		t.Fatalf("read back %+v, %v", mi, err)
	}
	var i32n []int32
	if err := npyio.Read(bytes.NewReader(raw), &i32n); err != nil || !slicesEqual(i32n, i32) {
		t.Fatalf("npyio read %v, %v", i32n, err)
	}

	i64 := []int64{5, 6, -7}
	buf.Reset()
	if err := WriteInt64s(&buf, []int{3}, i64); err != nil {
		t.Fatal(err)
	}
	var i64n []int64
	if err := npyio.Read(&buf, &i64n); err != nil || !slicesEqual(i64n, i64) {
		t.Fatalf("npyio read %v, %v", i64n, err)
	}
}

func TestLargeFloat16Chunks(t *testing.T) {
	// More than one conversion chunk of float16.
	n := chunkBytes/2 + 3
	var buf bytes.Buffer
	buf.Write(AppendHeader(nil, Float16, []int{n, 1}))
	for i := 0; i < n; i++ {
		v := uint16(0x3c00) // 1.0
		if i%2 == 1 {
			v = 0xc000 // -2.0
		}
		buf.Write([]byte{byte(v), byte(v >> 8)})
	}
	m, err := ReadFloat32Matrix(&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range m.Data {
		want := float32(1)
		if i%2 == 1 {
			want = -2
		}
		if v != want {
			t.Fatalf("element %d = %v, want %v", i, v, want)
		}
	}
}

func TestEmptyMatrix(t *testing.T) {
	m, err := ReadFloat32Matrix(bytes.NewReader(readFile(t, "empty_f4.npy")), 0)
	if err != nil || m.Rows != 0 || m.Cols != 3 {
		t.Fatalf("got %+v, %v; want 0×3", m, err)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzRead checks that the readers never panic, never allocate past their
// limit, and that what they accept reads back identically once rewritten.
func FuzzRead(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".npy") {
			b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadFloat32Matrix(bytes.NewReader(b), limit)
		if err == nil {
			if len(m.Data) != m.Rows*m.Cols {
				t.Fatalf("%d values for %d×%d", len(m.Data), m.Rows, m.Cols)
			}
			var buf bytes.Buffer
			if err := WriteFloat32s(&buf, []int{m.Rows, m.Cols}, m.Data); err != nil {
				t.Fatal(err)
			}
			m2, err := ReadFloat32Matrix(&buf, limit)
			if err != nil {
				t.Fatalf("rewritten array does not read back: %v", err)
			}
			for i := range m.Data {
				if math.Float32bits(m.Data[i]) != math.Float32bits(m2.Data[i]) {
					t.Fatalf("element %d changed from %v to %v", i, m.Data[i], m2.Data[i])
				}
			}
		} else if err.Error() == "" || !strings.HasPrefix(err.Error(), "npy: ") {
			t.Fatalf("error %q does not say where it comes from", err)
		}
		if mi, err := ReadInt32Matrix(bytes.NewReader(b), limit); err == nil && len(mi.Data) != mi.Rows*mi.Cols {
			t.Fatalf("%d values for %d×%d", len(mi.Data), mi.Rows, mi.Cols)
		}
	})
}

func TestCheckSize(t *testing.T) {
	h, err := ReadHeader(bytes.NewReader(readFile(t, "m_f4_le.npy")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		total int64
		want  string
	}{
		{188, ""},
		{187, "data truncated: got 59 of 60 bytes (shape (5, 3) of <f4)"},
		{100, "data truncated: got 0 of 60 bytes"},
		{200, "12 bytes more than the 60"},
	} {
		err := h.CheckSize(tc.total)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckSize(%d) = %v, want %q", tc.total, err, tc.want)
		}
	}
}

// TestReadFloat16MatrixNumpyFiles reads the numpy files as float16 bits:
// the float16 file exactly, the wider ones rounded (their values are
// float16 values, so exactly too), and refuses the wider ones without
// rounding.
func TestReadFloat16MatrixNumpyFiles(t *testing.T) {
	for _, name := range []string{"m_f2_le.npy", "m_f4_le.npy", "m_f8_le.npy", "m_f4_be.npy", "m_f8_be.npy", "v2_f4.npy"} {
		t.Run(name, func(t *testing.T) {
			b := readFile(t, name)
			m, err := ReadFloat16Matrix(bytes.NewReader(b), 0, true)
			if err != nil {
				t.Fatal(err)
			}
			if m.Rows != 5 || m.Cols != 3 || len(m.Bits) != 15 {
				t.Fatalf("shape %d×%d with %d values, want 5×3", m.Rows, m.Cols, len(m.Bits))
			}
			for i, x := range m.Bits {
				if got, want := Float16ToFloat32(x), float32(i)*0.25-3; got != want {
					t.Fatalf("element %d = %v (bits %#04x), want %v", i, got, x, want)
				}
			}
			_, err = ReadFloat16Matrix(bytes.NewReader(b), 0, false)
			if wide := m.From.Size != 2; wide != (err != nil) {
				t.Fatalf("without rounding: error %v for %s", err, m.From)
			} else if wide && !strings.Contains(err.Error(), "want float16 ('<f2')") {
				t.Fatalf("without rounding: error %q, want one asking for float16", err)
			}
		})
	}
}

// TestReadFloat16Special keeps float16 bits exactly, NaN included, and
// agrees with the float32 reader.
func TestReadFloat16Special(t *testing.T) {
	b := readFile(t, "special_f2.npy")
	m, err := ReadFloat16Matrix(bytes.NewReader(b), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReadFloat32Matrix(bytes.NewReader(b), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint16{0x0000, 0x8000, 0x0001, 0x7bff, 0x7c00, 0xfc00}
	for i, w := range want {
		if m.Bits[i] != w {
			t.Errorf("element %d: bits %#04x, want %#04x", i, m.Bits[i], w)
		}
	}
	if m.Bits[6]&0x7c00 != 0x7c00 || m.Bits[6]&0x3ff == 0 {
		t.Errorf("element 6: bits %#04x, want a NaN", m.Bits[6])
	}
	for i, x := range m.Bits {
		if math.Float32bits(Float16ToFloat32(x)) != math.Float32bits(f.Data[i]) {
			t.Errorf("element %d: float16 reader %v, float32 reader %v", i, Float16ToFloat32(x), f.Data[i])
		}
	}
}

// TestReadFloat16Errors: the float16 reader fails as the float32 one does.
func TestReadFloat16Errors(t *testing.T) {
	f2 := readFile(t, "m_f2_le.npy")
	for _, tc := range []struct {
		name  string
		data  []byte
		round bool
		limit int64
		want  string
	}{
		{"empty", nil, true, 0, "empty input"},
		{"data truncated", f2[:len(f2)-1], false, 0, "data truncated: got 29 of 30 bytes"},
		{"trailing", append(append([]byte{}, f2...), 0), false, 0, "data continues after the array"},
		{"int dtype", readFile(t, "m_i4_le.npy"), true, 0, "dtype <i4: want float16, float32 or float64"},
		{"int dtype, no rounding", readFile(t, "m_i4_le.npy"), false, 0, "dtype <i4: want float16 ('<f2')"},
		{"1-D", readFile(t, "vec_f4.npy"), true, 0, "shape (4,): want a 2-D array"},
		{"fortran", readFile(t, "fortran_f4.npy"), true, 0, "fortran_order is True"},
		{"limit", f2, false, 29, "larger than the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFloat16Matrix(bytes.NewReader(tc.data), tc.limit, tc.round)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestLargeFloat16BitsChunks reads more than one conversion chunk of
// big-endian float16 (the chunked path) and of float32 (rounded).
func TestLargeFloat16BitsChunks(t *testing.T) {
	n := chunkBytes/2 + 3
	var be bytes.Buffer
	be.Write(AppendHeader(nil, DType{Kind: 'f', Size: 2, BigEndian: true}, []int{n, 1}))
	f := make([]float32, n)
	for i := 0; i < n; i++ {
		v := uint16(i * 7)
		be.Write([]byte{byte(v >> 8), byte(v)})
		f[i] = float32(i) / 3
	}
	m, err := ReadFloat16Matrix(&be, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range m.Bits {
		if x != uint16(i*7) {
			t.Fatalf("element %d: bits %#04x, want %#04x", i, x, uint16(i*7))
		}
	}
	var le bytes.Buffer
	if err := WriteFloat32s(&le, []int{n, 1}, f); err != nil {
		t.Fatal(err)
	}
	m, err = ReadFloat16Matrix(&le, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range m.Bits {
		if want := Float64ToFloat16(float64(f[i])); x != want {
			t.Fatalf("element %d: bits %#04x, want %#04x", i, x, want)
		}
	}
}

// TestFloat64ToFloat16 checks the rounding against its definition on every
// float16: each value converts back to its own bits, the midpoint of two
// neighbours goes to the one with the even significand, and anything
// nearer one neighbour goes to it; and the edges (overflow, subnormals,
// signed zero, NaN).
func TestFloat64ToFloat16(t *testing.T) {
	dec := func(x uint16) float64 { return float64(Float16ToFloat32(x)) }
	for x := 0; x < 1<<16; x++ {
		b := uint16(x)
		if b&0x7c00 == 0x7c00 && b&0x3ff != 0 {
			if got := Float64ToFloat16(dec(b)); got&0x7c00 != 0x7c00 || got&0x3ff == 0 || got&0x8000 != b&0x8000 {
				t.Fatalf("NaN %#04x → %#04x, want a NaN of the same sign", b, got)
			}
			continue
		}
		if got := Float64ToFloat16(dec(b)); got != b {
			t.Fatalf("%v (bits %#04x) → %#04x", dec(b), b, got)
		}
		if b&0x7fff >= 0x7bff { // the largest finite value and Inf: no next finite value
			continue
		}
		lo, hi := dec(b), dec(b+1) // neighbours, |hi| > |lo|, same sign
		mid := (lo + hi) / 2       // exact in float64
		even := b
		if b&1 == 1 {
			even = b + 1
		}
		if got := Float64ToFloat16(mid); got != even {
			t.Fatalf("midpoint %v of %#04x and %#04x → %#04x, want the even %#04x", mid, b, b+1, got, even)
		}
		if got := Float64ToFloat16(math.Nextafter(mid, lo)); got != b {
			t.Fatalf("just below the midpoint %v of %#04x and %#04x → %#04x", mid, b, b+1, got)
		}
		if got := Float64ToFloat16(math.Nextafter(mid, hi)); got != b+1 {
			t.Fatalf("just above the midpoint %v of %#04x and %#04x → %#04x", mid, b, b+1, got)
		}
	}
	for _, tc := range []struct {
		x    float64
		want uint16
	}{
		{65504, 0x7bff},
		{65519.99, 0x7bff},
		{65520, 0x7c00}, // the midpoint to 2¹⁶ rounds to even: Inf
		{-1e9, 0xfc00},
		{math.Inf(1), 0x7c00},
		{math.Copysign(0, -1), 0x8000},
		{1.0 / (1 << 25), 0x0000},                // half the smallest subnormal: ties to 0
		{1.5 / (1 << 24), 0x0002},                // ties to the even subnormal 2
		{1e-30, 0x0000},                          // underflow
		{math.Nextafter(1.0/(1<<14), 0), 0x0400}, // rounds up to the smallest normal
		{1.0 / 3, 0x3555},
	} {
		if got := Float64ToFloat16(tc.x); got != tc.want {
			t.Errorf("Float64ToFloat16(%v) = %#04x, want %#04x", tc.x, got, tc.want)
		}
	}
	if got := Float64ToFloat16(math.NaN()); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("NaN → %#04x", got)
	}
}

// FuzzReadFloat16 checks that the float16 reader never panics, accepts
// (with rounding) exactly what the float32 reader accepts, and agrees with
// it: exactly for float16 data, through Float64ToFloat16 for float32 data.
func FuzzReadFloat16(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".npy") {
			b, err := os.ReadFile(filepath.Join("testdata", e.Name()))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadFloat32Matrix(bytes.NewReader(b), limit)
		if _, err := ReadFloat16Matrix(bytes.NewReader(b), limit, false); err != nil && !strings.HasPrefix(err.Error(), "npy: ") {
			t.Fatalf("error %q does not say where it comes from", err)
		}
		h, herr := ReadFloat16Matrix(bytes.NewReader(b), limit, true)
		if (herr == nil) != (err == nil) {
			t.Fatalf("float16 reader: %v; float32 reader: %v", herr, err)
		}
		if herr != nil {
			if !strings.HasPrefix(herr.Error(), "npy: ") {
				t.Fatalf("error %q does not say where it comes from", herr)
			}
			return
		}
		if h.Rows != m.Rows || h.Cols != m.Cols || len(h.Bits) != len(m.Data) || h.From != m.From {
			t.Fatalf("float16 reader: %d×%d (%d values) of %s, float32 reader %d×%d of %s", h.Rows, h.Cols, len(h.Bits), h.From, m.Rows, m.Cols, m.From)
		}
		for i, x := range h.Bits {
			switch h.From.Size {
			case 2:
				if math.Float32bits(Float16ToFloat32(x)) != math.Float32bits(m.Data[i]) {
					t.Fatalf("element %d: float16 bits %#04x, float32 reader %v", i, x, m.Data[i])
				}
			case 4:
				if want := Float64ToFloat16(float64(m.Data[i])); x != want && !(math.IsNaN(float64(m.Data[i])) && x&0x7c00 == 0x7c00) {
					t.Fatalf("element %d: float16 bits %#04x, want %#04x (%v rounded)", i, x, want, m.Data[i])
				}
			}
		}
	})
}

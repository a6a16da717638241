package ops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// randWCSR returns randCSR's pattern with random values of either sign.
func randWCSR(t testing.TB, rng *rand.Rand, rows, cols, perRow int) *WeightedCSR {
	t.Helper()
	p := randCSR(t, rng, rows, cols, perRow)
	m, err := NewWeightedCSR(p.Rows, p.Cols, p.RowPtr, p.Col, randVec(rng, p.NNZ()))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// denseOfW expands a WeightedCSR into a dense float64 matrix.
func denseOfW(m *WeightedCSR) [][]float64 {
	d := make([][]float64, m.Rows)
	for r := range d {
		d[r] = make([]float64, m.Cols)
		for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
			d[r][m.Col[k]] += m.Val[k]
		}
	}
	return d
}

func TestNewWeightedCSRRejectsBadInput(t *testing.T) {
	for _, c := range []struct {
		name   string
		rowPtr []int32
		col    []int32
		val    []float64
		want   string
	}{
		{"pattern", []int32{0, 1}, []int32{5}, []float64{1}, "out of range"},
		{"short values", []int32{0, 2}, []int32{0, 1}, []float64{1}, "1 values for 2 entries"},
		{"NaN", []int32{0, 1}, []int32{0}, []float64{math.NaN()}, "NaN"},
		{"Inf", []int32{0, 1}, []int32{0}, []float64{math.Inf(-1)}, "Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := NewWeightedCSR(1, 2, c.rowPtr, c.col, c.val); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := WSpMM(nil, nil); err == nil {
		t.Error("nil matrix: want an error")
	}
}

func TestWeightedCSRTransposeAndHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	m := randWCSR(t, rng, 9, 5, 3)
	d, dt := denseOfW(m), denseOfW(m.T())
	for r := range d {
		for c := range d[r] {
			if d[r][c] != dt[c][r] {
				t.Fatalf("M[%d][%d] = %v but Mᵀ[%d][%d] = %v", r, c, d[r][c], c, r, dt[c][r])
			}
		}
	}
	if m.T().T() != m {
		t.Fatal("Mᵀᵀ is not M")
	}
	// Same pattern, one value changed: a different hash and op key.
	val := append([]float64(nil), m.Val...)
	val[len(val)-1] += 1e-12
	m2, err := NewWeightedCSR(m.Rows, m.Cols, m.RowPtr, m.Col, val)
	if err != nil {
		t.Fatal(err)
	}
	if m.Hash() == m2.Hash() || newWSpMMOp(m).Hashcode() == newWSpMMOp(m2).Hashcode() {
		t.Error("matrices differing in one value hash alike")
	}
}

func TestWSpMMForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	for _, sz := range []struct{ rows, cols, per, f int }{
		{7, 5, 2, 3},
		{1, 1, 1, 1},
		{0, 4, 2, 3},
		{3000, 2500, 4, 32}, // large enough to run in parallel
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", sz.rows, sz.cols, sz.f), func(t *testing.T) {
			m := randWCSR(t, rng, sz.rows, sz.cols, sz.per)
			x := randVec(rng, sz.cols*sz.f)
			want := make([]float64, sz.rows*sz.f)
			// Entries in CSR order: the kernel's summation order, so the
			// float64 results agree exactly.
			for r := 0; r < sz.rows; r++ {
				for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
					for j := 0; j < sz.f; j++ {
						want[r*sz.f+j] += m.Val[k] * x[int(m.Col[k])*sz.f+j]
					}
				}
			}
			got64 := make([]float64, len(want))
			for i := range got64 {
				got64[i] = math.NaN() // must be overwritten
			}
			WSpMMFloat64(m, x, sz.f, got64)
			for i := range want {
				if got64[i] != want[i] {
					t.Fatalf("float64 out[%d] = %v, want %v", i, got64[i], want[i])
				}
			}
			got32 := make([]float32, len(want))
			WSpMMFloat32(m, to32(x), sz.f, got32)
			for i := range want {
				if d := math.Abs(float64(got32[i]) - want[i]); d > 1e-5*(1+math.Abs(want[i])) {
					t.Fatalf("float32 out[%d] = %v, want %v", i, got32[i], want[i])
				}
			}
		})
	}
}

func TestPReLUForward(t *testing.T) {
	x := []float64{1.5, -2, 0, -0.5, 3, -1}
	for _, tc := range []struct {
		a    []float64
		want []float64
	}{
		{[]float64{0.25}, []float64{1.5, -0.5, 0, -0.125, 3, -0.25}},
		{[]float64{0.1, 0.2, 0.3}, []float64{1.5, -0.4, 0, -0.05, 3, -0.3}},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
			var xv, av gorgonia.Value = dense64([]int{2, 3}, x), dense64([]int{len(tc.a)}, tc.a)
			if dt == tensor.Float32 {
				xv = tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(to32(x)))
				av = tensor.New(tensor.WithShape(len(tc.a)), tensor.WithBacking(to32(tc.a)))
			}
			y, err := newPReLUOp().Do(xv, av)
			if err != nil {
				t.Fatal(err)
			}
			got := valueFloats(y)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-7 {
					t.Fatalf("%v, slopes %v: PReLU = %v, want %v", dt, tc.a, got, tc.want)
				}
			}
		}
	}
	if _, err := newPReLUOp().Do(dense64([]int{2, 3}, x), dense64([]int{2}, []float64{1, 2})); err == nil || !strings.Contains(err.Error(), "length 2") {
		t.Errorf("two slopes for three columns: err = %v", err)
	}
}

// TestWeightedGradientsFiniteDifference checks WSpMM (and its transpose)
// and PReLU (one slope, per-channel slopes, chained after WSpMM as in a GCN
// layer) against central differences in float64.
func TestWeightedGradientsFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	m := randWCSR(t, rng, 6, 5, 2)
	cases := []gradCase{
		{"WSpMM", [][]int{{5, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return WSpMM(m, in[0]) }},
		{"WSpMMᵀ", [][]int{{6, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return WSpMM(m.T(), in[0]) }},
		{"PReLU", [][]int{{5, 3}, {1}}, []int{0, 1}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return PReLU(in[0], in[1]) }},
		{"PReLUChannels", [][]int{{5, 3}, {3}}, []int{0, 1}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return PReLU(in[0], in[1]) }},
		{"GCNLayer", [][]int{{5, 3}, {3}, {1}}, []int{0, 1, 2}, func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			p, err := WSpMM(m, in[0])
			if err != nil {
				return nil, err
			}
			b, err := BiasAct(p, in[1], false)
			if err != nil {
				return nil, err
			}
			return PReLU(b, in[2])
		}},
	}
	for _, gc := range cases {
		t.Run(gc.name, func(t *testing.T) {
			vals := make([][]float64, len(gc.shapes))
			for i, s := range gc.shapes {
				size := 1
				for _, d := range s {
					size *= d
				}
				vals[i] = randVec(rng, size)
			}
			checkGradient(t, gc, vals)
		})
	}
}

// TestWeightedOpsUsePreallocDo: every new op overwrites a NaN-filled
// buffer with exactly what Do returns and refuses a wrong-shaped one.
func TestWeightedOpsUsePreallocDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 1))
	m := randWCSR(t, rng, 5, 4, 2)
	x43 := dense64([]int{4, 3}, randVec(rng, 12))
	x53 := dense64([]int{5, 3}, randVec(rng, 15))
	g53 := dense64([]int{5, 3}, randVec(rng, 15))
	a1 := dense64([]int{1}, []float64{0.25})
	a3 := dense64([]int{3}, randVec(rng, 3))
	type preallocOp interface {
		Do(...gorgonia.Value) (gorgonia.Value, error)
		UsePreallocDo(gorgonia.Value, ...gorgonia.Value) (gorgonia.Value, error)
	}
	for _, c := range []struct {
		name string
		op   preallocOp
		in   []gorgonia.Value
	}{
		{"WSpMM", newWSpMMOp(m), []gorgonia.Value{x43}},
		{"PReLU", newPReLUOp(), []gorgonia.Value{x53, a1}},
		{"PReLUGradX", newPReLUGradOp(false), []gorgonia.Value{x53, a3, g53}},
		{"PReLUGradSlope", newPReLUGradOp(true), []gorgonia.Value{x53, a3, g53}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := c.op.Do(c.in...)
			if err != nil {
				t.Fatal(err)
			}
			wd := want.(*tensor.Dense)
			buf := tensor.New(tensor.WithShape(wd.Shape()...), tensor.Of(tensor.Float64))
			for i := range buf.Float64s() {
				buf.Float64s()[i] = math.NaN()
			}
			got, err := c.op.UsePreallocDo(buf, c.in...)
			if err != nil {
				t.Fatal(err)
			}
			if !got.(*tensor.Dense).Eq(wd) {
				t.Fatalf("UsePreallocDo = %v, want %v", got, want)
			}
			wrong := tensor.New(tensor.WithShape(wd.Shape().TotalSize()+1), tensor.Of(tensor.Float64))
			if _, err := c.op.UsePreallocDo(wrong, c.in...); err == nil {
				t.Fatal("wrong-shaped buffer: want an error")
			}
		})
	}
}

// TestWeightedCSRPrepare: a matrix prepared ahead has the transpose, the
// float32 values and the hashes of one computed on first use.
func TestWeightedCSRPrepare(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	m := randWCSR(t, rng, 11, 7, 3)
	lazy, err := NewWeightedCSR(m.Rows, m.Cols, m.RowPtr, m.Col, m.Val)
	if err != nil {
		t.Fatal(err)
	}
	m.Prepare()
	for _, c := range []struct{ name, got, want string }{
		{"transpose", fmt.Sprint(m.T().RowPtr, m.T().Col, m.T().Val), fmt.Sprint(lazy.T().RowPtr, lazy.T().Col, lazy.T().Val)},
		{"float32 values", fmt.Sprint(m.val32(), m.T().val32()), fmt.Sprint(lazy.val32(), lazy.T().val32())},
		{"hashes", fmt.Sprint(m.Hash(), m.T().Hash()), fmt.Sprint(lazy.Hash(), lazy.T().Hash())},
	} {
		if c.got != c.want {
			t.Errorf("%s: prepared %s, lazily %s", c.name, c.got, c.want)
		}
	}
	if m.T().T() != m {
		t.Error("prepared: Mᵀᵀ is not M")
	}
}

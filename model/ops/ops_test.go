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

// randCSR returns a random rows×cols pattern with about perRow entries per
// row, including duplicates and (when rows > 2) an empty row.
func randCSR(t testing.TB, rng *rand.Rand, rows, cols, perRow int) *CSR {
	t.Helper()
	rowPtr := make([]int32, rows+1)
	var col []int32
	for r := 0; r < rows; r++ {
		k := rng.IntN(2*perRow + 1)
		if rows > 2 && r == 1 {
			k = 0
		}
		for i := 0; i < k; i++ {
			col = append(col, int32(rng.IntN(cols)))
		}
		if k > 0 && rng.IntN(3) == 0 {
			col = append(col, col[len(col)-1]) // a duplicate
		}
		rowPtr[r+1] = int32(len(col))
	}
	m, err := NewCSR(rows, cols, rowPtr, col)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func dense64(shape []int, v []float64) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...)))
}

func to32(v []float64) []float32 {
	o := make([]float32, len(v))
	for i, x := range v {
		o[i] = float32(x)
	}
	return o
}

// denseOf expands a CSR into a dense float64 matrix (duplicates add up).
func denseOf(m *CSR) [][]float64 {
	d := make([][]float64, m.Rows)
	for r := range d {
		d[r] = make([]float64, m.Cols)
		for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
			d[r][m.Col[k]]++
		}
	}
	return d
}

func TestNewCSRRejectsBadInput(t *testing.T) {
	cases := []struct {
		name       string
		rows, cols int
		rowPtr     []int32
		col        []int32
		want       string
	}{
		{"negative", -1, 2, []int32{0}, nil, "negative"},
		{"short rowptr", 2, 2, []int32{0, 1}, []int32{0}, "len(RowPtr)"},
		{"nonzero start", 1, 2, []int32{1, 1}, nil, "RowPtr[0]"},
		{"decreasing", 2, 2, []int32{0, 2, 1}, []int32{0}, "decreases"},
		{"nnz mismatch", 1, 2, []int32{0, 2}, []int32{0}, "len(Col)"},
		{"col out of range", 1, 2, []int32{0, 1}, []int32{2}, "out of range"},
		{"negative col", 1, 2, []int32{0, 1}, []int32{-1}, "out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewCSR(c.rows, c.cols, c.rowPtr, c.col)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestCSRTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := randCSR(t, rng, 9, 5, 3)
	d, dt := denseOf(m), denseOf(m.T())
	if m.T().Rows != 5 || m.T().Cols != 9 {
		t.Fatalf("transpose is %d×%d, want 5×9", m.T().Rows, m.T().Cols)
	}
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
}

func TestSpMMForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	for _, sz := range []struct{ rows, cols, per, f int }{
		{7, 5, 2, 3},
		{1, 1, 1, 1},
		{0, 4, 2, 3},
		{3000, 2500, 4, 32}, // large enough to run in parallel
	} {
		t.Run(fmt.Sprintf("%dx%dx%d", sz.rows, sz.cols, sz.f), func(t *testing.T) {
			m := randCSR(t, rng, sz.rows, sz.cols, sz.per)
			x := randVec(rng, sz.cols*sz.f)
			want := make([]float64, sz.rows*sz.f)
			// Plain loop over entries in CSR order: same summation order as
			// the kernel, so float64 results must agree exactly.
			for r := 0; r < sz.rows; r++ {
				for k := m.RowPtr[r]; k < m.RowPtr[r+1]; k++ {
					for j := 0; j < sz.f; j++ {
						want[r*sz.f+j] += x[int(m.Col[k])*sz.f+j]
					}
				}
			}
			got64 := make([]float64, len(want))
			for i := range got64 {
				got64[i] = math.NaN() // must be overwritten
			}
			SpMMFloat64(m, x, sz.f, got64)
			for i := range want {
				if got64[i] != want[i] {
					t.Fatalf("float64 out[%d] = %v, want %v", i, got64[i], want[i])
				}
			}
			got32 := make([]float32, len(want))
			SpMMFloat32(m, to32(x), sz.f, got32)
			for i := range want {
				if d := math.Abs(float64(got32[i]) - want[i]); d > 1e-5*(1+math.Abs(want[i])) {
					t.Fatalf("float32 out[%d] = %v, want %v", i, got32[i], want[i])
				}
			}
		})
	}
}

func TestBiasActAndColSumForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	n, c := 6, 4
	x, b := randVec(rng, n*c), randVec(rng, c)
	for _, relu := range []bool{false, true} {
		out, err := newBiasActOp(relu).Do(dense64([]int{n, c}, x), dense64([]int{c}, b))
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*tensor.Dense).Float64s()
		for i := 0; i < n; i++ {
			for j := 0; j < c; j++ {
				want := x[i*c+j] + b[j]
				if relu && want < 0 {
					want = 0
				}
				if got[i*c+j] != want {
					t.Fatalf("relu=%t out[%d,%d] = %v, want %v", relu, i, j, got[i*c+j], want)
				}
			}
		}
	}
	out, err := newColSumOp().Do(dense64([]int{n, c}, x))
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*tensor.Dense).Float64s()
	for j := 0; j < c; j++ {
		want := 0.0
		for i := 0; i < n; i++ {
			want += x[i*c+j]
		}
		if math.Abs(got[j]-want) > 1e-12 {
			t.Fatalf("colsum[%d] = %v, want %v", j, got[j], want)
		}
	}
}

// bnReference normalises the columns of x (n×c) in float64 with the given
// statistics, or with the batch statistics when mean is nil.
func bnReference(x []float64, n, c int, gamma, beta, mean, variance []float64, eps float64) []float64 {
	if mean == nil {
		mean, variance = make([]float64, c), make([]float64, c)
		for j := 0; j < c; j++ {
			for i := 0; i < n; i++ {
				mean[j] += x[i*c+j]
			}
			mean[j] /= float64(n)
			for i := 0; i < n; i++ {
				d := x[i*c+j] - mean[j]
				variance[j] += d * d
			}
			variance[j] /= float64(n)
		}
	}
	y := make([]float64, n*c)
	for i := 0; i < n; i++ {
		for j := 0; j < c; j++ {
			y[i*c+j] = gamma[j]*(x[i*c+j]-mean[j])/math.Sqrt(variance[j]+eps) + beta[j]
		}
	}
	return y
}

func TestBatchNormForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	n, c := 11, 5
	x, gamma, beta := randVec(rng, n*c), randVec(rng, c), randVec(rng, c)
	for i := range x {
		x[i] = 3*x[i] + 2
	}
	rm, rv := randVec(rng, c), randVec(rng, c)
	for j := range rv {
		rv[j] = rv[j]*rv[j] + 0.1
	}
	for _, tc := range []struct {
		name  string
		train bool
		dt    tensor.Dtype
	}{{"train64", true, tensor.Float64}, {"eval64", false, tensor.Float64}, {"train32", true, tensor.Float32}, {"eval32", false, tensor.Float32}} {
		t.Run(tc.name, func(t *testing.T) {
			g := gorgonia.NewGraph()
			mk := func(shape []int, v []float64, name string) *gorgonia.Node {
				var val *tensor.Dense
				if tc.dt == tensor.Float32 {
					val = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(to32(v)))
				} else {
					val = dense64(shape, v)
				}
				if len(shape) == 1 {
					return gorgonia.NewVector(g, tc.dt, gorgonia.WithShape(shape...), gorgonia.WithValue(val), gorgonia.WithName(name))
				}
				return gorgonia.NewMatrix(g, tc.dt, gorgonia.WithShape(shape...), gorgonia.WithValue(val), gorgonia.WithName(name))
			}
			y, op, err := BatchNorm(mk([]int{n, c}, x, "x"), mk([]int{c}, gamma, "g"), mk([]int{c}, beta, "b"),
				BNConfig{Eps: 1e-5, Training: tc.train, RunningMean: rm, RunningVar: rv})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := op.BatchStats(); err == nil {
				t.Fatal("BatchStats before running: want an error")
			}
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			var want []float64
			if tc.train {
				want = bnReference(x, n, c, gamma, beta, nil, nil, 1e-5)
			} else {
				want = bnReference(x, n, c, gamma, beta, rm, rv, 1e-5)
			}
			tol := 1e-12
			if tc.dt == tensor.Float32 {
				tol = 2e-5
			}
			got := valueFloats(y.Value())
			for i := range want {
				if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
					t.Fatalf("y[%d] = %v, want %v", i, got[i], want[i])
				}
			}
			mean, variance, nn, err := op.BatchStats()
			if !tc.train {
				if err == nil {
					t.Fatal("BatchStats in eval mode: want an error")
				}
				return
			}
			if err != nil || nn != n {
				t.Fatalf("BatchStats: n = %d, err = %v", nn, err)
			}
			for j := 0; j < c; j++ {
				var m, v float64
				for i := 0; i < n; i++ {
					m += x[i*c+j]
				}
				m /= float64(n)
				for i := 0; i < n; i++ {
					v += (x[i*c+j] - m) * (x[i*c+j] - m)
				}
				v /= float64(n)
				if math.Abs(mean[j]-m) > 1e-5 || math.Abs(variance[j]-v) > 1e-4*v {
					t.Fatalf("stats[%d] = (%v, %v), want (%v, %v)", j, mean[j], variance[j], m, v)
				}
			}
		})
	}
}

func valueFloats(v gorgonia.Value) []float64 {
	d := v.(*tensor.Dense)
	if d.Dtype() == tensor.Float32 {
		f := d.Float32s()
		o := make([]float64, len(f))
		for i, x := range f {
			o[i] = float64(x)
		}
		return o
	}
	return append([]float64(nil), d.Float64s()...)
}

func TestBatchNormRejects(t *testing.T) {
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(1, 2), gorgonia.WithName("x"), gorgonia.WithValue(dense64([]int{1, 2}, []float64{1, 2})))
	gm := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("g"), gorgonia.WithValue(dense64([]int{2}, []float64{1, 1})))
	bt := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("b"), gorgonia.WithValue(dense64([]int{2}, []float64{0, 0})))
	g3 := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(3), gorgonia.WithName("g3"), gorgonia.WithValue(dense64([]int{3}, []float64{1, 1, 1})))
	if _, _, err := BatchNorm(x, gm, bt, BNConfig{Eps: 0, Training: true}); err == nil {
		t.Error("Eps 0: want an error")
	}
	if _, _, err := BatchNorm(x, gm, bt, BNConfig{Eps: 1e-5}); err == nil {
		t.Error("eval mode without running stats: want an error")
	}
	if _, _, err := BatchNorm(x, g3, bt, BNConfig{Eps: 1e-5, Training: true}); err == nil {
		t.Error("gamma of the wrong length: want an error")
	}
	// One row in training mode is rejected at run time, as in PyTorch.
	if _, _, err := BatchNorm(x, gm, bt, BNConfig{Eps: 1e-5, Training: true}); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err == nil || !strings.Contains(err.Error(), "at least 2 rows") {
		t.Errorf("one row in training mode: err = %v", err)
	}
}

// gradCase is one finite-difference check: build makes the op's output
// from the input nodes; wrt lists the inputs to differentiate.
type gradCase struct {
	name   string
	shapes [][]int
	wrt    []int
	build  func(in []*gorgonia.Node) (*gorgonia.Node, error)
}

// evalLoss builds the graph from vals and returns Σ y⊙R (R drawn from
// seed) and, when grad is set, the analytic gradients of the wrt inputs.
func evalLoss(t *testing.T, gc gradCase, vals [][]float64, seed uint64, grad bool) (float64, [][]float64) {
	t.Helper()
	g := gorgonia.NewGraph()
	in := make([]*gorgonia.Node, len(vals))
	for i, v := range vals {
		val := dense64(gc.shapes[i], v)
		name := fmt.Sprintf("in%d", i)
		if len(gc.shapes[i]) == 1 {
			in[i] = gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(gc.shapes[i]...), gorgonia.WithValue(val), gorgonia.WithName(name))
		} else {
			in[i] = gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(gc.shapes[i]...), gorgonia.WithValue(val), gorgonia.WithName(name))
		}
	}
	y, err := gc.build(in)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	r := gorgonia.NewConstant(dense64(y.Shape(), randVec(rng, y.Shape().TotalSize())), gorgonia.WithName("R"))
	loss, err := gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(y, r)))
	if err != nil {
		t.Fatal(err)
	}
	var wrt gorgonia.Nodes
	if grad {
		for _, i := range gc.wrt {
			wrt = append(wrt, in[i])
		}
		if _, err := gorgonia.Grad(loss, wrt...); err != nil {
			t.Fatal(err)
		}
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	l := loss.Value().Data().(float64)
	var grads [][]float64
	for _, n := range wrt {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, valueFloats(gv))
	}
	return l, grads
}

// checkGradient compares analytic gradients with central differences.
func checkGradient(t *testing.T, gc gradCase, vals [][]float64) {
	t.Helper()
	const h, tol = 1e-6, 1e-6
	_, grads := evalLoss(t, gc, vals, 7, true)
	for k, i := range gc.wrt {
		for e := range vals[i] {
			orig := vals[i][e]
			vals[i][e] = orig + h
			lp, _ := evalLoss(t, gc, vals, 7, false)
			vals[i][e] = orig - h
			lm, _ := evalLoss(t, gc, vals, 7, false)
			vals[i][e] = orig
			num := (lp - lm) / (2 * h)
			ana := grads[k][e]
			if rel := math.Abs(num-ana) / math.Max(1, math.Max(math.Abs(num), math.Abs(ana))); rel > tol {
				t.Errorf("%s: d/d in%d[%d]: analytic %.10g, numeric %.10g (rel err %.2g)", gc.name, i, e, ana, num, rel)
			}
		}
	}
}

func TestGradientsFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	m := randCSR(t, rng, 6, 5, 2)
	rm, rv := randVec(rng, 3), randVec(rng, 3)
	for j := range rv {
		rv[j] = rv[j]*rv[j] + 0.2
	}
	cases := []gradCase{
		{"SpMM", [][]int{{5, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return SpMM(m, in[0]) }},
		{"SpMMᵀ", [][]int{{6, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return SpMM(m.T(), in[0]) }},
		{"BiasAdd", [][]int{{4, 3}, {3}}, []int{0, 1}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return BiasAct(in[0], in[1], false) }},
		{"BiasReLU", [][]int{{4, 3}, {3}}, []int{0, 1}, func(in []*gorgonia.Node) (*gorgonia.Node, error) { return BiasAct(in[0], in[1], true) }},
		{"ColSum", [][]int{{4, 3}}, []int{0}, func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			s, err := ColSum(in[0])
			if err != nil {
				return nil, err
			}
			// Make the output a matrix again so that the loss sees every entry.
			return gorgonia.Reshape(s, tensor.Shape{1, 3})
		}},
		{"BatchNormTrain", [][]int{{7, 3}, {3}, {3}}, []int{0, 1, 2}, func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			y, _, err := BatchNorm(in[0], in[1], in[2], BNConfig{Eps: 1e-5, Training: true})
			return y, err
		}},
		{"BatchNormEval", [][]int{{7, 3}, {3}, {3}}, []int{0, 1, 2}, func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			y, _, err := BatchNorm(in[0], in[1], in[2], BNConfig{Eps: 1e-5, RunningMean: rm, RunningVar: rv})
			return y, err
		}},
		{"Chain", [][]int{{5, 3}, {3}, {3}, {3}}, []int{0, 1, 2, 3}, func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			// BatchNorm ∘ BiasReLU ∘ SpMM, the shape of one GIN layer.
			a, err := SpMM(m, in[0])
			if err != nil {
				return nil, err
			}
			r, err := BiasAct(a, in[1], true)
			if err != nil {
				return nil, err
			}
			y, _, err := BatchNorm(r, in[2], in[3], BNConfig{Eps: 1e-5, Training: true})
			return y, err
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

// described fills in the Base of a BatchNormOp built field by field.
func described(op *BatchNormOp) *BatchNormOp {
	op.Base = op.describe()
	return op
}

func TestWriteHashDistinguishesParameters(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	a := randCSR(t, rng, 5, 5, 2)
	b := randCSR(t, rng, 5, 5, 2)
	aCopy, err := NewCSR(a.Rows, a.Cols, append([]int32(nil), a.RowPtr...), append([]int32(nil), a.Col...))
	if err != nil {
		t.Fatal(err)
	}
	bn1 := described(&BatchNormOp{id: 1, c: 3, eps: 1e-5, training: true})
	bn2 := described(&BatchNormOp{id: 2, c: 3, eps: 1e-5, training: true})
	type hasher interface{ Hashcode() uint32 }
	differ := []struct {
		name string
		x, y hasher
	}{
		{"SpMM different matrices", newSpMMOp(a), newSpMMOp(b)},
		{"SpMM matrix vs transpose", newSpMMOp(b), newSpMMOp(b.T())},
		{"BiasAct relu vs identity", newBiasActOp(true), newBiasActOp(false)},
		{"BatchNorm instances", bn1, bn2},
		{"BatchNorm grad x vs gamma", newBNGradOp(bn1, true), newBNGradOp(bn1, false)},
		{"BatchNorm grads of two instances", newBNGradOp(bn1, true), newBNGradOp(bn2, true)},
		{"RowBroadcast rows", newRowBroadcastOp(3), newRowBroadcastOp(4)},
		{"ColSum vs ReLUGrad", newColSumOp(), newReluGradOp()},
		{"Linear relu", newLinearOp(LinearOpts{ReLU: true}), newLinearOp(LinearOpts{})},
		{"Linear input grad", newLinearOp(LinearOpts{NoInputGrad: true}), newLinearOp(LinearOpts{})},
		{"MatMul transposes", newMatMulOp(true, false), newMatMulOp(false, true)},
	}
	for _, d := range differ {
		if d.x.Hashcode() == d.y.Hashcode() {
			t.Errorf("%s: equal hashes %x", d.name, d.x.Hashcode())
		}
	}
	if newSpMMOp(a).Hashcode() != newSpMMOp(aCopy).Hashcode() {
		t.Error("SpMM with equal matrices: hashes differ")
	}

	// In a graph: the same input through two different matrices, or through
	// ReLU and identity, must give two nodes.
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(5, 2), gorgonia.WithName("x"), gorgonia.WithValue(dense64([]int{5, 2}, randVec(rng, 10))))
	bias := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("b"), gorgonia.WithValue(dense64([]int{2}, randVec(rng, 2))))
	ya, _ := SpMM(a, x)
	yb, _ := SpMM(b, x)
	ya2, _ := SpMM(aCopy, x)
	r1, _ := BiasAct(x, bias, true)
	r2, _ := BiasAct(x, bias, false)
	if ya == yb || r1 == r2 {
		t.Error("different ops on the same input were merged into one node")
	}
	if ya != ya2 {
		t.Error("equal products were not merged (common-subexpression elimination expected)")
	}
}

func TestUsePreallocDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	m := randCSR(t, rng, 4, 3, 2)
	x := dense64([]int{3, 2}, randVec(rng, 6))
	want, err := newSpMMOp(m).Do(x)
	if err != nil {
		t.Fatal(err)
	}
	buf := dense64([]int{4, 2}, []float64{9, 9, 9, 9, 9, 9, 9, 9})
	got, err := newSpMMOp(m).UsePreallocDo(buf, x)
	if err != nil {
		t.Fatal(err)
	}
	if !got.(*tensor.Dense).Eq(want) {
		t.Errorf("UsePreallocDo = %v, want %v (the buffer must be overwritten)", got, want)
	}
	if _, err := newSpMMOp(m).UsePreallocDo(dense64([]int{2, 4}, make([]float64, 8)), x); err == nil {
		t.Error("wrong-shaped buffer: want an error")
	}
	if _, err := newSpMMOp(m).UsePreallocDo(tensor.New(tensor.WithShape(4, 2), tensor.Of(tensor.Float32)), x); err == nil {
		t.Error("wrong-dtype buffer: want an error")
	}
	sq := randCSR(t, rng, 3, 3, 2)
	if _, err := newSpMMOp(sq).UsePreallocDo(x, x); err == nil {
		t.Error("buffer aliasing the input: want an error")
	}
	if _, err := newSpMMOp(m).Do(dense64([]int{4, 2}, make([]float64, 8))); err == nil {
		t.Error("x with the wrong row count: want an error")
	}
	if _, err := newBiasActOp(false).Do(x, dense64([]int{3}, make([]float64, 3))); err == nil {
		t.Error("bias of the wrong length: want an error")
	}
	if _, err := newBiasActOp(false).Do(x, tensor.New(tensor.WithShape(2), tensor.Of(tensor.Float32))); err == nil {
		t.Error("mixed dtypes: want an error")
	}
}

func TestLinearForwardAndMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 1))
	// Sizes below and above the row chunks (64, 256) and the parallel threshold.
	for _, sz := range []struct{ n, k, m int }{{3, 4, 2}, {1, 1, 1}, {700, 37, 32}, {130, 96, 96}} {
		t.Run(fmt.Sprintf("%dx%dx%d", sz.n, sz.k, sz.m), func(t *testing.T) {
			x, w, b := randVec(rng, sz.n*sz.k), randVec(rng, sz.k*sz.m), randVec(rng, sz.m)
			dz := randVec(rng, sz.n*sz.m)
			for _, relu := range []bool{false, true} {
				op := newLinearOp(LinearOpts{ReLU: relu})
				out, err := op.Do(dense64([]int{sz.n, sz.k}, x), dense64([]int{sz.k, sz.m}, w), dense64([]int{sz.m}, b))
				if err != nil {
					t.Fatal(err)
				}
				got := out.(*tensor.Dense).Float64s()
				for i := 0; i < sz.n; i++ {
					for j := 0; j < sz.m; j++ {
						want := b[j]
						for l := 0; l < sz.k; l++ {
							want += x[i*sz.k+l] * w[l*sz.m+j]
						}
						if relu && want < 0 {
							want = 0
						}
						if math.Abs(got[i*sz.m+j]-want) > 1e-12*(1+math.Abs(want)) {
							t.Fatalf("relu=%t y[%d,%d] = %v, want %v", relu, i, j, got[i*sz.m+j], want)
						}
					}
				}
			}
			// dz·Wᵀ (n×k) and xᵀ·dz (k×m).
			dx, err := newMatMulOp(false, true).Do(dense64([]int{sz.n, sz.m}, dz), dense64([]int{sz.k, sz.m}, w))
			if err != nil {
				t.Fatal(err)
			}
			dw, err := newMatMulOp(true, false).Do(dense64([]int{sz.n, sz.k}, x), dense64([]int{sz.n, sz.m}, dz))
			if err != nil {
				t.Fatal(err)
			}
			gx, gw := dx.(*tensor.Dense).Float64s(), dw.(*tensor.Dense).Float64s()
			for i := 0; i < sz.n; i++ {
				for l := 0; l < sz.k; l++ {
					want := 0.0
					for j := 0; j < sz.m; j++ {
						want += dz[i*sz.m+j] * w[l*sz.m+j]
					}
					if math.Abs(gx[i*sz.k+l]-want) > 1e-12*(1+math.Abs(want)) {
						t.Fatalf("dx[%d,%d] = %v, want %v", i, l, gx[i*sz.k+l], want)
					}
				}
			}
			for l := 0; l < sz.k; l++ {
				for j := 0; j < sz.m; j++ {
					want := 0.0
					for i := 0; i < sz.n; i++ {
						want += x[i*sz.k+l] * dz[i*sz.m+j]
					}
					if math.Abs(gw[l*sz.m+j]-want) > 1e-11*(1+math.Abs(want)) {
						t.Fatalf("dW[%d,%d] = %v, want %v", l, j, gw[l*sz.m+j], want)
					}
				}
			}
			// Deterministic: a second run gives identical bits.
			dw2, _ := newMatMulOp(true, false).Do(dense64([]int{sz.n, sz.k}, x), dense64([]int{sz.n, sz.m}, dz))
			if !dw2.(*tensor.Dense).Eq(dw) {
				t.Fatal("xᵀ·dz differs between two runs")
			}
		})
	}
}

func TestLinearGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 1))
	for _, relu := range []bool{false, true} {
		gc := gradCase{fmt.Sprintf("Linear relu=%t", relu), [][]int{{6, 4}, {4, 3}, {3}}, []int{0, 1, 2},
			func(in []*gorgonia.Node) (*gorgonia.Node, error) {
				return Linear(in[0], in[1], in[2], LinearOpts{ReLU: relu})
			}}
		checkGradient(t, gc, [][]float64{randVec(rng, 24), randVec(rng, 12), randVec(rng, 3)})
	}
	// Above the reduction chunk, so xᵀ·dz is summed from several partials.
	big := gradCase{"Linear large", [][]int{{600, 2}, {2, 2}, {2}}, []int{1, 2},
		func(in []*gorgonia.Node) (*gorgonia.Node, error) {
			return Linear(in[0], in[1], in[2], LinearOpts{ReLU: true, NoInputGrad: true})
		}}
	checkGradient(t, big, [][]float64{randVec(rng, 1200), randVec(rng, 4), randVec(rng, 2)})

	// NoInputGrad: W and b still get gradients; x gets none.
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(3, 2), gorgonia.WithName("x"), gorgonia.WithValue(dense64([]int{3, 2}, randVec(rng, 6))))
	w := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(2, 2), gorgonia.WithName("w"), gorgonia.WithValue(dense64([]int{2, 2}, randVec(rng, 4))))
	b := gorgonia.NewVector(g, tensor.Float64, gorgonia.WithShape(2), gorgonia.WithName("b"), gorgonia.WithValue(dense64([]int{2}, randVec(rng, 2))))
	y, err := Linear(x, w, b, LinearOpts{NoInputGrad: true})
	if err != nil {
		t.Fatal(err)
	}
	loss := gorgonia.Must(gorgonia.Sum(y))
	if _, err := gorgonia.Grad(loss, w, b); err != nil {
		t.Fatalf("NoInputGrad, gradient w.r.t. W and b: %v", err)
	}
	if _, err := gorgonia.Grad(loss, x); err == nil {
		t.Error("NoInputGrad, gradient w.r.t. x: want an error")
	}
}

// TestUsePreallocDoAllOps checks that every op's UsePreallocDo overwrites a
// NaN-filled buffer with exactly what Do returns.
func TestUsePreallocDoAllOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	m := randCSR(t, rng, 5, 4, 2)
	fwd := described(&BatchNormOp{id: 99, c: 3, eps: 1e-5, training: true, mean: make([]float64, 3), variance: make([]float64, 3), invStd: make([]float64, 3)})
	x43 := dense64([]int{4, 3}, randVec(rng, 12))
	x53 := dense64([]int{5, 3}, randVec(rng, 15))
	v3 := dense64([]int{3}, randVec(rng, 3))
	w32 := dense64([]int{3, 2}, randVec(rng, 6))
	v2 := dense64([]int{2}, randVec(rng, 2))
	g52 := dense64([]int{5, 2}, randVec(rng, 10))
	type preallocOp interface {
		Do(...gorgonia.Value) (gorgonia.Value, error)
		UsePreallocDo(gorgonia.Value, ...gorgonia.Value) (gorgonia.Value, error)
	}
	cases := []struct {
		name string
		op   preallocOp
		in   []gorgonia.Value
	}{
		{"SpMM", newSpMMOp(m), []gorgonia.Value{x43}},
		{"BiasReLU", newBiasActOp(true), []gorgonia.Value{x43, v3}},
		{"ReLUGrad", newReluGradOp(), []gorgonia.Value{x43, x43}},
		{"ColSum", newColSumOp(), []gorgonia.Value{x43}},
		{"RowBroadcast", newRowBroadcastOp(4), []gorgonia.Value{v3}},
		{"BatchNorm", fwd, []gorgonia.Value{x53, v3, v3}},
		{"BatchNormGradX", newBNGradOp(fwd, true), []gorgonia.Value{x53, v3, x53}},
		{"BatchNormGradGamma", newBNGradOp(fwd, false), []gorgonia.Value{x53, v3, x53}},
		{"Linear", newLinearOp(LinearOpts{ReLU: true}), []gorgonia.Value{x53, w32, v2}},
		{"MatMulTransA", newMatMulOp(true, false), []gorgonia.Value{x53, g52}},
		{"MatMulTransB", newMatMulOp(false, true), []gorgonia.Value{g52, w32}},
	}
	for _, c := range cases {
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

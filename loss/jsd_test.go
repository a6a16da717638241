package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// refLocalGlobal is InfoGraph's local_global_loss_ with measure "JSD"
// written literally in float64 (no padding: every node is real): dense
// positive and negative masks, get_positive_expectation and
// get_negative_expectation applied to the masked score matrix, sums
// divided by num_nodes and num_nodes·(num_graphs−1). It shares no code
// with the op.
func refLocalGlobal(l, g []float64, ptr []int32, d int) float64 {
	n, b := len(l)/d, len(g)/d
	log2 := math.Log(2)
	softplus := func(x float64) float64 { return math.Log(1 + math.Exp(x)) }
	var ePos, eNeg float64
	for v := 0; v < n; v++ {
		for j := 0; j < b; j++ {
			var s float64
			for k := 0; k < d; k++ {
				s += l[v*d+k] * g[j*d+k]
			}
			pos := 0.0
			if int32(v) >= ptr[j] && int32(v) < ptr[j+1] {
				pos = 1
			}
			ePos += log2 - softplus(-(s * pos))
			eNeg += softplus(-(s * (1 - pos))) + s*(1-pos) - log2
		}
	}
	return eNeg/(float64(n)*float64(b-1)) - ePos/float64(n)
}

// randSegments returns graphPtr for b graphs with 0..4 nodes each (at
// least one node overall).
func randSegments(rng *rand.Rand, b int) []int32 {
	ptr := make([]int32, b+1)
	for j := 0; j < b; j++ {
		ptr[j+1] = ptr[j] + int32(rng.IntN(5))
	}
	if ptr[b] == 0 {
		ptr[b] = 1
	}
	return ptr
}

func randNormal(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * rng.NormFloat64()
	}
	return v
}

// localGlobalGraph builds, in float64, either one LocalGlobal(l, g) or
// MVGRL's two-term form LocalGlobal(l1, g2) + LocalGlobal(l2, g1) (when
// vals has four inputs), runs it with gradients and returns the loss and
// the gradient of every input.
func localGlobalGraph(t *testing.T, vals [][]float64, ptr []int32, d int) (float64, [][]float64) {
	t.Helper()
	g := G.NewGraph()
	var in G.Nodes
	for i, v := range vals {
		rows := len(v) / d
		in = append(in, G.NewMatrix(g, tensor.Float64, G.WithShape(rows, d), G.WithName(string(rune('a'+i))),
			G.WithValue(tensor.New(tensor.WithShape(rows, d), tensor.WithBacking(append([]float64(nil), v...))))))
	}
	l, err := LocalGlobal(in[0], in[1], ptr)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) == 4 {
		l2, err := LocalGlobal(in[2], in[3], ptr)
		if err != nil {
			t.Fatal(err)
		}
		if l, err = G.Add(l, l2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := G.Grad(l, in...); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var grads [][]float64
	for _, n := range in {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, append([]float64(nil), gv.Data().([]float64)...))
	}
	return l.Value().Data().(float64), grads
}

// TestLocalGlobalMatchesReference checks the op's loss against the literal
// reference and its gradients against central differences of the
// reference, for one term and for MVGRL's two-term sum, and LocalGlobalValue
// (float32) against the reference.
func TestLocalGlobalMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 7))
	for _, tc := range []struct {
		name    string
		b, d    int
		scale   float64
		twoTerm bool
	}{
		{"small", 2, 3, 1, false},
		{"batch", 6, 4, 0.7, false},
		{"large scores", 4, 3, 4, false},
		{"mvgrl", 5, 3, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptr := randSegments(rng, tc.b)
			n := int(ptr[tc.b])
			vals := [][]float64{randNormal(rng, n*tc.d, tc.scale), randNormal(rng, tc.b*tc.d, tc.scale)}
			if tc.twoTerm {
				vals = append(vals, randNormal(rng, n*tc.d, tc.scale), randNormal(rng, tc.b*tc.d, tc.scale))
			}
			ref := func(v [][]float64) float64 {
				r := refLocalGlobal(v[0], v[1], ptr, tc.d)
				if len(v) == 4 {
					r += refLocalGlobal(v[2], v[3], ptr, tc.d)
				}
				return r
			}
			got, grads := localGlobalGraph(t, vals, ptr, tc.d)
			if want := ref(vals); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("loss %.15g, reference %.15g", got, want)
			}
			const h = 1e-6
			for i := range vals {
				for e := range vals[i] {
					orig := vals[i][e]
					vals[i][e] = orig + h
					lp := ref(vals)
					vals[i][e] = orig - h
					lm := ref(vals)
					vals[i][e] = orig
					num := (lp - lm) / (2 * h)
					if rel := math.Abs(num-grads[i][e]) / math.Max(1, math.Abs(num)); rel > 1e-7 {
						t.Errorf("d/d input %d [%d]: analytic %.10g, numeric %.10g", i, e, grads[i][e], num)
					}
				}
			}
			if tc.twoTerm {
				return
			}
			l32, g32 := make([]float32, len(vals[0])), make([]float32, len(vals[1]))
			for i, v := range vals[0] {
				l32[i] = float32(v)
			}
			for i, v := range vals[1] {
				g32[i] = float32(v)
			}
			v32, dl, dg, err := LocalGlobalValue(l32, g32, ptr, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if want := ref(vals); math.Abs(v32-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("float32 loss %v, reference %v", v32, want)
			}
			for i := range dl {
				if math.Abs(float64(dl[i])-grads[0][i]) > 1e-5 {
					t.Fatalf("float32 ∂/∂local[%d] = %v, float64 %v", i, dl[i], grads[0][i])
				}
			}
			for i := range dg {
				if math.Abs(float64(dg[i])-grads[1][i]) > 1e-5 {
					t.Fatalf("float32 ∂/∂global[%d] = %v, float64 %v", i, dg[i], grads[1][i])
				}
			}
		})
	}
}

// TestLocalGlobalStable: scores of ±10⁴ give a finite loss and gradients
// (the reference's log(1+e^x) would overflow).
func TestLocalGlobalStable(t *testing.T) {
	ptr := []int32{0, 1, 2}
	l := []float32{100, -100}
	g := []float32{100, -100}
	v, dl, dg, err := LocalGlobalValue(l, g, ptr, 1)
	if err != nil {
		t.Fatal(err)
	}
	// s = [[1e4, −1e4], [−1e4, 1e4]]: positives ≈ log 2 each, negatives
	// softplus(−1e4) − log 2 ≈ −log 2: loss ≈ −2 log 2.
	if math.Abs(v+2*math.Ln2) > 1e-6 {
		t.Errorf("loss %v, want −2 log 2", v)
	}
	for _, x := range append(dl, dg...) {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("gradient %v", x)
		}
	}
}

func TestLocalGlobalRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		l, g   int
		d      int
		ptr    []int32
		errSub string
	}{
		{"one graph", 3, 1, 2, []int32{0, 3}, "B >= 2"},
		{"short ptr", 3, 2, 2, []int32{0, 3}, "graphPtr"},
		{"ptr end", 3, 2, 2, []int32{0, 1, 2}, "graphPtr"},
		{"decreasing", 3, 2, 2, []int32{0, 4, 3}, "decreases"},
		{"rows", 3, 2, 2, nil, "not rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, g := make([]float32, tc.l*tc.d), make([]float32, tc.g*tc.d)
			if tc.ptr == nil {
				l = l[1:]
			}
			if _, _, _, err := LocalGlobalValue(l, g, tc.ptr, tc.d); err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("err = %v, want one containing %q", err, tc.errSub)
			}
		})
	}
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("a"))
	b := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("b"))
	if _, err := LocalGlobal(a, b, []int32{0, 1, 3}); err == nil || !strings.Contains(err.Error(), "N×d and B×d") {
		t.Errorf("mismatched d: err = %v", err)
	}
	if _, err := LocalGlobal(nil, b, nil); err == nil {
		t.Error("nil input: want an error")
	}
}

// TestJSDKindIsNotContrastive: loss.kind jsd validates, but the InfoNCE
// family's entry points refuse it rather than compute another loss.
func TestJSDKindIsNotContrastive(t *testing.T) {
	c := Config{Kind: KindJSD, Form: FormGraphCL, Temperature: 0.2, TauPlus: 0.1, Beta: 1}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	z := make([]float32, 4)
	if _, _, _, err := Value(c, z, z, 2, 2); err == nil || !strings.Contains(err.Error(), "local–global") {
		t.Errorf("Value with kind jsd: err = %v", err)
	}
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName("a"))
	if _, err := Build(c, a, a); err == nil || !strings.Contains(err.Error(), "loss.kind") {
		t.Errorf("Build with kind jsd: err = %v", err)
	}
}

// TestJSDCache: the backward pass reuses the forward's ∂loss/∂S only for
// bit-identical inputs, once.
func TestJSDCache(t *testing.T) {
	c := new(jsdCache)
	l, g := []float32{1, 2, 3}, []float32{4, 5}
	storeJSD(c, l, g, []float64{7})
	l[0] = 9 // the cache holds a copy
	if ds := takeJSD(c, []float32{1, 2, 3.0000002}, g); ds != nil {
		t.Fatal("changed input served from the cache")
	}
	if ds := takeJSD(c, []float64{1, 2, 3}, []float64{4, 5}); ds != nil {
		t.Fatal("input of another dtype served from the cache")
	}
	if ds := takeJSD(c, []float32{1, 2, 3}, g); len(ds) != 1 || ds[0] != 7 {
		t.Fatalf("cached inputs: %v", ds)
	}
	if ds := takeJSD(c, []float32{1, 2, 3}, g); ds != nil {
		t.Fatal("the cache served twice")
	}
	if c.hits != 1 {
		t.Fatalf("%d hits, want 1", c.hits)
	}
}

// TestGetBuf: getBuf returns n values, reusing a returned buffer that is
// large enough, per dtype.
func TestGetBuf(t *testing.T) {
	a := getBuf[float32](100)
	if len(a) != 100 {
		t.Fatalf("len %d, want 100", len(a))
	}
	putBuf(a)
	b := getBuf[float64](50)
	if len(b) != 50 {
		t.Fatalf("len %d, want 50", len(b))
	}
	if c := getBuf[float32](1000); len(c) != 1000 {
		t.Fatalf("len %d, want 1000", len(c))
	}
}

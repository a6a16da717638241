package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// refLocalGlobalNCE is the InfoNCE local–global objective written from its
// formula in float64 with plain loops: cosines with norms clamped at 1e-8,
// −log of the softmax of the own graph (no max shift), averaged over the
// nodes; and its gradient from ∂c_vj/∂L_v = (Ĝ_j − c_vj L̂_v)/‖L_v‖ and
// ∂c_vj/∂G_j = (L̂_v − c_vj Ĝ_j)/‖G_j‖ (rows of norm above 1e-8). It shares
// no code with the op.
func refLocalGlobalNCE(l, g []float64, ptr []int32, d int, tau float64) (loss float64, dl, dg []float64) {
	n, b := len(l)/d, len(g)/d
	norm := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v * v
		}
		return math.Max(math.Sqrt(s), 1e-8)
	}
	dl, dg = make([]float64, n*d), make([]float64, b*d)
	for v := 0; v < n; v++ {
		lv := l[v*d : (v+1)*d]
		nl := norm(lv)
		c := make([]float64, b)
		own := -1
		var z float64
		for j := 0; j < b; j++ {
			gj := g[j*d : (j+1)*d]
			for k := 0; k < d; k++ {
				c[j] += lv[k] * gj[k]
			}
			c[j] /= nl * norm(gj)
			z += math.Exp(c[j] / tau)
			if int32(v) >= ptr[j] && int32(v) < ptr[j+1] {
				own = j
			}
		}
		loss += -math.Log(math.Exp(c[own]/tau)/z) / float64(n)
		for j := 0; j < b; j++ {
			w := math.Exp(c[j]/tau) / z
			if j == own {
				w--
			}
			w /= tau * float64(n)
			gj := g[j*d : (j+1)*d]
			ng := norm(gj)
			for k := 0; k < d; k++ {
				lh, gh := lv[k]/nl, gj[k]/ng
				dl[v*d+k] += w * (gh - c[j]*lh) / nl
				dg[j*d+k] += w * (lh - c[j]*gh) / ng
			}
		}
	}
	return loss, dl, dg
}

// nceGraph builds, in dtype, either LocalGlobalNCE(l, g) or MVGRL's
// two-term form LocalGlobalNCE(l1, g2) + LocalGlobalNCE(l2, g1) (when vals
// has four inputs), runs it with gradients and returns the loss and the
// gradient of every input in float64.
func nceGraph(t *testing.T, dt tensor.Dtype, vals [][]float64, ptr []int32, d int, tau float64) (float64, [][]float64) {
	t.Helper()
	g := G.NewGraph()
	var in G.Nodes
	for i, v := range vals {
		rows := len(v) / d
		var back any
		if dt == tensor.Float32 {
			f := make([]float32, len(v))
			for k, x := range v {
				f[k] = float32(x)
			}
			back = f
		} else {
			back = append([]float64(nil), v...)
		}
		in = append(in, G.NewMatrix(g, dt, G.WithShape(rows, d), G.WithName(string(rune('a'+i))),
			G.WithValue(tensor.New(tensor.WithShape(rows, d), tensor.WithBacking(back)))))
	}
	l, err := LocalGlobalNCE(in[0], in[1], ptr, tau)
	if err != nil {
		t.Fatal(err)
	}
	if len(in) == 4 {
		l2, err := LocalGlobalNCE(in[2], in[3], ptr, tau)
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
	f64 := func(x any) []float64 {
		switch x := x.(type) {
		case []float64:
			return append([]float64(nil), x...)
		case []float32:
			out := make([]float64, len(x))
			for i, v := range x {
				out[i] = float64(v)
			}
			return out
		case float32:
			return []float64{float64(x)}
		case float64:
			return []float64{x}
		}
		t.Fatalf("value of type %T", x)
		return nil
	}
	var grads [][]float64
	for _, n := range in {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		grads = append(grads, f64(gv.Data()))
	}
	return f64(l.Value().Data())[0], grads
}

// TestLocalGlobalNCEMatchesReference checks the op's loss and gradients in
// float64 and float32 against the reference loop, the float64 gradients
// against central differences of the reference loss, for one term and for
// MVGRL's two-term sum, and LocalGlobalNCEValue against the reference.
func TestLocalGlobalNCEMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	for _, tc := range []struct {
		name    string
		b, d    int
		scale   float64
		tau     float64
		twoTerm bool
	}{
		{"small", 2, 3, 1, 0.2, false},
		{"batch", 6, 4, 0.7, 0.2, false},
		{"large inputs", 4, 3, 40, 0.5, false},
		{"sharp", 5, 8, 1, 0.05, false},
		{"mvgrl", 5, 3, 1, 0.2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptr := randSegments(rng, tc.b)
			n := int(ptr[tc.b])
			vals := [][]float64{randNormal(rng, n*tc.d, tc.scale), randNormal(rng, tc.b*tc.d, tc.scale)}
			if tc.twoTerm {
				vals = append(vals, randNormal(rng, n*tc.d, tc.scale), randNormal(rng, tc.b*tc.d, tc.scale))
			}
			ref := func(v [][]float64) (float64, [][]float64) {
				r, dl, dg := refLocalGlobalNCE(v[0], v[1], ptr, tc.d, tc.tau)
				grads := [][]float64{dl, dg}
				if len(v) == 4 {
					r2, dl2, dg2 := refLocalGlobalNCE(v[2], v[3], ptr, tc.d, tc.tau)
					r += r2
					grads = append(grads, dl2, dg2)
				}
				return r, grads
			}
			want, wantGrads := ref(vals)
			for _, dc := range []struct {
				dt       tensor.Dtype
				tol, gtl float64
			}{{tensor.Float64, 1e-12, 1e-10}, {tensor.Float32, 1e-5, 1e-4}} {
				got, grads := nceGraph(t, dc.dt, vals, ptr, tc.d, tc.tau)
				if math.Abs(got-want) > dc.tol*math.Max(1, math.Abs(want)) {
					t.Fatalf("%v: loss %.15g, reference %.15g", dc.dt, got, want)
				}
				for i := range grads {
					for e := range grads[i] {
						if math.Abs(grads[i][e]-wantGrads[i][e]) > dc.gtl*math.Max(1, math.Abs(wantGrads[i][e])) {
							t.Fatalf("%v: d/d input %d [%d]: op %.12g, reference %.12g", dc.dt, i, e, grads[i][e], wantGrads[i][e])
						}
					}
				}
			}
			// Central differences of the reference loss.
			_, grads := nceGraph(t, tensor.Float64, vals, ptr, tc.d, tc.tau)
			const h = 1e-6
			for i := range vals {
				for e := range vals[i] {
					orig := vals[i][e]
					vals[i][e] = orig + h*math.Max(1, math.Abs(orig))
					lp, _ := ref(vals)
					vals[i][e] = orig - h*math.Max(1, math.Abs(orig))
					lm, _ := ref(vals)
					vals[i][e] = orig
					num := (lp - lm) / (2 * h * math.Max(1, math.Abs(orig)))
					if rel := math.Abs(num-grads[i][e]) / math.Max(1, math.Abs(num)); rel > 1e-6 {
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
			v32, dl, dg, err := LocalGlobalNCEValue(l32, g32, ptr, tc.d, tc.tau)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(v32-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("LocalGlobalNCEValue loss %v, reference %v", v32, want)
			}
			for i, x := range append(dl, dg...) {
				w := append(wantGrads[0], wantGrads[1]...)[i]
				if math.Abs(float64(x)-w) > 1e-4*math.Max(1, math.Abs(w)) {
					t.Fatalf("LocalGlobalNCEValue gradient [%d] = %v, reference %v", i, x, w)
				}
			}
		})
	}
}

// TestLocalGlobalNCEStable: with τ = 1e-3 the logits reach ±1000 (e^1000
// overflows float64), and a zero row has no direction: the loss and the
// gradients stay finite, and a node aligned with its own graph and
// opposite to the other has loss ≈ 0.
func TestLocalGlobalNCEStable(t *testing.T) {
	ptr := []int32{0, 1, 3}
	l := []float32{1e4, 0, 3, 0, 0, 0}
	g := []float32{5, 0, -1e4, 0}
	v, dl, dg, err := LocalGlobalNCEValue(l, g, ptr, 2, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	// Nodes 0 and 1 (cosines ±1): loss 0 and 2000 + log(1 + e^−2000);
	// node 2 (zero, cosines 0): log 2.
	if want := (2000 + math.Ln2) / 3; math.Abs(v-want) > 1e-9*want {
		t.Errorf("loss %v, want %v", v, want)
	}
	for _, x := range append(dl, dg...) {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			t.Fatalf("gradient %v", x)
		}
	}
}

func TestLocalGlobalNCERejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		l, g   int
		d      int
		ptr    []int32
		tau    float64
		errSub string
	}{
		{"one graph", 3, 1, 2, []int32{0, 3}, 0.2, "B >= 2"},
		{"short ptr", 3, 2, 2, []int32{0, 3}, 0.2, "graphPtr has 2 entries"},
		{"long ptr", 3, 2, 2, []int32{0, 1, 2, 3}, 0.2, "graphPtr has 4 entries"},
		{"ptr start", 3, 2, 2, []int32{1, 2, 3}, 0.2, "from 0 to N = 3"},
		{"ptr end", 3, 2, 2, []int32{0, 1, 2}, 0.2, "from 0 to N = 3"},
		{"decreasing", 3, 2, 2, []int32{0, 4, 3}, 0.2, "decreases at graph 1 (4 → 3)"},
		{"rows", 3, 2, 2, nil, 0.2, "not rows"},
		{"zero temperature", 3, 2, 2, []int32{0, 1, 3}, 0, "temperature 0"},
		{"negative temperature", 3, 2, 2, []int32{0, 1, 3}, -1, "temperature -1"},
		{"NaN temperature", 3, 2, 2, []int32{0, 1, 3}, math.NaN(), "temperature NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, g := make([]float32, tc.l*tc.d), make([]float32, tc.g*tc.d)
			if tc.ptr == nil {
				l = l[1:]
			}
			if _, _, _, err := LocalGlobalNCEValue(l, g, tc.ptr, tc.d, tc.tau); err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("err = %v, want one containing %q", err, tc.errSub)
			}
		})
	}
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float64, G.WithShape(3, 2), G.WithName("a"))
	b := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 3), G.WithName("b"))
	c := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("c"))
	if _, err := LocalGlobalNCE(a, b, []int32{0, 1, 3}, 0.2); err == nil || !strings.Contains(err.Error(), "N×d and B×d") {
		t.Errorf("mismatched d: err = %v", err)
	}
	if _, err := LocalGlobalNCE(a, c, []int32{0, 4, 3}, 0.2); err == nil || !strings.Contains(err.Error(), "decreases") {
		t.Errorf("decreasing graphPtr: err = %v", err)
	}
	if _, err := LocalGlobalNCE(a, c, []int32{0, 1, 3}, 0); err == nil || !strings.Contains(err.Error(), "temperature") {
		t.Errorf("τ = 0: err = %v", err)
	}
	if _, err := LocalGlobalNCE(nil, c, nil, 0.2); err == nil {
		t.Error("nil input: want an error")
	}
	// Both local–global objectives in one expression graph are two ops,
	// not one (the op hash names the objective and τ).
	j, err := LocalGlobal(a, c, []int32{0, 1, 3})
	if err != nil {
		t.Fatal(err)
	}
	n1, err := LocalGlobalNCE(a, c, []int32{0, 1, 3}, 0.2)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := LocalGlobalNCE(a, c, []int32{0, 1, 3}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if j == n1 || n1 == n2 {
		t.Error("objectives of different kind or τ share a node")
	}
}

// TestNCELocalGlobalKind: loss.kind nce_local_global validates and prints
// its τ, and the InfoNCE family's entry points refuse it.
func TestNCELocalGlobalKind(t *testing.T) {
	c := Config{Kind: KindNCELocalGlobal, Form: FormGraphCL, Temperature: 0.2, TauPlus: 0.1, Beta: 1}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if s := c.String(); s != "nce_local_global(τ=0.2)" {
		t.Errorf("String() = %q", s)
	}
	z := make([]float32, 4)
	if _, _, _, err := Value(c, z, z, 2, 2); err == nil || !strings.Contains(err.Error(), "LocalGlobalNCE") {
		t.Errorf("Value with kind nce_local_global: err = %v", err)
	}
	g := G.NewGraph()
	a := G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName("a"))
	if _, err := Build(c, a, a); err == nil || !strings.Contains(err.Error(), "loss.kind") {
		t.Errorf("Build with kind nce_local_global: err = %v", err)
	}
	if err := (Config{Kind: "nce", Form: FormGraphCL, Temperature: 0.2}).Validate(); err == nil || !strings.Contains(err.Error(), `"nce_local_global"`) {
		t.Errorf("unknown kind: err = %v", err)
	}
}

package loss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"go.yaml.in/yaml/v3"
)

// relErr is |got−want| / |want| (|got−want| when want is 0).
func relErr(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}

// graphRun builds the loss of c on constant-initialised input nodes of
// dtype dt, differentiates it, runs a TapeMachine and returns the loss and
// the gradients with respect to z1 and z2 as float64.
func graphRun(t testing.TB, c Config, dt tensor.Dtype, z1, z2 []float64, b, d int) (float64, []float64, []float64) {
	t.Helper()
	g := G.NewGraph()
	n1 := G.NewMatrix(g, dt, G.WithShape(b, d), G.WithName("z1"), G.WithValue(denseOf(dt, z1, b, d)))
	n2 := G.NewMatrix(g, dt, G.WithShape(b, d), G.WithName("z2"), G.WithValue(denseOf(dt, z2, b, d)))
	l, err := Build(c, n1, n2)
	if err != nil {
		t.Fatalf("Build(%v): %v", c, err)
	}
	if _, err := G.Grad(l, n1, n2); err != nil {
		t.Fatalf("Grad(%v): %v", c, err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(n1, n2))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("RunAll(%v): %v", c, err)
	}
	lv, err := scalarValue(l.Value())
	if err != nil {
		t.Fatal(err)
	}
	return lv, gradOf(t, n1), gradOf(t, n2)
}

func denseOf(dt tensor.Dtype, x []float64, b, d int) *tensor.Dense {
	if dt == tensor.Float32 {
		y := make([]float32, len(x))
		for i, v := range x {
			y[i] = float32(v)
		}
		return tensor.New(tensor.WithShape(b, d), tensor.WithBacking(y))
	}
	return tensor.New(tensor.WithShape(b, d), tensor.WithBacking(append([]float64(nil), x...)))
}

func gradOf(t testing.TB, n *G.Node) []float64 {
	t.Helper()
	gv, err := n.Grad()
	if err != nil {
		t.Fatalf("%v.Grad(): %v", n, err)
	}
	switch x := gv.Data().(type) {
	case []float64:
		return append([]float64(nil), x...)
	case []float32:
		return to64(x)
	}
	t.Fatalf("gradient of %v has data %T", n, gv.Data())
	return nil
}

func TestForwardMatchesReference(t *testing.T) {
	const b, d = 12, 7
	for si, sc := range scenarios {
		for _, tau := range []float64{0.5, 0.05} {
			for ci, c := range allConfigs(tau) {
				r := rand.New(rand.NewPCG(uint64(si), uint64(ci)))
				z1f, z2f := sc.gen(r, b, d)
				z1, z2 := to64(z1f), to64(z2f)
				want := refLoss(c, z1, z2, b, d).loss
				name := fmt.Sprintf("%s/%v", sc.name, c)
				got, _, _, err := Value(c, z1f, z2f, b, d)
				if err != nil {
					t.Fatalf("%s: Value: %v", name, err)
				}
				if e := relErr(got, want); e > 1e-5 {
					t.Errorf("%s: Value = %.12g, reference %.12g (rel err %.2g)", name, got, want, e)
				}
				for _, dt := range []tensor.Dtype{tensor.Float64, tensor.Float32} {
					gl, _, _ := graphRun(t, c, dt, z1, z2, b, d)
					if e := relErr(gl, want); e > 1e-5 {
						t.Errorf("%s: %v graph loss = %.12g, reference %.12g (rel err %.2g)", name, dt, gl, want, e)
					}
				}
			}
		}
	}
}

// checkGrad compares an analytic gradient with a finite-difference (or
// other reference) gradient of row-major rows of length d, in scale-free
// coordinates: element (r,k) is multiplied by the norm of row r of z (the
// derivative along a relative perturbation of the row; it does not depend
// on the row's scale, whereas the raw gradient shrinks as 1/‖z_r‖ and the
// test norms span 1e-1 … 1e3). With z nil no scaling is applied. Every
// element must agree within tol relative to max(|ref|, 1e-3·max|ref|).
func checkGrad(t *testing.T, name string, got, ref, z []float64, d int, tol float64) {
	t.Helper()
	scaled := func(x []float64) []float64 {
		y := append([]float64(nil), x...)
		if z == nil {
			return y
		}
		for r := 0; r < len(y)/d; r++ {
			nrm := 0.0
			for _, v := range z[r*d : (r+1)*d] {
				nrm += v * v
			}
			nrm = math.Sqrt(nrm)
			for k := r * d; k < (r+1)*d; k++ {
				y[k] *= nrm
			}
		}
		return y
	}
	g, f := scaled(got), scaled(ref)
	scale := 0.0
	for _, v := range f {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 {
		t.Fatalf("%s: reference gradient is identically zero; the test input is degenerate", name)
	}
	for i := range f {
		den := math.Max(math.Abs(f[i]), 1e-3*scale)
		if e := math.Abs(g[i]-f[i]) / den; e > tol {
			t.Errorf("%s: element %d: analytic %.10g, reference %.10g (rel err %.2g)", name, i, got[i], ref[i], e)
			return
		}
	}
}

func TestGradientMatchesFiniteDifferences(t *testing.T) {
	const b, d = 5, 4
	for si, sc := range scenarios {
		for ci, c := range allConfigs(0.2) {
			if sc.name != "gaussian" {
				c.Temperature = 0.05
			}
			c.Beta = 1.5
			r := rand.New(rand.NewPCG(100+uint64(si), uint64(ci)))
			z1f, z2f := sc.gen(r, b, d)
			z1, z2 := to64(z1f), to64(z2f)
			name := fmt.Sprintf("%s/%v", sc.name, c)
			f := func(a, bb []float64) float64 { return refLoss(c, a, bb, b, d).loss }
			fd1, fd2 := refGrad(f, z1, z2, b, d, 1e-6)
			_, g1, g2 := graphRun(t, c, tensor.Float64, z1, z2, b, d)
			checkGrad(t, name+" ∂/∂z1", g1, fd1, z1, d, 1e-4)
			checkGrad(t, name+" ∂/∂z2", g2, fd2, z2, d, 1e-4)
			// Value (float32 out) agrees with the graph's float64 gradient.
			_, v1, v2, err := Value(c, z1f, z2f, b, d)
			if err != nil {
				t.Fatal(err)
			}
			checkGrad(t, name+" Value ∂/∂z1", to64(v1), g1, z1, d, 1e-4)
			checkGrad(t, name+" Value ∂/∂z2", to64(v2), g2, z2, d, 1e-4)
		}
	}
}

// TestGradientThroughGraph checks that the op's gradient composes with
// Gorgonia's: loss(X·W1, X·W2)·3, differentiated with respect to W1, W2.
func TestGradientThroughGraph(t *testing.T) {
	const b, in, d = 6, 5, 4
	r := rand.New(rand.NewPCG(7, 7))
	rnd := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	x, w1, w2 := rnd(b*in), rnd(in*d), rnd(in*d)
	matmul := func(w []float64) []float64 {
		out := make([]float64, b*d)
		for i := 0; i < b; i++ {
			for j := 0; j < d; j++ {
				for k := 0; k < in; k++ {
					out[i*d+j] += x[i*in+k] * w[k*d+j]
				}
			}
		}
		return out
	}
	for _, c := range []Config{
		{Kind: KindHCL, Form: FormSimCLR, Temperature: 0.3, TauPlus: 0.1, Beta: 1},
		{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.2, TauPlus: 0.1, Beta: 1},
	} {
		g := G.NewGraph()
		X := G.NewMatrix(g, tensor.Float64, G.WithShape(b, in), G.WithName("x"), G.WithValue(denseOf(tensor.Float64, x, b, in)))
		W1 := G.NewMatrix(g, tensor.Float64, G.WithShape(in, d), G.WithName("w1"), G.WithValue(denseOf(tensor.Float64, w1, in, d)))
		W2 := G.NewMatrix(g, tensor.Float64, G.WithShape(in, d), G.WithName("w2"), G.WithValue(denseOf(tensor.Float64, w2, in, d)))
		l, err := Build(c, G.Must(G.Mul(X, W1)), G.Must(G.Mul(X, W2)))
		if err != nil {
			t.Fatal(err)
		}
		cost := G.Must(G.Mul(l, G.NewConstant(3.0)))
		if _, err := G.Grad(cost, W1, W2); err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g, G.BindDualValues(W1, W2))
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Close()
		f := func(a, bb []float64) float64 { return 3 * refLoss(c, matmul(a), matmul(bb), b, d).loss }
		// Reuse refGrad with "rows" of W (in rows of d).
		fd1, fd2 := refGrad(f, w1, w2, in, d, 1e-6)
		checkGrad(t, fmt.Sprintf("%v ∂/∂W1", c), gradOf(t, W1), fd1, nil, d, 1e-4)
		checkGrad(t, fmt.Sprintf("%v ∂/∂W2", c), gradOf(t, W2), fd2, nil, d, 1e-4)
	}
}

func TestKnownValues(t *testing.T) {
	// z1 = z2 = [e1; e2], τ = 1: cosine matrix I (cross) or [[I,I],[I,I]].
	z := []float32{1, 0, 0, 1}
	e := math.E
	ngDCL := math.Max((-0.1*2*e+2)/0.9, 2/e) // simclr form: N=2, pos=e, negatives 1, 1
	tests := []struct {
		c    Config
		want float64
	}{
		{Config{Kind: KindInfoNCE, Form: FormSimCSE, Temperature: 1}, math.Log(1+e) - 1},
		{Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 1}, -1},
		{Config{Kind: KindInfoNCE, Form: FormSimCLR, Temperature: 1}, math.Log(e+2) - 1},
		{Config{Kind: KindDCL, Form: FormSimCLR, Temperature: 1, TauPlus: 0.1}, math.Log(e+ngDCL) - 1},
		{Config{Kind: KindHCL, Form: FormSimCLR, Temperature: 1, TauPlus: 0.1, Beta: 2}, math.Log(e+ngDCL) - 1},
		// graphcl form, N=1: Ng = max((−0.1·e + 1)/0.9, 1/e) = 1/e: the clamp.
		{Config{Kind: KindDCL, Form: FormGraphCL, Temperature: 1, TauPlus: 0.5}, math.Log(e+1/e) - 1},
	}
	for _, tt := range tests {
		got, _, _, err := Value(tt.c, z, z, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		if relErr(got, tt.want) > 1e-12 {
			t.Errorf("%v: loss %.15g, want %.15g", tt.c, got, tt.want)
		}
	}
}

func TestIdentities(t *testing.T) {
	const b, d = 10, 6
	for si, sc := range scenarios {
		r := rand.New(rand.NewPCG(200, uint64(si)))
		z1f, z2f := sc.gen(r, b, d)
		for _, form := range []string{FormSimCLR, FormGraphCL, FormSimCSE} {
			for _, tau := range []float64{0.5, 0.05} {
				name := fmt.Sprintf("%s/%s/τ=%g", sc.name, form, tau)
				eval := func(c Config) (float64, []float32, []float32) {
					l, g1, g2, err := Value(c, z1f, z2f, b, d)
					if err != nil {
						t.Fatal(err)
					}
					return l, g1, g2
				}
				same := func(what string, c1, c2 Config, tol float64) {
					l1, a1, a2 := eval(c1)
					l2, b1, b2 := eval(c2)
					if e := relErr(l1, l2); e > tol {
						t.Errorf("%s: %s: %v = %.12g but %v = %.12g", name, what, c1, l1, c2, l2)
					}
					checkGrad(t, name+" "+what+" ∂/∂z1", to64(a1), to64(b1), to64(z1f), d, 1e-5)
					checkGrad(t, name+" "+what+" ∂/∂z2", to64(a2), to64(b2), to64(z2f), d, 1e-5)
				}
				dcl := Config{Kind: KindDCL, Form: form, Temperature: tau, TauPlus: 0.1, Beta: 1}
				hcl0 := dcl
				hcl0.Kind, hcl0.Beta = KindHCL, 0
				same("HCL β=0 = DCL", hcl0, dcl, 1e-10)

				// DCL with τ⁺=0 keeps the positive and the N negatives in its
				// denominator: NT-Xent for simclr, SimCSE's InfoNCE for the
				// one-direction forms (not GraphCL's, which drops the positive).
				dcl0 := dcl
				dcl0.TauPlus = 0
				if refLoss(dcl0, to64(z1f), to64(z2f), b, d).clamped != 0 {
					t.Fatalf("%s: clamp active with τ⁺=0", name)
				}
				info := Config{Kind: KindInfoNCE, Form: form, Temperature: tau}
				if form == FormGraphCL {
					info.Form = FormSimCSE
					lg, _, _ := eval(Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: tau})
					ld, _, _ := eval(dcl0)
					if math.Abs(lg-ld) < 1e-6 {
						t.Errorf("%s: DCL τ⁺=0 (%.9g) should differ from GraphCL InfoNCE (%.9g)", name, ld, lg)
					}
				}
				same("DCL τ⁺=0 = InfoNCE", dcl0, info, 1e-10)
			}
		}
	}
}

// clampInput has orthogonal, nearly identical positive pairs: at τ=0.2
// every anchor's pos ≈ e⁵ while its negatives are ≈ 1, so
// −τ⁺·N·pos + Σneg < 0 and the clamp N·e^{−1/τ} is active for τ⁺=0.1.
func clampInput(r *rand.Rand, b, d int) ([]float64, []float64) {
	z1, z2 := make([]float64, b*d), make([]float64, b*d)
	for i := 0; i < b; i++ {
		for k := 0; k < d; k++ {
			base := 0.0
			if k == i {
				base = 1
			}
			z1[i*d+k] = base + 0.05*r.NormFloat64()
			z2[i*d+k] = base + 0.05*r.NormFloat64()
		}
	}
	return z1, z2
}

func TestClampBranch(t *testing.T) {
	const b, d = 5, 7
	for ci, c := range allConfigs(0.2) {
		if c.Kind == KindInfoNCE {
			continue
		}
		c.Beta = 2
		name := c.String()
		r := rand.New(rand.NewPCG(300, uint64(ci)))
		z1, z2 := clampInput(r, b, d)
		ref := refLoss(c, z1, z2, b, d)
		if ref.clamped != ref.anchors {
			t.Fatalf("%s: clamp active for %d of %d anchors; the input should clamp all", name, ref.clamped, ref.anchors)
		}
		l, g1, g2 := graphRun(t, c, tensor.Float64, z1, z2, b, d)
		if e := relErr(l, ref.loss); e > 1e-9 {
			t.Errorf("%s: loss %.12g, reference %.12g", name, l, ref.loss)
		}
		// With every anchor clamped the loss is mean(log(1 + N·e^{−1/τ}/pos)):
		// the negatives contribute nothing to the gradient.
		clampOnly := func(a, bb []float64) float64 {
			sum, cnt := 0.0, 0
			visit := func(x, y []float64, n float64) {
				pos := math.Exp(refCos(x, y) / c.Temperature)
				sum += math.Log1p(n * math.Exp(-1/c.Temperature) / pos)
				cnt++
			}
			for i := 0; i < b; i++ {
				x, y := a[i*d:(i+1)*d], bb[i*d:(i+1)*d]
				if c.Form == FormSimCLR {
					visit(x, y, 2*b-2)
					visit(y, x, 2*b-2)
				} else {
					visit(x, y, b-1)
				}
			}
			return sum / float64(cnt)
		}
		if e := relErr(clampOnly(z1, z2), ref.loss); e > 1e-12 {
			t.Fatalf("%s: clamp-only formula %.12g differs from reference %.12g", name, clampOnly(z1, z2), ref.loss)
		}
		fd1, fd2 := refGrad(clampOnly, z1, z2, b, d, 1e-6)
		checkGrad(t, name+" ∂/∂z1", g1, fd1, z1, d, 1e-4)
		checkGrad(t, name+" ∂/∂z2", g2, fd2, z2, d, 1e-4)

		// The kernel's row gradient is exactly zero on every negative.
		geo := geometryOf(c.Form, b)
		U := make([][]float64, 0, 2*b)
		for i := 0; i < b; i++ {
			U = append(U, z1[i*d:(i+1)*d])
		}
		for i := 0; i < b; i++ {
			U = append(U, z2[i*d:(i+1)*d])
		}
		for a := 0; a < geo.n; a++ {
			row := make([]float64, geo.n)
			for k := range row {
				if geo.stacked {
					row[k] = refCos(U[a], U[k])
				} else {
					row[k] = refCos(U[a], U[b+k])
				}
			}
			rowLoss(c, geo, a, row, true, make([]float64, geo.n))
			for k, v := range row {
				if k != geo.partner(a) && v != 0 {
					t.Errorf("%s: anchor %d: ∂ℓ/∂S[%d] = %g on a negative under the clamp; want 0", name, a, k, v)
					break
				}
			}
			if row[geo.partner(a)] == 0 {
				t.Errorf("%s: anchor %d: zero gradient on the positive", name, a)
			}
		}
	}
}

func TestFloat32IdenticalRowsFinite(t *testing.T) {
	const b, d = 16, 8
	r := rand.New(rand.NewPCG(400, 0))
	for _, scale := range []float64{1e-12, 1, 1e3, 1e30} {
		v := make([]float64, d)
		for k := range v {
			v[k] = scale * r.NormFloat64()
		}
		z := make([]float64, b*d)
		for i := 0; i < b; i++ {
			copy(z[i*d:], v)
		}
		for _, c := range allConfigs(0.05) {
			name := fmt.Sprintf("scale %g/%v", scale, c)
			l, g1, g2 := graphRun(t, c, tensor.Float32, z, z, b, d)
			if math.IsNaN(l) || math.IsInf(l, 0) {
				t.Errorf("%s: loss %v", name, l)
			}
			for i := range g1 {
				if math.IsNaN(g1[i]) || math.IsInf(g1[i], 0) || math.IsNaN(g2[i]) || math.IsInf(g2[i], 0) {
					t.Errorf("%s: non-finite gradient at %d: %v %v", name, i, g1[i], g2[i])
					break
				}
			}
			// All similarities are 1 (or 0 for the zero-ish rows): the loss
			// is log of the denominator size, e.g. log(2B−1) for NT-Xent.
			if scale >= 1 {
				want := refLoss(c, z, z, b, d).loss
				if relErr(l, want) > 1e-5 {
					t.Errorf("%s: loss %.9g, reference %.9g", name, l, want)
				}
			}
		}
	}
}

func TestFloat32ExtremeLogits(t *testing.T) {
	// Raw projections of norm ~1e18 would overflow a float32 dot product;
	// the op must still match the float64 reference.
	const b, d = 8, 6
	r := rand.New(rand.NewPCG(401, 0))
	z1, z2 := make([]float64, b*d), make([]float64, b*d)
	for k := range z1 {
		z1[k] = float64(float32(1e18 * r.NormFloat64()))
		z2[k] = float64(float32(1e18 * r.NormFloat64()))
	}
	for _, c := range allConfigs(0.05) {
		l, g1, _ := graphRun(t, c, tensor.Float32, z1, z2, b, d)
		want := refLoss(c, z1, z2, b, d).loss
		if relErr(l, want) > 1e-5 {
			t.Errorf("%v: loss %.9g, reference %.9g", c, l, want)
		}
		for i, v := range g1 {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%v: gradient %d is %v", c, i, v)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	good := Default("graph")
	tests := []struct {
		name string
		mod  func(c *Config)
		key  string // "" means valid
	}{
		{"default", func(c *Config) {}, ""},
		{"tau-plus-zero", func(c *Config) { c.TauPlus = 0 }, ""},
		{"beta-zero", func(c *Config) { c.Beta = 0 }, ""},
		{"unknown kind", func(c *Config) { c.Kind = "ntxent" }, "loss.kind"},
		{"empty kind", func(c *Config) { c.Kind = "" }, "loss.kind"},
		{"unknown form", func(c *Config) { c.Form = "moco" }, "loss.form"},
		{"tau zero", func(c *Config) { c.Temperature = 0 }, "loss.temperature"},
		{"tau negative", func(c *Config) { c.Temperature = -0.1 }, "loss.temperature"},
		{"tau NaN", func(c *Config) { c.Temperature = math.NaN() }, "loss.temperature"},
		{"tau Inf", func(c *Config) { c.Temperature = math.Inf(1) }, "loss.temperature"},
		{"tau plus one", func(c *Config) { c.TauPlus = 1 }, "loss.tau_plus"},
		{"tau plus negative", func(c *Config) { c.TauPlus = -0.01 }, "loss.tau_plus"},
		{"tau plus NaN", func(c *Config) { c.TauPlus = math.NaN() }, "loss.tau_plus"},
		{"beta negative", func(c *Config) { c.Beta = -1 }, "loss.beta"},
		{"beta NaN", func(c *Config) { c.Beta = math.NaN() }, "loss.beta"},
	}
	for _, tt := range tests {
		c := good
		tt.mod(&c)
		err := c.Validate()
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.key != "" && err == nil:
			t.Errorf("%s: no error", tt.name)
		case tt.key != "" && !strings.HasPrefix(err.Error(), tt.key+":"):
			t.Errorf("%s: error %q does not start with the key %q", tt.name, err, tt.key)
		}
		if tt.key != "" {
			if _, _, _, verr := Value(c, make([]float32, 4), make([]float32, 4), 2, 2); verr == nil {
				t.Errorf("%s: Value accepted an invalid config", tt.name)
			}
		}
	}
}

// TestValidateAllowedLists: the allowed values the errors name are the
// package's lists (Kinds, Forms, ContrastiveKinds), every kind of Kinds
// passes Validate, and the texts are those the lists were written out by
// hand as before.
func TestValidateAllowedLists(t *testing.T) {
	good := Default("graph")
	for _, k := range Kinds {
		c := good
		c.Kind = k
		if err := c.Validate(); err != nil {
			t.Errorf("kind %s of Kinds: %v", k, err)
		}
	}
	for _, f := range Forms {
		c := good
		c.Form = f
		if err := c.Validate(); err != nil {
			t.Errorf("form %s of Forms: %v", f, err)
		}
	}
	for _, tt := range []struct {
		mod  func(c *Config)
		vals func(c Config) error
		want string
	}{
		{func(c *Config) { c.Kind = "ntxent" }, Config.Validate, `loss.kind: unknown kind "ntxent"; allowed: "infonce", "dcl", "hcl", "jsd", "nce_local_global"`},
		{func(c *Config) { c.Form = "moco" }, Config.Validate, `loss.form: unknown form "moco"; allowed: "simclr", "graphcl", "simcse"`},
		{func(c *Config) { c.Kind = KindJSD }, Config.validateContrastive, `allowed here: "infonce", "dcl", "hcl"`},
		{func(c *Config) { c.Kind = KindNCELocalGlobal }, Config.validateContrastive, `allowed here: "infonce", "dcl", "hcl"`},
	} {
		c := good
		tt.mod(&c)
		if err := tt.vals(c); err == nil || !strings.HasSuffix(err.Error(), tt.want) {
			t.Errorf("error %v, want it to end with %s", err, tt.want)
		}
	}
}

func TestDefault(t *testing.T) {
	tests := []struct {
		modality, form string
		tau            float64
	}{
		{"graph", FormGraphCL, 0.2},
		{"image", FormSimCLR, 0.5},
		{"text", FormSimCSE, 0.05},
	}
	for _, tt := range tests {
		c := Default(tt.modality)
		want := Config{Kind: KindInfoNCE, Form: tt.form, Temperature: tt.tau, TauPlus: 0.1, Beta: 1}
		if c != want {
			t.Errorf("Default(%q) = %+v, want %+v", tt.modality, c, want)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("Default(%q) invalid: %v", tt.modality, err)
		}
	}
}

func TestConfigYAML(t *testing.T) {
	raw, err := os.ReadFile("testdata/hcl.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Loss Config `yaml:"loss"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("testdata/hcl.yaml: %v", err)
	}
	want := Config{Kind: KindHCL, Form: FormSimCLR, Temperature: 0.5, TauPlus: 0.1, Beta: 1}
	if doc.Loss != want {
		t.Errorf("testdata/hcl.yaml decoded to %+v, want %+v", doc.Loss, want)
	}
	if err := doc.Loss.Validate(); err != nil {
		t.Error(err)
	}
}

func TestBuildErrors(t *testing.T) {
	c := Default("graph")
	g := G.NewGraph()
	m := func(dt tensor.Dtype, s ...int) *G.Node {
		return G.NewTensor(g, dt, len(s), G.WithShape(s...))
	}
	other := G.NewGraph()
	tests := []struct {
		name   string
		c      Config
		z1, z2 *G.Node
		want   string
	}{
		{"invalid config", Config{Kind: "x"}, m(tensor.Float32, 4, 3), m(tensor.Float32, 4, 3), "loss.kind"},
		{"nil view", c, nil, m(tensor.Float32, 4, 3), "two view nodes"},
		{"vector", c, m(tensor.Float32, 4), m(tensor.Float32, 4), "B×d matrices"},
		{"shape mismatch", c, m(tensor.Float32, 4, 3), m(tensor.Float32, 5, 3), "different shapes"},
		{"batch of one", c, m(tensor.Float32, 1, 3), m(tensor.Float32, 1, 3), "B >= 2"},
		{"int dtype", c, m(tensor.Int, 4, 3), m(tensor.Int, 4, 3), "float32 or"},
		{"mixed dtype", c, m(tensor.Float32, 4, 3), m(tensor.Float64, 4, 3), "float32 or"},
		{"two graphs", c, m(tensor.Float32, 4, 3), G.NewMatrix(other, tensor.Float32, G.WithShape(4, 3)), "different expression graphs"},
	}
	for _, tt := range tests {
		_, err := Build(tt.c, tt.z1, tt.z2)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want one mentioning %q", tt.name, err, tt.want)
		}
	}
	if _, _, _, err := Value(c, make([]float32, 6), make([]float32, 5), 2, 3); err == nil {
		t.Error("Value accepted views of the wrong length")
	}
}

// TestHashDistinguishesParameters builds two losses differing in one
// parameter on the same inputs: common-subexpression elimination must not
// merge them.
func TestHashDistinguishesParameters(t *testing.T) {
	base := Config{Kind: KindHCL, Form: FormSimCLR, Temperature: 0.5, TauPlus: 0.1, Beta: 1}
	variants := []Config{base}
	for _, mod := range []func(c *Config){
		func(c *Config) { c.Kind = KindDCL },
		func(c *Config) { c.Form = FormSimCSE },
		func(c *Config) { c.Temperature = 0.25 },
		func(c *Config) { c.TauPlus = 0.2 },
		func(c *Config) { c.Beta = 2 },
	} {
		c := base
		mod(&c)
		variants = append(variants, c)
	}
	r := rand.New(rand.NewPCG(500, 0))
	z := make([]float64, 6*4)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	z2 := make([]float64, len(z))
	for i := range z2 {
		z2[i] = z[i] + 0.5*r.NormFloat64()
	}
	g := G.NewGraph()
	// (Unnamed input nodes of equal type would be merged by Gorgonia.)
	n1 := G.NewMatrix(g, tensor.Float64, G.WithShape(6, 4), G.WithName("z1"), G.WithValue(denseOf(tensor.Float64, z, 6, 4)))
	n2 := G.NewMatrix(g, tensor.Float64, G.WithShape(6, 4), G.WithName("z2"), G.WithValue(denseOf(tensor.Float64, z2, 6, 4)))
	nodes := make([]*G.Node, len(variants))
	for i, c := range variants {
		var err error
		if nodes[i], err = Build(c, n1, n2); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(variants); i++ {
		if newLossOp(variants[i], nil).Hashcode() == newLossOp(base, nil).Hashcode() {
			t.Errorf("%v and %v hash equal", variants[i], base)
		}
		if newGradOp(variants[i], nil).Hashcode() == newGradOp(base, nil).Hashcode() {
			t.Errorf("gradients of %v and %v hash equal", variants[i], base)
		}
		if nodes[i] == nodes[0] {
			t.Errorf("%v was merged with %v", variants[i], base)
			continue
		}
		got, _ := scalarValue(nodes[i].Value())
		want := refLoss(variants[i], z, z2, 6, 4).loss
		if relErr(got, want) > 1e-9 {
			t.Errorf("%v: loss %.12g, reference %.12g", variants[i], got, want)
		}
	}
	if newHalfOp(0).Hashcode() == newHalfOp(1).Hashcode() {
		t.Error("the two gradient halves hash equal")
	}
}

// TestPreallocReuse runs one TapeMachine on two batches: the reused
// buffers must be overwritten (garbage in prealloc must not leak).
func TestPreallocReuse(t *testing.T) {
	const b, d = 8, 5
	c := Config{Kind: KindDCL, Form: FormSimCLR, Temperature: 0.3, TauPlus: 0.1, Beta: 1}
	r := rand.New(rand.NewPCG(600, 0))
	g := G.NewGraph()
	n1 := G.NewMatrix(g, tensor.Float32, G.WithShape(b, d), G.WithName("z1"))
	n2 := G.NewMatrix(g, tensor.Float32, G.WithShape(b, d), G.WithName("z2"))
	l, err := Build(c, n1, n2)
	if err != nil {
		t.Fatal(err)
	}
	// The gradient nodes' own values are read: BindDualValues would
	// accumulate into the dual values across runs (Gorgonia's design; the
	// solvers clear them).
	grads, err := G.Grad(l, n1, n2)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	for step := range 3 {
		z1, z2 := scenarios[0].gen(r, b, d)
		if err := G.Let(n1, tensor.New(tensor.WithShape(b, d), tensor.WithBacking(z1))); err != nil {
			t.Fatal(err)
		}
		if err := G.Let(n2, tensor.New(tensor.WithShape(b, d), tensor.WithBacking(z2))); err != nil {
			t.Fatal(err)
		}
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		want, w1, w2, err := Value(c, z1, z2, b, d)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := scalarValue(l.Value())
		if relErr(got, want) > 1e-6 {
			t.Errorf("step %d: loss %.9g, Value %.9g", step, got, want)
		}
		checkGrad(t, fmt.Sprintf("step %d ∂/∂z1", step), to64(grads[0].Value().Data().([]float32)), to64(w1), to64(z1), d, 1e-5)
		checkGrad(t, fmt.Sprintf("step %d ∂/∂z2", step), to64(grads[1].Value().Data().([]float32)), to64(w2), to64(z2), d, 1e-5)
		vm.Reset()
	}
	if op, ok := l.Op().(lossOp); !ok || op.cache.hits != 3 {
		t.Errorf("the backward pass recomputed instead of using the forward's gradient (op %T)", l.Op())
	}

	// Direct calls with NaN-filled buffers.
	z1, z2 := scenarios[0].gen(r, b, d)
	t1 := tensor.New(tensor.WithShape(b, d), tensor.WithBacking(z1))
	t2 := tensor.New(tensor.WithShape(b, d), tensor.WithBacking(z2))
	want, w1, w2, _ := Value(c, z1, z2, b, d)
	nan := float32(math.NaN())
	lp := G.F32(nan)
	v, err := newLossOp(c, nil).UsePreallocDo(&lp, t1, t2)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := scalarValue(v); v != G.Value(&lp) || relErr(got, want) > 1e-6 {
		t.Errorf("UsePreallocDo: got %v (same buffer: %v), want %v", got, v == G.Value(&lp), want)
	}
	buf := make([]float32, 2*b*d)
	for i := range buf {
		buf[i] = nan
	}
	gp := tensor.New(tensor.WithShape(2*b, d), tensor.WithBacking(buf))
	if _, err := newGradOp(c, nil).UsePreallocDo(gp, t1, t2, G.NewF32(2)); err != nil {
		t.Fatal(err)
	}
	for i := range w1 {
		if relErr(float64(buf[i]), 2*float64(w1[i])) > 1e-5 || relErr(float64(buf[b*d+i]), 2*float64(w2[i])) > 1e-5 {
			t.Fatalf("gradOp.UsePreallocDo: element %d = %v, %v; want 2×Value = %v, %v", i, buf[i], buf[b*d+i], 2*w1[i], 2*w2[i])
		}
	}
}

// TestDeterministic: the same inputs give bit-identical results with one
// or several goroutines.
func TestDeterministic(t *testing.T) {
	const b, d = 200, 16
	r := rand.New(rand.NewPCG(700, 0))
	z1, z2 := scenarios[0].gen(r, b, d)
	for _, c := range allConfigs(0.1) {
		l1, g1, _, _ := Value(c, z1, z2, b, d)
		prev := runtime.GOMAXPROCS(1)
		l2, g2, _, _ := Value(c, z1, z2, b, d)
		runtime.GOMAXPROCS(max(prev, 4))
		l3, g3, _, _ := Value(c, z1, z2, b, d)
		runtime.GOMAXPROCS(prev)
		if l1 != l2 || l1 != l3 {
			t.Errorf("%v: losses %v %v %v differ across GOMAXPROCS", c, l1, l2, l3)
		}
		for i := range g1 {
			if g1[i] != g2[i] || g1[i] != g3[i] {
				t.Errorf("%v: gradient %d differs across GOMAXPROCS", c, i)
				break
			}
		}
	}
}

// TestGradCache: the backward op takes the forward pass's gradient only
// for bit-identical inputs and recomputes otherwise.
func TestGradCache(t *testing.T) {
	const b, d = 7, 5
	c := Config{Kind: KindHCL, Form: FormGraphCL, Temperature: 0.1, TauPlus: 0.1, Beta: 1}
	r := rand.New(rand.NewPCG(1000, 0))
	z1, z2 := scenarios[0].gen(r, b, d)
	z1b := append([]float32(nil), z1...)
	z1b[3] = math.Nextafter32(z1b[3], 10) // one ulp apart
	dense := func(x []float32) *tensor.Dense { return tensor.New(tensor.WithShape(b, d), tensor.WithBacking(x)) }
	gc := &gradCache{}
	fwd, bwd := newLossOp(c, gc), newGradOp(c, gc)
	gc.enable()
	if _, err := fwd.Do(dense(z1), dense(z2)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		z1       []float32
		wantHits int
	}{
		{"other inputs", z1b, 0},
		{"same inputs", z1, 1},
	} {
		v, err := bwd.Do(dense(tt.z1), dense(z2), G.NewF32(-0.5))
		if err != nil {
			t.Fatal(err)
		}
		got := v.Data().([]float32)
		_, w1, w2, _ := Value(c, tt.z1, z2, b, d)
		for i := range w1 {
			if relErr(float64(got[i]), -0.5*float64(w1[i])) > 1e-6 || relErr(float64(got[b*d+i]), -0.5*float64(w2[i])) > 1e-6 {
				t.Fatalf("%s: element %d: got %v %v, want %v %v", tt.name, i, got[i], got[b*d+i], -0.5*w1[i], -0.5*w2[i])
			}
		}
		if gc.hits != tt.wantHits {
			t.Errorf("%s: %d cache hits, want %d", tt.name, gc.hits, tt.wantHits)
		}
	}
}

// TestTinyTemperatureFinite: at τ=1e-3 the logits reach ±1000 and the
// unscaled exponentials of the published code overflow; the op must stay
// finite for every kind and form (the clamp e^{−1/τ} underflows to 0).
func TestTinyTemperatureFinite(t *testing.T) {
	const b, d = 10, 6
	for si, sc := range scenarios {
		r := rand.New(rand.NewPCG(1100, uint64(si)))
		z1, z2 := sc.gen(r, b, d)
		for _, c := range allConfigs(1e-3) {
			l, g1, g2, err := Value(c, z1, z2, b, d)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(l) || math.IsInf(l, 0) || l < -1e4 {
				t.Errorf("%s/%v: loss %v", sc.name, c, l)
			}
			for i := range g1 {
				if v := float64(g1[i]) + float64(g2[i]); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%s/%v: gradient %d not finite", sc.name, c, i)
					break
				}
			}
		}
	}
}

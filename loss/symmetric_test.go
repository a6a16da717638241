package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// refMoCoCtr is MoCo v3's ctr(q, k) written from moco/builder.py with plain
// float64 loops: logits = normalize(q)·normalize(k)ᵀ/τ, cross-entropy with
// labels 0..B−1, mean over the B rows. No log-sum-exp shift.
func refMoCoCtr(q, k []float64, b, d int, tau float64) float64 {
	norm := func(z []float64, i int) []float64 {
		r := z[i*d : (i+1)*d]
		s := 0.0
		for _, v := range r {
			s += v * v
		}
		out := make([]float64, d)
		for j, v := range r {
			out[j] = v / math.Sqrt(s)
		}
		return out
	}
	total := 0.0
	for i := 0; i < b; i++ {
		qi := norm(q, i)
		var sum, pos float64
		for j := 0; j < b; j++ {
			kj := norm(k, j)
			dot := 0.0
			for t := range qi {
				dot += qi[t] * kj[t]
			}
			sum += math.Exp(dot / tau)
			if j == i {
				pos = dot / tau
			}
		}
		total += math.Log(sum) - pos
	}
	return total / float64(b)
}

func refMoCo(q1, q2, k1, k2 []float64, b, d int, tau float64) float64 {
	return 2 * tau * (refMoCoCtr(q1, k2, b, d, tau) + refMoCoCtr(q2, k1, b, d, tau))
}

func randomView(rng *rand.Rand, n int) []float64 {
	z := make([]float64, n)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	return z
}

// symmetricGraph builds BuildSymmetric on float64 value nodes and runs it
// with the gradient with respect to the queries.
func symmetricGraph(t *testing.T, c Config, views [4][]float64, b, d int, scale float64) (float64, []float64, []float64) {
	t.Helper()
	g := G.NewGraph()
	var n [4]*G.Node
	for v, name := range []string{"q1", "q2", "k1", "k2"} {
		n[v] = G.NewMatrix(g, tensor.Float64, G.WithShape(b, d), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(b, d), tensor.WithBacking(append([]float64(nil), views[v]...)))))
	}
	l, err := BuildSymmetric(c, n[0], n[1], n[2], n[3], scale)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := G.Grad(l, n[0], n[1]); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	g1, _ := n[0].Grad()
	g2, _ := n[1].Grad()
	return l.Value().Data().(float64), append([]float64(nil), g1.Data().([]float64)...), append([]float64(nil), g2.Data().([]float64)...)
}

// TestSymmetricMatchesMoCoV3 checks MoCo v3's loss (form simcse, scale
// 2τ) against the float64 loop of moco/builder.py, its gradient with
// respect to both query views against central finite differences of that
// loop, and the float32 kernel SymmetricValue against both.
func TestSymmetricMatchesMoCoV3(t *testing.T) {
	const b, d = 6, 5
	for _, tau := range []float64{0.2, 1} {
		rng := rand.New(rand.NewPCG(7, uint64(tau*10)))
		var views [4][]float64
		for v := range views {
			views[v] = randomView(rng, b*d)
		}
		c := Config{Kind: KindInfoNCE, Form: FormSimCSE, Temperature: tau}
		got, g1, g2 := symmetricGraph(t, c, views, b, d, 2*tau)
		want := refMoCo(views[0], views[1], views[2], views[3], b, d, tau)
		if math.Abs(got-want) > 1e-12*math.Max(1, want) {
			t.Fatalf("τ=%g: loss %.15g, reference %.15g", tau, got, want)
		}
		const h = 1e-6
		for v, grad := range [][]float64{g1, g2} {
			for i := range views[v] {
				old := views[v][i]
				views[v][i] = old + h
				up := refMoCo(views[0], views[1], views[2], views[3], b, d, tau)
				views[v][i] = old - h
				down := refMoCo(views[0], views[1], views[2], views[3], b, d, tau)
				views[v][i] = old
				fd := (up - down) / (2 * h)
				if math.Abs(fd-grad[i]) > 1e-7*math.Max(1, math.Abs(fd)) {
					t.Errorf("τ=%g: ∂L/∂q%d[%d]: analytic %.10g, finite difference %.10g", tau, v+1, i, grad[i], fd)
				}
			}
		}
		var f [4][]float32
		for v := range views {
			for _, x := range views[v] {
				f[v] = append(f[v], float32(x))
			}
		}
		l32, h1, h2, err := SymmetricValue(c, f[0], f[1], f[2], f[3], b, d, 2*tau)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l32-want) > 1e-5*math.Max(1, want) {
			t.Errorf("τ=%g: SymmetricValue %.8g, reference %.8g", tau, l32, want)
		}
		for i := range g1 {
			if math.Abs(float64(h1[i])-g1[i]) > 1e-5 || math.Abs(float64(h2[i])-g2[i]) > 1e-5 {
				t.Fatalf("τ=%g: SymmetricValue gradient %d: %g, %g; graph %g, %g", tau, i, h1[i], h2[i], g1[i], g2[i])
			}
		}
	}
}

// TestSymmetricDCLHCL checks that DCL and HCL plug in as for SimCLR: the
// symmetric objective equals scale·(L(q1,k2) + L(q2,k1)) of the
// independent reference (reference_test.go) with queries as anchors.
func TestSymmetricDCLHCL(t *testing.T) {
	const b, d = 7, 4
	rng := rand.New(rand.NewPCG(3, 4))
	var views [4][]float64
	for v := range views {
		views[v] = randomView(rng, b*d)
	}
	for _, c := range []Config{
		{Kind: KindDCL, Form: FormSimCSE, Temperature: 0.2, TauPlus: 0.1},
		{Kind: KindHCL, Form: FormSimCSE, Temperature: 0.2, TauPlus: 0.1, Beta: 1},
		{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.5},
	} {
		got, _, _ := symmetricGraph(t, c, views, b, d, 0.4)
		want := 0.4 * (refLoss(c, views[0], views[3], b, d).loss + refLoss(c, views[1], views[2], b, d).loss)
		if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%v: %.12g, reference %.12g", c, got, want)
		}
	}
}

func TestSymmetricRefusesSimCLRForm(t *testing.T) {
	g := G.NewGraph()
	q := G.NewMatrix(g, tensor.Float32, G.WithShape(4, 3), G.WithName("q"))
	_, err := BuildSymmetric(Config{Kind: KindInfoNCE, Form: FormSimCLR, Temperature: 0.2}, q, q, q, q, 0.4)
	if err == nil || !strings.Contains(err.Error(), "loss.form") {
		t.Fatalf("form simclr: error %v, want one naming loss.form", err)
	}
}

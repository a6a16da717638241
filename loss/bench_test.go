package loss

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// composedGraphCL is GraphCL's InfoNCE built from Gorgonia primitives only,
// as a baseline for the fused op. Its log-sum-exp is stabilised by the
// bound of cosine logits, l ≤ 1/τ:
//
//	ℓ_i = log Σ_{j≠i} e^{(s_ij−1)/τ} − (s_ii−1)/τ,
//
// every exponent lies in [−2/τ, 0]. Rows are normalised by
// sqrt(‖z‖² + ε²) rather than max(‖z‖, ε) (equal unless ‖z‖ ≈ ε).
func composedGraphCL(z1, z2 *G.Node, tau float64) (*G.Node, error) {
	b := z1.Shape()[0]
	dt := z1.Dtype()
	scalar := func(v float64) *G.Node {
		if dt == tensor.Float32 {
			return G.NewConstant(float32(v))
		}
		return G.NewConstant(v)
	}
	unit := func(z *G.Node) (*G.Node, error) {
		sq, err := G.Square(z)
		if err != nil {
			return nil, err
		}
		ss, err := G.Sum(sq, 1)
		if err != nil {
			return nil, err
		}
		if ss, err = G.Add(ss, scalar(cosEps*cosEps)); err != nil {
			return nil, err
		}
		n, err := G.Sqrt(ss)
		if err != nil {
			return nil, err
		}
		if n, err = G.Reshape(n, tensor.Shape{b, 1}); err != nil {
			return nil, err
		}
		return G.BroadcastHadamardDiv(z, n, nil, []byte{1})
	}
	u1, err := unit(z1)
	if err != nil {
		return nil, fmt.Errorf("normalise z1: %w", err)
	}
	u2, err := unit(z2)
	if err != nil {
		return nil, fmt.Errorf("normalise z2: %w", err)
	}
	u2t, err := G.Transpose(u2)
	if err != nil {
		return nil, err
	}
	s, err := G.Mul(u1, u2t)
	if err != nil {
		return nil, err
	}
	one, invT := scalar(1), scalar(1/tau)
	x, err := G.Sub(s, one)
	if err != nil {
		return nil, err
	}
	if x, err = G.Mul(x, invT); err != nil {
		return nil, err
	}
	e, err := G.Exp(x)
	if err != nil {
		return nil, err
	}
	mask := tensor.New(tensor.Of(dt), tensor.WithShape(b, b))
	for i := range b {
		for j := range b {
			if i != j {
				if err := mask.SetAt(castTo(dt, 1), i, j); err != nil {
					return nil, err
				}
			}
		}
	}
	if e, err = G.HadamardProd(e, G.NewConstant(mask)); err != nil {
		return nil, err
	}
	den, err := G.Sum(e, 1)
	if err != nil {
		return nil, err
	}
	lse, err := G.Log(den)
	if err != nil {
		return nil, err
	}
	pp, err := G.HadamardProd(u1, u2)
	if err != nil {
		return nil, err
	}
	pos, err := G.Sum(pp, 1)
	if err != nil {
		return nil, err
	}
	if pos, err = G.Sub(pos, one); err != nil {
		return nil, err
	}
	if pos, err = G.Mul(pos, invT); err != nil {
		return nil, err
	}
	l, err := G.Sub(lse, pos)
	if err != nil {
		return nil, err
	}
	return G.Mean(l)
}

func castTo(dt tensor.Dtype, v float64) any {
	if dt == tensor.Float32 {
		return float32(v)
	}
	return v
}

// TestComposedMatchesFused makes sure the benchmark compares equal things.
func TestComposedMatchesFused(t *testing.T) {
	const b, d = 9, 6
	c := Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.2}
	r := rand.New(rand.NewPCG(800, 0))
	z1f, z2f := scenarios[0].gen(r, b, d)
	z1, z2 := to64(z1f), to64(z2f)
	want, w1, w2 := graphRun(t, c, tensor.Float64, z1, z2, b, d)

	g := G.NewGraph()
	n1 := G.NewMatrix(g, tensor.Float64, G.WithShape(b, d), G.WithName("z1"), G.WithValue(denseOf(tensor.Float64, z1, b, d)))
	n2 := G.NewMatrix(g, tensor.Float64, G.WithShape(b, d), G.WithName("z2"), G.WithValue(denseOf(tensor.Float64, z2, b, d)))
	l, err := composedGraphCL(n1, n2, c.Temperature)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := G.Grad(l, n1, n2); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g, G.BindDualValues(n1, n2))
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	got, _ := scalarValue(l.Value())
	if relErr(got, want) > 1e-12 {
		t.Errorf("composed loss %.15g, fused %.15g", got, want)
	}
	checkGrad(t, "composed ∂/∂z1", gradOf(t, n1), w1, z1, d, 1e-9)
	checkGrad(t, "composed ∂/∂z2", gradOf(t, n2), w2, z2, d, 1e-9)
}

// benchGraph builds forward+backward of a loss on float32 B×d views.
func benchGraph(b *testing.B, bs, d int, build func(z1, z2 *G.Node) (*G.Node, error)) G.VM {
	r := rand.New(rand.NewPCG(900, uint64(bs)))
	z1, z2 := scenarios[0].gen(r, bs, d)
	g := G.NewGraph()
	n1 := G.NewMatrix(g, tensor.Float32, G.WithShape(bs, d), G.WithName("z1"), G.WithValue(tensor.New(tensor.WithShape(bs, d), tensor.WithBacking(z1))))
	n2 := G.NewMatrix(g, tensor.Float32, G.WithShape(bs, d), G.WithName("z2"), G.WithValue(tensor.New(tensor.WithShape(bs, d), tensor.WithBacking(z2))))
	l, err := build(n1, n2)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := G.Grad(l, n1, n2); err != nil {
		b.Fatal(err)
	}
	return G.NewTapeMachine(g)
}

func runBench(b *testing.B, vm G.VM) {
	defer vm.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := vm.RunAll(); err != nil {
			b.Fatal(err)
		}
		vm.Reset()
	}
}

// BenchmarkFusedVsComposed: GraphCL InfoNCE (τ=0.2), float32, forward +
// backward on a TapeMachine, fused op against Gorgonia primitives.
func BenchmarkFusedVsComposed(b *testing.B) {
	for _, sz := range []struct{ b, d int }{{128, 96}, {256, 128}} {
		b.Run(fmt.Sprintf("B=%d,d=%d/fused", sz.b, sz.d), func(b *testing.B) {
			c := Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.2}
			runBench(b, benchGraph(b, sz.b, sz.d, func(z1, z2 *G.Node) (*G.Node, error) { return Build(c, z1, z2) }))
		})
		b.Run(fmt.Sprintf("B=%d,d=%d/composed", sz.b, sz.d), func(b *testing.B) {
			runBench(b, benchGraph(b, sz.b, sz.d, func(z1, z2 *G.Node) (*G.Node, error) { return composedGraphCL(z1, z2, 0.2) }))
		})
	}
}

// BenchmarkFused: every kind×form, float32, forward + backward, B=256, d=128.
func BenchmarkFused(b *testing.B) {
	for _, c := range allConfigs(0.2) {
		b.Run(c.Kind+"/"+c.Form, func(b *testing.B) {
			runBench(b, benchGraph(b, 256, 128, func(z1, z2 *G.Node) (*G.Node, error) { return Build(c, z1, z2) }))
		})
	}
}

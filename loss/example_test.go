package loss_test

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/loss"
)

// Two views of a batch of two instances whose projections are orthogonal
// unit vectors (each view equals the other): the cosine matrix is the
// identity, so SimCSE's InfoNCE at τ=1 is log(1+e) − 1 for every anchor.
// Its gradient pushes row i of z1 towards the other row of z2, orthogonally
// to z1_i, by 1/(2(e+1)) divided by ‖z1_i‖ (3 and 0.5).
func ExampleBuild() {
	g := G.NewGraph()
	view := func(name string) *G.Node {
		return G.NewMatrix(g, tensor.Float32, G.WithShape(2, 2), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{3, 0, 0, 0.5}))))
	}
	z1, z2 := view("z1"), view("z2")
	cfg := loss.Config{Kind: "infonce", Form: "simcse", Temperature: 1}
	l, err := loss.Build(cfg, z1, z2)
	if err != nil {
		fmt.Println(err)
		return
	}
	grads, err := G.Grad(l, z1, z2)
	if err != nil {
		fmt.Println(err)
		return
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("loss %.6f (log(1+e)-1 = %.6f)\n", l.Value().Data(), math.Log1p(math.E)-1)
	fmt.Printf("∂L/∂z1 %.4f\n", grads[0].Value().Data())

	// The same loss and gradients without a graph:
	v, g1, _, err := loss.Value(cfg, []float32{3, 0, 0, 0.5}, []float32{3, 0, 0, 0.5}, 2, 2)
	fmt.Printf("Value %.6f %.4f %v\n", v, g1, err)
	// Output:
	// loss 0.313262 (log(1+e)-1 = 0.313262)
	// ∂L/∂z1 [0.0000 0.0448 0.2689 0.0000]
	// Value 0.313262 [0.0000 0.0448 0.2689 0.0000] <nil>
}

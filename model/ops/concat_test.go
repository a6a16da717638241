package ops

import (
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestConcatCols: the output is the inputs side by side and the gradient
// of each input is its block of the upstream gradient's columns (a known
// value: for loss = Σ R ⊙ ConcatCols(xs), the block of R), in both dtypes,
// and both agree bit for bit with gorgonia.Concat(1, xs...).
func TestConcatCols(t *testing.T) {
	const rows = 3
	widths := []int{2, 1, 3}
	total := 6
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		for _, ref := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(1, 2))
			g := gorgonia.NewGraph()
			var xs gorgonia.Nodes
			var data [][]float64
			for i, w := range widths {
				v := make([]float64, rows*w)
				for k := range v {
					v[k] = rng.NormFloat64()
				}
				data = append(data, v)
				xs = append(xs, tensorNode(g, dt, []int{rows, w}, v, string(rune('a'+i))))
			}
			r := make([]float64, rows*total)
			for k := range r {
				r[k] = rng.NormFloat64()
			}
			var cat *gorgonia.Node
			var err error
			if ref {
				cat, err = gorgonia.Concat(1, xs...)
			} else {
				cat, err = ConcatCols(xs...)
			}
			if err != nil {
				t.Fatal(err)
			}
			loss, err := gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(cat, tensorNode(g, dt, []int{rows, total}, r, "R"))))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gorgonia.Grad(loss, xs...); err != nil {
				t.Fatal(err)
			}
			vm := gorgonia.NewTapeMachine(g)
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			got := valueFloats(cat.Value())
			lo := 0
			for i, w := range widths {
				gv, err := xs[i].Grad()
				if err != nil {
					t.Fatal(err)
				}
				grad := valueFloats(gv)
				for row := range rows {
					for c := range w {
						if want := data[i][row*w+c]; got[row*total+lo+c] != roundTo(dt, want) {
							t.Fatalf("%v ref=%v: output (%d, %d) = %v, want input %d's %v", dt, ref, row, lo+c, got[row*total+lo+c], i, want)
						}
						if want := r[row*total+lo+c]; grad[row*w+c] != roundTo(dt, want) {
							t.Fatalf("%v ref=%v: gradient of input %d at (%d, %d) = %v, want R's %v", dt, ref, i, row, c, grad[row*w+c], want)
						}
					}
				}
				lo += w
			}
			vm.Close()
		}
	}
}

func TestConcatColsErrors(t *testing.T) {
	g := gorgonia.NewGraph()
	a := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 2), gorgonia.WithName("a"))
	b := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(4, 2), gorgonia.WithName("b"))
	v := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(3), gorgonia.WithName("v"))
	for _, tc := range []struct {
		name string
		xs   []*gorgonia.Node
		want string
	}{
		{"none", nil, "no inputs"},
		{"nil", []*gorgonia.Node{a, nil}, "input 1 is nil"},
		{"rows", []*gorgonia.Node{a, b}, "input 1 has 4 rows"},
		{"vector", []*gorgonia.Node{a, v}, "want a matrix"},
	} {
		if _, err := ConcatCols(tc.xs...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if n, err := ConcatCols(a); err != nil || n != a {
		t.Errorf("one input: got %v, %v; want the input itself", n, err)
	}
}

// roundTo returns x as a value of dtype dt would hold it.
func roundTo(dt tensor.Dtype, x float64) float64 {
	if dt == tensor.Float32 {
		return float64(float32(x))
	}
	return x
}

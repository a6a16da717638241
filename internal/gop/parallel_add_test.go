package gop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestParallelAddF32 checks the patched Gorgonia's float32 addition
// (third_party/gorgonia/parallel_add.go: large tensors added on every core)
// against a Go loop, bit for bit, below and above the size where it goes
// parallel and with 1 and 2 threads: a forward sum a + b, and the sum of
// the two gradient terms of a node used twice (x ⊙ c1 and x ⊙ c2, whose
// gradient terms are c1 and c2 exactly).
func TestParallelAddF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{7, 1<<15 - 1, 1 << 15, 1<<16 + 5, 300_001} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("n=%d/procs=%d", n, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				vals := make([][]float32, 4)
				for i := range vals {
					vals[i] = make([]float32, n)
					for j := range vals[i] {
						vals[i][j] = float32(rng.NormFloat64() * math.Exp(4*rng.Float64()-2))
					}
				}
				g := gorgonia.NewGraph()
				node := func(name string, v []float32) *gorgonia.Node {
					return gorgonia.NewTensor(g, tensor.Float32, 2, gorgonia.WithShape(n, 1), gorgonia.WithName(name),
						gorgonia.WithValue(tensor.New(tensor.WithShape(n, 1), tensor.WithBacking(v))))
				}
				a, b := node("a", vals[0]), node("b", vals[1])
				x, c1, c2 := node("x", make([]float32, n)), node("c1", vals[2]), node("c2", vals[3])
				sum := gorgonia.Must(gorgonia.Add(a, b))
				y1 := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(x, c1))))
				y2 := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(x, c2))))
				cost := gorgonia.Must(gorgonia.Add(y1, y2))
				if _, err := gorgonia.Grad(cost, x); err != nil {
					t.Fatal(err)
				}
				vm := gorgonia.NewTapeMachine(g)
				defer CloseMachine(vm)
				for run := range 2 { // the second run reuses the machine's buffers
					if err := vm.RunAll(); err != nil {
						t.Fatal(err)
					}
					gx, err := x.Grad()
					if err != nil {
						t.Fatal(err)
					}
					got := [2][]float32{sum.Value().Data().([]float32), gx.Data().([]float32)}
					for j := 0; j < n; j++ {
						want := [2]float32{vals[0][j] + vals[1][j], vals[2][j] + vals[3][j]}
						for k, what := range []string{"a + b", "∂/∂x"} {
							if math.Float32bits(got[k][j]) != math.Float32bits(want[k]) {
								t.Fatalf("run %d: %s element %d = %v, want %v", run, what, j, got[k][j], want[k])
							}
						}
					}
					if a.Value().Data().([]float32)[n-1] != vals[0][n-1] {
						t.Fatalf("run %d: a was overwritten", run)
					}
					vm.Reset()
				}
			})
		}
	}
}

package ops_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A 3×3 box filter with padding 1 over a 3×3 image of ones counts, at every
// pixel, the pixels of its neighbourhood that lie inside the image; the
// gradient of the sum of the output with respect to the filter counts the
// positions each filter tap sees.
func ExampleConv2D() {
	g := gorgonia.NewGraph()
	ones := func(shape ...int) *tensor.Dense {
		v := make([]float32, tensor.Shape(shape).TotalSize())
		for i := range v {
			v[i] = 1
		}
		return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
	}
	x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(1, 1, 3, 3), gorgonia.WithValue(ones(1, 1, 3, 3)), gorgonia.WithName("x"))
	w := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(1, 1, 3, 3), gorgonia.WithValue(ones(1, 1, 3, 3)), gorgonia.WithName("w"))
	y, err := ops.Conv2D(x, w, ops.ConvOpts{Stride: 1, Pad: 1, NoInputGrad: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := gorgonia.Grad(gorgonia.Must(gorgonia.Sum(y)), w); err != nil {
		fmt.Println(err)
		return
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		fmt.Println(err)
		return
	}
	dw, _ := w.Grad()
	fmt.Println(y.Shape(), y.Value().Data())
	fmt.Println(dw.Data())
	// Output:
	// (1, 1, 3, 3) [4 6 4 6 9 6 4 6 4]
	// [4 6 4 6 9 6 4 6 4]
}

// ScaleShiftRows applies a per-column scale and shift (BatchNorm with its
// running statistics folded in) to every row; AddRows sums rows (a graph's
// sum pooling).
func ExampleScaleShiftRows() {
	x := []float32{1, 2, 3, 4} // two rows of two columns
	ops.ScaleShiftRows(x, []float32{2, 10}, []float32{0.5, -1})
	pooled := make([]float32, 2)
	ops.AddRows(pooled, x)
	fmt.Println(x, pooled)
	// Output: [2.5 19 6.5 39] [9 58]
}

// With ConvOpts.Winograd a float32 3×3 stride-1 convolution of 8 or more
// channels runs Winograd's F(2×2, 3×3): the same function as the direct
// algorithm up to float32 rounding. Here 8 channels of ones through
// all-ones kernels: every output counts 8 × the in-image neighbours, and
// the small integers come out exactly either way.
func ExampleConvOpts_winograd() {
	const c = 8
	run := func(winograd bool) []float32 {
		g := gorgonia.NewGraph()
		ones := func(shape ...int) *tensor.Dense {
			v := make([]float32, tensor.Shape(shape).TotalSize())
			for i := range v {
				v[i] = 1
			}
			return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(v))
		}
		x := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(1, c, 4, 4), gorgonia.WithValue(ones(1, c, 4, 4)), gorgonia.WithName("x"))
		w := gorgonia.NewTensor(g, tensor.Float32, 4, gorgonia.WithShape(c, c, 3, 3), gorgonia.WithValue(ones(c, c, 3, 3)), gorgonia.WithName("w"))
		y, err := ops.Conv2D(x, w, ops.ConvOpts{Pad: 1, Winograd: winograd})
		if err != nil {
			fmt.Println(err)
			return nil
		}
		vm := gorgonia.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			fmt.Println(err)
			return nil
		}
		return y.Value().Data().([]float32)[:4] // channel 0, first row
	}
	fmt.Println(run(false), run(true))
	// Output: [32 48 48 32] [32 48 48 32]
}

// Two graphs run at the same time swap a value mid-run: each side's Swap
// node holds a copy of the other side's input, and each graph goes on with
// it (here it adds the two). This is how a SimCLR step runs its two views
// on two cores and still computes the loss of both views' projections.
func ExampleExchange() {
	ex := ops.NewExchange()
	type side struct {
		vm  gorgonia.VM
		sum *gorgonia.Node
	}
	var sides [2]side
	for s, v := range [][]float32{{1, 2}, {10, 20}} {
		g := gorgonia.NewGraph()
		x := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(2), gorgonia.WithName("x"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(2), tensor.WithBacking(v))))
		other, err := ex.Swap(s, x)
		if err != nil {
			fmt.Println(err)
			return
		}
		sides[s] = side{sum: gorgonia.Must(gorgonia.Add(x, other))}
		sides[s].vm = gorgonia.NewTapeMachine(g)
		defer sides[s].vm.Close()
	}
	done := make(chan error)
	for s := range sides {
		go func() {
			err := sides[s].vm.RunAll()
			if err != nil {
				ex.Abort(err) // the other side stops waiting
			}
			done <- err
		}()
	}
	for range sides {
		if err := <-done; err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(sides[0].sum.Value(), sides[1].sum.Value())
	// Output: [11  22] [11  22]
}

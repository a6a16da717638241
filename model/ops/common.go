package ops

import (
	"fmt"
	"runtime"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// parallelThreshold is the amount of work (multiply-adds) below which a
// kernel runs on the calling goroutine: spawning costs about a microsecond.
const parallelThreshold = 1 << 15

// parallelFor splits [0, n) into contiguous chunks and runs fn on each,
// in parallel when work (an estimate of the multiply-adds) is large enough.
// Each index belongs to exactly one chunk, so a kernel that writes only the
// rows of its chunk is deterministic.
func parallelFor(n, work int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || n < 2 || work < parallelThreshold {
		fn(0, n)
		return
	}
	runSplit(n, min(workers, n), fn)
}

// runSplit splits [0, n) into workers contiguous ranges and runs fn on each,
// the first on the calling goroutine (which would otherwise only wait).
func runSplit(n, workers int, fn func(lo, hi int)) {
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	if hi := n / workers; hi > 0 {
		fn(0, hi)
	}
	wg.Wait()
}

// fixedSplit is the number of contiguous ranges parallelForFixed splits
// its work into, whatever GOMAXPROCS is: two, the split parallelFor makes
// on the 2-core machines that recorded this project's results.
const fixedSplit = 2

// parallelForFixed is parallelFor for kernels whose arithmetic depends on
// the size of the range fn is given (a GEMM picks its kernel by its row
// count): [0, n) is split as parallelFor splits it for fixedSplit workers
// on every machine, and the ranges run at once when GOMAXPROCS allows,
// else one after the other, so that the bits do not depend on the
// machine's core count.
func parallelForFixed(n, work int, fn func(lo, hi int)) {
	if n < 2 || work < parallelThreshold {
		fn(0, n)
		return
	}
	workers := min(fixedSplit, n)
	if runtime.GOMAXPROCS(0) < 2 {
		for w := 0; w < workers; w++ {
			if lo, hi := n*w/workers, n*(w+1)/workers; lo < hi {
				fn(lo, hi)
			}
		}
		return
	}
	runSplit(n, workers, fn)
}

// asDense returns v as a dense tensor with dims dimensions (any number when
// dims < 0) of a float dtype, or an error naming the op and the argument.
func asDense(v gorgonia.Value, dims int, op, arg string) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("ops: %s: %s must be a *tensor.Dense, got %T", op, arg, v)
	}
	if dims >= 0 && d.Dims() != dims {
		return nil, fmt.Errorf("ops: %s: %s must have %d dimensions, got shape %v", op, arg, dims, d.Shape())
	}
	if dt := d.Dtype(); dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("ops: %s: %s has dtype %v, want float32 or float64", op, arg, dt)
	}
	if !d.IsNativelyAccessible() || d.RequiresIterator() {
		return nil, fmt.Errorf("ops: %s: %s must be a contiguous, non-view tensor", op, arg)
	}
	return d, nil
}

// sameDtype checks that every tensor has the dtype of the first.
func sameDtype(op string, ds ...*tensor.Dense) error {
	for i := 1; i < len(ds); i++ {
		if ds[i].Dtype() != ds[0].Dtype() {
			return fmt.Errorf("ops: %s: input %d has dtype %v, input 0 has %v", op, i, ds[i].Dtype(), ds[0].Dtype())
		}
	}
	return nil
}

// dataPtr returns the address of the first element of d's backing array.
func dataPtr(d *tensor.Dense) uintptr {
	if d.DataSize() == 0 {
		return 0
	}
	return d.Uintptr()
}

// checkOut validates a preallocated output: a contiguous dense tensor of
// the given dtype and shape that shares no memory with any input. The
// tape machine may hand any register's old value to UsePreallocDo; an
// error here makes it fall back to Do, which allocates.
func checkOut(op string, prealloc gorgonia.Value, dt tensor.Dtype, shape tensor.Shape, inputs ...*tensor.Dense) (*tensor.Dense, error) {
	out, ok := prealloc.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("ops: %s: output buffer must be a *tensor.Dense, got %T", op, prealloc)
	}
	if out.Dtype() != dt {
		return nil, fmt.Errorf("ops: %s: output buffer has dtype %v, want %v", op, out.Dtype(), dt)
	}
	if !out.Shape().Eq(shape) {
		return nil, fmt.Errorf("ops: %s: output buffer has shape %v, want %v", op, out.Shape(), shape)
	}
	if !out.IsNativelyAccessible() || out.RequiresIterator() {
		return nil, fmt.Errorf("ops: %s: output buffer must be a contiguous, non-view tensor", op)
	}
	lo := dataPtr(out)
	hi := lo + uintptr(out.MemSize())
	for i, in := range inputs {
		a := dataPtr(in)
		b := a + uintptr(in.MemSize())
		if lo != 0 && a != 0 && a < hi && lo < b {
			return nil, fmt.Errorf("ops: %s: output buffer overlaps input %d", op, i)
		}
	}
	return out, nil
}

// newDense allocates a zeroed tensor of dtype dt and the given shape.
func newDense(dt tensor.Dtype, shape ...int) *tensor.Dense {
	return tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
}

// shapeOf returns a node's DimSizer as a tensor.Shape with dims dimensions
// (any number when dims < 0), or an error naming the op and the argument.
func shapeOf(op string, ds gorgonia.DimSizer, arg string, dims int) (tensor.Shape, error) {
	s, ok := ds.(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("ops: %s: %s shape is a %T, want tensor.Shape", op, arg, ds)
	}
	if dims >= 0 && s.Dims() != dims {
		return nil, fmt.Errorf("ops: %s: %s must have %d dimensions, got shape %v", op, arg, dims, s)
	}
	return s, nil
}

// arg names an input of an op and gives its number of dimensions (any
// number when dims < 0).
type arg struct {
	name string
	dims int
}

// maxInputs is the largest arity of the ops of this package.
const maxInputs = 4

// inputShapes checks that an op's InferShape got one shape per arg (at most
// maxInputs), each with its arg's number of dimensions, and returns them.
func inputShapes(op string, ds []gorgonia.DimSizer, args ...arg) (s [maxInputs]tensor.Shape, err error) {
	if len(ds) != len(args) {
		return s, fmt.Errorf("ops: %s: got %d inputs, want %d", op, len(ds), len(args))
	}
	for i, a := range args {
		if s[i], err = shapeOf(op, ds[i], a.name, a.dims); err != nil {
			return s, err
		}
	}
	return s, nil
}

// firstInputShape is InferShape for an op whose output has the shape of
// its first input: it checks the shapes as inputShapes does and returns a
// copy of the first.
func firstInputShape(op string, ds []gorgonia.DimSizer, args ...arg) (tensor.Shape, error) {
	s, err := inputShapes(op, ds, args...)
	if err != nil {
		return nil, err
	}
	return s[0].Clone(), nil
}

// denseInputs checks that an op got one value per arg (at most maxInputs),
// each a contiguous float32 or float64 dense tensor with its arg's number
// of dimensions, all of one dtype, and returns them.
func denseInputs(op string, vals []gorgonia.Value, args ...arg) (in [maxInputs]*tensor.Dense, err error) {
	if len(vals) != len(args) {
		return in, fmt.Errorf("ops: %s: got %d inputs, want %d", op, len(vals), len(args))
	}
	for i, a := range args {
		if in[i], err = asDense(vals[i], a.dims, op, a.name); err != nil {
			return in, err
		}
	}
	return in, sameDtype(op, in[:len(args)]...)
}

// outputTensor returns the tensor an op writes its result into: for Do
// (prealloc nil) the output the op keeps in keep (see SetOutputReuse; a
// new tensor when keep is nil), for UsePreallocDo prealloc, once checkOut
// accepts it.
func outputTensor(keep *outBuf, op string, prealloc gorgonia.Value, dt tensor.Dtype, shape tensor.Shape, inputs ...*tensor.Dense) (*tensor.Dense, error) {
	if prealloc == nil {
		return keep.get(dt, shape...), nil
	}
	return checkOut(op, prealloc, dt, shape, inputs...)
}

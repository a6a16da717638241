package ops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"runtime"
	"sync"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// parallelThreshold is the amount of work (multiply-adds) below which a
// kernel runs on the calling goroutine: spawning costs about a microsecond.
const parallelThreshold = 1 << 15

// matType and vecType are the Gorgonia types of a matrix and of a vector
// whose element type is the type variable 'a'.
var (
	matType = gorgonia.TensorType{Dims: 2, Of: hm.TypeVariable('a')}
	vecType = gorgonia.TensorType{Dims: 1, Of: hm.TypeVariable('a')}
)

// hashOf returns the 32-bit FNV-1a hash of whatever w writes.
func hashOf(w func(h hash.Hash)) uint32 {
	h := fnv.New32a()
	w(h)
	return h.Sum32()
}

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
	if workers > n {
		workers = n
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
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
	wg.Wait()
}

// asDense returns v as a dense matrix (or vector when dims is 1) of a float
// dtype, or an error naming the op and the argument.
func asDense(v gorgonia.Value, dims int, op, arg string) (*tensor.Dense, error) {
	d, ok := v.(*tensor.Dense)
	if !ok {
		return nil, fmt.Errorf("ops: %s: %s must be a *tensor.Dense, got %T", op, arg, v)
	}
	if d.Dims() != dims {
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

// matShape returns the shape of a matrix node's DimSizer, or an error.
func matShape(op string, ds gorgonia.DimSizer, arg string) (tensor.Shape, error) {
	s, ok := ds.(tensor.Shape)
	if !ok {
		return nil, fmt.Errorf("ops: %s: %s shape is a %T, want tensor.Shape", op, arg, ds)
	}
	if s.Dims() != 2 {
		return nil, fmt.Errorf("ops: %s: %s must be a matrix, got shape %v", op, arg, s)
	}
	return s, nil
}

// vecLen returns the length of a vector node's DimSizer, or an error.
func vecLen(op string, ds gorgonia.DimSizer, arg string) (int, error) {
	s, ok := ds.(tensor.Shape)
	if !ok {
		return 0, fmt.Errorf("ops: %s: %s shape is a %T, want tensor.Shape", op, arg, ds)
	}
	if s.Dims() != 1 {
		return 0, fmt.Errorf("ops: %s: %s must be a vector, got shape %v", op, arg, s)
	}
	return s[0], nil
}

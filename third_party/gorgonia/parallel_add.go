package gorgonia

import (
	"runtime"
	"sync"

	"gorgonia.org/tensor"
)

// batchsampler-go patch: v0.9.18 adds two tensors on one core (tensor's
// StdEng, AddRecvF32), and the sums of gradients that Backpropagate builds
// for a node used twice (a ResNet's residual fork, for instance) are such
// additions of whole activation tensors: in a SimCLR step they were 5% of
// the time, with the other core idle. parallelAddF32 adds large float32
// tensors of equal shape on every core instead. Each element is a[i]+b[i]
// as before, so the bits do not change.

// parallelAddMin is the smallest number of elements added in parallel.
const parallelAddMin = 1 << 15

// parallelAddF32 computes a+b into the destination that opts ask for
// (opts' reuse tensor, or a when the call is unsafe) when a and b are
// contiguous float32 *tensor.Dense of one shape with at least
// parallelAddMin elements. ok is false, and nothing is written, for every
// other call, which then goes through the tensor package as before.
func parallelAddF32(a, b interface{}, opts []tensor.FuncOpt) (retVal Value, ok bool) {
	ad, aok := a.(*tensor.Dense)
	bd, bok := b.(*tensor.Dense)
	if !aok || !bok || ad.Dtype() != tensor.Float32 || bd.Dtype() != tensor.Float32 {
		return nil, false
	}
	shp := ad.Shape()
	if shp.IsScalar() || !shp.Eq(bd.Shape()) || ad.DataSize() < parallelAddMin ||
		ad.RequiresIterator() || bd.RequiresIterator() || ad.IsMaterializable() || bd.IsMaterializable() {
		return nil, false
	}
	fo := tensor.ParseFuncOpts(opts...)
	if fo.Incr() != nil || (fo.As() != tensor.Dtype{} && fo.As() != tensor.Float32) {
		return nil, false
	}
	var dst *tensor.Dense
	switch r := fo.Reuse(); {
	case r != nil:
		rd, rok := r.(*tensor.Dense)
		if !rok || rd.Dtype() != tensor.Float32 || !rd.Shape().Eq(shp) || rd.RequiresIterator() || rd.IsMaterializable() {
			return nil, false
		}
		dst = rd
	case !fo.Safe():
		dst = ad
	default:
		return nil, false
	}
	x, y, z := ad.Float32s(), bd.Float32s(), dst.Float32s()
	if len(x) != len(y) || len(z) != len(x) {
		return nil, false
	}
	workers := runtime.GOMAXPROCS(0)
	if most := len(x) / (parallelAddMin / 2); workers > most {
		workers = most
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := len(x)*w/workers, len(x)*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			addF32(z[lo:hi], x[lo:hi], y[lo:hi])
		}()
	}
	n0 := len(x) / workers
	addF32(z[:n0], x[:n0], y[:n0])
	wg.Wait()
	return dst, true
}

// addF32 writes z[i] = x[i] + y[i]; z may be x or y.
func addF32(z, x, y []float32) {
	y = y[:len(x)]
	z = z[:len(x)]
	for i, v := range x {
		z[i] = v + y[i]
	}
}

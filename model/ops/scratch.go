package ops

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// maxScratch bounds the number of idle buffers kept per element type.
const maxScratch = 8

// scratchPool keeps idle work buffers (im2col columns, partial sums) for
// reuse across runs of a tape machine. Unlike a sync.Pool it is not
// emptied by the garbage collector, so a graph that is run many times
// allocates its scratch memory once. Ops run one at a time on a tape, so
// the pool holds about one op's worth of buffers; concurrent machines
// each take their own.
var scratchPool struct {
	mu  sync.Mutex
	f32 [][]float32
	f64 [][]float64
}

// getScratch returns a buffer of length n (contents undefined): the
// smallest idle one that is large enough, or a new one.
func getScratch[T float32 | float64](n int) []T {
	scratchPool.mu.Lock()
	defer scratchPool.mu.Unlock()
	switch any(*new(T)).(type) {
	case float32:
		return any(takeBest(&scratchPool.f32, n)).([]T)
	default:
		return any(takeBest(&scratchPool.f64, n)).([]T)
	}
}

// putScratch returns a buffer obtained from getScratch to the pool.
func putScratch[T float32 | float64](b []T) {
	scratchPool.mu.Lock()
	defer scratchPool.mu.Unlock()
	switch b := any(b).(type) {
	case []float32:
		give(&scratchPool.f32, b)
	case []float64:
		give(&scratchPool.f64, b)
	}
}

func takeBest[T any](pool *[][]T, n int) []T {
	best := -1
	for i, b := range *pool {
		if cap(b) >= n && (best < 0 || cap(b) < cap((*pool)[best])) {
			best = i
		}
	}
	if best < 0 {
		return make([]T, n)
	}
	b := (*pool)[best]
	*pool = slices.Delete(*pool, best, best+1)
	return b[:n]
}

func give[T any](pool *[][]T, b []T) {
	*pool = append(*pool, b[:cap(b)])
	if len(*pool) > maxScratch {
		// Drop the smallest buffer.
		small := 0
		for i, p := range *pool {
			if cap(p) < cap((*pool)[small]) {
				small = i
			}
		}
		*pool = slices.Delete(*pool, small, small+1)
	}
}

// numWorkers returns how many goroutines a kernel with the given number of
// independent tasks and total work (multiply-adds or element visits) uses:
// GOMAXPROCS capped by the task count, or 1 for small work.
func numWorkers(tasks, work int) int {
	w := runtime.GOMAXPROCS(0)
	if work < parallelThreshold || tasks < 2 {
		return 1
	}
	return max(1, min(w, tasks))
}

// forEachTask runs fn(worker, task) for every task in [0, n) on `workers`
// goroutines (the caller's included) that pull tasks from a shared counter,
// so a slow core does not hold the others up. worker is in [0, workers) and
// identifies per-worker scratch space. Results are deterministic as long as
// each task's output depends only on the task index, never on the worker.
func forEachTask(workers, n int, fn func(worker, task int)) {
	if workers <= 1 || n <= 1 {
		for t := 0; t < n; t++ {
			fn(0, t)
		}
		return
	}
	workers = min(workers, n)
	var next atomic.Int64
	run := func(w int) {
		for {
			t := int(next.Add(1) - 1)
			if t >= n {
				return
			}
			fn(w, t)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}

// outputReuse is the switch of SetOutputReuse.
var outputReuse atomic.Bool

// SetOutputReuse switches output reuse on or off for the ops of this package
// built from then on and for those already built, and returns the previous
// setting. It is off by default.
//
// Gorgonia's tape machine clears its registers on Reset, so every run after
// a Reset allocates (and zeroes) a fresh output for every node through the
// op's Do. With reuse on, each op keeps the output tensor Do allocated and
// returns it again on the next run when dtype and shape match, which saves
// that allocation (about 0.7 GB per step of a small CIFAR ResNet on 256
// images). The price: a value read from a node (Value, Grad) after a run
// aliases a buffer that the next run overwrites, so copy what must outlive
// the run, do not feed an op's output back in as an input of the same
// graph, and do not run one graph on two machines at the same time.
func SetOutputReuse(on bool) bool { return outputReuse.Swap(on) }

// outBuf is the output an op keeps for reuse across runs (SetOutputReuse).
// An op added to a graph with an Arena (see applyOp) takes its float32
// outputs from the arena instead.
type outBuf struct {
	mu    sync.Mutex
	last  *tensor.Dense
	arena *Arena
	g     *gorgonia.ExprGraph // the graph the op was added to with arena
	// With arena: the op's node, its distinct inputs, and whether the op
	// value was added as more than one node (see applyOp).
	node   *gorgonia.Node
	inputs []*gorgonia.Node
	shared bool
	fills  bool // the op writes every element of its output (see filler)
}

// get returns a tensor for Do to overwrite: one lent by the arena the op
// was added with (float32, while the arena is attached to the op's graph;
// zeroed unless the op is a filler), else the kept one when reuse is on and it has dtype dt
// and the given shape, otherwise a new zeroed one (kept when reuse is on).
// A nil b keeps nothing.
func (b *outBuf) get(dt tensor.Dtype, shape ...int) *tensor.Dense {
	if b != nil && b.arena != nil && dt == tensor.Float32 {
		if t := b.arena.lend(b, shape...); t != nil {
			return t
		}
	}
	if b == nil || !outputReuse.Load() {
		return newDense(dt, shape...)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil || b.last.Dtype() != dt || !b.last.Shape().Eq(tensor.Shape(shape)) {
		b.last = newDense(dt, shape...)
	}
	return b.last
}

// sameShapeKind is the machinery shared by the binary element-wise ops
// (AddReLU, ReLUGrad): two inputs of one dtype and one shape (named a and b
// in errors), one output of that shape computed by k32 or k64.
type sameShapeKind struct {
	name, a, b string
	k32        func(out, a, b []float32)
	k64        func(out, a, b []float64)
}

// inferShape checks that both inputs have the same shape and returns it.
func (k sameShapeKind) inferShape(ds []gorgonia.DimSizer) (tensor.Shape, error) {
	s, err := inputShapes(k.name, ds, arg{k.a, -1}, arg{k.b, -1})
	if err != nil {
		return nil, err
	}
	if !s[0].Eq(s[1]) {
		return nil, fmt.Errorf("ops: %s: %s has shape %v, %s has %v", k.name, k.a, s[0], k.b, s[1])
	}
	return s[0].Clone(), nil
}

// do runs the op into prealloc (UsePreallocDo) or, when prealloc is nil,
// into the op's kept output out (Do).
func (k sameShapeKind) do(out *outBuf, prealloc gorgonia.Value, vals []gorgonia.Value) (gorgonia.Value, error) {
	in, err := denseInputs(k.name, vals, arg{k.a, -1}, arg{k.b, -1})
	if err != nil {
		return nil, err
	}
	a, b := in[0], in[1]
	if !a.Shape().Eq(b.Shape()) {
		return nil, fmt.Errorf("ops: %s: %s has shape %v, %s has %v", k.name, k.a, a.Shape(), k.b, b.Shape())
	}
	o, err := outputTensor(out, k.name, prealloc, a.Dtype(), a.Shape(), a, b)
	if err != nil {
		return nil, err
	}
	switch a.Dtype() {
	case tensor.Float32:
		k.k32(o.Float32s(), a.Float32s(), b.Float32s())
	case tensor.Float64:
		k.k64(o.Float64s(), a.Float64s(), b.Float64s())
	}
	return o, nil
}

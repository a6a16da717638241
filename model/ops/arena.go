package ops

import (
	"errors"
	"math"
	"slices"
	"sync"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Arena lends the float32 outputs of this package's ops in one expression
// graph and takes them back, all at once, when the graph's run is over, so
// that the next graph (the next training step) reuses the same memory.
//
// A training step of a graph method builds a new expression graph: its
// batch has its own node count, so no op output has the shape of the last
// step's, and every output is a fresh allocation that the runtime zeroes and
// the garbage collector later frees. With the collector's default headroom
// the heap then holds about two steps' worth of tensors at its peak, and
// zeroing fresh memory takes a tenth of a GIN step. An arena keeps the
// buffers of one step and hands them out again on the next: the peak holds
// one step's tensors, and the buffers are warm.
//
// Within a step, a buffer is also taken back as soon as the last op that
// reads it has run (see lend), so that a later op of the same step reuses
// it: the step then holds about what is live at once, as a framework with
// reference-counted tensors does, instead of every tensor it made. So the
// value of a node whose readers in the graph are all ops of this package
// is gone once they have run: to read such a value after the run, Keep the
// node. Nodes without readers (outputs, gradients) and nodes that anything
// else reads (a loss, a Gorgonia op) are kept until Release.
//
// Values are unchanged: a lent buffer is cleared, as a fresh one is zero
// (except for ops that write all of their output, see filler).
// The price is the rule of SetOutputReuse, for one step at a time: after
// Release, every value of the released graph that came from an op of this
// package (Value or Grad of its nodes) belongs to the next graph, so copy
// what must outlive the step before releasing it.
//
// An arena serves one graph at a time and may be used by one goroutine at a
// time; the ops read it from the graph their first input belongs to, when
// they are added (Attach before building the graph). Gradient ops added by
// gorgonia.Grad find it the same way. Float64 outputs and outputs of ops
// added before Attach are allocated as before.
type Arena struct {
	mu    sync.Mutex
	g     *gorgonia.ExprGraph
	free  []arenaBuf // idle buffers, ascending capacity
	lent  []arenaBuf // b nil once taken back within the step
	bytes int        // capacity of all buffers, in float32s

	// Within a step (see lend): the uses left of the output of each node
	// whose readers are counted, the lent buffers whose last reader is the
	// op running now, and that op's output buffer.
	uses    map[*gorgonia.Node]*nodeUses
	pending []int // indices into lent
	running *outBuf
	keep    map[*gorgonia.Node]bool
	early   int // buffers taken back within a step, in all (for tests)
}

// poison fills b, to its capacity, with NaN.
func poison(b []float32) {
	b = b[:cap(b)]
	for j := range b {
		b[j] = float32(math.NaN())
	}
}

// nodeUses counts the readers of a node's output that have not run yet.
type nodeUses struct {
	lent int // index into Arena.lent
	left int
}

// arenaPoison, set by tests (PoisonArenas), fills a buffer taken back
// within a step with NaN, so that a read after its last reader shows.
var arenaPoison bool

// PoisonArenas makes every Arena fill a buffer it takes back, within a
// step or at Release, with NaN (on) or leave it as it is (off, the
// default), and returns the previous setting. It is for tests of code that
// runs graphs on an arena: a value read after its last reader has run, or
// after Release, then shows as NaN. Not safe to call while graphs run.
func PoisonArenas(on bool) bool {
	old := arenaPoison
	arenaPoison = on
	return old
}

type arenaBuf struct {
	b    []float32
	idle int // releases since it was last lent
}

// arenaMaxIdle is the number of consecutive steps a buffer may stay unused
// before Release drops it, which bounds what the arena keeps to about the
// largest step of the last few.
const arenaMaxIdle = 4

// arenaSlack is the extra capacity of a new buffer, 1/arenaSlack of its
// length, so that the same tensor of a slightly larger batch fits it.
const arenaSlack = 8

// arenas maps each attached graph to its arena.
var arenas sync.Map // *gorgonia.ExprGraph → *Arena

// NewArena returns an empty arena.
func NewArena() *Arena { return &Arena{} }

// Attach makes the ops of this package that are added to g from now on
// take their float32 outputs from a, until Release. g must not be attached
// to another arena, and a must not be attached to another graph.
func (a *Arena) Attach(g *gorgonia.ExprGraph) error {
	if g == nil {
		return errors.New("ops: arena: attach to a nil graph")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.g != nil {
		return errors.New("ops: arena: already attached to a graph (Release it first)")
	}
	if _, loaded := arenas.LoadOrStore(g, a); loaded {
		return errors.New("ops: arena: the graph has an arena already")
	}
	a.g = g
	return nil
}

// Keep keeps the values of nodes of the attached graph until Release, for
// reading after the run (see Arena).
func (a *Arena) Keep(nodes ...*gorgonia.Node) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keep == nil {
		a.keep = make(map[*gorgonia.Node]bool)
	}
	for _, n := range nodes {
		a.keep[n] = true
	}
}

// Release detaches the graph and takes back every buffer lent to its ops:
// their values must no longer be used. Buffers left unused for
// arenaMaxIdle consecutive releases are dropped for the garbage collector.
// Release of a detached arena does nothing.
func (a *Arena) Release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.g != nil {
		arenas.Delete(a.g)
		a.g = nil
	}
	clear(a.uses)
	clear(a.keep)
	a.pending = a.pending[:0]
	a.running = nil
	kept := a.free[:0]
	for _, f := range a.free {
		if f.idle++; f.idle < arenaMaxIdle {
			kept = append(kept, f)
		} else {
			a.bytes -= cap(f.b)
		}
	}
	clear(a.free[len(kept):])
	a.free = kept
	for _, l := range a.lent {
		if l.b != nil {
			a.takeBack(l.b)
		}
	}
	clear(a.lent)
	a.lent = a.lent[:0]
}

// Size returns the number of float32s the arena holds, lent or idle.
func (a *Arena) Size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bytes
}

// takeBack returns a lent buffer to the idle ones (poisoned first under
// PoisonArenas).
func (a *Arena) takeBack(b []float32) {
	if arenaPoison {
		poison(b)
	}
	a.insertFree(b)
}

// insertFree adds b to the idle buffers, keeping them sorted by capacity.
func (a *Arena) insertFree(b []float32) {
	i, _ := slices.BinarySearchFunc(a.free, cap(b), func(f arenaBuf, c int) int { return cap(f.b) - c })
	a.free = slices.Insert(a.free, i, arenaBuf{b: b[:cap(b)]})
}

// get lends a buffer of n float32s, zeroed unless dirty: the smallest idle
// one that is large enough, unless that is more than twice n (a buffer of a
// larger step is then left to idle out), or a new one with arenaSlack spare
// capacity. The caller holds a.mu.
func (a *Arena) get(n int, dirty bool) []float32 {
	i, _ := slices.BinarySearchFunc(a.free, n, func(f arenaBuf, c int) int { return cap(f.b) - c })
	var b []float32
	if i < len(a.free) && cap(a.free[i].b) <= 2*n {
		b = a.free[i].b[:n]
		a.free = slices.Delete(a.free, i, i+1)
		if !dirty {
			clear(b)
		}
	} else {
		b = make([]float32, n, n+n/arenaSlack)
		a.bytes += cap(b)
	}
	a.lent = append(a.lent, arenaBuf{b: b})
	return b
}

// lend lends a float32 tensor of the given shape to the op of out, which is
// running in g (zeroed unless the op is a filler), or returns nil when a is
// no longer attached to g (a graph run again after Release allocates as
// before).
//
// The ops of this package ask for their output first thing when they run,
// one op at a time (a tape machine runs its program in order), so a call
// from another op than the last one means the last one has finished. Each
// op's inputs are counted off the uses of their outputs; a buffer whose
// uses reach zero is read by the running op only, and is taken back for
// reuse when the next op asks. A node's uses are its consumers in the
// graph: any consumer that is not an op of this package (a loss, a
// Gorgonia op), or that does not lend from the arena, never counts off, so
// its inputs stay lent until Release, as do nodes without consumers (a
// gradient that is read after the run, a model's output).
func (a *Arena) lend(out *outBuf, shape ...int) *tensor.Dense {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.g == nil || a.g != out.g {
		return nil
	}
	if out != a.running {
		for _, i := range a.pending {
			a.takeBack(a.lent[i].b)
			a.lent[i].b = nil
			a.early++
		}
		a.pending = a.pending[:0]
		a.running = out
		if !out.shared {
			for _, in := range out.inputs {
				if u := a.uses[in]; u != nil {
					if u.left--; u.left == 0 {
						a.pending = append(a.pending, u.lent)
						delete(a.uses, in)
					}
				}
			}
		}
	}
	b := a.get(tensor.Shape(shape).TotalSize(), out.fills)
	if nd := out.node; nd != nil && !out.shared && !a.keep[nd] {
		if readers := a.g.To(nd.ID()); readers != nil {
			if r := readers.Len(); r > 0 {
				if a.uses == nil {
					a.uses = make(map[*gorgonia.Node]*nodeUses)
				}
				a.uses[nd] = &nodeUses{lent: len(a.lent) - 1, left: r}
			}
		}
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(b))
}

// arenaOf returns the arena attached to the graph of n, or nil.
func arenaOf(n *gorgonia.Node) *Arena {
	if n == nil || n.Graph() == nil {
		return nil
	}
	if a, ok := arenas.Load(n.Graph()); ok {
		return a.(*Arena)
	}
	return nil
}

// keeper is an op with an output buffer (outBuf).
type keeper interface{ keep() *outBuf }

// filler is an op that writes every element of its output, so that a buffer
// lent to it need not be cleared first (clearing is about a tenth of a
// step's time on large graphs). The tests that poison the arena's buffers
// with NaN (PoisonArenas) check the claim.
type filler interface{ fillsOutput() }

func (*BiasActOp) fillsOutput()  {}
func (*reluOp) fillsOutput()     {}
func (*addReLUOp) fillsOutput()  {}
func (*reluGradOp) fillsOutput() {}
func (*preluOp) fillsOutput()    {}

// SpMM and WSpMM overwrite their output (SpMMFloat32, WSpMMFloat32: each
// row is a sum assigned, or cleared first, empty rows included).
func (*SpMMOp) fillsOutput()       {}
func (*WSpMMOp) fillsOutput()      {}
func (*concatColsOp) fillsOutput() {}

// Linear copies the bias into every row of its output before the GEMM
// adds x·W to it (linearForward).
func (*LinearOp) fillsOutput() {}
func (*colsOp) fillsOutput()   {}

// BatchNorm writes every element in both ranks (bnForward, bn4Forward: the
// affine map over all rows), its gradient every element of dx or dγ
// (bnBackward); PReLU's gradients assign dx and every slope's sum
// (preluGradX, preluGradSlope); matMulOp clears its output before the
// GEMMs accumulate into it (gemmTransA, gemmTransB).
func (*BatchNormOp) fillsOutput() {}
func (*bnGradOp) fillsOutput()    {}
func (*preluGradOp) fillsOutput() {}
func (*matMulOp) fillsOutput()    {}

// OneHotLinear assigns every element of its output, its gradient clears
// dW before adding to it (oneHotForward, oneHotGrad).
func (*OneHotLinearOp) fillsOutput() {}
func (*oneHotGradOp) fillsOutput()   {}

// applyOp is gorgonia.ApplyOp that also gives the op's output buffer, if it
// has one, the arena of the inputs' graph, the op's node and its distinct
// inputs (for lend's counts).
func applyOp(op gorgonia.Op, inputs ...*gorgonia.Node) (*gorgonia.Node, error) {
	k, ok := op.(keeper)
	var a *Arena
	if ok && len(inputs) > 0 {
		a = arenaOf(inputs[0])
	}
	if a == nil {
		return gorgonia.ApplyOp(op, inputs...)
	}
	b := k.keep()
	b.arena, b.g = a, inputs[0].Graph()
	_, b.fills = op.(filler)
	n, err := gorgonia.ApplyOp(op, inputs...)
	if err != nil {
		return nil, err
	}
	if b.node != nil && b.node != n {
		// One op value in two nodes: its calls cannot be told apart, so
		// neither its inputs nor its outputs are counted.
		b.shared = true
	}
	b.node = n
	b.inputs = b.inputs[:0]
	for _, in := range inputs {
		if !slices.Contains(b.inputs, in) {
			b.inputs = append(b.inputs, in)
		}
	}
	return n, nil
}

// The ops with an output buffer.

func (op *BatchNormOp) keep() *outBuf    { return &op.out }
func (op *bnGradOp) keep() *outBuf       { return &op.out }
func (op *bn4GradXOp) keep() *outBuf     { return &op.out }
func (op *BiasActOp) keep() *outBuf      { return &op.out }
func (op *reluGradOp) keep() *outBuf     { return &op.out }
func (op *convOp) keep() *outBuf         { return &op.out }
func (op *convGradXOp) keep() *outBuf    { return &op.out }
func (op *convGradWOp) keep() *outBuf    { return &op.out }
func (op *LinearOp) keep() *outBuf       { return &op.out }
func (op *matMulOp) keep() *outBuf       { return &op.out }
func (op *preluOp) keep() *outBuf        { return &op.out }
func (op *preluGradOp) keep() *outBuf    { return &op.out }
func (op *reluOp) keep() *outBuf         { return &op.out }
func (op *addReLUOp) keep() *outBuf      { return &op.out }
func (op *gapGradOp) keep() *outBuf      { return &op.out }
func (op *SpMMOp) keep() *outBuf         { return &op.out }
func (op *WSpMMOp) keep() *outBuf        { return &op.out }
func (op *concatColsOp) keep() *outBuf   { return &op.out }
func (op *colsOp) keep() *outBuf         { return &op.out }
func (op *OneHotLinearOp) keep() *outBuf { return &op.out }
func (op *oneHotGradOp) keep() *outBuf   { return &op.out }

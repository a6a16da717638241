// Package gop holds what the custom Gorgonia ops of this module (model/ops
// and loss) have in common: the methods of gorgonia.Op that follow from an
// op's description and signature alone.
package gop

import (
	"hash"
	"hash/fnv"
	"io"

	"github.com/chewxy/hm"
	"gorgonia.org/gorgonia"
)

// Base implements Arity, Type, ReturnsPtr (false), CallsExtern (false),
// OverwritesInput (−1), WriteHash, Hashcode and String for an op that
// embeds it. Build it with New when the op is built: the zero Base panics
// in WriteHash, Hashcode, Arity and Type rather than let two different ops
// hash alike (common-subexpression elimination would merge them).
type Base struct {
	key   string // what WriteHash writes: the op's name and every parameter
	desc  string // what String returns
	hash  uint32 // FNV-1a of key
	ranks []int  // ranks of the inputs, then of the output (see FnType)
}

// New returns the Base of an op whose WriteHash writes key, which must name
// the op and every parameter that changes its result, and whose String is
// desc (key when desc is empty). ranks are the ranks of its inputs and then
// of its output, as for FnType; the arity is len(ranks)−1.
func New(key, desc string, ranks ...int) Base {
	if key == "" || len(ranks) < 2 {
		panic("gop: New needs a key and the ranks of at least one input and the output")
	}
	h := fnv.New32a()
	io.WriteString(h, key)
	if desc == "" {
		desc = key
	}
	return Base{key: key, desc: desc, hash: h.Sum32(), ranks: ranks}
}

func (b Base) mustBeBuilt() {
	if b.key == "" {
		panic("gop: op used without its constructor (zero gop.Base)")
	}
}

// Arity is the number of inputs.
func (b Base) Arity() int {
	b.mustBeBuilt()
	return len(b.ranks) - 1
}

// Type is FnType of the op's ranks (built anew on every call: Gorgonia
// returns function types to a pool after use).
func (b Base) Type() hm.Type {
	b.mustBeBuilt()
	return FnType(b.ranks...)
}

// ReturnsPtr is false: the output is a value of the op's own.
func (Base) ReturnsPtr() bool { return false }

// CallsExtern is false: pure Go, and the op manages its own output buffer.
func (Base) CallsExtern() bool { return false }

// OverwritesInput is −1: inputs are read only.
func (Base) OverwritesInput() int { return -1 }

// WriteHash writes the op's key: its name and every parameter.
func (b Base) WriteHash(h hash.Hash) {
	b.mustBeBuilt()
	io.WriteString(h, b.key)
}

// Hashcode is the FNV-1a hash of what WriteHash writes.
func (b Base) Hashcode() uint32 {
	b.mustBeBuilt()
	return b.hash
}

// String describes the op.
func (b Base) String() string { return b.desc }

// FnType returns the Gorgonia type of a function whose arguments and result
// have the given ranks (at least two), in order: a tensor of that rank of
// the element type 'a' for rank ≥ 1, and 'a' itself for rank 0 (a scalar,
// or a tensor of any shape for element-wise ops).
func FnType(ranks ...int) hm.Type {
	if len(ranks) == 2 {
		return hm.NewFnType(rankType(ranks[0]), rankType(ranks[1]))
	}
	// hm.NewFnType nests to the right: a → (b → c).
	return hm.NewFnType(rankType(ranks[0]), FnType(ranks[1:]...))
}

// rankType is the type of one argument of FnType.
func rankType(rank int) hm.Type {
	a := hm.TypeVariable('a')
	if rank <= 0 {
		return a
	}
	return gorgonia.TensorType{Dims: rank, Of: a}
}

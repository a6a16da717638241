package gorgonia

import (
	"bytes"

	"gorgonia.org/dawson"
	"gorgonia.org/tensor"
)

func scalarEq(a, b Scalar) bool {
	switch at := a.(type) {
	case *F64:
		if bt, ok := b.(*F64); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	case *F32:
		if bt, ok := b.(*F32); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	case *I:
		if bt, ok := b.(*I); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	case *I32:
		if bt, ok := b.(*I32); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	case *I64:
		if bt, ok := b.(*I64); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	case *U8:
		if bt, ok := b.(*U8); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	case *B:
		if bt, ok := b.(*B); ok {
			if at == bt {
				return true
			}
			return *at == *bt
		}
		return false
	}
	return false
}

func scalarClose(a, b Scalar) bool {
	switch at := a.(type) {
	case *F64:
		if bt, ok := b.(*F64); ok {
			return dawson.CloseF64(float64(*at), float64(*bt))
		}
		return false
	case *F32:
		if bt, ok := b.(*F32); ok {
			return dawson.CloseF32(float32(*at), float32(*bt))
		}
		return false
	default:
		return scalarEq(a, b)
	}
}

func tensorClose(a, b tensor.Tensor) bool {
	aDt := a.Dtype()
	bDt := b.Dtype()
	if aDt != bDt {
		return false
	}

	switch aDt {
	case tensor.Float64:
		aFs := a.Data().([]float64)
		bFs := b.Data().([]float64)
		if len(aFs) != len(bFs) {
			return false
		}
		aFs = aFs[:]
		bFs = bFs[:len(aFs)]
		for i, v := range aFs {
			if !dawson.CloseF64(v, bFs[i]) {
				return false
			}
		}
		return true
	case tensor.Float32:
		aFs := a.Data().([]float32)
		bFs := b.Data().([]float32)
		if len(aFs) != len(bFs) {
			return false
		}
		aFs = aFs[:]
		bFs = bFs[:len(aFs)]
		for i, v := range aFs {
			if !dawson.CloseF32(v, bFs[i]) {
				return false
			}
		}
		return true
	default:
		return a.Eq(b)
	}

}

/*
func axesEq(a, b axes) bool {
	if len(a) != len(b) {
		return false
	}

	for i, s := range a {
		if b[i] != s {
			return false
		}
	}
	return true
}

// yes it's exactly the same as axesEq
func coordEq(a, b coordinates) bool {
	if len(a) != len(b) {
		return false
	}

	for i, s := range a {
		if b[i] != s {
			return false
		}
	}
	return true
}
*/

func constEq(a, b constant) (ok bool) {
	switch at := a.(type) {
	case constantScalar:
		var bt constantScalar
		if bt, ok = b.(constantScalar); !ok {
			return
		}

		return bt == at
	case constantTensor:
		var bt constantTensor
		if bt, ok = b.(constantTensor); !ok {
			return
		}
		return at.v.Eq(bt.v)
	default:
		panic("Not yet implemented")
	}
}

// nodeEq reports whether a and b are the same node or compute the same value,
// so that ExprGraph.AddNode may merge them (hash-consing). AddNode calls it only
// for nodes of equal 32-bit Hashcode, which different nodes can share.
//
// batchsampler-go patch: in v0.9.18 nodeEq did not compare the children and
// compared ops by their 32-bit Hashcode alone, so two different nodes whose
// node hashes collided were merged whenever their ops, types and shapes
// agreed. It now compares the children (which AddNode's callers have already
// merged into the graph, so identity is equality), the ops' whole WriteHash
// output, and the type and shape of inputs as well as their names.
func nodeEq(a, b *Node) bool {
	return nodeEqUnder(a, b, func(n *Node) *Node { return n })
}

// nodeEqUnder is nodeEq with the children of a and b compared after mapping
// them by canon (their representatives under common-subexpression
// elimination; the identity for hash-consing). Part of the batchsampler-go
// patch (see nodeEq).
func nodeEqUnder(a, b *Node, canon func(*Node) *Node) bool {
	if a == b {
		return true
	}

	if a.isInput() || b.isInput() {
		return a.isInput() && b.isInput() && a.name == b.name && a.t == b.t && a.shape.Eq(b.shape)
	}

	// hashcode is good for comparing Op (TODO: benchmark this vs reflect.DeepEq)
	if a.op.Hashcode() != b.op.Hashcode() {
		return false
	}

	if len(a.children) != len(b.children) {
		return false
	}

	if a.t != b.t {
		return false
	}

	if !a.shape.Eq(b.shape) {
		return false
	}

	for i, c := range a.children {
		if canon(c) != canon(b.children[i]) {
			return false
		}
	}

	return opKeyEq(a.op, b.op)
}

// opKeyEq reports whether two ops write the same bytes in WriteHash, which
// names an op and all of its parameters. Part of the batchsampler-go patch
// (see nodeEq).
func opKeyEq(a, b Op) bool {
	var ka, kb opKey
	a.WriteHash(&ka)
	b.WriteHash(&kb)
	return bytes.Equal(ka.Bytes(), kb.Bytes())
}

// opKey records what an op's WriteHash writes (a hash.Hash that keeps its
// input instead of hashing it).
type opKey struct{ bytes.Buffer }

func (k *opKey) Sum(b []byte) []byte { return append(b, k.Bytes()...) }
func (k *opKey) Size() int           { return k.Len() }
func (k *opKey) BlockSize() int      { return 1 }

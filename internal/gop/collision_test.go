package gop

import (
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The names of two float64 scalar inputs whose nodes have the same 32-bit
// Node.Hashcode (FNV-1a of type, shape and name; found by search).
const collideA, collideB = "x30858", "x1118326"

// TestHashCollisionsKeptApart checks that the Gorgonia the module builds on
// (third_party/gorgonia, patched) keeps different nodes of one hash apart.
// Gorgonia 0.9.18 identified nodes by that hash alone in two places: the
// compiler's common-subexpression elimination, which gave a node the
// register of an earlier node of equal hash and never executed it (so a + b
// read one input twice), and ExprGraph.AddNode's hash-consing, which merged
// nodes of one op, type and shape without comparing their children (so −b
// came back as −a, whose hash covers only its child's hash).
func TestHashCollisionsKeptApart(t *testing.T) {
	g := gorgonia.NewGraph()
	a := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName(collideA), gorgonia.WithValue(1.0))
	b := gorgonia.NewScalar(g, tensor.Float64, gorgonia.WithName(collideB), gorgonia.WithValue(2.0))
	if a.Hashcode() != b.Hashcode() {
		t.Fatalf("fixture: %s and %s no longer hash alike (%x, %x)", collideA, collideB, a.Hashcode(), b.Hashcode())
	}
	sum := gorgonia.Must(gorgonia.Add(a, b))
	negA, negB := gorgonia.Must(gorgonia.Neg(a)), gorgonia.Must(gorgonia.Neg(b))
	if negA == negB {
		t.Errorf("−%s and −%s were merged into one node", collideA, collideB)
	}
	again := gorgonia.Must(gorgonia.Add(a, b))
	if again != sum {
		t.Errorf("a + b built twice gave two nodes: hash-consing of equal nodes lost")
	}
	vm := gorgonia.NewTapeMachine(g)
	defer CloseMachine(vm)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    *gorgonia.Node
		want float64
	}{{sum, 3}, {negA, -1}, {negB, -2}} {
		if v := c.n.Value(); v == nil {
			t.Errorf("%v was not computed", c.n)
		} else if got := v.Data().(float64); got != c.want {
			t.Errorf("%v = %v, want %v", c.n, got, c.want)
		}
	}
}

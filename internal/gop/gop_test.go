package gop

import (
	"bytes"
	"hash/fnv"
	"testing"
)

// bufHash is a hash.Hash that keeps what is written.
type bufHash struct{ bytes.Buffer }

func (h *bufHash) Sum(b []byte) []byte { return b }
func (h *bufHash) Size() int           { return 0 }
func (h *bufHash) BlockSize() int      { return 1 }

func TestBase(t *testing.T) {
	b := New("Op{k=1}", "", 2, 1, 2)
	var w bufHash
	b.WriteHash(&w)
	if w.String() != "Op{k=1}" {
		t.Errorf("WriteHash wrote %q", w.String())
	}
	h := fnv.New32a()
	h.Write([]byte("Op{k=1}"))
	if b.Hashcode() != h.Sum32() {
		t.Errorf("Hashcode %x, FNV-1a of the key %x", b.Hashcode(), h.Sum32())
	}
	if b.String() != "Op{k=1}" || New("Op{k=1}", "Op", 2, 2).String() != "Op" {
		t.Errorf("String: %q", b.String())
	}
	if b.Arity() != 2 || b.Type().String() != "Matrix a → Vector a → Matrix a" {
		t.Errorf("Arity %d, Type %v", b.Arity(), b.Type())
	}
	if b.ReturnsPtr() || b.CallsExtern() || b.OverwritesInput() != -1 {
		t.Error("ReturnsPtr, CallsExtern or OverwritesInput")
	}
	if New("Op{k=2}", "", 2, 1, 2).Hashcode() == b.Hashcode() {
		t.Error("different keys hash equal")
	}
	// Type is built anew on every call (Gorgonia pools function types).
	if b.Type() == b.Type() {
		t.Error("Type returned the same function type twice")
	}
}

func TestFnType(t *testing.T) {
	for _, c := range []struct {
		ranks []int
		want  string
	}{
		{[]int{0, 0}, "a → a"},
		{[]int{2, 2, 0}, "Matrix a → Matrix a → a"},
		{[]int{4, 1, 4, 4, 4}, "Tensor-4 a → Vector a → Tensor-4 a → Tensor-4 a → Tensor-4 a"},
	} {
		if got := FnType(c.ranks...).String(); got != c.want {
			t.Errorf("FnType(%v) = %s, want %s", c.ranks, got, c.want)
		}
	}
}

func TestZeroBasePanics(t *testing.T) {
	for name, f := range map[string]func(b Base){
		"WriteHash": func(b Base) { b.WriteHash(fnv.New32a()) },
		"Hashcode":  func(b Base) { b.Hashcode() },
		"Arity":     func(b Base) { b.Arity() },
		"Type":      func(b Base) { b.Type() },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a zero Base did not panic", name)
				}
			}()
			f(Base{})
		}()
	}
}

package gop

import (
	"runtime"
	"testing"
	"weak"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// runMachine runs y = 2x on a tape machine and returns the machine and a
// weak pointer to the backing array of y's value.
func runMachine(t *testing.T) (gorgonia.VM, weak.Pointer[float32]) {
	t.Helper()
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(256, 256), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(256, 256), tensor.WithBacking(make([]float32, 256*256)))))
	y, err := gorgonia.Mul(x, gorgonia.NewConstant(float32(2)))
	if err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return vm, weak.Make(&y.Value().Data().([]float32)[0])
}

// TestCloseMachineFreesAtOnce: after CloseMachine, the values a dropped
// machine computed are freed by the first collection.
func TestCloseMachineFreesAtOnce(t *testing.T) {
	vm, w := runMachine(t)
	if err := CloseMachine(vm); err != nil {
		t.Fatal(err)
	}
	runtime.GC() // vm is no longer read: not a root

	if w.Value() != nil {
		t.Error("a value of a closed and dropped machine survived a collection")
	}
	if err := CloseMachine(nil); err != nil {
		t.Errorf("CloseMachine(nil) = %v", err)
	}

	// What it fixes: with Close alone, the machine's finalizer keeps the
	// values through the first collection (logged, not required: a later
	// gorgonia may drop the finalizer).
	vm, w = runMachine(t)
	vm.Close()
	runtime.GC()
	t.Logf("with Close alone, a value survives the first collection: %v", w.Value() != nil)
}

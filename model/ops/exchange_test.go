package ops

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// swapSide is one side of an exchange test: x → y = ReLU(x) → p = Swap(y),
// cost = Σ p ⊙ y, with the gradient of cost with respect to x.
type swapSide struct {
	g       *gorgonia.ExprGraph
	x, y, p *gorgonia.Node
	vm      gorgonia.VM
}

func newSwapSide(t *testing.T, e *Exchange, side int, shape ...int) *swapSide {
	t.Helper()
	s := &swapSide{g: gorgonia.NewGraph()}
	s.x = gorgonia.NewTensor(s.g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(shape...))))
	var err error
	if s.y, err = ReLU(s.x); err != nil {
		t.Fatal(err)
	}
	if s.p, err = e.Swap(side, s.y); err != nil {
		t.Fatal(err)
	}
	cost := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(s.p, s.y))))
	if _, err := gorgonia.Grad(cost, s.x); err != nil {
		t.Fatal(err)
	}
	s.vm = gorgonia.NewTapeMachine(s.g)
	t.Cleanup(func() { gop.CloseMachine(s.vm) })
	return s
}

// runBoth runs the two sides' machines at the same time, aborting the
// exchange when one fails, as the SimCLR step does.
func runBoth(e *Exchange, sides ...*swapSide) []error {
	errs := make([]error, len(sides))
	var wg sync.WaitGroup
	for i, s := range sides {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.vm.RunAll(); errs[i] != nil {
				e.Abort(errs[i])
			}
		}()
	}
	wg.Wait()
	return errs
}

// TestExchangeSwapsBetweenGraphs runs two graphs at once for several rounds
// with 1 and 2 threads: each Swap node holds the other graph's input bits,
// and the gradient stops at the Swap (∂/∂x Σ p⊙ReLU(x) = p·[x > 0], p the
// other side's ReLU(x), constant here).
func TestExchangeSwapsBetweenGraphs(t *testing.T) {
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			e := NewExchange()
			a, b := newSwapSide(t, e, 0, 3, 5), newSwapSide(t, e, 1, 3, 5)
			for round := range 4 {
				xs := [2][]float32{a.x.Value().Data().([]float32), b.x.Value().Data().([]float32)}
				for i := range xs[0] {
					xs[0][i] = float32(i*(round+1)%7) - 2.5
					xs[1][i] = float32(i+round) * 0.37
				}
				if errs := runBoth(e, a, b); errs[0] != nil || errs[1] != nil {
					t.Fatalf("GOMAXPROCS %d round %d: %v", procs, round, errors.Join(errs...))
				}
				for k, s := range []*swapSide{a, b} {
					other := []*swapSide{b, a}[k]
					p, y := s.p.Value().Data().([]float32), other.y.Value().Data().([]float32)
					gx, err := s.x.Grad()
					if err != nil {
						t.Fatal(err)
					}
					g := gx.Data().([]float32)
					for i := range p {
						if math.Float32bits(p[i]) != math.Float32bits(y[i]) {
							t.Fatalf("GOMAXPROCS %d round %d side %d: swapped value %d is %v, the other side's input is %v", procs, round, k, i, p[i], y[i])
						}
						want := float32(0)
						if xs[k][i] > 0 {
							want = p[i]
						}
						if g[i] != want {
							t.Fatalf("GOMAXPROCS %d round %d side %d: gradient %d is %v, want %v (the swapped value is a constant)", procs, round, k, i, g[i], want)
						}
					}
				}
				a.vm.Reset()
				b.vm.Reset()
			}
		}()
	}
}

// TestExchangeAbort checks that a side whose peer never comes fails with the
// error given to Abort instead of waiting forever, and that after Reset the
// two sides swap again.
func TestExchangeAbort(t *testing.T) {
	e := NewExchange()
	a, b := newSwapSide(t, e, 0, 2, 2), newSwapSide(t, e, 1, 2, 2)
	done := make(chan error, 1)
	go func() { done <- a.vm.RunAll() }()
	time.Sleep(10 * time.Millisecond)
	e.Abort(errors.New("view 2 failed"))
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "view 2 failed") {
			t.Fatalf("after Abort the waiting side returned %v, want the abort's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting side did not return after Abort")
	}
	// A machine started after the abort fails at once.
	if err := b.vm.RunAll(); err == nil || !strings.Contains(err.Error(), "view 2 failed") {
		t.Fatalf("a side run after Abort returned %v, want the abort's error", err)
	}
	e.Reset()
	a.vm.Reset()
	b.vm.Reset()
	copy(a.x.Value().Data().([]float32), []float32{1, 2, 3, 4})
	copy(b.x.Value().Data().([]float32), []float32{5, 6, 7, 8})
	if errs := runBoth(e, a, b); errs[0] != nil || errs[1] != nil {
		t.Fatalf("after Reset: %v", errors.Join(errs...))
	}
	if got := a.p.Value().Data().([]float32); got[3] != 8 {
		t.Errorf("after Reset side 0 got %v, want side 1's [5 6 7 8]", got)
	}
}

// TestExchangeErrors checks the errors of bad sides and of inputs that
// differ across the sides.
func TestExchangeErrors(t *testing.T) {
	e := NewExchange()
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("x"))
	for _, side := range []int{-1, 2} {
		if _, err := e.Swap(side, x); err == nil || !strings.Contains(err.Error(), "side") {
			t.Errorf("Swap(%d): error %v, want one naming the side", side, err)
		}
	}
	if _, err := e.Swap(0, nil); err == nil {
		t.Error("Swap(0, nil): no error")
	}
	xi := gorgonia.NewMatrix(g, tensor.Int, gorgonia.WithShape(2, 2), gorgonia.WithName("xi"))
	if _, err := e.Swap(0, xi); err == nil || !strings.Contains(err.Error(), "dtype") {
		t.Errorf("Swap of an int matrix: error %v, want one naming the dtype", err)
	}
	a, b := newSwapSide(t, e, 0, 2, 3), newSwapSide(t, e, 1, 3, 2)
	errs := runBoth(e, a, b)
	if errs[0] == nil && errs[1] == nil {
		t.Fatal("sides of shapes (2, 3) and (3, 2) swapped without an error")
	}
	for _, err := range errs {
		if err != nil && !strings.Contains(err.Error(), "shape") {
			t.Errorf("error %v, want one naming the shapes", err)
		}
	}
}

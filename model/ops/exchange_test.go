package ops

import (
	"errors"
	"fmt"
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

// TestExchangeSwapGradMatchesOneGraph: two graphs joined by SwapGrad give
// the values and gradients of one graph holding both, bit for bit, with 1
// and 2 threads. The one graph computes L = Σ y0²⊙y1 + Σ y1²⊙y0 with
// y_v = ReLU(x_v); graph v computes L_v = Σ y_v²⊙p_v, p_v = SwapGrad(y_v)
// (a copy of y_{1−v}), and y_v's gradient adds ∂L_{1−v}/∂p_{1−v} from the
// other graph to its own term's: y_v's gradient in the one graph,
// 2·y_v⊙y_{1−v} + y_{1−v}², is the sum of the same two terms (one float
// addition, which does not depend on the order; a node with three or more
// terms may sum them in another order).
func TestExchangeSwapGradMatchesOneGraph(t *testing.T) {
	const rows, cols = 4, 6
	input := func(g *gorgonia.ExprGraph, name string, v int) *gorgonia.Node {
		x := tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(rows, cols))
		for i, s := 0, x.Float32s(); i < len(s); i++ {
			s[i] = float32((i*(3+v)+v)%11)*0.173 - 0.4
		}
		return gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(rows, cols), gorgonia.WithName(name), gorgonia.WithValue(x))
	}
	term := func(own, other *gorgonia.Node) *gorgonia.Node {
		return gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(gorgonia.Must(gorgonia.Square(own)), other))))
	}
	// One graph.
	g := gorgonia.NewGraph()
	var x, y [2]*gorgonia.Node
	for v := range 2 {
		x[v] = input(g, fmt.Sprintf("x%d", v), v)
		y[v] = gorgonia.Must(ReLU(x[v]))
	}
	l := gorgonia.Must(gorgonia.Add(term(y[0], y[1]), term(y[1], y[0])))
	if _, err := gorgonia.Grad(l, x[0], x[1]); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer gop.CloseMachine(vm)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var want [2][]float32
	for v := range 2 {
		gx, err := x[v].Grad()
		if err != nil {
			t.Fatal(err)
		}
		want[v] = gx.Data().([]float32)
	}
	wantLoss := l.Value().Data().(float32)
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			fwd, back := NewExchange(), NewExchange()
			var (
				xs, ls [2]*gorgonia.Node
				vms    [2]gorgonia.VM
			)
			for v := range 2 {
				g := gorgonia.NewGraph()
				xs[v] = input(g, "x", v)
				y := gorgonia.Must(ReLU(xs[v]))
				p, err := fwd.SwapGrad(v, y, back)
				if err != nil {
					t.Fatal(err)
				}
				ls[v] = term(y, p)
				if _, err := gorgonia.Grad(ls[v], xs[v]); err != nil {
					t.Fatal(err)
				}
				vms[v] = gorgonia.NewTapeMachine(g)
				defer gop.CloseMachine(vms[v])
			}
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for v := range 2 {
				wg.Go(func() {
					if errs[v] = vms[v].RunAll(); errs[v] != nil {
						fwd.Abort(errs[v])
						back.Abort(errs[v])
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("GOMAXPROCS %d: %v", procs, err)
			}
			if got := ls[0].Value().Data().(float32) + ls[1].Value().Data().(float32); math.Float32bits(got) != math.Float32bits(wantLoss) {
				t.Errorf("GOMAXPROCS %d: loss %v, one graph %v", procs, got, wantLoss)
			}
			nonzero := 0
			for v := range 2 {
				gx, err := xs[v].Grad()
				if err != nil {
					t.Fatal(err)
				}
				got := gx.Data().([]float32)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[v][i]) {
						t.Fatalf("GOMAXPROCS %d: x%d gradient %d is %v, one graph %v", procs, v, i, got[i], want[v][i])
					}
					if got[i] != 0 {
						nonzero++
					}
				}
			}
			if nonzero < rows*cols/2 {
				t.Fatalf("only %d of %d gradients are nonzero: the test would not see a missing term", nonzero, 2*rows*cols)
			}
		}()
	}
}

// TestExchangeSwapGradErrors: SwapGrad needs a backward Exchange other
// than its own, and Swap stays without a gradient.
func TestExchangeSwapGradErrors(t *testing.T) {
	e := NewExchange()
	g := gorgonia.NewGraph()
	x := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(2, 2), gorgonia.WithName("x"))
	for _, back := range []*Exchange{nil, e} {
		if _, err := e.SwapGrad(0, x, back); err == nil || !strings.Contains(err.Error(), "Exchange of its own") {
			t.Errorf("SwapGrad with back %p (e %p): error %v, want one asking for another Exchange", back, e, err)
		}
	}
	if _, err := e.SwapGrad(2, x, NewExchange()); err == nil || !strings.Contains(err.Error(), "side") {
		t.Errorf("SwapGrad(2): error %v, want one naming the side", err)
	}
}

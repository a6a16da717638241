package loss

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// acrossRun builds each view of c on its own graph joined by an Across,
// runs the two tape machines at once and returns the loss and the
// gradients with respect to z1 and z2.
func acrossRun(t *testing.T, c Config, dt tensor.Dtype, z1, z2 []float64, b, d int) (float64, []float64, []float64) {
	t.Helper()
	a, err := NewAcross(c)
	if err != nil {
		t.Fatal(err)
	}
	var (
		nodes, losses [2]*G.Node
		vms           [2]G.VM
	)
	for v, z := range [][]float64{z1, z2} {
		g := G.NewGraph()
		nodes[v] = G.NewMatrix(g, dt, G.WithShape(b, d), G.WithName(fmt.Sprintf("z%d", v+1)), G.WithValue(denseOf(dt, z, b, d)))
		if losses[v], err = a.Side(v, nodes[v]); err != nil {
			t.Fatal(err)
		}
		if _, err := G.Grad(losses[v], nodes[v]); err != nil {
			t.Fatal(err)
		}
		vms[v] = G.NewTapeMachine(g, G.BindDualValues(nodes[v]))
		defer vms[v].Close()
	}
	done := make(chan error, 1)
	go func() { done <- vms[1].RunAll() }()
	if err := vms[0].RunAll(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l0, err := scalarValue(losses[0].Value())
	if err != nil {
		t.Fatal(err)
	}
	if l1, _ := scalarValue(losses[1].Value()); l1 != l0 {
		t.Errorf("the two sides hold different losses: %v and %v", l0, l1)
	}
	return l0, gradOf(t, nodes[0]), gradOf(t, nodes[1])
}

// TestAcrossMatchesBuild: the loss and both gradients of two graphs joined
// by an Across are those of Build on one graph, bit for bit, for every
// loss and form, float32 and float64.
func TestAcrossMatchesBuild(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const b, d = 12, 5
	z1, z2 := make([]float64, b*d), make([]float64, b*d)
	for i := range z1 {
		z1[i], z2[i] = r.NormFloat64(), r.NormFloat64()
	}
	for _, c := range []Config{
		{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.2},
		{Kind: KindInfoNCE, Form: FormSimCLR, Temperature: 0.5},
		{Kind: KindInfoNCE, Form: FormSimCSE, Temperature: 0.05},
		{Kind: KindDCL, Form: FormGraphCL, Temperature: 0.5},
		{Kind: KindHCL, Form: FormGraphCL, Temperature: 0.5, TauPlus: 0.1, Beta: 1},
	} {
		for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
			t.Run(fmt.Sprintf("%v/%v", c, dt), func(t *testing.T) {
				wl, wg1, wg2 := graphRun(t, c, dt, z1, z2, b, d)
				l, g1, g2 := acrossRun(t, c, dt, z1, z2, b, d)
				if l != wl || !slices.Equal(g1, wg1) || !slices.Equal(g2, wg2) {
					t.Errorf("loss %v, want %v; gradients equal: %v, %v", l, wl, slices.Equal(g1, wg1), slices.Equal(g2, wg2))
				}
			})
		}
	}
}

// TestAcrossAbort: a side waiting for the other view is released by Abort
// with an error wrapping ErrOtherView and the cause; an Across serves one
// step; Loss before both sides ran is an error.
func TestAcrossAbort(t *testing.T) {
	a, err := NewAcross(Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Loss(); err == nil {
		t.Error("Loss before the sides ran: no error")
	}
	g := G.NewGraph()
	z := G.NewMatrix(g, tensor.Float32, G.WithShape(4, 3), G.WithName("z"), G.WithValue(denseOf(tensor.Float32, make([]float64, 12), 4, 3)))
	l, err := a.Side(0, z)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	done := make(chan error, 1)
	go func() { done <- vm.RunAll() }()
	select {
	case err := <-done:
		t.Fatalf("a side ran without the other view: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	a.Abort(errors.New("view 2 broke"))
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), ErrOtherView.Error()+": view 2 broke") {
			t.Errorf("released with %v, want ErrOtherView and the cause", err)
		}
		if c := a.Cause(); c == nil || c.Error() != "view 2 broke" {
			t.Errorf("Cause() = %v, want the first Abort's error", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Abort did not release the waiting side")
	}
	_ = l
	for _, tc := range []struct {
		view int
		z    *G.Node
		want string
	}{
		{2, z, "want 0 or 1"},
		{1, nil, "no node"},
		{1, G.NewVector(g, tensor.Float32, G.WithShape(3), G.WithName("v")), "B×d"},
	} {
		if _, err := a.Side(tc.view, tc.z); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Side(%d, %v): %v, want %q", tc.view, tc.z, err, tc.want)
		}
	}
	if _, err := NewAcross(Config{Kind: "nope"}); err == nil {
		t.Error("NewAcross of an unknown loss: no error")
	}
}

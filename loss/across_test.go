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

// TestAcrossGradReusesPrealloc: a view's gradient op writes into a
// preallocated B×d value of the right dtype (no allocation a step) with the
// values Do allocates, and allocates when the value does not fit.
func TestAcrossGradReusesPrealloc(t *testing.T) {
	const b, d = 6, 4
	r := rand.New(rand.NewPCG(9, 10))
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		a, err := NewAcross(Config{Kind: KindInfoNCE, Form: FormGraphCL, Temperature: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		var zs [2]*tensor.Dense
		done := make(chan error, 2)
		for v := range 2 {
			z := make([]float64, b*d)
			for i := range z {
				z[i] = r.NormFloat64()
			}
			zs[v] = denseOf(dt, z, b, d)
			go func() { done <- a.arrive(v, zs[v]) }()
		}
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		var scale G.Value = G.NewF64(0.5)
		if dt == tensor.Float32 {
			scale = G.NewF32(0.5)
		}
		for v := range 2 {
			op := acrossGradOp{a: a, view: v}
			want, err := op.Do(zs[v], scale)
			if err != nil {
				t.Fatal(err)
			}
			pre := tensor.New(tensor.Of(dt), tensor.WithShape(b, d))
			got, err := op.UsePreallocDo(pre, zs[v], scale)
			if err != nil {
				t.Fatal(err)
			}
			if got != G.Value(pre) {
				t.Errorf("%v view %d: a fitting prealloc was not used", dt, v)
			}
			wf, gf := valuesOf(want), valuesOf(got)
			if !slices.Equal(wf, gf) {
				t.Errorf("%v view %d: prealloc values %v, Do's %v", dt, v, gf, wf)
			}
			wrong := tensor.New(tensor.Of(dt), tensor.WithShape(d, b))
			if got, err := op.UsePreallocDo(wrong, zs[v], scale); err != nil || got == G.Value(wrong) {
				t.Errorf("%v view %d: a %v prealloc for a %d×%d gradient was used (err %v)", dt, v, wrong.Shape(), b, d, err)
			}
		}
	}
}

// valuesOf returns a float32 or float64 value's data as float64s.
func valuesOf(v G.Value) []float64 {
	switch x := v.Data().(type) {
	case []float64:
		return append([]float64(nil), x...)
	case []float32:
		return to64(x)
	}
	return nil
}

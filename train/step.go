package train

// The step machinery the methods share: the expression graph of a step and
// its arena (newStepGraph), two views run at once (bothViews, runBoth), the
// sum of the two views' gradients (sumGrads), the loss's scalar read-out
// (scalarOf) and the step of a loss of two views' projections on one graph
// (contrastiveStep, viewsResult).

import (
	"fmt"
	"sync"

	G "gorgonia.org/gorgonia"

	"github.com/batchsampler-go/batchsampler/internal/gop"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model/ops"
)

// machineMu is held while a tape machine of a view's graph is made while
// the other view's may be (newViewMachine): Gorgonia's
// NewTapeMachine sets the engine of every node's value, and both views'
// graphs hold the model's parameter tensors.
var machineMu sync.Mutex

// viewsResult is the StepResult of a two-view step after its machines ran:
// the loss node's value, the gradients gs and copies of both views'
// projections.
func viewsResult(l *G.Node, proj [2]*G.Node, gs [][]float32) (StepResult, error) {
	lv, err := scalarOf(l.Value())
	if err != nil {
		return StepResult{}, err
	}
	p := proj[0].Value().Data().([]float32)
	p2 := proj[1].Value().Data().([]float32)
	return StepResult{Loss: lv, Grads: gs, Proj: append([]float32(nil), p...), ProjDim: proj[0].Shape()[1], Proj2: append([]float32(nil), p2...)}, nil
}

// contrastiveStep adds the loss of the two views' projections to eg, runs
// the forward and backward pass, and returns the loss, the gradients that
// grads reads after the run, and both views' projections.
func contrastiveStep(eg *G.ExprGraph, lc loss.Config, proj [2]*G.Node, learnables G.Nodes, grads func() ([][]float32, error)) (StepResult, error) {
	l, err := loss.Build(lc, proj[0], proj[1])
	if err != nil {
		return StepResult{}, fmt.Errorf("loss: %w", err)
	}
	if _, err := G.Grad(l, learnables...); err != nil {
		return StepResult{}, fmt.Errorf("gradient: %w", err)
	}
	vm := G.NewTapeMachine(eg)
	defer gop.CloseMachine(vm)
	if err := vm.RunAll(); err != nil {
		return StepResult{}, fmt.Errorf("run step: %w", err)
	}
	gs, err := grads()
	if err != nil {
		return StepResult{}, err
	}
	return viewsResult(l, proj, gs)
}

// stepArenas is false only in tests that compare steps with and without
// arenas.
var stepArenas = true

// newStepGraph returns a new expression graph for one training step whose
// ops take their float32 outputs from *arena (created on first use), and
// the function that takes them back once the step's results are copied
// out: the next step reuses that memory instead of allocating its own (see
// ops.Arena).
func newStepGraph(arena **ops.Arena) (*G.ExprGraph, func(), error) {
	if !stepArenas {
		return G.NewGraph(), func() {}, nil
	}
	if *arena == nil {
		*arena = ops.NewArena()
	}
	eg := G.NewGraph()
	if err := (*arena).Attach(eg); err != nil {
		return nil, nil, fmt.Errorf("step graph: %w", err)
	}
	return eg, (*arena).Release, nil
}

func scalarOf(v G.Value) (float64, error) {
	switch x := v.Data().(type) {
	case float32:
		return float64(x), nil
	case float64:
		return x, nil
	case []float32:
		if len(x) == 1 {
			return float64(x[0]), nil
		}
	case []float64:
		if len(x) == 1 {
			return x[0], nil
		}
	}
	return 0, fmt.Errorf("loss is not a scalar: %v", v)
}

// sumGrads writes a[k] + b[k] into dst[k] for every parameter k (a copy of
// the one given when the other is nil) and returns dst, grown as needed.
func sumGrads(dst, a, b [][]float32) [][]float32 {
	if len(dst) != len(a) {
		dst = make([][]float32, len(a))
	}
	for k := range a {
		switch {
		case a[k] == nil && b[k] == nil:
			dst[k] = nil
			continue
		case a[k] == nil:
			dst[k] = append(dst[k][:0], b[k]...)
			continue
		case b[k] == nil:
			dst[k] = append(dst[k][:0], a[k]...)
			continue
		}
		if len(dst[k]) != len(a[k]) {
			dst[k] = make([]float32, len(a[k]))
		}
		d, y := dst[k], b[k][:len(a[k])]
		for i, x := range a[k] {
			d[i] = x + y[i]
		}
	}
	return dst
}

// bothViews runs the two views of a step at the same time, f(0) on the
// calling goroutine and f(1) on another, and returns the error of the view
// that failed first (nil when neither did). abort, when not nil, is called
// with that error as soon as it happens: a view waiting for the other at
// their exchange (ops.Exchange, loss.Across) then returns instead of
// waiting for ever. It is the one way the methods run two views at once:
// GraphCL's two step graphs meeting at the loss, SimCLR's compiled graphs
// swapping their projections, MoCo v3's key and online graphs (runBoth).
func bothViews(f func(v int) error, abort func(error)) error {
	var (
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() {
			first = err
			if abort != nil {
				abort(err)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f(1); err != nil {
			fail(err)
		}
	}()
	if err := f(0); err != nil {
		fail(err)
	}
	<-done
	return first
}

// runBoth runs two views' compiled machines at the same time (bothViews);
// the error names the view.
func runBoth(vms [2]G.VM, abort func(error)) error {
	return bothViews(func(v int) error {
		if err := vms[v].RunAll(); err != nil {
			return fmt.Errorf("view %d: %w", v+1, err)
		}
		return nil
	}, abort)
}

// viewGraphs are the two expression graphs and tape machines of a step (or
// an embedding pass) run with each view on a graph of its own: GraphCL's
// stepAcross, MVGRL's stepViews and embedChunk. The values of their nodes
// stay readable after run until close releases the machines and arenas.
type viewGraphs struct {
	vms      [2]G.VM
	releases [2]func()
}

// run builds view v's graph with build, on a graph whose op outputs
// arenas[v] lends (newStepGraph), and runs its machine, the two views at
// once (bothViews: the error is that of the view that failed first, and
// abort, when not nil, is called with it). build makes the view's ops and,
// for a step, their gradients (G.Grad).
func (w *viewGraphs) run(arenas *[2]*ops.Arena, build func(v int, eg *G.ExprGraph) error, abort func(error)) error {
	return bothViews(func(v int) error {
		eg, release, err := newStepGraph(&arenas[v])
		if err != nil {
			return err
		}
		w.releases[v] = release
		if err := build(v, eg); err != nil {
			return err
		}
		w.vms[v] = newViewMachine(eg)
		if err := w.vms[v].RunAll(); err != nil {
			return fmt.Errorf("run view %d: %w", v+1, err)
		}
		return nil
	}, abort)
}

// close releases both views' machines and arenas (those that were made).
func (w *viewGraphs) close() {
	for v := range w.vms {
		gop.CloseMachine(w.vms[v])
		if w.releases[v] != nil {
			w.releases[v]()
		}
	}
}

// newViewMachine is G.NewTapeMachine for a view's graph made while the
// other view's is (see machineMu).
func newViewMachine(eg *G.ExprGraph) G.VM {
	machineMu.Lock()
	defer machineMu.Unlock()
	return G.NewTapeMachine(eg)
}

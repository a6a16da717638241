package train

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/model/ops"
)

// TestMVGRLViewsMatchOneGraph: MVGRL's step with the two views on two
// graphs run at once (stepViews) gives the loss, every parameter's
// gradient and the projections of the step on one graph (stepOneGraph)
// bit for bit, over steps that move the parameters, for both objectives
// and with 1 and 2 threads.
func TestMVGRLViewsMatchOneGraph(t *testing.T) {
	batches := [][]int{{5, 17, 3, 40, 41, 88}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 60, 61}, {89, 2, 2, 30}}
	for _, sets := range [][]string{tinyMVGRL, tinyMVGRLNCE} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", sets[len(sets)-1], procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				ms := tinyMVGRLModels(t, 2, 3, sets...)
				for s, idx := range batches {
					b, err := ms[0].batch(idx)
					if err != nil {
						t.Fatal(err)
					}
					views, err := ms[0].stepViews(b)
					if err != nil {
						t.Fatal(err)
					}
					one, err := ms[1].stepOneGraph(b)
					if err != nil {
						t.Fatal(err)
					}
					if math.Float64bits(views.Loss) != math.Float64bits(one.Loss) {
						t.Fatalf("step %d: loss %v, on one graph %v", s, views.Loss, one.Loss)
					}
					if !sameFloat32Bits(views.Proj, one.Proj) || views.ProjDim != one.ProjDim {
						t.Fatalf("step %d: projections differ from the one graph's", s)
					}
					params := ms[0].Params()
					if len(views.Grads) != len(params) || len(one.Grads) != len(params) {
						t.Fatalf("step %d: %d and %d gradients for %d parameters", s, len(views.Grads), len(one.Grads), len(params))
					}
					for k, p := range params {
						if len(views.Grads[k]) != p.Value.DataSize() || !sameFloat32Bits(views.Grads[k], one.Grads[k]) {
							t.Fatalf("step %d: gradient of %s differs from the one graph's", s, p.Name)
						}
					}
					// Move both models' parameters alike, so that the next
					// step starts elsewhere.
					for i, m := range ms {
						g := [2][][]float32{views.Grads, one.Grads}[i]
						for k, p := range m.Params() {
							v := p.Value.Float32s()
							for j := range v {
								v[j] -= 0.05 * g[k][j]
							}
						}
					}
				}
			})
		}
	}
}

// sameFloat32Bits reports whether a and b hold the same bits.
func sameFloat32Bits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestMVGRLViewsOneFails: when one view's graph cannot be built, the other
// (waiting at the exchange) is released and the step returns the failing
// view's error, whichever view it is; the next step runs.
func TestMVGRLViewsOneFails(t *testing.T) {
	g := tinyMVGRLModels(t, 1, 1, tinyMVGRL...)[0]
	good, err := g.batch([]int{4, 8, 15, 16, 23, 42})
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := ops.NewWeightedCSR(1, 1, []int32{0, 1}, []int32{0}, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	for v := range 2 {
		bad := &model.ViewBatch{NumGraphs: good.NumGraphs, NumNodes: good.NumNodes, FeatDim: good.FeatDim, X: good.X,
			GraphPtr: good.GraphPtr, Views: good.Views, Pool: good.Pool, OneHot: good.OneHot}
		bad.Views[v] = wrong // view v's propagation does not fit the batch
		done := make(chan error, 1)
		go func() { _, err := g.stepViews(bad); done <- err }()
		select {
		case err := <-done:
			if want := fmt.Sprintf("view %d", v+1); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("view %d bad: %v, want an error naming %q", v+1, err, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("view %d bad: the step hangs", v+1)
		}
	}
	if _, err := g.stepViews(good); err != nil {
		t.Errorf("a step after the failures: %v", err)
	}
}

// TestMVGRLEmbedViewsMatchOneGraph: the evaluation embedding with each
// view's graph-head output on a graph of its own, the two at once, is the
// one-graph embedding (model.EmbedIn) bit for bit, with 1 and 2 threads,
// for both objectives' models after a step.
func TestMVGRLEmbedViewsMatchOneGraph(t *testing.T) {
	for _, sets := range [][]string{tinyMVGRL, tinyMVGRLNCE} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/GOMAXPROCS=%d", sets[len(sets)-1], procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				g := tinyMVGRLModels(t, 1, 5, sets...)[0]
				res, err := g.Step([]int{1, 2, 3, 50, 60, 70, 80}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for k, p := range g.Params() {
					v := p.Value.Float32s()
					for j := range v {
						v[j] -= 0.05 * res.Grads[k][j]
					}
				}
				views, err := g.Embed("train", "encoder")
				if err != nil {
					t.Fatal(err)
				}
				viewsAtOnce = false
				defer func() { viewsAtOnce = true }()
				one, err := g.Embed("train", "encoder")
				if err != nil {
					t.Fatal(err)
				}
				if views.N != 90 || views.N != one.N || views.D != one.D || len(views.Data) != views.N*views.D {
					t.Fatalf("embeddings %d×%d (%d values), on one graph %d×%d", views.N, views.D, len(views.Data), one.N, one.D)
				}
				if !sameFloat32Bits(views.Data, one.Data) {
					t.Fatal("the embedding differs from the one graph's")
				}
			})
		}
	}
}

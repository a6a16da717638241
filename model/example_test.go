package model_test

import (
	"fmt"
	"log"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/optim"
	"gorgonia.org/gorgonia"
)

// ring returns a cycle of n nodes with a one-hot label feature (dim 3).
func ring(n int) *data.Graph {
	g := &data.Graph{NumNodes: n, FeatDim: 3, X: make([]float32, n*3)}
	for v := 0; v < n; v++ {
		u, w := int32(v), int32((v+1)%n)
		g.Edges = append(g.Edges, [2]int32{min(u, w), max(u, w)})
		g.X[v*3+v%3] = 1
	}
	return g
}

// Example shows one GraphCL-style training step: two views of a batch are
// encoded and projected through one Bound, a loss is differentiated, Adam
// steps and the BatchNorm running statistics are updated; then the whole
// set is embedded in evaluation mode.
func Example() {
	graphs := []*data.Graph{ring(4), ring(5), ring(6), ring(7)}
	view1, err := model.PackGraphs(graphs)
	if err != nil {
		log.Fatal(err)
	}
	// A stand-in for an augmented view: every graph without its last edge.
	var dropped []*data.Graph
	for _, g := range graphs {
		c := g.Clone()
		c.Edges = c.Edges[:len(c.Edges)-1]
		dropped = append(dropped, c)
	}
	view2, err := model.PackGraphs(dropped)
	if err != nil {
		log.Fatal(err)
	}

	m, err := model.NewGIN(model.GINConfig{InDim: 3}, 1) // hidden 32, 3 layers
	if err != nil {
		log.Fatal(err)
	}
	// The optimizer (package optim) sees the trainable parameters, in the
	// order of the gradients b.Grads returns.
	var params []optim.Param
	for _, p := range m.Params() {
		if p.Trainable {
			params = append(params, optim.Param{Name: p.Name, Value: p.Value.Float32s()})
		}
	}
	opt := optim.NewAdam(params, 0.01)

	// One step: a new graph per step (batches change size).
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	var proj []*gorgonia.Node
	for _, v := range []*model.GraphBatch{view1, view2} {
		emb, err := b.Encode(v, true)
		if err != nil {
			log.Fatal(err)
		}
		p, err := b.Project(emb)
		if err != nil {
			log.Fatal(err)
		}
		proj = append(proj, p)
	}
	// A simple alignment loss Σ (p₁ − p₂)²; the loss package has InfoNCE.
	loss := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Sub(proj[0], proj[1]))))))
	if _, err := gorgonia.Grad(loss, b.Learnables()...); err != nil {
		log.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		log.Fatal(err)
	}
	grads, err := b.Grads()
	if err != nil {
		log.Fatal(err)
	}
	if err := opt.Step(grads); err != nil {
		log.Fatal(err)
	}
	fmt.Println("BatchNorm calls to fold in:", b.PendingStats())
	if err := b.CommitStats(); err != nil {
		log.Fatal(err)
	}

	// Evaluation mode, no graph: the embeddings the sampler and the SVM use.
	emb, err := m.Embed(view1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("gradients:", len(grads), "steps:", opt.Steps())
	fmt.Printf("embeddings: %d × %d\n", view1.NumGraphs, len(emb)/view1.NumGraphs)
	// Output:
	// BatchNorm calls to fold in: 6
	// gradients: 22 steps: 1
	// embeddings: 4 × 96
}

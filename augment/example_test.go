package augment_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
)

// A 30-node cycle with one feature per node.
func cycle30() *data.Graph {
	g := &data.Graph{NumNodes: 30, FeatDim: 1, X: make([]float32, 30)}
	for v := range int32(30) {
		g.Edges = append(g.Edges, [2]int32{min(v, (v+1)%30), max(v, (v+1)%30)})
		g.X[v] = 1
	}
	return g
}

func ExampleNew() {
	aug, err := augment.New([]augment.Spec{
		{Kind: "node_drop", Ratio: 0.1},
		{Kind: "edge_remove", Ratio: 0.1},
	}, "compose")
	if err != nil {
		fmt.Println(err)
		return
	}
	rng := rand.New(rand.NewPCG(1, 2)) // one per goroutine
	g := cycle30()
	view := aug.Augment(g, rng)
	fmt.Println(aug)
	fmt.Println("input:", g.NumNodes, "nodes,", len(g.Edges), "edges")
	fmt.Println("view: ", view.NumNodes, "nodes, valid:", view.Validate() == nil)

	_, err = augment.New([]augment.Spec{{Kind: "subgraph", Ratio: 0}}, "random_choice")
	fmt.Println(err)
	// Output:
	// compose(node_drop(0.1), edge_remove(0.1))
	// input: 30 nodes, 30 edges
	// view:  27 nodes, valid: true
	// augment.New: specs[0].ratio = 0 for kind "subgraph": want a value in (0, 1] (the fraction of nodes kept)
}

func ExampleGraphCLDefault() {
	aug := augment.GraphCLDefault()
	rng := rand.New(rand.NewPCG(7, 0))
	g := cycle30()
	for range 3 {
		view := aug.Augment(g, rng)
		fmt.Println(view.Validate() == nil, view.NumNodes <= g.NumNodes)
	}
	fmt.Println(aug)
	// Output:
	// true true
	// true true
	// true true
	// without_isolated(random_choice(node_drop(0.1), edge_remove(0.1), subgraph(0.2), attr_mask(0.1)))
}

package data_test

import (
	"fmt"
	"log"

	"github.com/batchsampler-go/batchsampler/data"
)

// ExampleReadTU reads the small TU-format fixture and gives it the features
// GraphCL uses (one-hot node labels, here followed by the node attributes).
func ExampleReadTU() {
	s, err := data.ReadTU("testdata/tu/TOY", "TOY")
	if err != nil {
		log.Fatal(err)
	}
	if err := s.SetFeatures(data.FeatureOptions{Kind: "auto"}); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d graphs, %d nodes, %d edges, classes %v, features %d\n",
		s.Name, len(s.Graphs), s.TotalNodes(), s.TotalEdges(), s.ClassValues, s.FeatDim)
	g := s.Graphs[1]
	fmt.Println("graph 1 edges:", g.Edges, "class:", s.ClassValues[g.Label])
	// Output:
	// TOY: 4 graphs, 11 nodes, 9 edges, classes [-1 2 5], features 6
	// graph 1 edges: [[0 1] [1 2] [2 2] [2 3]] class: -1
}

// ExampleGenerateGraphs makes the synthetic set used by the demo.
func ExampleGenerateGraphs() {
	s, err := data.GenerateGraphs(data.SynthConfig{Graphs: 100, Classes: 4, MinNodes: 20, MaxNodes: 40, NodeLabels: 3, Noise: 0.05}, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Name, len(s.Graphs), "graphs, class counts", s.ClassCounts())
	for c := 0; c < s.NumClasses; c++ {
		fmt.Printf("class %d: %s\n", c, data.SynthFamily(c))
	}
	// Output:
	// synthetic 100 graphs, class counts [25 25 25 25]
	// class 0: cycle
	// class 1: tree
	// class 2: communities
	// class 3: wheel
}

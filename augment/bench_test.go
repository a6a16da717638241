package augment

import (
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

// The benchmarks run each augmenter on molecule(): 30 nodes, 33 edges, 7
// features, node labels, 3 attributes and edge labels per graph (the size of
// a MUTAG graph, with every optional field present).
func BenchmarkAugment(b *testing.B) {
	g := molecule()
	for _, bc := range []struct {
		name string
		aug  GraphAugmenter
	}{
		{"Identity", Identity{}},
		{"NodeDrop0.1", NodeDrop{Ratio: 0.1}},
		{"EdgeRemove0.1", EdgeRemove{Ratio: 0.1}},
		{"EdgePerturb0.1", EdgePerturb{Ratio: 0.1}},
		{"Subgraph0.2", Subgraph{Ratio: 0.2}},
		{"Subgraph0.8", Subgraph{Ratio: 0.8}},
		{"AttrMask0.1", AttrMask{Ratio: 0.1}},
		{"GraphCLDefault", GraphCLDefault()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rng := newRNG(1)
			b.ReportAllocs()
			for b.Loop() {
				bc.aug.Augment(g, rng)
			}
		})
	}
	b.Run("DropIsolated", func(b *testing.B) {
		h := mkGraph(30, pathEdges(20)) // nodes 20..29 isolated
		b.ReportAllocs()
		for b.Loop() {
			DropIsolated(h)
		}
	})
}

// BenchmarkBatch128 is the trainer's load: one view of each of 128 graphs.
func BenchmarkBatch128(b *testing.B) {
	gs := make([]*data.Graph, 128)
	for i := range gs {
		gs[i] = molecule()
	}
	aug := GraphCLDefault()
	rng := newRNG(1)
	b.ReportAllocs()
	for b.Loop() {
		for _, g := range gs {
			aug.Augment(g, rng)
		}
	}
}

package data

import "testing"

// BenchmarkPPRDiffusionStandin computes the PPR diffusion (MVGRL's
// settings for REDDIT-BINARY: α 0.2, ε 1e-4, top_k 64) of every fifth
// graph of the REDDIT-sized stand-in of scripts/standin-reddit-mvgrl.yaml
// (2,000 synthetic graphs of 60-800 nodes, 10% rewired edges): 400 graphs,
// nearly all above 256 nodes, so on the truncated series.
func BenchmarkPPRDiffusionStandin(b *testing.B) {
	set, err := GenerateGraphs(SynthConfig{Graphs: 2000, Classes: 2, MinNodes: 60, MaxNodes: 800, Noise: 0.1}, 7)
	if err != nil {
		b.Fatal(err)
	}
	var graphs []*Graph
	nodes := 0
	for i := 0; i < len(set.Graphs); i += 5 {
		graphs = append(graphs, set.Graphs[i])
		nodes += set.Graphs[i].NumNodes
	}
	opt := DiffusionOptions{Alpha: 0.2, Eps: 1e-4, TopK: 64}
	for b.Loop() {
		for _, g := range graphs {
			if _, err := PPRDiffusion(g, opt); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(nodes)*float64(b.N)/b.Elapsed().Seconds(), "nodes/s")
}

package sampler_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// A training loop with BatchSampler: every t steps the loop embeds the whole
// dataset and hands the matrix to Refresh (Algorithm 2 rebuilds the proximity
// graph); every step it sets the progress (α decays from 0.2 to 0.05) and
// takes the next batch, a random walk with restart on the graph
// (Algorithm 3).
func ExampleBatchSampler() {
	// Stand-in for the encoder's embeddings of N = 2000 instances of C = 10
	// classes (labels are used only for the diagnostics).
	emb, labels, err := sampler.GaussianMixture(sampler.MixtureConfig{N: 2000, C: 10, D: 16, Between: 1, Within: 1.5}, 1)
	if err != nil {
		panic(err)
	}
	s, err := sampler.NewBatchSampler(sampler.Config{
		BatchSize:    64,  // B
		M:            200, // candidates drawn per node
		K:            10,  // neighbours kept per node
		RefreshEvery: 50,  // t
		// Alpha left zero: the paper's linear 0.2 → 0.05.
	}, emb.N, 42)
	if err != nil {
		panic(err)
	}
	uniform, _ := sampler.NewUniform(emb.N, 64, 42)

	steps := 3 * s.BatchesPerEpoch() // as many iterations as 3 Uniform epochs
	var fnBS, fnUniform float64
	for step := 0; step < steps; step++ {
		if step%s.RefreshEvery() == 0 {
			// In training: embed the dataset with the current encoder first.
			if err := s.Refresh(emb); err != nil {
				panic(err)
			}
		}
		s.SetProgress(step, steps)
		batch := s.Next() // B distinct instance indices; batch[0] is the walk's start
		fnBS += sampler.FalseNegativeRatio(batch, labels)
		fnUniform += sampler.FalseNegativeRatio(uniform.Next(), labels)
	}
	fmt.Printf("%d steps of B=%d, α now %.2f\n", steps, s.BatchSize(), s.Alpha())
	fmt.Printf("more same-class pairs than Uniform: %v\n", fnBS > fnUniform)
	// Output:
	// 96 steps of B=64, α now 0.05
	// more same-class pairs than Uniform: true
}

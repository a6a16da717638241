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

// Driving a sampler from any Go loop exactly as package train does: a Spec
// (the YAML schema of a config file's sampler) builds the sampler and a
// Driver applies the refresh policy. Here BatchSampler with M = 200
// candidates, K = 10 neighbours, α from 0.2 to 0.05 and a refresh every
// t = 25 steps from "cached" embeddings: the dataset is embedded once, for
// the refresh before step 0; the later refreshes use the projections the
// loop observed during training.
func ExampleDriver() {
	emb, labels, err := sampler.GaussianMixture(sampler.MixtureConfig{N: 2000, C: 10, D: 16, Between: 1, Within: 1.5}, 1)
	if err != nil {
		panic(err)
	}
	spec := sampler.Spec{
		Kind: "batchsampler", M: 200, K: 10, Walk: "rwr",
		Alpha:        sampler.AlphaSchedule{Start: 0.2, End: 0.05},
		RefreshEvery: 25, Embedding: "cached",
	}
	if err := spec.Validate("sampler"); err != nil {
		panic(err)
	}
	s, err := spec.New(emb.N, 64, 42) // N instances, B = 64, seed
	if err != nil {
		panic(err)
	}
	calls := 0
	embed := func(which string) (sampler.Embeddings, error) {
		// In training: the current model's "projection" (or "encoder")
		// output for all N instances, in evaluation mode.
		calls++
		return emb, nil
	}
	d, err := sampler.NewDriver(s, sampler.DriverOptions{Embedding: spec.Embedding, Embed: embed, Labels: labels})
	if err != nil {
		panic(err)
	}
	const total = 100 // T steps
	for step := 0; step < total; step++ {
		rep, err := d.BeforeStep(step, total) // α schedule; refresh when due
		if err != nil {
			panic(err)
		}
		if rep != nil {
			fmt.Printf("before step %d: graph rebuilt from %s embeddings\n", rep.Step, rep.Source)
		}
		batch := d.Next() // B distinct instance indices
		// ... a training step on batch; its first view's projections:
		proj := make([]float32, 0, len(batch)*emb.D)
		for _, i := range batch {
			proj = append(proj, emb.Row(i)...)
		}
		if _, err := d.Observe(batch, proj, emb.D); err != nil {
			panic(err)
		}
	}
	fmt.Printf("embedded the dataset %d time(s); α now %.2f\n", calls, s.(*sampler.BatchSampler).Alpha())
	// Output:
	// before step 0: graph rebuilt from projection embeddings
	// before step 25: graph rebuilt from cached embeddings
	// before step 50: graph rebuilt from cached embeddings
	// before step 75: graph rebuilt from cached embeddings
	// embedded the dataset 1 time(s); α now 0.05
}

// With t = 0 (refresh_every: 0) the graph is built once, before training.
func ExampleDriver_refreshOnce() {
	emb, _, err := sampler.GaussianMixture(sampler.MixtureConfig{N: 500, C: 5, D: 8, Between: 1, Within: 1}, 1)
	if err != nil {
		panic(err)
	}
	s, err := sampler.Spec{Kind: "batchsampler", M: 100, K: 10, Alpha: sampler.AlphaSchedule{Start: 0.2, Constant: true}}.New(emb.N, 32, 7)
	if err != nil {
		panic(err)
	}
	d, err := sampler.NewDriver(s, sampler.DriverOptions{Embed: func(string) (sampler.Embeddings, error) { return emb, nil }})
	if err != nil {
		panic(err)
	}
	for step := 0; step < 50; step++ {
		rep, err := d.BeforeStep(step, 50)
		if err != nil {
			panic(err)
		}
		if rep != nil {
			fmt.Println("refresh before step", rep.Step)
		}
		d.Next()
	}
	// Output:
	// refresh before step 0
}

// The global batch samplers of docs/batch-composition.md, built from their
// Spec as a config's `samplers:` entry builds them, each refreshed from the
// embeddings and compared by the false-negative ratio of its batches (the
// share of same-class pairs): kmeans puts a cluster in a batch, antikmeans
// spreads every cluster over the batches, GCBS cuts a bandwidth-minimising
// order, spectral clusters k·B instances into k batches, OSGD keeps the q
// highest-loss of k random batches.
func ExampleSpec_global() {
	emb, labels, err := sampler.GaussianMixture(sampler.MixtureConfig{N: 640, C: 10, D: 16, Between: 1, Within: 0.5}, 1)
	if err != nil {
		panic(err)
	}
	for _, spec := range []sampler.Spec{
		{Kind: "uniform"},
		{Kind: "antikmeans"}, // C = B clusters, one of each per batch
		{Kind: "osgd", Draw: 4, Keep: 1, Temperature: 0.5}, // the q = 1 highest-loss of k = 4
		{Kind: "gcbs", K: 10},                              // RCM order of the 10-NN graph
		{Kind: "spectral", Draw: 4, Temperature: 0.5},      // 4 batches from 4·B instances
		{Kind: "kmeans"},                                   // C = ⌊N/B⌋ clusters, a batch from one
	} {
		s, err := spec.New(emb.N, 64, 42)
		if err != nil {
			panic(err)
		}
		if r, ok := s.(sampler.Refresher); ok {
			if err := r.Refresh(emb); err != nil {
				panic(err)
			}
		}
		var fn float64
		steps := 3 * s.BatchesPerEpoch()
		for i := 0; i < steps; i++ {
			fn += sampler.FalseNegativeRatio(s.Next(), labels)
		}
		fmt.Printf("%-10s false-negative ratio %.1f\n", spec.Kind, fn/float64(steps))
	}
	// Output:
	// uniform    false-negative ratio 0.1
	// antikmeans false-negative ratio 0.1
	// osgd       false-negative ratio 0.1
	// gcbs       false-negative ratio 0.8
	// spectral   false-negative ratio 0.3
	// kmeans     false-negative ratio 0.9
}

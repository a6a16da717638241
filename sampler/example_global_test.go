package sampler_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// blobs returns N = 4·per embeddings in 4 tight groups (group i around
// axis i) and each one's group.
func blobs(per int) (sampler.Embeddings, []int) {
	e := sampler.Embeddings{N: 4 * per, D: 4, Data: make([]float32, 16*per)}
	labels := make([]int, e.N)
	for i := range e.N {
		g := i % 4
		labels[i] = g
		row := e.Row(i)
		row[g] = 1
		row[(g+1)%4] = 0.01 * float32(i%7)
	}
	return e, labels
}

// GCBS orders the instances by reverse Cuthill–McKee on their kNN graph
// (here k = 7: each group of 8 is a component) and cuts the order into
// batches of B: each batch is one group.
func ExampleGCBS() {
	e, labels := blobs(8)
	s, err := sampler.NewGCBS(e.N, 8, 7, 0, 1) // N = 32, B = 8, k = 7, t = 0, seed
	if err != nil {
		panic(err)
	}
	if err := s.Refresh(e); err != nil {
		panic(err)
	}
	fmt.Println("bandwidth of the permuted graph:", s.Bandwidth())
	for range s.BatchesPerEpoch() {
		fmt.Printf("%.0f ", sampler.FalseNegativeRatio(s.Next(), labels))
	}
	fmt.Println("(share of same-group pairs per batch)")
	// Output:
	// bandwidth of the permuted graph: 7
	// 1 1 1 1 (share of same-group pairs per batch)
}

// Spectral draws k·B instances a round and clusters them into k batches of
// exactly B (here k = 4 = ⌊N/B⌋: a round is the dataset, and its four
// clusters are the groups).
func ExampleSpectral() {
	e, labels := blobs(8)
	s, err := sampler.NewSpectral(e.N, 8, 4, 0.5, 0, 1) // N, B, k, τ, t, seed
	if err != nil {
		panic(err)
	}
	if err := s.Refresh(e); err != nil {
		panic(err)
	}
	for range s.BatchesPerEpoch() {
		b := s.Next()
		fmt.Printf("%d:%.0f ", len(b), sampler.FalseNegativeRatio(b, labels))
	}
	fmt.Println()
	// Output:
	// 8:1 8:1 8:1 8:1
}

// OSGD scores k random batches by their InfoNCE loss on the embeddings
// and keeps the q of highest loss: the batches whose instances are most
// alike (more same-group pairs than random batches of the same data).
func ExampleOSGD() {
	e, labels := blobs(64)
	s, err := sampler.NewOSGD(e.N, 16, 16, 1, 0.5, 0, 1) // N = 256, B = 16, k = 16, q = 1, τ, t, seed
	if err != nil {
		panic(err)
	}
	if err := s.Refresh(e); err != nil {
		panic(err)
	}
	u, _ := sampler.NewUniform(e.N, 16, 1)
	var fnOSGD, fnUniform float64
	for range 64 {
		fnOSGD += sampler.FalseNegativeRatio(s.Next(), labels)
		fnUniform += sampler.FalseNegativeRatio(u.Next(), labels)
	}
	fmt.Println("more same-group pairs than Uniform:", fnOSGD > fnUniform)
	// Output:
	// more same-group pairs than Uniform: true
}

// ClusterBatches both ways on 4 groups of 8: together (kmeans, B = 8, C =
// ⌊N/B⌋ = 4) a batch is a group; apart (antikmeans, B = 4, C = 4) no
// cluster appears twice in a batch, so a batch holds one of each group.
func ExampleClusterBatches() {
	e, labels := blobs(8)
	for _, apart := range []bool{false, true} {
		b := 8
		if apart {
			b = 4
		}
		s, err := sampler.NewClusterBatches(e.N, b, 4, apart, 0, 1) // N, B, C, apart, t, seed
		if err != nil {
			panic(err)
		}
		if err := s.Refresh(e); err != nil {
			panic(err)
		}
		fmt.Printf("apart=%v:", apart)
		for range s.BatchesPerEpoch() {
			fmt.Printf(" %.0f", sampler.FalseNegativeRatio(s.Next(), labels))
		}
		fmt.Println()
	}
	// Output:
	// apart=false: 1 1 1 1
	// apart=true: 0 0 0 0 0 0 0 0
}

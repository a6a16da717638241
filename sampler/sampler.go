// Package sampler forms the mini-batches of in-batch contrastive learning.
//
// A Sampler hands out batches of instance indices in [0, N). Uniform draws
// them from a fresh permutation every epoch; samplers that look at the data
// (kNN, BatchSampler) also implement Refresher and are given an embedding of
// the whole dataset every t iterations. The package has no dependency on
// Gorgonia: any Go training loop can use it.
//
// Where to find what (symbols and algorithm numbers as in the BatchSampler
// paper: N instances, batch size B, M candidates and K neighbours per node,
// restart probability α, graph refresh interval t; Algorithm 1 is the
// training loop, which batchsampler.go serves):
//   - proximity.go: Algorithm 2, the proximity graph (BuildProximityGraph),
//     and the exact kNN graph (BuildKNNGraph); their float32 GEMM is
//     internal/gemm's (SgemmPacked) and topk.go is their top-K kernel.
//   - walk.go: Algorithm 3, random walk with restart (and RW, BFS, DFS).
//   - batchsampler.go: BatchSampler (Config, epochs, Refresh, state);
//     schedule.go: the α schedule; knn.go: the kNN Sampler baseline.
//   - spec.go: Spec, a sampler as a config file describes it (YAML schema,
//     Validate, New); refresh.go: Driver, Algorithm 1's refresh policy
//     (SetProgress, a Refresh every t steps from fresh or cached
//     embeddings, timing, checkpoint state), the way package train runs a
//     sampler and any other Go loop can.
//   - diagnostics.go: false-negative ratio, in-batch cosine, graph
//     statistics; stats.go: the Gaussian-mixture comparison behind
//     cmd/samplerstats.
package sampler

import "encoding"

// Sampler yields mini-batches of distinct instance indices in [0, N).
//
// An epoch is BatchesPerEpoch consecutive calls of Next; the call after the
// last batch of an epoch starts the next epoch. Samplers are deterministic
// functions of their seed and of what they are given.
type Sampler interface {
	// N is the number of instances.
	N() int
	// BatchSize is B, the number of indices in a full batch.
	BatchSize() int
	// BatchesPerEpoch is the number of batches in one epoch.
	BatchesPerEpoch() int
	// Next returns the next batch. The slice is owned by the caller.
	Next() []int
	// State and SetState serialise everything that Next depends on (RNG
	// state, position in the epoch, graphs), so a resumed run continues
	// with exactly the batches an uninterrupted run would have drawn.
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Embeddings is an N×D row-major float32 matrix: one row per instance.
type Embeddings struct {
	N, D int
	Data []float32
}

// Row returns row i.
func (e Embeddings) Row(i int) []float32 { return e.Data[i*e.D : (i+1)*e.D] }

// Refresher is implemented by samplers that need embeddings of the whole
// dataset: the training loop calls Refresh before step s whenever
// RefreshEvery() > 0 and s%RefreshEvery() == 0 (and always before step 0);
// Driver does this (RefreshDue).
type Refresher interface {
	RefreshEvery() int
	Refresh(e Embeddings) error
}

// Scheduled is implemented by samplers whose behaviour changes over training
// (for instance a restart probability that decays). The loop calls SetProgress
// before every step with the 0-based step and the total number of steps.
type Scheduled interface {
	SetProgress(step, total int)
}

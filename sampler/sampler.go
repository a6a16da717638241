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
//     Validate, New; the published code's choices, `published: true`); refresh.go: Driver, Algorithm 1's refresh policy
//     (SetProgress, a Refresh every t steps from fresh or cached
//     embeddings, timing, checkpoint state), the way package train runs a
//     sampler and any other Go loop can.
//   - diagnostics.go: false-negative ratio, in-batch cosine, graph
//     statistics; stats.go: the Gaussian-mixture comparison behind
//     cmd/samplerstats.
//   - The global batch samplers compared in docs/batch-composition.md,
//     each refreshed from embeddings as BatchSampler is (rounds.go: their
//     shared queue of precomputed batches): gcbs.go, GCBS (reverse
//     Cuthill–McKee order of a kNN graph, rcm.go); spectral.go, Spectral
//     (Cho et al.'s even-sized spectral clustering; lanczos.go, kmeans.go:
//     KMeans, LinearSumAssignment, BalancedAssign); osgd.go, OSGD (the q
//     highest-loss of k random batches); clusterbatches.go, ClusterBatches
//     (k-means clusters together or apart).
package sampler

import (
	"encoding"
	"fmt"
)

// Sampler yields mini-batches of distinct instance indices in [0, N).
//
// An epoch is BatchesPerEpoch consecutive calls of Next; the call after the
// last batch of an epoch starts the next epoch. Samplers are deterministic
// functions of their seed and of what they are given.
//
// The short last batch: no batch has fewer than 2 instances (a contrastive
// loss needs a negative for every anchor). An epoch has ⌈N/B⌉ batches,
// except when N mod B = 1: the single instance left over would be a batch of
// its own, so it is merged into the epoch's last full batch, which then has
// B+1 instances, and the epoch has ⌊N/B⌋ batches. Nothing changes for any
// other N: Uniform's last batch holds the N mod B ≥ 2 instances left (or B).
// The samplers that build batches from the data (KNN, BatchSampler, and
// the global batch samplers GCBS, Spectral, OSGD, ClusterBatches) follow
// the same rule: an epoch has the same number of batches as Uniform's, each
// batch has B instances, and when N mod B = 1 the epoch's last batch (the
// ⌊N/B⌋-th) has B+1. The constructors require 2 ≤ B ≤ N.
type Sampler interface {
	// N is the number of instances.
	N() int
	// BatchSize is B, the number of indices in a full batch.
	BatchSize() int
	// BatchesPerEpoch is the number of batches in one epoch: ⌈N/B⌉, or
	// ⌊N/B⌋ when N mod B = 1 (the leftover instance joins the last batch,
	// which then has B+1 instances; see Sampler).
	BatchesPerEpoch() int
	// Next returns the next batch. The slice is owned by the caller.
	Next() []int
	// MarshalBinary and UnmarshalBinary save and restore everything that
	// Next depends on (RNG state, position in the epoch, graphs), so a
	// resumed run continues with exactly the batches an uninterrupted run
	// would have drawn.
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

// RefreshScheduler is implemented by a Refresher whose refreshes are not
// simply RefreshDue(s, RefreshEvery()): Driver then refreshes before step s
// when RefreshDueAt(s) (BatchSampler: no graph during a shuffled warmup
// epoch, the first at its end).
type RefreshScheduler interface {
	RefreshDueAt(step int) bool
}

// EpochCounter is implemented by samplers that count their own epochs
// (BatchSampler): SamplerEpoch returns the 0-based index of the epoch of the
// last batch handed out, and whether it tells more than the training loop's
// step/BatchesPerEpoch (covering epochs are longer than BatchesPerEpoch
// batches; a per-epoch α or a warmup epoch depends on it). Package train logs
// it as sampler_epoch when it does.
type EpochCounter interface {
	SamplerEpoch() (epoch int, own bool)
}

// Coverer is implemented by samplers whose epochs are walks over the
// instances rather than a permutation of them (BatchSampler, KNN and the
// global samplers): Coverage returns the share of the N instances covered
// by the batches of the epoch in progress (or of the epoch just finished,
// until the next batch). Package train logs it as coverage at an epoch's
// end and as final_coverage in a run's result.
type Coverer interface {
	Coverage() float64
}

// CoverageRecorder is a Coverer that keeps the coverage of every finished
// epoch (CoverageHistory, oldest first).
type CoverageRecorder interface {
	Coverer
	CoverageHistory() []float64
}

// Restarter is implemented by samplers that draw by random walks with
// restart (BatchSampler): Alpha returns the restart probability α of the
// batch last handed out, which a schedule may change over training.
// Package train logs it as alpha with every step.
type Restarter interface {
	Alpha() float64
}

// Grapher is implemented by samplers that draw from a proximity graph they
// build at every refresh (BatchSampler): Graph returns the graph of the
// last refresh, nil before the first. A refresh report then carries the
// graph's neighbour statistics (RefreshReport.Graph).
type Grapher interface {
	Graph() *Graph
}

var (
	_ Grapher          = (*BatchSampler)(nil)
	_ CoverageRecorder = (*BatchSampler)(nil)
	_ CoverageRecorder = (*KNN)(nil)
	_ CoverageRecorder = (*GCBS)(nil)
	_ CoverageRecorder = (*Spectral)(nil)
	_ CoverageRecorder = (*OSGD)(nil)
	_ CoverageRecorder = (*ClusterBatches)(nil)
	_ Restarter        = (*BatchSampler)(nil)
)

// Scheduled is implemented by samplers whose behaviour changes over training
// (for instance a restart probability that decays). The loop calls SetProgress
// before every step with the 0-based step and the total number of steps.
type Scheduled interface {
	SetProgress(step, total int)
}

// checkSizes checks the dataset size n and the batch size b of a sampler:
// 2 ≤ b ≤ n.
func checkSizes(n, b int) error {
	if n < 2 {
		return fmt.Errorf("need at least 2 instances, got N=%d", n)
	}
	if b < 2 {
		return fmt.Errorf("batch size must be at least 2 (a contrastive loss needs a negative in every batch), got %d", b)
	}
	if b > n {
		return fmt.Errorf("batch size %d is larger than the dataset (%d instances)", b, n)
	}
	return nil
}

// batchesPerEpoch is the number of batches of an epoch over n instances with
// batch size b (2 ≤ b ≤ n): ⌈n/b⌉, or ⌊n/b⌋ when n mod b = 1, the leftover
// instance then being merged into the last batch (see Sampler).
func batchesPerEpoch(n, b int) int {
	if n%b == 1 {
		return n / b
	}
	return (n + b - 1) / b
}

// batchLen is the number of instances batch i (0-based) of an epoch asks
// for: b, or b+1 for the last batch when n mod b = 1. (Uniform's last batch
// holds fewer, the n mod b instances left, when n mod b ≥ 2.)
func batchLen(n, b, i int) int {
	if n%b == 1 && i == n/b-1 {
		return b + 1
	}
	return b
}

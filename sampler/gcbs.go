package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

// DefaultGCBSNeighbours is GCBS's default k, the neighbours per instance
// kept in its sparse similarity graph.
const DefaultGCBSNeighbours = 10

// GCBS is Global Contrastive Batch Sampling (Sachidananda, Yang, Zhu,
// "Global Contrastive Batch Sampling via Optimization on Sample
// Permutations", ICML 2023). The paper bounds the gap between the global
// contrastive loss and the loss of the training batches by a quadratic
// bottleneck assignment problem over the permutation π of the N instances
// (batches are consecutive blocks of B in π), and approximates it by
// minimising the bandwidth of the permuted similarity matrix: instances
// that are similar get nearby positions, so a block of B holds mutually
// hard negatives. At every Refresh:
//
//  1. S = ZZᵀ on the L2-normalised embeddings Z, made sparse: the paper
//     keeps the entries above a quantile of S (O(N·k) of them); here each
//     instance keeps its k most similar others (the exact kNN graph of
//     BuildKNNGraph), the same O(N·k) budget spent so that no instance is
//     left without edges, and the graph is made undirected;
//  2. π = reverse Cuthill–McKee order of that graph (ReverseCuthillMcKee,
//     SciPy's rule), the bandwidth-minimising heuristic the paper uses.
//
// Every epoch cuts π into consecutive batches of B (when N mod B ≥ 2 the
// last is π's last B, overlapping the one before; when N mod B = 1 the
// instance left is added to the epoch's last batch) and hands them out in
// a random order. A Refresh takes effect once the batches already queued
// are handed out: at the next epoch when refreshes come before an epoch's
// first step (as the training loop's first, before step 0, does), else at
// the end of the order in progress. Before the first Refresh the batches
// are Uniform's. Every instance is in a batch of every epoch whose batches
// came from one order (Coverage 1).
type GCBS struct {
	r     rounds
	k, t  int
	order []int32 // π of the last Refresh (nil before)
	d     int
	// Bandwidth is that of the last Refresh's graph under π (diagnostic).
	bandwidth int
}

// NewGCBS returns a GCBS sampler over n instances with batch size b
// (2 ≤ b ≤ n) that keeps k ≥ 1 neighbours per instance and asks for a
// Refresh every refreshEvery steps.
func NewGCBS(n, b, k, refreshEvery int, seed uint64) (*GCBS, error) {
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: gcbs: %w", err)
	}
	if k < 1 || k > n-1 {
		return nil, fmt.Errorf("sampler: gcbs: k (neighbours per instance) must be in [1, N−1 = %d], got %d", n-1, k)
	}
	if refreshEvery < 0 {
		return nil, fmt.Errorf("sampler: gcbs: refreshEvery must be ≥ 0, got %d", refreshEvery)
	}
	return &GCBS{r: newRounds(n, b, seed, 0x5eed0004), k: k, t: refreshEvery}, nil
}

// N returns the number of instances.
func (s *GCBS) N() int { return s.r.n }

// BatchSize returns B.
func (s *GCBS) BatchSize() int { return s.r.b }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1.
func (s *GCBS) BatchesPerEpoch() int { return s.r.ep.batchesPerEpoch() }

// RefreshEvery returns t.
func (s *GCBS) RefreshEvery() int { return s.t }

// Coverage returns the share of the dataset covered in the current epoch.
func (s *GCBS) Coverage() float64 { return s.r.ep.coverage() }

// CoverageHistory returns the coverage of every finished epoch.
func (s *GCBS) CoverageHistory() []float64 { return append([]float64(nil), s.r.ep.history...) }

// Order returns π of the last Refresh (nil before); it must not be modified.
func (s *GCBS) Order() []int32 { return s.order }

// Bandwidth returns the bandwidth of the last Refresh's graph under π.
func (s *GCBS) Bandwidth() int { return s.bandwidth }

// Refresh builds the kNN graph of e and its reverse Cuthill–McKee order.
func (s *GCBS) Refresh(e Embeddings) error {
	if e.N != s.r.n {
		return fmt.Errorf("sampler: gcbs: refresh with %d embeddings, want one per instance (%d)", e.N, s.r.n)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return fmt.Errorf("sampler: gcbs: refresh: %w", err)
	}
	g, err := buildKNN(u, e.N, e.D, s.k, 0)
	if err != nil {
		return fmt.Errorf("sampler: gcbs: refresh: %w", err)
	}
	sg := symmetrize(g)
	s.order = ReverseCuthillMcKee(sg)
	s.bandwidth = Bandwidth(sg, s.order)
	s.d = e.D
	return nil
}

// Next returns the next batch. The slice is owned by the caller.
func (s *GCBS) Next() []int {
	return s.r.next(s.order != nil, func() {
		bs := rowBatches(s.order, s.r.b)
		s.r.shuffle(bs)
		s.r.queue = bs
	})
}

type gcbsState struct {
	N, B, K, T int
	Rounds     roundsState
	Order      []byte
	Bandwidth  int
}

// MarshalBinary saves the RNG, the epoch, the queued batches and π.
func (s *GCBS) MarshalBinary() ([]byte, error) {
	rs, err := s.r.state()
	if err != nil {
		return nil, fmt.Errorf("sampler: gcbs: %w", err)
	}
	st := gcbsState{N: s.r.n, B: s.r.b, K: s.k, T: s.t, Rounds: rs, Order: int32sToBytes(s.order), Bandwidth: s.bandwidth}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("sampler: gcbs: encode state: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (s *GCBS) UnmarshalBinary(p []byte) error {
	var st gcbsState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&st); err != nil {
		return fmt.Errorf("sampler: gcbs: decode state: %w", err)
	}
	if st.N != s.r.n || st.B != s.r.b || st.K != s.k || st.T != s.t {
		return fmt.Errorf("sampler: gcbs: state is for n=%d b=%d k=%d t=%d, sampler has n=%d b=%d k=%d t=%d", st.N, st.B, st.K, st.T, s.r.n, s.r.b, s.k, s.t)
	}
	order, err := decodeOrder(st.Order, s.r.n)
	if err != nil {
		return fmt.Errorf("sampler: gcbs: state: %w", err)
	}
	if err := s.r.restore(st.Rounds); err != nil {
		return fmt.Errorf("sampler: gcbs: state: %w", err)
	}
	s.order, s.bandwidth = order, st.Bandwidth
	return nil
}

// decodeOrder decodes a permutation of [0, n) (empty: nil).
func decodeOrder(b []byte, n int) ([]int32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	o, err := bytesToInt32s(b)
	if err != nil {
		return nil, err
	}
	if len(o) != n {
		return nil, fmt.Errorf("order has %d entries, want %d", len(o), n)
	}
	seen := make([]bool, n)
	for _, v := range o {
		if v < 0 || int(v) >= n || seen[v] {
			return nil, fmt.Errorf("order is not a permutation of [0,%d)", n)
		}
		seen[v] = true
	}
	return o, nil
}

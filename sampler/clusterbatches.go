package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
)

// ClusterBatches forms batches from a k-means clustering of the
// embeddings of the last Refresh (KMeans on the L2-normalised rows, C
// clusters), one of two ways that bracket the trade-off between hard
// negatives and false negatives:
//
//   - together (kind kmeans; topic-aware sampling, Hofstätter et al.,
//     "Efficiently Teaching an Effective Dense Retriever with Balanced
//     Topic Aware Sampling", SIGIR 2021): a batch is drawn from one
//     cluster. Every epoch each cluster's members are shuffled and a
//     cluster of m members gives ⌊m/B⌋ batches of its own; the m mod B
//     left of every cluster are put one cluster after another and cut into
//     the epoch's remaining batches (which may then span two or more
//     clusters). The default C = ⌊N/B⌋ makes a cluster about a batch.
//   - apart (kind antikmeans; G-SimCLR's batches, Chakraborty et al.,
//     "G-SimCLR: Self-Supervised Contrastive Learning with Guided
//     Projection via Pseudo Labelling", ICDM workshops 2020): no two
//     instances of one cluster share a batch. Every epoch the clusters'
//     shuffled members are put one cluster after another and dealt out to
//     the epoch's n_b batches in turn (position p to batch p mod n_b), so
//     two members of a cluster meet in a batch only when the cluster has
//     more than n_b members, and then as few times as possible. The
//     default C = B.
//
// Both cut the epoch as Sampler says: n_b = ⌈N/B⌉ batches (⌊N/B⌋ when
// N mod B = 1, the instance left then added to the epoch's last batch); a
// batch short of B (N mod B ≥ 2) is filled up, together with the order's
// last B, apart with random instances not in it. The batches of an epoch
// are handed out in a random order; a Refresh takes effect once the
// batches already queued are handed out (as GCBS's). Before the first
// Refresh the batches are Uniform's.
type ClusterBatches struct {
	r      rounds
	c, t   int
	apart  bool
	labels []int32 // cluster of every instance at the last Refresh (nil before)
}

// NewClusterBatches returns a ClusterBatches sampler over n instances with
// batch size b and c clusters, together (apart false: 1 ≤ c ≤ ⌊n/b⌋) or
// apart (b ≤ c ≤ n), asking for a Refresh every refreshEvery steps.
func NewClusterBatches(n, b, c int, apart bool, refreshEvery int, seed uint64) (*ClusterBatches, error) {
	name := "kmeans"
	if apart {
		name = "antikmeans"
	}
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: %s: %w", name, err)
	}
	lo, hi := 1, n/b
	if apart {
		lo, hi = b, n
	}
	if c < lo || c > hi {
		return nil, fmt.Errorf("sampler: %s: clusters must be in [%d, %d], got %d", name, lo, hi, c)
	}
	if refreshEvery < 0 {
		return nil, fmt.Errorf("sampler: %s: refreshEvery must be ≥ 0, got %d", name, refreshEvery)
	}
	return &ClusterBatches{r: newRounds(n, b, seed, 0x5eed0007), c: c, t: refreshEvery, apart: apart}, nil
}

// N returns the number of instances.
func (s *ClusterBatches) N() int { return s.r.n }

// BatchSize returns B.
func (s *ClusterBatches) BatchSize() int { return s.r.b }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1.
func (s *ClusterBatches) BatchesPerEpoch() int { return s.r.ep.batchesPerEpoch() }

// RefreshEvery returns t.
func (s *ClusterBatches) RefreshEvery() int { return s.t }

// Coverage returns the share of the dataset covered in the current epoch.
func (s *ClusterBatches) Coverage() float64 { return s.r.ep.coverage() }

// CoverageHistory returns the coverage of every finished epoch.
func (s *ClusterBatches) CoverageHistory() []float64 {
	return append([]float64(nil), s.r.ep.history...)
}

// Labels returns the cluster of every instance at the last Refresh (nil
// before); it must not be modified.
func (s *ClusterBatches) Labels() []int32 { return s.labels }

// Refresh clusters the normalised embeddings with k-means.
func (s *ClusterBatches) Refresh(e Embeddings) error {
	if e.N != s.r.n {
		return fmt.Errorf("sampler: cluster batches: refresh with %d embeddings, want one per instance (%d)", e.N, s.r.n)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return fmt.Errorf("sampler: cluster batches: refresh: %w", err)
	}
	_, labels, err := KMeans(u, e.N, e.D, s.c, DefaultKMeansIterations, s.r.rng)
	if err != nil {
		return fmt.Errorf("sampler: cluster batches: refresh: %w", err)
	}
	s.labels = labels
	return nil
}

// Next returns the next batch. The slice is owned by the caller.
func (s *ClusterBatches) Next() []int {
	return s.r.next(s.labels != nil, func() {
		members := make([][]int32, s.c)
		for i, l := range s.labels {
			members[l] = append(members[l], int32(i))
		}
		for _, m := range members {
			s.r.rng.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
		}
		s.r.shuffle(members)
		b, n := s.r.b, s.r.n
		order := make([]int32, 0, n)
		var bs [][]int32
		if s.apart {
			for _, m := range members {
				order = append(order, m...)
			}
			nb := s.r.ep.batchesPerEpoch()
			bs = make([][]int32, nb)
			for p := 0; p < min(n, nb*b); p++ {
				bs[p%nb] = append(bs[p%nb], order[p])
			}
			for i := range bs {
				bs[i] = s.r.topUp(bs[i], b)
			}
		} else {
			for _, m := range members {
				order = append(order, m[:len(m)/b*b]...)
			}
			for _, m := range members {
				order = append(order, m[len(m)/b*b:]...)
			}
			bs = rowBatches(order, b)
		}
		s.r.shuffle(bs)
		s.r.queue = bs
	})
}

type clusterState struct {
	N, B, C, T int
	Apart      bool
	Rounds     roundsState
	Labels     []byte
}

// MarshalBinary saves the RNG, the epoch, the queued batches and the
// clusters of the last Refresh.
func (s *ClusterBatches) MarshalBinary() ([]byte, error) {
	return marshalEmbState("cluster batches", &s.r, func(rs roundsState) any {
		return clusterState{N: s.r.n, B: s.r.b, C: s.c, T: s.t, Apart: s.apart, Rounds: rs, Labels: int32sToBytes(s.labels)}
	})
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (s *ClusterBatches) UnmarshalBinary(p []byte) error {
	var st clusterState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&st); err != nil {
		return fmt.Errorf("sampler: cluster batches: decode state: %w", err)
	}
	if st.N != s.r.n || st.B != s.r.b || st.C != s.c || st.T != s.t || st.Apart != s.apart {
		return fmt.Errorf("sampler: cluster batches: state is for n=%d b=%d clusters=%d t=%d apart=%v, sampler has n=%d b=%d clusters=%d t=%d apart=%v",
			st.N, st.B, st.C, st.T, st.Apart, s.r.n, s.r.b, s.c, s.t, s.apart)
	}
	var labels []int32
	if len(st.Labels) > 0 {
		var err error
		if labels, err = bytesToInt32s(st.Labels); err != nil || len(labels) != s.r.n {
			return fmt.Errorf("sampler: cluster batches: state labels: %d bytes, want %d instances", len(st.Labels), s.r.n)
		}
		for _, l := range labels {
			if l < 0 || int(l) >= s.c {
				return fmt.Errorf("sampler: cluster batches: state label %d outside [0,%d)", l, s.c)
			}
		}
	}
	if err := s.r.restore(st.Rounds); err != nil {
		return fmt.Errorf("sampler: cluster batches: state: %w", err)
	}
	s.labels = labels
	return nil
}

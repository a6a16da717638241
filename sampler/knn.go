package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// KNN is the kNN Sampler of the paper's baselines: every batch is a random
// anchor not yet covered in the epoch plus its B−1 nearest neighbours
// (exact: cosine similarity, the inner product of L2-normalised rows, to all
// N instances) in the embeddings of the last Refresh. Epochs have as many
// batches as Uniform's (⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1) and, because
// batches overlap, cover only part of the dataset (Coverage). When
// N mod B = 1 the last batch of an epoch is the anchor and its B nearest
// neighbours (B+1 instances, see Sampler). Before the first Refresh it hands
// out Uniform batches. The first index of a batch is its anchor; the others
// follow in decreasing similarity.
type KNN struct {
	n, b   int
	t      int
	src    *rand.PCG
	rng    *rand.Rand
	u      []float32 // normalised embeddings of the last Refresh (nil before)
	d      int
	ep     epoch
	sel    topK
	scores []float32
}

// NewKNN returns a kNN Sampler over n instances with batch size b
// (2 ≤ b ≤ n) that asks for a Refresh every refreshEvery steps.
func NewKNN(n, b int, refreshEvery int, seed uint64) (*KNN, error) {
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: knn: %w", err)
	}
	if refreshEvery < 0 {
		return nil, fmt.Errorf("sampler: knn: refreshEvery must be ≥ 0, got %d", refreshEvery)
	}
	src := rand.NewPCG(seed, 0x5eed0003)
	return &KNN{n: n, b: b, t: refreshEvery, src: src, rng: rand.New(src), ep: newEpoch(n, b)}, nil
}

// N returns the number of instances.
func (s *KNN) N() int { return s.n }

// BatchSize returns B.
func (s *KNN) BatchSize() int { return s.b }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1 (the last batch
// then has B+1 instances).
func (s *KNN) BatchesPerEpoch() int { return s.ep.batchesPerEpoch() }

// RefreshEvery returns t.
func (s *KNN) RefreshEvery() int { return s.t }

// Coverage returns the share of the dataset covered in the current epoch.
func (s *KNN) Coverage() float64 { return s.ep.coverage() }

// CoverageHistory returns the coverage of every finished epoch.
func (s *KNN) CoverageHistory() []float64 { return append([]float64(nil), s.ep.history...) }

// Refresh stores a normalised copy of the embeddings (any N×D matrix).
func (s *KNN) Refresh(e Embeddings) error {
	if e.N != s.n {
		return fmt.Errorf("sampler: knn: refresh with %d embeddings, want one per instance (%d)", e.N, s.n)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return fmt.Errorf("sampler: knn: refresh: %w", err)
	}
	s.u, s.d = u, e.D
	return nil
}

// Next returns the next batch. The slice is owned by the caller.
func (s *KNN) Next() []int {
	s.ep.begin(s.rng)
	size := s.ep.size()
	batch := make([]int, 0, size)
	if s.u == nil {
		batch = s.ep.uniformBatch(batch)
		s.ep.finish(batch)
		return batch
	}
	anchor := s.ep.nextStart(s.rng, func(int32) bool { return false })
	batch = append(batch, int(anchor))
	if size > 1 {
		if len(s.scores) != s.n {
			s.scores = make([]float32, s.n)
		}
		d := s.d
		a := s.u[int(anchor)*d : int(anchor+1)*d]
		// scores = U·a (gonum's BLAS, or the implementation set with blas32.Use)
		blas32.Implementation().Sgemv(blas.NoTrans, s.n, d, 1, s.u, d, a, 1, 0, s.scores, 1)
		s.scores[anchor] = negInf32
		s.sel.reset(size - 1)
		s.sel.push(s.scores, 0)
		top := s.sel.result()
		keys, ids := make([]int32, len(top)), make([]int32, len(top))
		for j, x := range top {
			keys[j], ids[j] = entryKey(x), entryID(x)
		}
		sortByKey(keys, ids)
		for _, v := range ids {
			batch = append(batch, int(v))
		}
	}
	s.ep.finish(batch)
	return batch
}

// sortByKey sorts keys descending (ids alongside, ties by increasing id).
func sortByKey(keys, ids []int32) {
	for i := 1; i < len(keys); i++ {
		x, xi := keys[i], ids[i]
		j := i - 1
		for j >= 0 && (keys[j] < x || (keys[j] == x && ids[j] > xi)) {
			keys[j+1], ids[j+1] = keys[j], ids[j]
			j--
		}
		keys[j+1], ids[j+1] = x, xi
	}
}

type knnState struct {
	N, B, T int
	RNG     []byte
	D       int
	U       []byte
	Epoch   epochState
}

// MarshalBinary saves the RNG state, epoch position, covered set and the
// normalised embeddings of the last Refresh.
func (s *KNN) MarshalBinary() ([]byte, error) {
	r, err := s.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("sampler: knn: save rng: %w", err)
	}
	st := knnState{N: s.n, B: s.b, T: s.t, RNG: r, D: s.d, Epoch: s.ep.state()}
	if s.u != nil {
		st.U = float32sToBytes(s.u)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("sampler: knn: encode state: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (s *KNN) UnmarshalBinary(p []byte) error {
	var st knnState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&st); err != nil {
		return fmt.Errorf("sampler: knn: decode state: %w", err)
	}
	if st.N != s.n || st.B != s.b || st.T != s.t {
		return fmt.Errorf("sampler: knn: state is for n=%d b=%d t=%d, sampler has n=%d b=%d t=%d", st.N, st.B, st.T, s.n, s.b, s.t)
	}
	var u []float32
	if st.U != nil {
		var err error
		if u, err = bytesToFloat32s(st.U); err != nil {
			return fmt.Errorf("sampler: knn: state embeddings: %w", err)
		}
		if st.D <= 0 || len(u) != s.n*st.D {
			return fmt.Errorf("sampler: knn: state embeddings hold %d values, want N·D = %d·%d", len(u), s.n, st.D)
		}
	}
	ep := newEpoch(s.n, s.b)
	if err := ep.restore(st.Epoch); err != nil {
		return fmt.Errorf("sampler: knn: state: %w", err)
	}
	if err := s.src.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("sampler: knn: restore rng: %w", err)
	}
	s.u, s.d, s.ep = u, st.D, ep
	return nil
}

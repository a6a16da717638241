package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"slices"
)

// OSGD is ordered SGD over candidate batches (Cho et al., "Mini-Batch
// Optimization of Contrastive Loss", TMLR 2024; the code's osgd_kb_loose):
// the paper shows that training on the mini-batches of highest loss speeds
// up convergence, and OSGD finds them by scoring random ones. Each round it
// draws k random batches of B (k·B distinct instances, consecutive in a
// random permutation of the dataset, a fresh one when it runs out), scores
// each by the contrastive loss on the L2-normalised embeddings of the last
// Refresh, without gradient, and keeps the q batches of highest loss,
// handed out in decreasing loss (ties: the earlier drawn first).
//
// The score of a batch b is the InfoNCE loss of its instances with each
// instance's embedding as both of its views, at the method's temperature τ,
// in float64:
//
//	L(b) = (1/B) Σ_{i∈b} log Σ_{j∈b} exp((s_ij − s_ii)/τ),  s_ij = z_i·z_j,
//
// which grows with the similarity of the batch's negatives (BatchLoss).
// One embedding per instance is what a Refresh gets; the paper's code
// scores the two views' projections of the training step (u, v) instead.
// Before the first Refresh the batches are Uniform's.
type OSGD struct {
	r       rounds
	k, q, t int
	tau     float64
	u       []float32
	d       int
	draw    stream
}

// NewOSGD returns an OSGD sampler over n instances with batch size b that
// draws k batches per round (k ≥ 1, k·b ≤ n) and keeps q of them (1 ≤ q ≤
// k), scoring at temperature tau > 0, asking for a Refresh every
// refreshEvery steps.
func NewOSGD(n, b, k, q int, tau float64, refreshEvery int, seed uint64) (*OSGD, error) {
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: osgd: %w", err)
	}
	if k < 1 || k*b > n {
		return nil, fmt.Errorf("sampler: osgd: k (batches drawn per round) must be in [1, ⌊N/B⌋ = %d], got %d", n/b, k)
	}
	if q < 1 || q > k {
		return nil, fmt.Errorf("sampler: osgd: q (batches kept per round) must be in [1, k = %d], got %d", k, q)
	}
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("sampler: osgd: temperature must be > 0, got %v", tau)
	}
	if refreshEvery < 0 {
		return nil, fmt.Errorf("sampler: osgd: refreshEvery must be ≥ 0, got %d", refreshEvery)
	}
	return &OSGD{r: newRounds(n, b, seed, 0x5eed0006), k: k, q: q, t: refreshEvery, tau: tau}, nil
}

// N returns the number of instances.
func (s *OSGD) N() int { return s.r.n }

// BatchSize returns B.
func (s *OSGD) BatchSize() int { return s.r.b }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1.
func (s *OSGD) BatchesPerEpoch() int { return s.r.ep.batchesPerEpoch() }

// RefreshEvery returns t.
func (s *OSGD) RefreshEvery() int { return s.t }

// Coverage returns the share of the dataset covered in the current epoch.
func (s *OSGD) Coverage() float64 { return s.r.ep.coverage() }

// CoverageHistory returns the coverage of every finished epoch.
func (s *OSGD) CoverageHistory() []float64 { return append([]float64(nil), s.r.ep.history...) }

// Refresh stores a normalised copy of the embeddings.
func (s *OSGD) Refresh(e Embeddings) error {
	if e.N != s.r.n {
		return fmt.Errorf("sampler: osgd: refresh with %d embeddings, want one per instance (%d)", e.N, s.r.n)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return fmt.Errorf("sampler: osgd: refresh: %w", err)
	}
	s.u, s.d = u, e.D
	return nil
}

// Next returns the next batch. The slice is owned by the caller.
func (s *OSGD) Next() []int {
	return s.r.next(s.u != nil, func() {
		ids := s.draw.take(&s.r, s.k*s.r.b)
		cands := make([][]int32, s.k)
		for i := range cands {
			cands[i] = ids[i*s.r.b : (i+1)*s.r.b : (i+1)*s.r.b]
		}
		s.r.queue = selectHighestLoss(cands, s.q, func(bt []int32) float64 { return BatchLoss(s.u, s.d, bt, s.tau) })
	})
}

// selectHighestLoss returns the q candidates of highest loss, in decreasing
// loss (ties: the earlier candidate first).
func selectHighestLoss(cands [][]int32, q int, loss func([]int32) float64) [][]int32 {
	ls := make([]float64, len(cands))
	idx := make([]int, len(cands))
	for i, c := range cands {
		ls[i], idx[i] = loss(c), i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ls[a] > ls[b]:
			return -1
		case ls[a] < ls[b]:
			return 1
		}
		return 0
	})
	out := make([][]int32, q)
	for i := range out {
		out[i] = cands[idx[i]]
	}
	return out
}

// BatchLoss is OSGD's score of the batch bt (rows of the normalised n×d
// embeddings u) at temperature tau: (1/B) Σ_i log Σ_j exp((s_ij − s_ii)/τ)
// over i, j in bt, in float64 (a log-sum-exp shifted by its largest term).
func BatchLoss(u []float32, d int, bt []int32, tau float64) float64 {
	b := len(bt)
	s := make([]float64, b*b)
	for i, a := range bt {
		ra := u[int(a)*d : int(a+1)*d]
		for j := i; j < b; j++ {
			rb := u[int(bt[j])*d : int(bt[j]+1)*d]
			var v float64
			for k, x := range ra {
				v += float64(x) * float64(rb[k])
			}
			s[i*b+j], s[j*b+i] = v, v
		}
	}
	var tot float64
	for i := range b {
		row := s[i*b : (i+1)*b]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = max(mx, (v-row[i])/tau)
		}
		var e float64
		for _, v := range row {
			e += math.Exp((v-row[i])/tau - mx)
		}
		tot += mx + math.Log(e)
	}
	return tot / float64(b)
}

type osgdState struct {
	N, B, K, Q, T int
	Tau           float64
	Rounds        roundsState
	Draw          streamState
	D             int
	U             []byte
}

// MarshalBinary saves the RNG, the epoch, the queued batches, the draw
// permutation and the normalised embeddings of the last Refresh.
func (s *OSGD) MarshalBinary() ([]byte, error) {
	return marshalEmbState("osgd", &s.r, func(rs roundsState) any {
		return osgdState{N: s.r.n, B: s.r.b, K: s.k, Q: s.q, T: s.t, Tau: s.tau, Rounds: rs, Draw: s.draw.state(), D: s.d, U: float32sToBytes(s.u)}
	})
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (s *OSGD) UnmarshalBinary(p []byte) error {
	var st osgdState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&st); err != nil {
		return fmt.Errorf("sampler: osgd: decode state: %w", err)
	}
	if st.N != s.r.n || st.B != s.r.b || st.K != s.k || st.Q != s.q || st.T != s.t || st.Tau != s.tau {
		return fmt.Errorf("sampler: osgd: state is for n=%d b=%d k=%d q=%d t=%d τ=%v, sampler has n=%d b=%d k=%d q=%d t=%d τ=%v", st.N, st.B, st.K, st.Q, st.T, st.Tau, s.r.n, s.r.b, s.k, s.q, s.t, s.tau)
	}
	u, err := decodeEmb(st.U, s.r.n, st.D)
	if err != nil {
		return fmt.Errorf("sampler: osgd: state: %w", err)
	}
	var draw stream
	if err := draw.restore(st.Draw, s.r.n); err != nil {
		return fmt.Errorf("sampler: osgd: state: %w", err)
	}
	if err := s.r.restore(st.Rounds); err != nil {
		return fmt.Errorf("sampler: osgd: state: %w", err)
	}
	s.u, s.d, s.draw = u, st.D, draw
	return nil
}

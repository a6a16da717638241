package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
)

// Spectral forms batches by even-sized spectral clustering (Cho, Sreenivasan,
// Lee, Mun, Yi, Lee, Lee, Sohn, Papailiopoulos, Lee, "Mini-Batch
// Optimization of Contrastive Loss", TMLR 2024; the method the paper and
// its code call SC, sc_even_kb_loose). Among the partitions of the instances
// into batches of B, those with high-loss batches speed up SGD; the paper
// finds them by spectral clustering of an affinity that measures how much
// two instances raise each other's loss. Each round, from the
// L2-normalised embeddings of the last Refresh:
//
//  1. draw k·B distinct instances (consecutive in a random permutation of
//     the dataset, a fresh one when it runs out);
//  2. affinity (the code's custom_affinity, with u_i = v_i = z_i/√τ, the
//     one embedding as both views): Z_ij = u_i·v_j, a_ij =
//     log(1 + (B−1)·exp(Z_ij − Z_ii)) + log(1 + (B−1)·exp(Z_ji − Z_ii)),
//     A = a + aᵀ, W = exp(A);
//  3. spectral embedding (scikit-learn's spectral_embedding, norm_laplacian,
//     drop_first false): the eigenvectors of the k smallest eigenvalues of
//     L = I − D^{−½} W D^{−½} (W's diagonal dropped, D its row sums), each
//     divided by √D and signed so that its largest entry in absolute value
//     is positive, the k·B rows of an n×k matrix;
//  4. k-means with k clusters on those rows (KMeans), then the balanced
//     assignment to the centres repeated B times (BalancedAssign): k
//     clusters of exactly B, each one batch.
//
// The k batches are handed out in a random order before the next round.
// τ is the method's temperature. The paper's code draws k·B instances
// that partition the data and trains on all k clusters (k = q); so does
// this sampler, over consecutive rounds. Before the first Refresh the
// batches are Uniform's.
type Spectral struct {
	r    rounds
	k, t int
	tau  float64
	u    []float32 // normalised embeddings of the last Refresh (nil before)
	d    int
	draw stream
}

// NewSpectral returns a Spectral sampler over n instances with batch size
// b, k clusters per round (k ≥ 2, k·b ≤ n), temperature tau > 0, asking for
// a Refresh every refreshEvery steps.
func NewSpectral(n, b, k int, tau float64, refreshEvery int, seed uint64) (*Spectral, error) {
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: spectral: %w", err)
	}
	if k < 2 || k*b > n {
		return nil, fmt.Errorf("sampler: spectral: k (batches per round) must be in [2, ⌊N/B⌋ = %d], got %d", n/b, k)
	}
	if !(tau > 0) || math.IsInf(tau, 0) {
		return nil, fmt.Errorf("sampler: spectral: temperature must be > 0, got %v", tau)
	}
	if refreshEvery < 0 {
		return nil, fmt.Errorf("sampler: spectral: refreshEvery must be ≥ 0, got %d", refreshEvery)
	}
	return &Spectral{r: newRounds(n, b, seed, 0x5eed0005), k: k, t: refreshEvery, tau: tau}, nil
}

// N returns the number of instances.
func (s *Spectral) N() int { return s.r.n }

// BatchSize returns B.
func (s *Spectral) BatchSize() int { return s.r.b }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1.
func (s *Spectral) BatchesPerEpoch() int { return s.r.ep.batchesPerEpoch() }

// RefreshEvery returns t.
func (s *Spectral) RefreshEvery() int { return s.t }

// Coverage returns the share of the dataset covered in the current epoch.
func (s *Spectral) Coverage() float64 { return s.r.ep.coverage() }

// CoverageHistory returns the coverage of every finished epoch.
func (s *Spectral) CoverageHistory() []float64 { return append([]float64(nil), s.r.ep.history...) }

// Refresh stores a normalised copy of the embeddings.
func (s *Spectral) Refresh(e Embeddings) error {
	if e.N != s.r.n {
		return fmt.Errorf("sampler: spectral: refresh with %d embeddings, want one per instance (%d)", e.N, s.r.n)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return fmt.Errorf("sampler: spectral: refresh: %w", err)
	}
	s.u, s.d = u, e.D
	return nil
}

// Next returns the next batch. The slice is owned by the caller.
func (s *Spectral) Next() []int {
	return s.r.next(s.u != nil, func() {
		ids := s.draw.take(&s.r, s.k*s.r.b)
		labels := spectralBatches(s.u, s.d, ids, s.k, s.r.b, s.tau, s.r.rng)
		bs := make([][]int32, s.k)
		for i, l := range labels {
			bs[l] = append(bs[l], ids[i])
		}
		s.r.shuffle(bs)
		s.r.queue = bs
	})
}

// spectralBatches returns the batch (in [0, k)) of each of the k·b
// instances ids: steps 2-4 of Spectral.
func spectralBatches(u []float32, d int, ids []int32, k, b int, tau float64, rng *rand.Rand) []int32 {
	w := SpectralAffinity(u, d, ids, b, tau)
	maps := SpectralEmbedding(w, len(ids), k)
	x := make([]float32, len(maps))
	for i, v := range maps {
		x[i] = float32(v)
	}
	n := len(ids)
	centres, _, err := KMeans(x, n, k, k, DefaultKMeansIterations, rng)
	if err != nil {
		panic(err) // n = k·b ≥ k rows of dimension k: cannot fail
	}
	labels, _, err := BalancedAssign(x, n, k, centres, k)
	if err != nil {
		panic(err)
	}
	return labels
}

// SpectralAffinity returns the n×n affinity W of Spectral's step 2 for the
// instances ids (rows of the normalised n×d embeddings u), batch size b and
// temperature tau, in float64.
func SpectralAffinity(u []float32, d int, ids []int32, b int, tau float64) []float64 {
	n := len(ids)
	z := make([]float64, n*n)
	for i, a := range ids {
		ra := u[int(a)*d : int(a+1)*d]
		for j := i; j < n; j++ {
			rb := u[int(ids[j])*d : int(ids[j]+1)*d]
			var s float64
			for k, x := range ra {
				s += float64(x) * float64(rb[k])
			}
			z[i*n+j], z[j*n+i] = s/tau, s/tau
		}
	}
	bm1 := float64(b - 1)
	a := make([]float64, n*n)
	for i := range n {
		zii := z[i*n+i]
		for j := range n {
			a[i*n+j] = math.Log1p(bm1*math.Exp(z[i*n+j]-zii)) + math.Log1p(bm1*math.Exp(z[j*n+i]-zii))
		}
	}
	w := make([]float64, n*n)
	for i := range n {
		for j := range n {
			w[i*n+j] = math.Exp(a[i*n+j] + a[j*n+i])
		}
	}
	return w
}

// SpectralEmbedding returns the n×k spectral embedding of the symmetric
// affinity w (n×n, row-major) as scikit-learn's spectral_embedding with
// norm_laplacian and drop_first false computes it: w's diagonal is
// ignored; with D the row sums, the eigenvectors of the k largest
// eigenvalues of D^{−½} W D^{−½} (the k smallest of the normalised
// Laplacian; topEigen, Lanczos), each divided by √D (1 for an isolated row)
// and then signed so that its entry of largest absolute value is positive.
func SpectralEmbedding(w []float64, n, k int) []float64 {
	dd := make([]float64, n)
	for i := range n {
		var s float64
		for j := range n {
			if j != i {
				s += w[i*n+j]
			}
		}
		dd[i] = math.Sqrt(s)
		if dd[i] == 0 {
			dd[i] = 1
		}
	}
	m := make([]float64, n*n)
	for i := range n {
		for j := range n {
			if j != i {
				m[i*n+j] = w[i*n+j] / (dd[i] * dd[j])
			}
		}
	}
	// The top eigenvector of D^{−½}WD^{−½} is √D (eigenvalue 1): start the
	// iteration from a fixed vector that is not orthogonal to it.
	v0 := make([]float64, n)
	for i := range v0 {
		v0[i] = dd[i] * (1 + 0.5*math.Sin(float64(i)+1))
	}
	_, vecs := topEigen(m, n, k, v0, 1e-10)
	out := make([]float64, n*k)
	for c := range k {
		big, sign := 0.0, 1.0
		for i := range n {
			v := vecs[i*k+c] / dd[i]
			out[i*k+c] = v
			if math.Abs(v) > big {
				big, sign = math.Abs(v), math.Copysign(1, v)
			}
		}
		for i := range n {
			out[i*k+c] *= sign
		}
	}
	return out
}

type spectralState struct {
	N, B, K, T int
	Tau        float64
	Rounds     roundsState
	Draw       streamState
	D          int
	U          []byte
}

// MarshalBinary saves the RNG, the epoch, the queued batches, the draw
// permutation and the normalised embeddings of the last Refresh.
func (s *Spectral) MarshalBinary() ([]byte, error) {
	return marshalEmbState("spectral", &s.r, func(rs roundsState) any {
		return spectralState{N: s.r.n, B: s.r.b, K: s.k, T: s.t, Tau: s.tau, Rounds: rs, Draw: s.draw.state(), D: s.d, U: float32sToBytes(s.u)}
	})
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (s *Spectral) UnmarshalBinary(p []byte) error {
	var st spectralState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&st); err != nil {
		return fmt.Errorf("sampler: spectral: decode state: %w", err)
	}
	if st.N != s.r.n || st.B != s.r.b || st.K != s.k || st.T != s.t || st.Tau != s.tau {
		return fmt.Errorf("sampler: spectral: state is for n=%d b=%d k=%d t=%d τ=%v, sampler has n=%d b=%d k=%d t=%d τ=%v", st.N, st.B, st.K, st.T, st.Tau, s.r.n, s.r.b, s.k, s.t, s.tau)
	}
	u, err := decodeEmb(st.U, s.r.n, st.D)
	if err != nil {
		return fmt.Errorf("sampler: spectral: state: %w", err)
	}
	var draw stream
	if err := draw.restore(st.Draw, s.r.n); err != nil {
		return fmt.Errorf("sampler: spectral: state: %w", err)
	}
	if err := s.r.restore(st.Rounds); err != nil {
		return fmt.Errorf("sampler: spectral: state: %w", err)
	}
	s.u, s.d, s.draw = u, st.D, draw
	return nil
}

// marshalEmbState gob-encodes the state make builds from the rounds state.
func marshalEmbState(name string, r *rounds, make func(roundsState) any) ([]byte, error) {
	rs, err := r.state()
	if err != nil {
		return nil, fmt.Errorf("sampler: %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(make(rs)); err != nil {
		return nil, fmt.Errorf("sampler: %s: encode state: %w", name, err)
	}
	return buf.Bytes(), nil
}

// decodeEmb decodes n×d float32 embeddings (empty: nil).
func decodeEmb(b []byte, n, d int) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	u, err := bytesToFloat32s(b)
	if err != nil {
		return nil, err
	}
	if d <= 0 || len(u) != n*d {
		return nil, fmt.Errorf("embeddings hold %d values, want N·D = %d·%d", len(u), n, d)
	}
	return u, nil
}

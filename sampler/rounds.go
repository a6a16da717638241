package sampler

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// rounds is the bookkeeping shared by the samplers that compute several
// batches at once from the embeddings of the last Refresh (GCBS, Spectral,
// OSGD, ClusterBatches): a round is the set of batches one computation
// yields (an epoch's for GCBS and ClusterBatches, k or q for Spectral and
// OSGD), queued and handed out one by one. A Refresh changes what the next
// round is computed from; the batches already queued are handed out first.
//
// Every queued batch has B distinct instances. Next applies the rule of
// Sampler on top: when N mod B = 1 the epoch's last batch gets one
// instance more, the first instance of the epoch's random order that is not
// yet covered in the epoch and not in the batch (the one left over when the
// rounds cover the epoch). Before the first Refresh the batches are
// Uniform's (the epoch's order cut into consecutive batches).
type rounds struct {
	n, b  int
	src   *rand.PCG
	rng   *rand.Rand
	ep    epoch
	queue [][]int32
	mark  []uint32 // scratch: mark[v] == gen ⇔ v in the batch being completed
	gen   uint32
}

func newRounds(n, b int, seed, stream uint64) rounds {
	src := rand.NewPCG(seed, stream)
	return rounds{n: n, b: b, src: src, rng: rand.New(src), ep: newEpoch(n, b), mark: make([]uint32, n)}
}

// next hands out the next batch: Uniform's while ready is false, else the
// head of the queue (fill is called to compute a round when it is empty).
func (r *rounds) next(ready bool, fill func()) []int {
	r.ep.begin(r.rng)
	size := r.ep.size()
	batch := make([]int, 0, size)
	if !ready {
		batch = r.ep.uniformBatch(batch)
		r.ep.finish(batch)
		return batch
	}
	if len(r.queue) == 0 {
		fill()
	}
	head := r.queue[0]
	r.queue = r.queue[1:]
	r.gen++
	if r.gen == 0 {
		clear(r.mark)
		r.gen = 1
	}
	for _, v := range head {
		batch = append(batch, int(v))
		r.mark[v] = r.gen
	}
	for len(batch) < size {
		v := r.ep.nextStart(r.rng, func(v int32) bool { return r.mark[v] == r.gen })
		r.mark[v] = r.gen
		batch = append(batch, int(v))
	}
	r.ep.finish(batch)
	return batch
}

// topUp appends to batch distinct random instances not in it until it has
// b (each uniform over the instances not yet in the batch).
func (r *rounds) topUp(batch []int32, b int) []int32 {
	r.gen++
	if r.gen == 0 {
		clear(r.mark)
		r.gen = 1
	}
	for _, v := range batch {
		r.mark[v] = r.gen
	}
	for len(batch) < b {
		v := int32(r.rng.IntN(r.n))
		if r.mark[v] == r.gen {
			continue
		}
		r.mark[v] = r.gen
		batch = append(batch, v)
	}
	return batch
}

// shuffle puts the batches in a random order.
func (r *rounds) shuffle(bs [][]int32) {
	r.rng.Shuffle(len(bs), func(i, j int) { bs[i], bs[j] = bs[j], bs[i] })
}

// rowBatches cuts an order of all N instances into consecutive batches of
// B: ⌊N/B⌋ of them, and, when N mod B ≥ 2, one more, the order's last B
// (which overlaps the one before). When N mod B = 1 the last instance of
// the order is in none: Next adds it to the epoch's last batch.
func rowBatches(order []int32, b int) [][]int32 {
	n := len(order)
	out := make([][]int32, 0, n/b+1)
	for i := 0; i+b <= n; i += b {
		out = append(out, order[i:i+b:i+b])
	}
	if n%b >= 2 {
		out = append(out, order[n-b:n:n])
	}
	return out
}

// rounds state layout: the RNG, the epoch, then the queue, all in a
// rounds State (gob) — see roundsState.
type roundsState struct {
	RNG   []byte
	Epoch epochState
	Queue []byte // uvarint count, then per batch uvarint length and int32s
}

func (r *rounds) state() (roundsState, error) {
	rb, err := r.src.MarshalBinary()
	if err != nil {
		return roundsState{}, fmt.Errorf("save rng: %w", err)
	}
	q := binary.AppendUvarint(nil, uint64(len(r.queue)))
	for _, bt := range r.queue {
		q = binary.AppendUvarint(q, uint64(len(bt)))
		q = append(q, int32sToBytes(bt)...)
	}
	return roundsState{RNG: rb, Epoch: r.ep.state(), Queue: q}, nil
}

func (r *rounds) restore(st roundsState) error {
	ep := newEpoch(r.n, r.b)
	if err := ep.restore(st.Epoch); err != nil {
		return err
	}
	p := st.Queue
	cnt, k := binary.Uvarint(p)
	if k <= 0 || cnt > uint64(r.n) {
		return fmt.Errorf("queue: bad batch count")
	}
	p = p[k:]
	queue := make([][]int32, 0, cnt)
	for range cnt {
		l, k := binary.Uvarint(p)
		if k <= 0 || l > uint64(r.n) || uint64(len(p)-k) < 4*l {
			return fmt.Errorf("queue: bad batch length")
		}
		p = p[k:]
		bt, _ := bytesToInt32s(p[:4*l])
		for _, v := range bt {
			if v < 0 || int(v) >= r.n {
				return fmt.Errorf("queue: instance %d outside [0,%d)", v, r.n)
			}
		}
		queue = append(queue, bt)
		p = p[4*l:]
	}
	if len(p) != 0 {
		return fmt.Errorf("queue: %d bytes left over", len(p))
	}
	if err := r.src.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("restore rng: %w", err)
	}
	r.ep, r.queue = ep, queue
	return nil
}

// stream draws groups of distinct instances without replacement across
// groups: consecutive slices of a random permutation of [0, N), a fresh
// permutation when one runs out (a group that straddles two permutations
// skips the instances it already holds).
type stream struct {
	perm []int32
	pos  int
}

// take returns m distinct instances (m ≤ N).
func (s *stream) take(r *rounds, m int) []int32 {
	out := make([]int32, 0, m)
	if s.perm == nil {
		s.perm = make([]int32, r.n)
		s.pos = r.n
	}
	r.gen++
	if r.gen == 0 {
		clear(r.mark)
		r.gen = 1
	}
	for len(out) < m {
		if s.pos == r.n {
			for i := range s.perm {
				s.perm[i] = int32(i)
			}
			r.rng.Shuffle(r.n, func(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] })
			s.pos = 0
		}
		v := s.perm[s.pos]
		s.pos++
		if r.mark[v] == r.gen {
			continue
		}
		r.mark[v] = r.gen
		out = append(out, v)
	}
	return out
}

type streamState struct {
	Perm []byte
	Pos  int
}

func (s *stream) state() streamState {
	return streamState{Perm: int32sToBytes(s.perm), Pos: s.pos}
}

func (s *stream) restore(st streamState, n int) error {
	if len(st.Perm) == 0 {
		*s = stream{}
		return nil
	}
	p, err := bytesToInt32s(st.Perm)
	if err != nil || len(p) != n || st.Pos < 0 || st.Pos > n {
		return fmt.Errorf("stream: permutation of %d bytes at %d, want %d instances", len(st.Perm), st.Pos, n)
	}
	for _, v := range p {
		if v < 0 || int(v) >= n {
			return fmt.Errorf("stream: instance %d outside [0,%d)", v, n)
		}
	}
	s.perm, s.pos = p, st.Pos
	return nil
}

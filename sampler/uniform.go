package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
)

// Uniform is the standard sampler of contrastive learning: every epoch it
// draws a fresh random permutation of [0, N) and cuts it into consecutive
// batches of B. When B does not divide N the last batch of an epoch holds the
// N mod B instances left (as PyTorch's DataLoader with drop_last=false),
// except when N mod B = 1: that one instance is merged into the last full
// batch, which then has B+1 (see Sampler). Every instance is in exactly one
// batch of every epoch.
type Uniform struct {
	n, b int
	src  *rand.PCG
	rng  *rand.Rand
	perm []int
	pos  int // batches handed out in the current epoch
}

// NewUniform returns a Uniform sampler over n instances with batch size b
// (2 ≤ b ≤ n).
func NewUniform(n, b int, seed uint64) (*Uniform, error) {
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: uniform: %w", err)
	}
	src := rand.NewPCG(seed, 0x5eed0001)
	u := &Uniform{n: n, b: b, src: src, rng: rand.New(src)}
	u.pos = u.BatchesPerEpoch() // first Next starts an epoch
	return u, nil
}

// N returns the number of instances.
func (u *Uniform) N() int { return u.n }

// BatchSize returns B.
func (u *Uniform) BatchSize() int { return u.b }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1 (the leftover
// instance is merged into the last batch).
func (u *Uniform) BatchesPerEpoch() int { return batchesPerEpoch(u.n, u.b) }

// Next returns the next batch of the current permutation.
func (u *Uniform) Next() []int {
	if u.pos >= u.BatchesPerEpoch() {
		u.perm = u.rng.Perm(u.n)
		u.pos = 0
	}
	lo := u.pos * u.b
	hi := min(lo+batchLen(u.n, u.b, u.pos), u.n)
	u.pos++
	return append([]int(nil), u.perm[lo:hi]...)
}

type uniformState struct {
	N, B int
	RNG  []byte
	Perm []int
	Pos  int
}

// MarshalBinary saves the sampler's RNG state and position.
func (u *Uniform) MarshalBinary() ([]byte, error) {
	r, err := u.src.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = gob.NewEncoder(&buf).Encode(uniformState{N: u.n, B: u.b, RNG: r, Perm: u.perm, Pos: u.pos})
	return buf.Bytes(), err
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (u *Uniform) UnmarshalBinary(p []byte) error {
	var s uniformState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&s); err != nil {
		return fmt.Errorf("sampler: uniform: decode state: %w", err)
	}
	if s.N != u.n || s.B != u.b {
		return fmt.Errorf("sampler: uniform: state is for n=%d b=%d, sampler has n=%d b=%d", s.N, s.B, u.n, u.b)
	}
	if err := u.src.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("sampler: uniform: restore rng: %w", err)
	}
	u.perm, u.pos = s.Perm, s.Pos
	return nil
}

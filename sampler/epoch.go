package sampler

import (
	"fmt"
	"math/rand/v2"
)

// epoch is the epoch bookkeeping shared by KNN and BatchSampler: an epoch is
// batchesPerEpoch(N, B) batches (as for Uniform: ⌈N/B⌉, or ⌊N/B⌋ when
// N mod B = 1) and size says how many instances the batch being built asks
// for (B, or B+1 for the last batch of the epoch when N mod B = 1); a node
// is covered once it appeared in a batch of the current epoch; start nodes
// are taken in the order of a fresh random permutation, skipping covered
// nodes, so each is a uniformly random node not yet covered.
//
// A covering epoch (covering set, BatchSampler's epoch "covering") is not a
// number of batches: it lasts until all N nodes are covered (see
// BatchSampler.Next for how its batches are formed).
type epoch struct {
	n, b     int
	covering bool
	order    []int32  // this epoch's permutation
	scan     int      // order[:scan] are covered (or in the batch being built)
	cov      []uint32 // cov[v] == stamp ⇔ v covered in this epoch
	stamp    uint32
	covered  int
	pos      int       // batches handed out in this epoch
	started  bool      // an epoch has begun
	history  []float64 // coverage of every finished epoch
}

func newEpoch(n, b int) epoch {
	return epoch{n: n, b: b, cov: make([]uint32, n), stamp: 1}
}

func (e *epoch) batchesPerEpoch() int { return batchesPerEpoch(e.n, e.b) }

// size is the number of distinct instances the batch being built (the
// e.pos-th of the epoch, after begin) asks for: B, or B+1 for the epoch's
// last batch when N mod B = 1.
func (e *epoch) size() int { return batchLen(e.n, e.b, e.pos) }

// target is the number of distinct nodes the walk batches of a covering
// epoch cover before its leftover batch: ⌊N/B⌋·B.
func (e *epoch) target() int { return e.n / e.b * e.b }

// complete reports whether the epoch in progress is over: batchesPerEpoch
// batches were handed out, or, for a covering epoch, all N nodes are
// covered.
func (e *epoch) complete() bool {
	if e.covering {
		return e.covered == e.n
	}
	return e.pos >= e.batchesPerEpoch()
}

// index is the 0-based index of the epoch in progress (of the last batch
// handed out; 0 before the first).
func (e *epoch) index() int { return len(e.history) }

// begin starts a new epoch if the current one is complete (or none began).
func (e *epoch) begin(rng *rand.Rand) {
	if e.started && !e.complete() {
		return
	}
	if e.started {
		e.history = append(e.history, e.coverage())
	}
	e.started = true
	if len(e.order) != e.n {
		e.order = make([]int32, e.n)
	}
	for i := range e.order {
		e.order[i] = int32(i)
	}
	rng.Shuffle(e.n, func(i, j int) { e.order[i], e.order[j] = e.order[j], e.order[i] })
	e.scan, e.pos, e.covered = 0, 0, 0
	e.stamp++
	if e.stamp == 0 {
		clear(e.cov)
		e.stamp = 1
	}
}

func (e *epoch) isCovered(v int32) bool { return e.cov[v] == e.stamp }

// nextStart returns the next node of the epoch's order that is neither
// covered nor in the batch being built (inBatch), or, when every such node is
// used up, a uniformly random node not in the batch. It needs fewer than N
// nodes in the batch.
func (e *epoch) nextStart(rng *rand.Rand, inBatch func(int32) bool) int32 {
	for e.scan < e.n {
		v := e.order[e.scan]
		if e.isCovered(v) || inBatch(v) {
			e.scan++ // a node in the batch is covered once the batch is done
			continue
		}
		return v
	}
	v := int32(rng.IntN(e.n))
	for inBatch(v) {
		v++
		if int(v) == e.n {
			v = 0
		}
	}
	return v
}

// uniformBatch is the batch of a data-independent sampler: the next size()
// nodes of the epoch's order that are not covered (the same batches as
// Uniform).
func (e *epoch) uniformBatch(out []int) []int {
	out = out[:0]
	want := e.size()
	for len(out) < want && e.scan < e.n {
		v := e.order[e.scan]
		e.scan++
		if !e.isCovered(v) {
			out = append(out, int(v))
		}
	}
	return out
}

// rest appends every node of the epoch's order not yet covered (the
// leftover batch of a covering epoch) and marks the order scanned.
func (e *epoch) rest(out []int) []int {
	for ; e.scan < e.n; e.scan++ {
		if v := e.order[e.scan]; !e.isCovered(v) {
			out = append(out, int(v))
		}
	}
	return out
}

// finish records a handed-out batch.
func (e *epoch) finish(batch []int) {
	for _, v := range batch {
		if e.cov[v] != e.stamp {
			e.cov[v] = e.stamp
			e.covered++
		}
	}
	e.pos++
}

// coverage is the share of the N nodes covered in the epoch in progress (or
// the last one, right after its final batch).
func (e *epoch) coverage() float64 {
	if e.n == 0 {
		return 0
	}
	return float64(e.covered) / float64(e.n)
}

// epochState is the serialised form of epoch.
type epochState struct {
	Order   []byte // int32 little-endian
	Scan    int
	Covered []byte // bitset of covered nodes
	Pos     int
	Started bool
	History []float64
}

func (e *epoch) state() epochState {
	bits := make([]byte, (e.n+7)/8)
	for v := 0; v < e.n; v++ {
		if e.cov[v] == e.stamp {
			bits[v/8] |= 1 << (v % 8)
		}
	}
	return epochState{Order: int32sToBytes(e.order), Scan: e.scan, Covered: bits, Pos: e.pos, Started: e.started, History: append([]float64(nil), e.history...)}
}

func (e *epoch) restore(s epochState) error {
	order, err := bytesToInt32s(s.Order)
	if err != nil {
		return fmt.Errorf("epoch order: %w", err)
	}
	if len(order) != 0 && len(order) != e.n {
		return fmt.Errorf("epoch order has %d nodes, want %d", len(order), e.n)
	}
	for _, v := range order {
		if v < 0 || int(v) >= e.n {
			return fmt.Errorf("epoch order holds node %d, want a node in [0,%d)", v, e.n)
		}
	}
	if len(s.Covered) != (e.n+7)/8 {
		return fmt.Errorf("covered set has %d bytes, want %d", len(s.Covered), (e.n+7)/8)
	}
	maxPos := e.batchesPerEpoch()
	if e.covering {
		maxPos = e.n // every batch of a covering epoch covers a new node
	}
	if s.Scan < 0 || s.Scan > e.n || s.Pos < 0 || s.Pos > maxPos {
		return fmt.Errorf("epoch position scan=%d pos=%d is out of range for N=%d", s.Scan, s.Pos, e.n)
	}
	e.order, e.scan, e.pos, e.started = order, s.Scan, s.Pos, s.Started
	e.history = append([]float64(nil), s.History...)
	clear(e.cov)
	e.stamp, e.covered = 1, 0
	for v := 0; v < e.n; v++ {
		if s.Covered[v/8]&(1<<(v%8)) != 0 {
			e.cov[v] = 1
			e.covered++
		}
	}
	return nil
}

package sampler

// refTopK is topK as it was at commit f7dda73 (keys and ids in separate
// slices, Lomuto partitions by swaps): the reference whose selections, in
// their order, topK must reproduce exactly, since that order is the order
// of a node's neighbours in the graph and so decides the walks.

import "math"

// refTopK keeps the k largest of a stream of float32 scores (with their ids).
//
// Scores are compared as order-preserving int32 keys (floatKey), so that the
// Go compiler turns every comparison into a conditional move: on random
// scores, mispredicted branches, not arithmetic, dominate top-K selection.
// A key is appended to a buffer of capacity 2k+16 only when it exceeds a
// running threshold; when the buffer nearly fills, a quickselect keeps the k
// largest and the threshold becomes the smallest of them. A long first chunk
// gets its threshold from a sample (pushFirst), so most candidates are
// rejected at once. Scores must not be NaN; -Inf scores are never kept, so
// callers mask excluded candidates with -Inf.
type refTopK struct {
	k    int
	n    int
	thr  int32 // keys ≤ thr are rejected
	keys []int32
	ids  []int32
}

// refSampleSize is the number of scores sampled to seed the threshold.
const refSampleSize = 128

// refMinRoom is the least free space the filter works with; below it the
// buffer is first reduced to its k largest.
const refMinRoom = 16

// reset prepares the selector for a new stream with k ≥ 1.
func (s *refTopK) reset(k int) {
	s.k = k
	s.n = 0
	s.thr = floatKey(negInf32)
	c := 2*k + refMinRoom
	if cap(s.keys) < c {
		s.keys = make([]int32, c)
		s.ids = make([]int32, c)
	}
	s.keys = s.keys[:c]
	s.ids = s.ids[:c]
}

// push offers scores[j] with id base+j for every j.
func (s *refTopK) push(scores []float32, base int32) {
	if s.n == 0 && s.thr == floatKey(negInf32) && len(scores) >= 4*refSampleSize && s.k < len(scores)/4 {
		s.pushFirst(scores, base)
		return
	}
	s.pushLinear(scores, base)
}

// pushFirst handles a long first chunk of m scores. A strided sample of 128
// scores gives a threshold: its r-th largest with r = ⌈1.6·k·128/m⌉ + 2, so
// that about 1.6·k scores (and with high probability at least k) exceed it.
// The chunk is then filtered against that threshold. If fewer than k scores
// pass (rare), the chunk is pushed again without a threshold, so the result
// is exact for any distribution.
func (s *refTopK) pushFirst(scores []float32, base int32) {
	m := len(scores)
	r := int(math.Ceil(1.6*float64(s.k)*refSampleSize/float64(m))) + 2
	if r < refSampleSize {
		var sample, sid [refSampleSize]int32
		for i := range sample {
			sample[i] = floatKey(scores[i*m/refSampleSize])
		}
		refSelectTop(sample[:], sid[:], r)
		s.thr = refMinKey(sample[:r])
	}
	s.pushLinear(scores, base)
	if s.n < s.k && s.thr != floatKey(negInf32) { // the sample threshold was too high
		s.n, s.thr = 0, floatKey(negInf32)
		s.pushLinear(scores, base)
	}
}

// pushLinear filters scores against the running threshold.
func (s *refTopK) pushLinear(scores []float32, base int32) {
	c := len(s.keys)
	for len(scores) > 0 {
		if c-s.n < refMinRoom {
			refSelectTop(s.keys[:s.n], s.ids[:s.n], s.k)
			s.n = s.k
			s.thr = max(s.thr, refMinKey(s.keys[:s.n]))
		}
		seg := scores[:min(c-s.n, len(scores))]
		s.n = refFilterKeys(seg, s.keys, s.ids, s.n, base, s.thr)
		base += int32(len(seg))
		scores = scores[len(seg):]
	}
}

// refFilterKeys appends the keys of seg that exceed thr (and their ids, base+j)
// at position n of keys/ids and returns the new end. It is branch-free: each
// key is written at n, and n advances only if the key passes, so len(seg)
// must not exceed len(keys)−n.
func refFilterKeys(seg []float32, keys, ids []int32, n int, base, thr int32) int {
	keys = keys[:n+len(seg)]
	ids = ids[:n+len(seg)]
	for j, v := range seg {
		key := floatKey(v)
		keys[n] = key
		ids[n] = base + int32(j)
		n += refGt(key, thr)
	}
	return n
}

// gt is 1 if a > b, else 0, computed without a branch.
func refGt(a, b int32) int {
	return int(uint64(int64(b)-int64(a)) >> 63)
}

// result returns the ids of the (at most) k largest scores pushed so far, in
// no particular order. The slice aliases the selector's buffer; the matching
// keys are s.keys[:len(result)].
func (s *refTopK) result() []int32 {
	if s.n > s.k {
		refSelectTop(s.keys[:s.n], s.ids[:s.n], s.k)
		s.n = s.k
		s.thr = max(s.thr, refMinKey(s.keys[:s.n]))
	}
	return s.ids[:s.n]
}

// refMinKey returns the smallest element of a non-empty v.
func refMinKey(v []int32) int32 {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}

// refSelectTop partially orders v (and id alongside) so that v[:k] holds the k
// largest values, in no particular order; 1 ≤ k ≤ len(v). Quickselect with a
// median-of-three pivot and branch-free Lomuto partitions; elements equal to
// the pivot are split off separately, so ties cannot make it quadratic.
func refSelectTop(v, id []int32, k int) {
	lo, hi := 0, len(v) // the boundary k lies in [lo, hi]
	for hi-lo > 16 {
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi-1]
		p := max(min(a, b), min(max(a, b), c)) // median of three
		n := refPartitionGT(v, id, lo, hi, p)
		if n == lo { // nothing above the pivot: split off the elements equal to it
			n = refPartitionGT(v, id, lo, hi, p-1) // p is not the smallest int32: a and c exist below or at p
			if k <= n {
				return // v[lo:n] all equal p, the largest in range
			}
			lo = n
			continue
		}
		switch {
		case k < n:
			hi = n
		case k > n:
			lo = n
		default:
			return
		}
	}
	// insertion sort of the short remaining range, descending
	for i := lo + 1; i < hi; i++ {
		x, xi := v[i], id[i]
		j := i - 1
		for j >= lo && v[j] < x {
			v[j+1], id[j+1] = v[j], id[j]
			j--
		}
		v[j+1], id[j+1] = x, xi
	}
}

// refPartitionGT moves the elements of v[lo:hi] that are > p to the front and
// returns the end of that front part. Branch-free Lomuto: each element is
// swapped to position n unconditionally and n advances only when it is > p.
func refPartitionGT(v, id []int32, lo, hi int, p int32) int {
	n := lo
	v, id = v[:hi], id[:hi]
	for i := lo; i < hi; i++ {
		x, xi := v[i], id[i]
		v[i], id[i] = v[n], id[n]
		v[n], id[n] = x, xi
		n += refGt(x, p)
	}
	return n
}

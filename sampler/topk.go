package sampler

import "math"

// topK keeps the k largest of a stream of float32 scores (with their ids).
//
// Scores are compared as order-preserving int32 keys (floatKey), each
// packed with its id into one int64 (key in the high half, id in the low:
// packEntry), so that an entry moves with one load and one store and
// entries compare by key with a signed 64-bit comparison. A key is
// appended to a buffer of capacity 2k+16 only when it exceeds a running
// threshold; when the buffer nearly fills, a quickselect keeps the k
// largest and the threshold becomes the smallest of them. A long first
// chunk gets its threshold from a sample (pushFirst), so most candidates
// are rejected at once. Scores must not be NaN; -Inf scores are never
// kept, so callers mask excluded candidates with -Inf.
//
// The entries a selection returns, and their order, are a function of the
// pushes alone: the proximity graph lists a node's neighbours in this order
// (walks pick neighbours by position), so the filter and the quickselect
// reproduce, entry for entry, the branch-free Lomuto partitions by swaps
// of the original implementation (refTopK in the tests; see partitionGT
// for how the same arrangement is reached without the swaps).
type topK struct {
	k   int
	n   int
	thr int32   // keys ≤ thr are rejected
	buf []int64 // packed entries; len 2k+minRoom, cap ≥ len+vecSlack
	q   []int64 // scratch of partitionGT, len ≥ len(buf)+vecSlack
}

// sampleSize is the number of scores sampled to seed the threshold.
const sampleSize = 128

// minRoom is the least free space the filter works with; below it the
// buffer is first reduced to its k largest.
const minRoom = 16

// vecSlack is the room the vector kernels may write or read past the end
// of the entries they produce or consume (whole vectors of 8 entries).
const vecSlack = 16

var negInf32 = float32(math.Inf(-1))

// floatKey maps a non-NaN float32 to an int32 with the same order
// (−Inf → the smallest key of any non-NaN value).
func floatKey(f float32) int32 {
	b := int32(math.Float32bits(f))
	return b ^ ((b >> 31) & 0x7fffffff)
}

// keyFloat inverts floatKey.
func keyFloat(k int32) float32 {
	return math.Float32frombits(uint32(k ^ ((k >> 31) & 0x7fffffff)))
}

// packEntry packs a key and an id into an entry; entries order as their
// keys (then ids, as unsigned numbers, which nothing relies on).
func packEntry(key, id int32) int64 { return int64(key)<<32 | int64(uint32(id)) }

// entryKey and entryID unpack an entry.
func entryKey(x int64) int32 { return int32(x >> 32) }
func entryID(x int64) int32  { return int32(x) }

// keyCeil is the greatest entry of key: x > keyCeil(key) (as int64)
// exactly when entryKey(x) > key.
func keyCeil(key int32) int64 { return int64(key)<<32 | 0xffffffff }

// reset prepares the selector for a new stream with k ≥ 1.
func (s *topK) reset(k int) {
	s.k = k
	s.n = 0
	s.thr = floatKey(negInf32)
	c := 2*k + minRoom
	if cap(s.buf) < c+vecSlack {
		s.buf = make([]int64, c, c+vecSlack)
		s.q = make([]int64, c+vecSlack)
	}
	s.buf = s.buf[:c]
}

// push offers scores[j] with id base+j for every j.
func (s *topK) push(scores []float32, base int32) {
	if s.n == 0 && s.thr == floatKey(negInf32) && len(scores) >= 4*sampleSize && s.k < len(scores)/4 {
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
func (s *topK) pushFirst(scores []float32, base int32) {
	m := len(scores)
	r := int(math.Ceil(1.6*float64(s.k)*sampleSize/float64(m))) + 2
	if r < sampleSize {
		var sample, q [sampleSize + vecSlack]int64
		for i := range sampleSize {
			sample[i] = packEntry(floatKey(scores[i*m/sampleSize]), int32(i))
		}
		selectTop(sample[:sampleSize], q[:], r)
		s.thr = minKey(sample[:r])
	}
	s.pushLinear(scores, base)
	if s.n < s.k && s.thr != floatKey(negInf32) { // the sample threshold was too high
		s.n, s.thr = 0, floatKey(negInf32)
		s.pushLinear(scores, base)
	}
}

// pushLinear filters scores against the running threshold.
func (s *topK) pushLinear(scores []float32, base int32) {
	c := len(s.buf)
	for len(scores) > 0 {
		if c-s.n < minRoom {
			selectTop(s.buf[:s.n], s.q, s.k)
			s.n = s.k
			s.thr = max(s.thr, minKey(s.buf[:s.n]))
		}
		seg := scores[:min(c-s.n, len(scores))]
		s.n = filterKeys(seg, s.buf[:cap(s.buf)], s.n, base, s.thr)
		base += int32(len(seg))
		scores = scores[len(seg):]
	}
}

// filterKeys appends the entries of the scores of seg whose keys exceed thr
// (ids base+j), in order, at position n of buf and returns the new end.
// It may write anything to buf[new end : n+len(seg)+vecSlack], which must
// lie within buf.
func filterKeys(seg []float32, buf []int64, n int, base, thr int32) int {
	if len(seg) >= 16 && haveTopKAsm {
		m := len(seg) &^ 15
		n = filterKeysAsm(seg[:m], buf, n, base, thr)
		seg, base = seg[m:], base+int32(m)
	}
	buf = buf[:n+len(seg)]
	for j, v := range seg {
		key := floatKey(v)
		buf[n] = packEntry(key, base+int32(j))
		n += gt(key, thr)
	}
	return n
}

// gt is 1 if a > b, else 0, computed without a branch.
func gt(a, b int32) int {
	return int(uint64(int64(b)-int64(a)) >> 63)
}

// gt64 is 1 if a > b, else 0 (a SETcc, no branch).
func gt64(a, b int64) int {
	r := 0
	if a > b {
		r = 1
	}
	return r
}

// result returns the (at most) k entries of the largest scores pushed so
// far (entryID gives the ids), in the order the selection leaves them. The
// slice aliases the selector's buffer.
func (s *topK) result() []int64 {
	if s.n > s.k {
		selectTop(s.buf[:s.n], s.q, s.k)
		s.n = s.k
		s.thr = max(s.thr, minKey(s.buf[:s.n]))
	}
	return s.buf[:s.n]
}

// minKey returns the smallest key of a non-empty v (four running minima,
// so that the comparisons do not wait on each other).
func minKey(v []int64) int32 {
	m0 := v[0]
	m1, m2, m3 := m0, m0, m0
	i := 1
	for ; i+4 <= len(v); i += 4 {
		m0 = min(m0, v[i])
		m1 = min(m1, v[i+1])
		m2 = min(m2, v[i+2])
		m3 = min(m3, v[i+3])
	}
	for ; i < len(v); i++ {
		m0 = min(m0, v[i])
	}
	return entryKey(min(m0, m1, m2, m3))
}

// selectTop partially orders v so that v[:k] holds the k entries of
// largest keys, in no particular order; 1 ≤ k ≤ len(v); q is scratch of
// length at least len(v)+vecSlack. Quickselect with a median-of-three pivot
// and partitions that leave every entry where a branch-free Lomuto
// partition by swaps leaves it (partitionGT); elements equal to the pivot
// are split off separately, so ties cannot make it quadratic.
func selectTop(v, q []int64, k int) {
	lo, hi := 0, len(v) // the boundary k lies in [lo, hi]
	for hi-lo > 16 {
		a, b, c := entryKey(v[lo]), entryKey(v[lo+(hi-lo)/2]), entryKey(v[hi-1])
		p := max(min(a, b), min(max(a, b), c)) // median of three
		n := partitionGT(v, q, lo, hi, p)
		if n == lo { // nothing above the pivot: split off the elements equal to it
			n = partitionGT(v, q, lo, hi, p-1) // p is not the smallest int32: a and c exist below or at p
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
	// insertion sort of the short remaining range, descending by key
	for i := lo + 1; i < hi; i++ {
		x := v[i]
		j := i - 1
		for j >= lo && entryKey(v[j]) < entryKey(x) {
			v[j+1] = v[j]
			j--
		}
		v[j+1] = x
	}
}

// partitionGT moves the entries of v[lo:hi] whose keys are > p to the front
// and returns the end of that front part, leaving every entry where the
// branch-free Lomuto partition by swaps,
//
//	for i in lo..hi−1: swap v[i], v[n]; n += (key(v[i] before the swap) > p)
//
// leaves it (q is scratch of length ≥ hi−lo+vecSlack). That partition keeps
// the front part in its original order, and its back part (the entries ≤
// p) behaves as a queue: once it holds an entry, every step moves the entry
// at n (its head) to position i (its tail) and an entry ≤ p then takes the
// head's place, so that in queue terms an entry ≤ p is appended and an
// entry > p re-appends the head. The back part ends as the queue, its last
// entry first (at n) and then the rest from the head. Here the front part
// is compacted in place and the queue built in q, without the swaps'
// store-to-load chains (and 8 entries at a time with AVX-512, partitionAsm).
func partitionGT(v, q []int64, lo, hi int, p int32) int {
	pk := keyCeil(p)
	i := lo
	for i < hi && v[i] > pk { // entries > p before the first ≤ p stay
		i++
	}
	if i == hi {
		return hi
	}
	n := i // front end
	q = q[:hi-i+vecSlack]
	hd, tl := 0, 0 // queue q[hd:tl]
	v = v[:hi]
	for ; i < hi && (tl-hd < 8 || !haveTopKAsm); i++ {
		x := v[i]
		b := gt64(x, pk)
		v[n] = x
		n += b
		y := q[hd]
		if b == 0 {
			y = x
		}
		q[tl] = y
		tl++
		hd += b
	}
	if i < hi && haveTopKAsm {
		m := (hi - i) &^ 7
		if m > 0 {
			n, hd, tl = partitionAsm(v, i, m, pk, n, q, hd, tl)
			i += m
		}
		for ; i < hi; i++ {
			x := v[i]
			b := gt64(x, pk)
			v[n] = x
			n += b
			y := q[hd]
			if b == 0 {
				y = x
			}
			q[tl] = y
			tl++
			hd += b
		}
	}
	v[n] = q[tl-1]
	copy(v[n+1:hi], q[hd:tl-1])
	return n
}

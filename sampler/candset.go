package sampler

// candSet is the membership of a drawn candidate set: which nodes of [0, n)
// are in it and at which position of the draw. For a set much smaller than
// n it is an open-addressing hash table of about 4 slots a member (a few
// kilobytes, cache-resident), since stamping arrays of n entries makes
// every insertion and lookup a cache miss at large n (ImageNet scale: two
// 5 MB arrays per worker, a miss per candidate); otherwise it is those
// arrays. Either way a new set costs O(1) (generation stamps).
type candSet struct {
	gen uint32
	// dense form: stamp[v] == gen ⇔ v is a member, at position pos[v]
	stamp []uint32
	pos   []int32
	// hashed form: slot i holds node node[i] at position at[i] if
	// sgen[i] == gen; 2^bits slots, linear probing
	slots []candSlot
	bits  uint
}

// candSlot is one slot of the hashed form.
type candSlot struct {
	gen       uint32
	node, pos int32
}

// reset empties the set and makes it ready for up to m members of [0, n)
// (keeping its storage when it suits).
func (s *candSet) reset(n, m int) {
	bits := uint(4)
	for 1<<bits < 4*m {
		bits++
	}
	switch {
	case 1<<bits >= n/4: // a table would not be much smaller: stamp arrays
		if len(s.stamp) != n {
			*s = candSet{stamp: make([]uint32, n), pos: make([]int32, n)}
		}
	case s.slots == nil || s.bits < bits:
		*s = candSet{slots: make([]candSlot, 1<<bits), bits: bits}
	}
	s.gen++
	if s.gen == 0 {
		clear(s.stamp)
		clear(s.slots)
		s.gen = 1
	}
}

// slot returns the slot of v in the hashed form: where it is, or the empty
// slot where it would go.
func (s *candSet) slot(v int32) *candSlot {
	mask := uint32(1)<<s.bits - 1
	i := (uint32(v) * 0x9e3779b1) >> (32 - s.bits)
	for {
		sl := &s.slots[i]
		if sl.gen != s.gen || sl.node == v {
			return sl
		}
		i = (i + 1) & mask
	}
}

// add inserts v at position p unless v is a member; it reports whether it
// inserted.
func (s *candSet) add(v, p int32) bool {
	if s.slots == nil {
		if s.stamp[v] == s.gen {
			return false
		}
		s.stamp[v], s.pos[v] = s.gen, p
		return true
	}
	sl := s.slot(v)
	if sl.gen == s.gen {
		return false
	}
	*sl = candSlot{gen: s.gen, node: v, pos: p}
	return true
}

// lookup returns v's position if v is a member.
func (s *candSet) lookup(v int32) (int32, bool) {
	if s.slots == nil {
		return s.pos[v], s.stamp[v] == s.gen
	}
	sl := s.slot(v)
	return sl.pos, sl.gen == s.gen
}

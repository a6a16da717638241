package eval

// posRows serves an SMO solver the kernel rows of its working set in
// position order, so that the two hot loops (smo_kernels.go) read them
// contiguously. LIBSVM gets this by swapping the columns of every cached row
// when it shrinks; here the shared cache keeps training order (several
// solvers use it in turn) and each solver gathers the rows it uses through
// its position → cache column map p2l, keeping them in an arena:
//
//   - while no position has been swapped and p2l is the identity (the
//     training rows arrive grouped by class, see fitEvaluate), a cache row is
//     already in position order and is returned as it is;
//   - a row in position order is made either by gathering it through p2l
//     (from a copy of the cache row: the copy is a sequential read that the
//     hardware prefetches, where the gather's scattered reads of a row not
//     in cache stalled on memory; in the NCI1 protocol the gathers took
//     2.1 s of CPU before the copy and 0.5 s after) or,
//     when p2l started as the identity and few swaps have been made, by
//     copying the cache row and replaying the swaps on it (a swap of two
//     positions swaps two entries), which is several times cheaper;
//   - a row stays valid across later swaps: they are logged and replayed on
//     the row when it is next used, or the row is made again when the log
//     since is long or reaches past its length;
//   - when the arena is full it is emptied.
//
// Only which memory the values are read from changes: every value is the
// cache's, so the solver's arithmetic and results are unchanged.
type posRows struct {
	cache   *kernelCache
	l       int
	ident   bool // p2l is the identity: cache rows are in position order
	start   bool // p2l was the identity when the solver started
	arena   []float32
	rows    int       // slots in the arena, each of l values
	used    int       // slots handed out since the arena was last emptied
	owner   []int32   // slot → local index, −1 if free
	slot    []int32   // local index → slot (valid if owner agrees)
	n       []int32   // local index → positions gathered
	logAt   []int32   // local index → swaps replayed
	swaps   []int32   // logged swaps, as pairs of positions
	scratch []float32 // a cache row copied before a gather
}

func newPosRows(cache *kernelCache, p2l []int32) *posRows {
	l := len(p2l)
	p := &posRows{cache: cache, l: l, ident: true}
	for k, c := range p2l {
		if int(c) != k {
			p.ident = false
			break
		}
	}
	p.start = p.ident
	return p
}

// init allocates the arena and indexes on first need.
func (p *posRows) init() {
	m := len(p.cache.idx)
	p.arena = p.cache.posArena(p.l)
	p.rows = len(p.arena) / max(p.l, 1)
	p.owner = make([]int32, p.rows)
	for s := range p.owner {
		p.owner[s] = -1
	}
	p.slot = make([]int32, m)
	p.n = make([]int32, m)
	p.logAt = make([]int32, m)
}

// reserve makes room for k rows gathered by the next k calls of row: the
// rows those calls return stay valid together.
func (p *posRows) reserve(k int) {
	if p.ident {
		return
	}
	if p.arena == nil {
		p.init()
	}
	if p.used+k > p.rows {
		for s := 0; s < p.used; s++ {
			p.owner[s] = -1
		}
		p.used = 0
	}
}

// swapped records that positions i and j were exchanged.
func (p *posRows) swapped(i, j int) {
	p.ident = false
	p.swaps = append(p.swaps, int32(i), int32(j))
}

// row returns the kernel row of cache row o in position order over the
// first n positions, p2l the solver's position → cache column map (at least
// n long). Call reserve first.
func (p *posRows) row(o int32, p2l []int32) []float32 {
	n := len(p2l)
	if p.ident {
		return p.cache.row(int(o))[:n]
	}
	if p.arena == nil {
		p.init()
	}
	s := p.slot[o]
	if p.owner[s] == o && int(p.n[o]) >= n {
		have := p.n[o]
		r := p.arena[int(s)*p.l : int(s)*p.l+int(have)]
		pend := p.swaps[p.logAt[o]:]
		replay := len(pend)/2 <= n/8
		for q := 0; replay && q < len(pend); q++ {
			replay = pend[q] < have
		}
		if replay {
			replaySwaps(r, pend)
			p.logAt[o] = int32(len(p.swaps))
			return r[:n]
		}
	} else {
		s = int32(p.used)
		p.used++
		p.owner[s], p.slot[o] = o, s
	}
	dst := p.arena[int(s)*p.l : int(s+1)*p.l]
	K := p.cache.row(int(o))
	if p.start && len(p.swaps)/2 <= p.l/4 {
		// The cache row is the row in the starting order: copy it
		// whole and bring it to the current order.
		copy(dst, K[:p.l])
		replaySwaps(dst, p.swaps)
		p.n[o] = int32(p.l)
	} else {
		if p.scratch == nil {
			p.scratch = make([]float32, len(K))
		}
		copy(p.scratch, K)
		gatherF32(dst[:n], p.scratch, p2l)
		p.n[o] = int32(n)
	}
	p.logAt[o] = int32(len(p.swaps))
	return dst[:n]
}

// replaySwaps applies the logged swaps of positions, in order, to a row.
func replaySwaps(r []float32, swaps []int32) {
	for q := 0; q+1 < len(swaps); q += 2 {
		a, b := swaps[q], swaps[q+1]
		r[a], r[b] = r[b], r[a]
	}
}

package sampler

// Algorithm 3 of the paper, "Random Walk with Restart (RWR)": sampling a
// mini-batch as a walk on the proximity graph (RWR, and the RW / BFS / DFS
// variants the paper compares it with).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Walk kinds of Config.Walk.
const (
	WalkRWR = "rwr" // random walk with restart (Algorithm 3), the default
	WalkRW  = "rw"  // plain random walk (RWR with α = 0)
	WalkBFS = "bfs" // breadth-first search from the start node
	WalkDFS = "dfs" // random-order depth-first search from the start node
)

// Walks lists the walk kinds, the default (WalkRWR, also meant by "") first.
// Config.Walk and Spec.Walk accept exactly these.
var Walks = []string{WalkRWR, WalkRW, WalkBFS, WalkDFS}

// stallFactor sets how long a random walk may go without meeting a new node
// before it is considered stuck: stallFactor·(K+1) consecutive steps.
const stallFactor = 16

// walker samples batches on a graph. It owns the generation-stamped visited
// array (mark[v] == gen ⇔ v is in the batch being built), so a batch costs
// no allocation and no clearing.
type walker struct {
	g     *Graph
	mark  []uint32
	gen   uint32
	queue []int32 // BFS queue
	nbuf  []int32 // shuffled neighbour list (BFS)
	out   []int   // the batch being built

	frames  []dfsFrame // DFS stack
	strides []int32    // strides coprime to K (DFS visiting orders)
	strideK int32

	trace func(WalkStep) // optional step reporter, see WalkOptions

	// The RWR/RW block being walked (see rwr): its draws, the neighbour
	// index each draw picks, the node each of its steps reaches, and the
	// segments eval advances in lockstep.
	draws [rwrBlock]uint64
	nbIdx [rwrBlock]int32
	nodes [rwrBlock]int32
	segs  [rwrBlock]walkSeg
}

// rwrBlock is R, the number of draws the RWR/RW loop takes from the
// generator at a time (see rwr); a power of two. Measured on the N=50,000,
// K=100 graph with α = 0.2 (walk_block_test.go, BenchmarkRWRNext*): with
// B = 256, R = 64 was about 25% slower than 128 and R = 256 within 5% of it;
// with B = 32 and 128, R = 256 was slower than 128 (it draws more than it
// uses).
const rwrBlock = 128

// walkSeg is a segment of an RWR/RW block being evaluated: the steps at
// positions [p, e) of the block, each leaving from the node the step before
// it reached; prev is the node the step at p leaves from (at the start of the
// segment, the restart node u, or the walk's current node for a segment that
// continues the walk into the block).
type walkSeg struct {
	prev int32
	p, e int32
}

// begin starts a new batch on graph g.
func (w *walker) begin(g *Graph) {
	w.g = g
	if len(w.mark) != g.N {
		w.mark = make([]uint32, g.N)
		w.gen = 0
	}
	w.gen++
	if w.gen == 0 { // wrapped after 2³² batches
		clear(w.mark)
		w.gen = 1
	}
}

// has reports whether v is already in the batch.
func (w *walker) has(v int32) bool { return w.mark[v] == w.gen }

// add puts v (not yet in the batch) into the batch.
func (w *walker) add(v int32) {
	w.mark[v] = w.gen
	w.out = append(w.out, int(v))
}

// WalkOptions configure Walk.
type WalkOptions struct {
	Kind     string  // WalkRWR (default), WalkRW, WalkBFS or WalkDFS
	B        int     // number of distinct nodes to collect (clamped to N)
	Alpha    float64 // restart probability α of WalkRWR, in [0, 1]
	MaxSteps int     // steps from one start node before falling back; 0 means 100·B
	// Trace, when set, is called for every step of the walk (see
	// WalkStep): for teaching pictures and for tests. It consumes no
	// randomness: a traced walk returns the batch of an untraced one.
	Trace func(WalkStep)
}

// WalkStep is one step of a walk, as reported to WalkOptions.Trace (and
// BatchSampler.SetWalkTrace).
//
// RWR and RW: one step per edge followed (and per fallback jump). BFS: one
// step per out-neighbour examined, From being the node whose row is
// expanded (its unvisited neighbours join the batch in the order examined).
// DFS: one step per out-neighbour tried, From being the node on top of the
// stack; backtracking is not a step. BFS and DFS never restart.
type WalkStep struct {
	From, To int
	// Restart: the walker first went back to the restart node u (From is u).
	Restart bool
	// Jump: the fallback continued from a new start node To (no edge taken);
	// To becomes the restart node (RWR) or the new root (BFS, DFS). From
	// is the node the walk was at (RWR, RW) or the last node expanded or
	// tried from (BFS, DFS; the previous root if none).
	Jump bool
	// New: To joined the batch at this step.
	New bool
}

// Walk samples one mini-batch on g as a walk from start (Algorithm 3 of the
// paper) and returns B distinct nodes, start first. BatchSampler calls the
// same code for every batch; Walk is for a graph and a loop of one's own.
//
// RWR: at every step, with probability α the walker returns to the start
// node u, otherwise it stays where it is; either way it then moves to a
// uniformly chosen out-neighbour (edge weights are ignored, as in the
// official code). This is Algorithm 3 with its idle steps removed: there a
// restart lands on u, which is already in the batch, and the walk then
// leaves u through a uniform neighbour, so both produce the same sequence of
// newly visited nodes (a test compares the two distributions); here α = 1 is
// well defined and collects exactly u's out-neighbourhood, the kNN-like
// limit of the paper (with B ≤ K+1; with B > K+1 the fallback below adds
// other start nodes' neighbourhoods). Higher α keeps the batch closer to u;
// RW is RWR with α = 0. BFS expands nodes in queue order, visiting each
// node's out-neighbours in random order. DFS goes as deep as it can, trying
// each node's out-neighbours in a random order (a random rotation and a
// random stride coprime to K) and backtracking when all were visited.
//
// Rows may repeat a node or list the node itself (candidates
// with_replacement, the published code's graph): a neighbour listed r times
// of K is picked with probability r/K, as the published walk's
// random.choice over the row, and a step along a self-loop stays on the
// node (it meets no new node, so it counts toward the stall and step limits
// below; BFS and DFS skip such entries as already in the batch).
//
// Fallback, so that a walk never hangs (the official code can loop forever
// on a small reachable set): when the walk from its current start has taken
// MaxSteps steps, or (RW/RWR) has gone 16·(K+1) steps without meeting a new
// node, or (BFS/DFS) has exhausted the nodes reachable from the start, the
// walk continues from a new start node not yet in the batch, which then
// serves as the restart node u. Walk picks it uniformly at random;
// BatchSampler picks the next node not yet covered in the epoch. Every batch
// therefore holds exactly min(B, N) distinct nodes.
//
// Randomness and speed (RWR/RW): every step uses one 64-bit draw from src,
// whose high 32 bits decide the restart (below α·2³²) and whose low 32 bits
// pick the neighbour. The draws are taken in blocks of 128, and the nodes
// the steps of a block reach are computed together, the chains between
// restarts side by side, so that their cache misses overlap (about twice as
// fast on a 20 MB graph; see rwr). When the batch is full, or the walk falls
// back in the middle of a block, the rest of the block's draws is unused.
// The batch and the trace are therefore deterministic functions of g,
// start, the options and the state of src, and a traced walk makes the same
// steps as an untraced one.
func Walk(g *Graph, start int, opt WalkOptions, src *rand.PCG) ([]int, error) {
	if g == nil || len(g.Adj) != g.N*g.K {
		return nil, fmt.Errorf("sampler: walk: need a graph with N·K adjacency entries")
	}
	if start < 0 || start >= g.N {
		return nil, fmt.Errorf("sampler: walk: start node %d is not in [0,%d)", start, g.N)
	}
	kind, err := validWalk(opt.Kind)
	if err != nil {
		return nil, fmt.Errorf("sampler: walk: %w", err)
	}
	if opt.B <= 0 || !(opt.Alpha >= 0 && opt.Alpha <= 1) || opt.MaxSteps < 0 {
		return nil, fmt.Errorf("sampler: walk: need B ≥ 1, α in [0,1], MaxSteps ≥ 0; got B=%d α=%v MaxSteps=%d", opt.B, opt.Alpha, opt.MaxSteps)
	}
	if opt.MaxSteps == 0 {
		opt.MaxSteps = 100 * opt.B
	}
	var w walker
	w.begin(g)
	w.trace = opt.Trace
	next := func() int32 {
		v := int32((uint64(uint32(src.Uint64())) * uint64(g.N)) >> 32)
		for w.has(v) {
			if v++; int(v) == g.N {
				v = 0
			}
		}
		return v
	}
	return w.walk(int32(start), walkParams{kind: kind, b: opt.B, alpha: opt.Alpha, maxSteps: opt.MaxSteps}, src, next, nil), nil
}

// walkParams are the per-batch inputs of a walk.
type walkParams struct {
	kind     string
	b        int     // B, the number of distinct nodes wanted
	alpha    float64 // α, restart probability (RWR only)
	maxSteps int     // steps from one start node before falling back
}

// walk collects p.b distinct nodes of w.g, starting from start; see Walk
// for the algorithm and the fallback.
func (w *walker) walk(start int32, p walkParams, src *rand.PCG, next func() int32, out []int) []int {
	b := min(p.b, w.g.N)
	w.out = out[:0]
	w.add(start)
	switch p.kind {
	case WalkBFS:
		w.bfs(start, b, p.maxSteps, src, next)
	case WalkDFS:
		w.dfs(start, b, p.maxSteps, src, next)
	default:
		alpha := p.alpha
		if p.kind == WalkRW {
			alpha = 0
		}
		w.rwr(start, b, alpha, p.maxSteps, src, next)
	}
	out = w.out
	w.out = nil
	return out
}

// rwr is the RWR / RW loop: one 64-bit draw per step, no allocation.
//
// Step s uses its own draw r_s: it restarts (leaves from u) when the high 32
// bits of r_s are below α·2³², otherwise it leaves from the node the step
// before reached, and the low 32 bits pick the neighbour index (Lemire's
// multiply-shift; bias ≤ K/2³²). Which nodes the steps reach thus depends
// only on the draws, u and the current node, not on the batch bookkeeping,
// and the restarts cut the walk into independent segments: a segment starts
// at a restart on u's row (in cache) and follows its own chain of dependent
// loads, 1/α steps on average. A step at a time, the walk waits for one
// cache miss per step (the adjacency is 20 MB for N=50,000, K=100), so rwr
// evaluates the walk in blocks instead:
//
//  1. draw takes R = rwrBlock draws from src;
//  2. eval computes the nodes the block's steps reach by advancing all its
//     segments in lockstep rounds (the loads of a round are independent, so
//     their cache misses overlap); the steps before the first restart form
//     the segment that continues from the current node. eval only computes
//     as many steps as the batch still lacks nodes (at least that many steps
//     are needed), and the next ones when those are used up, so the end of a
//     batch costs no dependent loads that are thrown away;
//  3. the loop goes through the steps in order as the step-at-a-time walk
//     did: a new node joins the batch, the stall counter and the step count
//     advance, the trace hears the step, the fallback is checked before each
//     step. The traced and the untraced walk are the same code.
//
// When the batch is full, or a fallback jump happens in the middle of a
// block, the rest of the block is discarded: its draws stay consumed, so a
// walk is a deterministic function of the state of src (a test checks rwr
// against a plain step-at-a-time walk that consumes draws in the same
// blocks). Every step still uses one fresh draw under the same rule, so the
// batches follow the distribution of the step-at-a-time walk; only which
// outputs of src the steps use differs. RW is the same loop with α = 0: one
// segment per block, which gains nothing.
func (w *walker) rwr(start int32, b int, alpha float64, maxSteps int, src *rand.PCG, next func() int32) {
	g := w.g
	k := g.K
	mark, gen := w.mark, w.gen
	out := w.out
	// restart ⇔ the high 32 bits of a draw are < α·2³².
	athr := uint64(math.Ldexp(alpha, 32))
	stall := stallFactor * (g.K + 1)
	u, cur := start, start
	steps, since := 0, 0
	pos := rwrBlock // the next step of the block; rwrBlock: none left
	done := pos     // the block's steps [0, done) are evaluated
	for len(out) < b {
		if k == 0 || steps >= maxSteps || since >= stall {
			w.out = out
			from := cur
			u = next()
			w.add(u)
			out = w.out
			cur = u
			steps, since = 0, 0
			pos = rwrBlock // discard the rest of the block
			if w.trace != nil {
				w.trace(WalkStep{From: int(from), To: int(u), Jump: true, New: true})
			}
			continue
		}
		if pos == rwrBlock {
			w.draw(src)
			pos, done = 0, 0
		}
		if pos == done {
			done = min(rwrBlock, pos+b-len(out))
			w.eval(pos, done, athr, u, cur)
		}
		i := pos & (rwrBlock - 1)
		pos++
		restart := w.draws[i]>>32 < athr
		from := cur
		if restart {
			from = u
		}
		v := w.nodes[i]
		cur = v
		steps++
		isNew := mark[v] != gen
		if isNew {
			mark[v] = gen
			out = append(out, int(v))
			since = 0
		} else {
			since++
		}
		if w.trace != nil {
			w.trace(WalkStep{From: int(from), To: int(v), Restart: restart, New: isNew})
		}
	}
	w.out = out
}

// draw takes the next rwrBlock draws from src into w.draws, with the
// neighbour index each picks in w.nbIdx.
func (w *walker) draw(src *rand.PCG) {
	k := uint64(w.g.K)
	for i := range w.draws {
		r := src.Uint64()
		w.draws[i] = r
		w.nbIdx[i] = int32((uint64(uint32(r)) * k) >> 32)
	}
}

// eval computes w.nodes[lo:hi], the nodes the block's steps lo..hi-1 reach
// when the restart node is u and the step before lo reached cur (athr is
// α·2³², see rwr). A step that restarts begins a segment leaving from u;
// step lo, unless it restarts, begins one leaving from cur. Round t computes
// the t-th step of every segment still running, so the loads of a round are
// independent of each other and their cache misses overlap: eval costs about
// as many miss latencies as its longest segment has steps, or the misses
// divided by the memory-level parallelism of the core if that is more.
func (w *walker) eval(lo, hi int, athr uint64, u, cur int32) {
	k := uint64(w.g.K)
	adj := w.g.Adj
	segs := w.segs[:0]
	for i := lo; i < hi; i++ {
		if w.draws[i&(rwrBlock-1)]>>32 < athr {
			if len(segs) > 0 {
				segs[len(segs)-1].e = int32(i)
			}
			segs = append(segs, walkSeg{prev: u, p: int32(i)})
		} else if i == lo {
			segs = append(segs, walkSeg{prev: cur, p: int32(i)})
		}
	}
	segs[len(segs)-1].e = int32(hi)
	// The rounds. The indices are masked to the array sizes (a no-op) so
	// that only the adjacency load is bounds-checked.
	for n := len(segs); n > 0; {
		m := 0
		for i := range n {
			s := w.segs[i&(rwrBlock-1)]
			p := s.p & (rwrBlock - 1)
			v := adj[uint64(s.prev)*k+uint64(w.nbIdx[p])]
			w.nodes[p] = v
			s.prev = v
			s.p++
			w.segs[m&(rwrBlock-1)] = s
			if s.p < s.e {
				m++
			}
		}
		n = m
	}
}

// shuffled returns the out-neighbours of v in random order (a scratch slice).
func (w *walker) shuffled(v int32, src *rand.PCG) []int32 {
	nb := append(w.nbuf[:0], w.g.Neighbours(int(v))...)
	for i := len(nb) - 1; i > 0; i-- {
		j := int((uint64(uint32(src.Uint64())) * uint64(i+1)) >> 32)
		nb[i], nb[j] = nb[j], nb[i]
	}
	w.nbuf = nb
	return nb
}

func (w *walker) bfs(start int32, b, maxSteps int, src *rand.PCG, next func() int32) {
	q := append(w.queue[:0], start)
	head, steps := 0, 0
	last := start // the last node expanded (for the trace)
	for len(w.out) < b {
		if head == len(q) || steps >= maxSteps {
			u := next()
			w.add(u)
			if w.trace != nil {
				w.trace(WalkStep{From: int(last), To: int(u), Jump: true, New: true})
			}
			q = append(q[:0], u)
			head, steps = 0, 0
			last = u
			continue
		}
		v := q[head]
		head++
		steps++
		last = v
		for _, x := range w.shuffled(v, src) {
			isNew := !w.has(x)
			if isNew {
				w.add(x)
				q = append(q, x)
			}
			if w.trace != nil {
				w.trace(WalkStep{From: int(v), To: int(x), New: isNew})
			}
			if isNew && len(w.out) == b {
				break
			}
		}
	}
	w.queue = q
}

// dfsFrame is a node on the DFS stack and its position in a random visiting
// order of its out-neighbours: the i-th tried neighbour is
// Neighbours(v)[(off + i·stride) mod K], with stride coprime to K.
type dfsFrame struct {
	v, i, off, stride int32
}

func (w *walker) dfs(start int32, b, maxSteps int, src *rand.PCG, next func() int32) {
	k := int32(w.g.K)
	if len(w.strides) == 0 || w.strideK != k {
		w.strides = w.strides[:0]
		for st := int32(1); st <= max(k-1, 1); st++ {
			if gcd(st, k) == 1 {
				w.strides = append(w.strides, st)
			}
		}
		w.strideK = k
	}
	frame := func(v int32) dfsFrame {
		r := src.Uint64()
		f := dfsFrame{v: v, stride: 1}
		if k > 0 {
			f.off = int32((uint64(uint32(r)) * uint64(k)) >> 32)
			f.stride = w.strides[((r>>32)*uint64(len(w.strides)))>>32]
		}
		return f
	}
	st := append(w.frames[:0], frame(start)) // start is already in the batch
	steps := 0
	last := start // the last node tried from (for the trace)
	for len(w.out) < b {
		if len(st) == 0 || steps >= maxSteps {
			u := next()
			w.add(u)
			if w.trace != nil {
				w.trace(WalkStep{From: int(last), To: int(u), Jump: true, New: true})
			}
			st = append(st[:0], frame(u))
			steps = 0
			last = u
			continue
		}
		f := &st[len(st)-1]
		if f.i >= k { // every neighbour tried: backtrack
			st = st[:len(st)-1]
			continue
		}
		steps++
		x := w.g.Adj[int(f.v)*int(k)+int((f.off+f.i*f.stride)%k)]
		f.i++
		last = f.v
		isNew := !w.has(x)
		if w.trace != nil {
			w.trace(WalkStep{From: int(f.v), To: int(x), New: isNew})
		}
		if isNew {
			w.add(x)
			st = append(st, frame(x))
		}
	}
	w.frames = st
}

func gcd(a, b int32) int32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// validWalk checks a walk kind name ("" means WalkRWR, the first of Walks).
func validWalk(kind string) (string, error) {
	if kind == "" {
		return Walks[0], nil
	}
	if slices.Contains(Walks, kind) {
		return kind, nil
	}
	return "", fmt.Errorf("walk %q is not one of %s", kind, quoted(Walks, ", "))
}

// quoted returns the values of list quoted and joined with sep.
func quoted(list []string, sep string) string {
	q := make([]string, len(list))
	for i, v := range list {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, sep)
}

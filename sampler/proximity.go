package sampler

// Algorithm 2 of the paper, "Proximity Graph Construction" (numbered in the
// order the algorithms appear in the paper: 1 is the training pipeline, 2
// this one, 3 the random walk with restart of walk.go).

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas32"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
)

// Graph kinds of Config.Graph and Spec.Graph.
const (
	GraphProximity = "proximity" // Algorithm 2, BuildProximityGraph (the default)
	GraphKNN       = "knn"       // exact top-K over the whole dataset, BuildKNNGraph
)

// GraphKinds lists the graph kinds, the default (GraphProximity, also meant
// by "") first. Config.Graph and Spec.Graph accept exactly these.
var GraphKinds = []string{GraphProximity, GraphKNN}

// Candidate sharing modes of GraphOptions.CandidateSharing.
const (
	// ShareBlock lets a block of BlockSize nodes share one candidate draw, so
	// that each block's similarities are one GEMM (the fast path).
	ShareBlock = "block"
	// ShareNode draws an independent candidate set for every node, literally
	// as in Algorithm 2 (slower: one gather and M dot products per node).
	ShareNode = "node"
)

// Candidate draws of GraphOptions.Candidates, Config.Candidates and
// Spec.Candidates: how Algorithm 2 draws a node's M candidates.
const (
	// CandidatesWithoutReplacement (the default, also meant by ""): M
	// distinct nodes other than the node itself, uniformly; M and K are
	// clamped to N−1, so M ≥ N−1 gives the exact kNN graph. The paper's
	// text, and this product's graphs unless asked otherwise.
	CandidatesWithoutReplacement = "without_replacement"
	// CandidatesWithReplacement (the published code, THUDM/BatchSampler
	// main.py build_graph: torch.randint(0, N, (rows, M)), then topk over
	// the M scores): M independent uniform draws from all N nodes, so the
	// node itself and repeated nodes may be among them; M is not clamped
	// (M > N still leaves about (1 − 1/N)^M of the nodes out of a draw) and
	// K only needs K ≤ M. See BuildProximityGraph.
	CandidatesWithReplacement = "with_replacement"
)

// CandidateDraws lists the allowed values of GraphOptions.Candidates,
// Config.Candidates and Spec.Candidates, the default first.
var CandidateDraws = []string{CandidatesWithoutReplacement, CandidatesWithReplacement}

// maxCandidates bounds M with replacement: candidate positions are int32
// (without replacement M is clamped to N−1 anyway).
const maxCandidates = math.MaxInt32

// DefaultBlockSize is the number of nodes that share one candidate set when
// GraphOptions.BlockSize is 0.
const DefaultBlockSize = 64

// minBlocksPerNode is the least mean number of blocks whose candidate set
// contains a given node, (M+1)/BlockSize: BlockSize is lowered (down to 6)
// to keep it. A node drawn by no block has no in-edge, so walks can only
// reach it as a start node; with ShareNode that chance is about e^(−M), with
// ShareBlock about e^(−(M+1)/BlockSize), hence at most e^(−16) here.
// (Measured with M=100, N=2000 and blocks of 64: 20% of the nodes had no
// in-edge, against 0.1% per node.)
const minBlocksPerNode = 16

// minBlockSize is the least block size minBlocksPerNode lowers BlockSize to.
const minBlockSize = 6

// chunkCols bounds the number of candidate columns scored at once (the exact
// kNN graph streams all N nodes through the top-K selectors in chunks).
const chunkCols = 2048

// GraphOptions configure BuildProximityGraph.
type GraphOptions struct {
	// M is the number of candidates drawn per node and K the number of
	// neighbours kept (1 ≤ K ≤ M). Without replacement both are clamped to
	// N−1; M ≥ N−1 means "all other nodes", which yields the exact kNN
	// graph. With replacement neither is clamped (M < 2³¹).
	M, K int
	// Candidates is CandidatesWithoutReplacement (default, also "") or
	// CandidatesWithReplacement.
	Candidates string
	// CandidateSharing is ShareBlock (default) or ShareNode.
	CandidateSharing string
	// BlockSize is the largest number of nodes sharing a candidate set in
	// ShareBlock mode (0 means DefaultBlockSize); it is lowered so that every
	// node is a candidate of about 16 blocks, see minBlocksPerNode.
	BlockSize int
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	// The graph does not depend on it.
	Workers int
	// Seed drives the candidate draws.
	Seed uint64
}

// BuildProximityGraph builds the proximity graph G of the paper
// (Algorithm 2 and Eq. 3) from embeddings e_i (one row per node):
//
//	for every node v: draw M candidates C_v uniformly from the other nodes;
//	                  N_v = TopK_{m ∈ C_v} (e_v · e_m);  G[v] = N_v
//
// where · is the inner product of L2-normalised rows (cosine similarity; e is
// not modified, a normalised copy is used). A larger M makes neighbours more
// similar (M ≥ N−1: exact kNN graph); M close to K makes them random.
//
// By default (Candidates = CandidatesWithoutReplacement) candidates are
// drawn without replacement and never include the node itself, as the
// paper's text describes Algorithm 2 (for M ≪ N the difference from the
// published code's draw is negligible, and this choice makes M ≥ N−1
// exactly the kNN graph). The result is a directed K-out graph of K
// distinct out-neighbours, none the node itself.
//
// With CandidateSharing = ShareBlock the nodes are shuffled and cut into
// blocks of BlockSize; each block draws one set of M+1 candidates, node v of
// the block uses that set minus itself if v is in it, and otherwise minus one
// (per block) uniformly chosen member. Each node's candidate set is therefore
// still a uniform M-subset of the other nodes, exactly as in Algorithm 2,
// but the sets of nodes in one block coincide; the tests check that
// neighbour similarity, label agreement and walk statistics match ShareNode
// within noise. The build is deterministic given Seed.
//
// With Candidates = CandidatesWithReplacement the draw is the published
// code's (THUDM/BatchSampler main.py, build_graph): M independent uniform
// draws from all N nodes, the node itself included, scored and cut to the
// top K as torch.topk cuts the M scores of a row, which means:
//
//   - Self: a node that draws itself scores it like any other candidate.
//     Its cosine with itself is 1 (about 1 in float32), the largest
//     possible, so the node is then its own first neighbour — a self-loop,
//     on which a walk step stays where it is (as the published walk does).
//     The published code keeps it (its exp(cos/τ) is monotone in the
//     cosine, so the order is the same), and so does this path.
//   - Duplicates: a node drawn twice is two columns with the same score;
//     top-K keeps both when both rank among the K best, so it fills two of
//     the K slots and is twice as likely to be the walk's next step.
//   - K versus distinct candidates: only K ≤ M is required (torch.topk's
//     condition on the M scores). When the M draws hold fewer than K
//     distinct nodes (always when K > N) the row repeats nodes; that is
//     what the published code's topk returns, and it is kept.
//   - M is not clamped: M = 2N draws leave a share (1 − 1/N)^M ≈ e^−2 of the
//     nodes out, so graphs still change with M beyond N.
//
// ShareBlock (default) then draws one multiset of M candidates per block,
// scored by every node of the block (no drop: each node's multiset is
// still M independent uniform draws over all N nodes, the marginal of the
// published code's per-node draw, which ShareNode performs literally);
// duplicate candidates are gathered and scored twice, so the cost is that
// of M distinct candidates. Block b's draws are M successive
// rand.Rand.IntN(N) of the same per-block generator the default path
// draws from; ShareNode's are node i's. The build stays deterministic
// given Seed and independent of Workers.
func BuildProximityGraph(e Embeddings, opt GraphOptions) (*Graph, error) {
	u, err := normalizeRows(e)
	if err != nil {
		return nil, fmt.Errorf("sampler: proximity graph: %w", err)
	}
	return buildProximity(u, e.N, e.D, opt)
}

// BuildKNNGraph builds the exact K-nearest-neighbour graph of the rows of e
// under cosine similarity (each node's K most similar other nodes, ties
// broken arbitrarily), scoring all N² pairs with blocked GEMMs.
func BuildKNNGraph(e Embeddings, k, workers int) (*Graph, error) {
	u, err := normalizeRows(e)
	if err != nil {
		return nil, fmt.Errorf("sampler: knn graph: %w", err)
	}
	return buildKNN(u, e.N, e.D, k, workers)
}

// checkEmbeddings validates the shape and values of e.
func checkEmbeddings(e Embeddings) error {
	if e.N <= 0 || e.D <= 0 {
		return fmt.Errorf("embeddings are %d×%d, want N ≥ 1 and D ≥ 1", e.N, e.D)
	}
	if len(e.Data) != e.N*e.D {
		return fmt.Errorf("embeddings hold %d values, want N·D = %d·%d = %d", len(e.Data), e.N, e.D, e.N*e.D)
	}
	for i, v := range e.Data {
		// NaN or ±Inf: the exponent's bits all ones (one test per value
		// rather than IsNaN's and IsInf's three: this pass over the whole
		// matrix, twice per ImageNet-scale build, took 0.5 s each)
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return fmt.Errorf("embedding row %d column %d is %v, want a finite value", i/e.D, i%e.D, v)
		}
	}
	return nil
}

// normalizeRows returns a copy of e with every row scaled to unit L2 norm
// (rows of norm zero stay zero, so their similarity to everything is 0).
func normalizeRows(e Embeddings) ([]float32, error) {
	if err := checkEmbeddings(e); err != nil {
		return nil, err
	}
	u := make([]float32, len(e.Data))
	for i := 0; i < e.N; i++ {
		normalizeInto(u[i*e.D:(i+1)*e.D], e.Row(i))
	}
	return u, nil
}

// mix64 is the splitmix64 finaliser, used to derive independent RNG streams.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// resolveMK checks 1 ≤ K ≤ M and the candidate draw; without replacement
// it clamps M and K to N−1 (a single node has no neighbour), with
// replacement it returns them as they are (M < 2³¹), and reports whether
// the draw is with replacement.
func resolveMK(n, m, k int, candidates string) (int, int, bool, error) {
	replace := candidates == CandidatesWithReplacement
	if err := oneOf("Candidates", candidates, CandidateDraws, true); err != nil {
		return 0, 0, false, err
	}
	if n == 1 && !replace {
		return 0, 0, false, nil
	}
	if k < 1 {
		return 0, 0, false, fmt.Errorf("K (neighbours kept) must be ≥ 1, got %d", k)
	}
	if m < k {
		return 0, 0, false, fmt.Errorf("M (candidates) must be ≥ K, got M=%d K=%d", m, k)
	}
	if replace {
		if m > maxCandidates {
			return 0, 0, false, fmt.Errorf("M (candidates) must be < 2³¹ with replacement, got %d", m)
		}
		return m, k, true, nil
	}
	return min(m, n-1), min(k, n-1), false, nil
}

// blockSizeFor returns the ShareBlock block size for the requested bs (0:
// DefaultBlockSize), lowered to keep the mean number of blocks whose draw
// holds a given node at minBlocksPerNode (see there). Without replacement
// that number is about (M+1)/bs, and when M+1 ≥ N every block holds every
// node; with replacement a node misses one block's draw with probability
// (1 − 1/N)^M ≈ e^(−M/N) and all N/bs blocks with probability about
// e^(−M/bs), whatever M is relative to N, so bs ≤ M/16.
func blockSizeFor(bs, n, m int, replace bool) (int, error) {
	if bs == 0 {
		bs = DefaultBlockSize
	}
	if bs < 0 {
		return 0, fmt.Errorf("BlockSize must be ≥ 0, got %d", bs)
	}
	switch {
	case replace:
		bs = min(bs, max(minBlockSize, m/minBlocksPerNode))
	case m+1 < n:
		bs = min(bs, max(minBlockSize, (m+1)/minBlocksPerNode))
	}
	return bs, nil
}

func workerCount(w int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(w, 1)
}

// parallel runs job(w, j) for j in [0, jobs) on the given number of workers;
// w identifies the worker (for its scratch space).
func parallel(workers, jobs int, job func(w, j int)) {
	workers = min(workers, jobs)
	if workers <= 1 {
		for j := 0; j < jobs; j++ {
			job(0, j)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				j := int(next.Add(1) - 1)
				if j >= jobs {
					return
				}
				job(w, j)
			}
		}(w)
	}
	wg.Wait()
}

// buildProximity runs Algorithm 2 on the normalised rows u (n×d).
func buildProximity(u []float32, n, d int, opt GraphOptions) (*Graph, error) {
	m, k, replace, err := resolveMK(n, opt.M, opt.K, opt.Candidates)
	if err != nil {
		return nil, fmt.Errorf("sampler: proximity graph: %w", err)
	}
	g := &Graph{N: n, K: k, Adj: make([]int32, n*k)}
	if k == 0 {
		return g, nil
	}
	workers := workerCount(opt.Workers)
	switch opt.CandidateSharing {
	case "", ShareBlock:
		bs, err := blockSizeFor(opt.BlockSize, n, m, replace)
		if err != nil {
			return nil, fmt.Errorf("sampler: proximity graph: %w", err)
		}
		buildBlocks(u, n, d, m, k, bs, replace, workers, opt.Seed, g.Adj)
	case ShareNode:
		buildPerNode(u, nil, n, d, m, k, replace, workers, opt.Seed, g.Adj)
	default:
		return nil, fmt.Errorf("sampler: proximity graph: CandidateSharing is %q, want %q or %q", opt.CandidateSharing, ShareBlock, ShareNode)
	}
	return g, nil
}

// buildKNN computes the exact kNN graph of the normalised rows u (n×d).
func buildKNN(u []float32, n, d, k, workers int) (*Graph, error) {
	if n > 1 && k < 1 {
		return nil, fmt.Errorf("sampler: knn graph: K must be ≥ 1, got %d", k)
	}
	k = min(k, n-1)
	g := &Graph{N: n, K: k, Adj: make([]int32, n*k)}
	if k == 0 {
		return g, nil
	}
	workers = workerCount(workers)
	bs := DefaultBlockSize
	blocks := (n + bs - 1) / bs
	ws := make([]*blockWork, workers)
	parallel(workers, blocks, func(w, b int) {
		if ws[w] == nil {
			ws[w] = newBlockWork(n, d, bs, min(n, chunkCols), k)
		}
		lo, hi := b*bs, min((b+1)*bs, n)
		nodes := make([]int32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			nodes = append(nodes, int32(i))
		}
		ws[w].score(u, d, nodes, nil, n, -1, k, g.Adj)
	})
	return g, nil
}

// buildBlocks is the ShareBlock path of Algorithm 2 (with replacement when
// replace).
func buildBlocks(u []float32, n, d, m, k, bs int, replace bool, workers int, seed uint64, adj []int32) {
	perm := blockPerm(n, seed)
	nc := blockCandidates(n, m, replace)
	blocks := (n + bs - 1) / bs
	ws := make([]*blockWork, workers)
	parallel(workers, blocks, func(w, b int) {
		bw := ws[w]
		if bw == nil {
			bw = newBlockWork(n, d, bs, min(nc, chunkCols), k)
			ws[w] = bw
		}
		cand, drop := bw.blockDraw(seed, b, n, m, replace)
		nodes := perm[b*bs : min((b+1)*bs, n)]
		bw.score(u, d, nodes, cand, len(cand), drop, k, adj)
	})
}

// blockPerm is the random order of the nodes that ShareBlock cuts into
// blocks.
func blockPerm(n int, seed uint64) []int32 {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	prng := rand.New(rand.NewPCG(mix64(seed), 0x6b6c6f636b))
	prng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	return perm
}

// blockCandidates is the number of candidate columns a ShareBlock block
// scores: M+1 without replacement (one spare, dropped by the nodes not
// drawn; at most N), M with replacement.
func blockCandidates(n, m int, replace bool) int {
	if replace {
		return m
	}
	return min(m+1, n)
}

// blockDraw draws block b's candidates from the block's own generator
// (seeded by seed and b, so the draw does not depend on which worker
// scores the block) and returns them with the column a node outside them
// drops (−1: none). Without replacement: a uniform (M+1)-subset (all N
// nodes when M+1 ≥ N) and, when there is a spare, one uniformly chosen
// column to drop. With replacement: M draws rand.Rand.IntN(N), in order,
// and no drop.
func (bw *blockWork) blockDraw(seed uint64, b, n, m int, replace bool) (cand []int32, drop int) {
	rng := rand.New(rand.NewPCG(mix64(seed^0x5a5a), uint64(b)))
	if replace {
		return bw.drawMultiset(rng, n, m), -1
	}
	m1 := blockCandidates(n, m, false)
	cand = bw.drawSet(rng, n, m1)
	drop = -1
	if m1 == m+1 { // a node outside the set drops one random member
		drop = rng.IntN(m1)
	}
	return cand, drop
}

// blockWork is one worker's scratch space for scoring a block of nodes
// against a candidate list.
type blockWork struct {
	a    []float32 // rows of the block, bs×d
	p    []float32 // gathered rows of one chunk of candidates, ldc×d
	c    []float32 // scores, bs×ldc
	ldc  int
	sel  []topK
	set  candSet // the drawn candidate set's members and their positions
	cand []int32
	excl []int
	h16  []uint16  // float16 builds: staged raw rows (halfRows.gather)
	hinv []float64 // and their inverse norms
}

// scoreBlock fills bw.c (rows × cols, stride bw.ldc) with the inner
// products of the block rows bw.a and the candidate rows: u's rows
// rowsIdx (gathered into bw.p first), or rows c0..c0+cols−1 when rowsIdx is
// nil. The product is internal/gemm's SgemmPacked (packed blocked GEMM with
// AVX-512 or AVX2 micro-kernels in Go assembly; gonum's BLAS without
// them), whose score of a pair does not depend on the other rows of the
// block.
func scoreBlock(bw *blockWork, u []float32, d, rows, c0 int, rowsIdx []int32, cols int) {
	var b []float32
	if rowsIdx != nil { // (with replacement there may be more than N columns)
		b = bw.p[:cols*d]
		gatherRows(b, u, d, rowsIdx)
	} else {
		b = u[c0*d : (c0+cols)*d]
	}
	gemm.SgemmPacked(false, true, rows, cols, d, 1, bw.a[:rows*d], d, b, d, 0, bw.c, bw.ldc)
}

func newBlockWork(n, d, bs, cols, k int) *blockWork {
	bw := &blockWork{
		a:    make([]float32, bs*d),
		p:    make([]float32, cols*d),
		c:    make([]float32, bs*cols),
		ldc:  cols,
		sel:  make([]topK, bs),
		excl: make([]int, bs),
	}
	for i := range bw.sel {
		bw.sel[i].reset(k)
	}
	return bw
}

// drawSet draws a uniformly random m-subset of [0,n) (Floyd's algorithm) and
// records each member's position.
func (bw *blockWork) drawSet(rng *rand.Rand, n, m int) []int32 {
	bw.set.reset(n, m)
	bw.cand = bw.cand[:0]
	for j := n - m; j < n; j++ {
		t := int32(rng.IntN(j + 1))
		p := int32(len(bw.cand))
		if !bw.set.add(t, p) { // t was drawn before: take j (never drawn: all earlier draws are < j)
			t = int32(j)
			bw.set.add(t, p)
		}
		bw.cand = append(bw.cand, t)
	}
	return bw.cand
}

// drawMultiset draws m candidates uniformly with replacement from [0,n)
// (m successive rng.IntN(n)). It records no member (it only empties the
// set), so score excludes no column of a multiset when drop is −1:
// the block's own nodes and repeated nodes are scored like any other
// candidate.
func (bw *blockWork) drawMultiset(rng *rand.Rand, n, m int) []int32 {
	bw.set.reset(n, 0)
	bw.cand = bw.cand[:0]
	for range m {
		bw.cand = append(bw.cand, int32(rng.IntN(n)))
	}
	return bw.cand
}

// score finds, for every node of the block, the k best of the candidate
// columns and writes their node ids to adj. cand == nil means the candidates
// are all nodes 0..nCand-1 in order. Column `self` (the node's own position,
// if it is a candidate of a drawSet set) is always excluded; when the node
// is not among the candidates, column drop (if ≥ 0) is excluded instead.
// A drawMultiset multiset marks no position, so with drop = −1 nothing is
// excluded and the k best may repeat a node (cand repeats it).
func (bw *blockWork) score(u []float32, d int, nodes []int32, cand []int32, nCand, drop, k int, adj []int32) {
	bw.scoreRows(u, nil, d, nodes, cand, nCand, drop, k, 0, adj)
}

// buildPerNode is the ShareNode path: Algorithm 2 literally, one candidate
// draw and M dot products per node (with replace, the published code's M
// draws rand.Rand.IntN(N) from node i's generator, self and repeats
// scored like any candidate). With h not nil the rows are h's (u unused),
// each converted to a normalised float32 row before its product.
func buildPerNode(u []float32, h *halfRows, n, d, m, k int, replace bool, workers int, seed uint64, adj []int32) {
	const chunk = 64
	jobs := (n + chunk - 1) / chunk
	type work struct {
		set    candSet
		cand   []int32
		scores []float32
		sel    topK
		ui, ux []float32 // rows converted from h
	}
	ws := make([]*work, workers)
	dot := blas32.Implementation().Sdot // gonum: SSE assembly on amd64
	parallel(workers, jobs, func(w, j int) {
		wk := ws[w]
		if wk == nil {
			wk = &work{scores: make([]float32, m)}
			if h != nil {
				wk.ui, wk.ux = make([]float32, d), make([]float32, d)
			}
			ws[w] = wk
		}
		for i := j * chunk; i < min((j+1)*chunk, n); i++ {
			rng := rand.New(rand.NewPCG(mix64(seed^0x6e6f6465), uint64(i)))
			wk.cand = wk.cand[:0]
			if replace {
				for range m {
					wk.cand = append(wk.cand, int32(rng.IntN(n)))
				}
			} else {
				wk.set.reset(n, m)
				// Floyd's algorithm over the n−1 other nodes (x ≥ i maps
				// to x+1, below).
				for t := n - 1 - m; t < n-1; t++ {
					x := int32(rng.IntN(t + 1))
					if !wk.set.add(x, 0) {
						x = int32(t)
						wk.set.add(x, 0)
					}
					wk.cand = append(wk.cand, x)
				}
			}
			var ui []float32
			if h != nil {
				ui = wk.ui
				h.row(ui, i)
			} else {
				ui = u[i*d : (i+1)*d]
			}
			for c, x := range wk.cand {
				if !replace && int(x) >= i {
					x++
					wk.cand[c] = x
				}
				var ux []float32
				if h != nil {
					ux = wk.ux
					h.row(ux, int(x))
				} else {
					ux = u[int(x)*d : (int(x)+1)*d]
				}
				wk.scores[c] = dot(d, ui, 1, ux, 1)
			}
			wk.sel.reset(k)
			wk.sel.push(wk.scores, 0)
			out := adj[i*k : (i+1)*k]
			for c, x := range wk.sel.result() {
				out[c] = wk.cand[entryID(x)]
			}
		}
	})
}

package sampler

// Graph builds for programs outside a training loop (cmd/batchsampler): the
// graph a BatchSampler builds at a given refresh, whole or a range of its
// rows, so that array jobs can build shards of one graph and merge them.

import "fmt"

// BuildSeed returns the seed of the build-th graph (1-based: the first
// Refresh is build 1) of a BatchSampler created with seed: the Seed its
// Refresh passes to BuildProximityGraph. GraphRows with this seed rebuilds
// exactly the graph of that refresh.
func BuildSeed(seed, build uint64) uint64 { return mix64(seed ^ mix64(build)) }

// GraphRows is rows [Lo, Hi) of a K-out graph of N nodes: Adj holds the
// out-neighbours of node Lo+i at Adj[i*K : (i+1)*K].
type GraphRows struct {
	N, K, Lo, Hi int
	Adj          []int32
}

// BuildGraphRows builds rows [lo, hi) of the graph BatchSampler.Refresh
// builds from e: for kind GraphProximity, BuildProximityGraph(e, opt)
// (ShareBlock or ShareNode as opt says); for GraphKNN, BuildKNNGraph(e,
// opt.K, opt.Workers) (opt.M and opt.Seed unused). The rows equal those of
// the whole graph whatever the range and opt.Workers, so the graph of N
// nodes can be built as shards [a, b) on separate machines and concatenated
// in order.
//
// Memory: every shard needs all of e twice (e itself and a normalised copy:
// candidates are drawn from all N nodes), 8·N·D bytes, plus 4·(hi−lo)·K
// bytes of neighbour table, plus per-worker scratch. Time: a proximity
// shard still draws and gathers the M+1 (with replacement: M) candidate
// rows of every block that
// holds one of its nodes — with ShareBlock nearly every block, since blocks
// are cut from a random permutation — so S shards cost S candidate gathers
// (about 4·N·M·D/BlockSize bytes each) but the GEMM and top-K work once.
func BuildGraphRows(e Embeddings, kind string, opt GraphOptions, lo, hi int) (*GraphRows, error) {
	if lo < 0 || hi > e.N || lo > hi {
		return nil, fmt.Errorf("sampler: graph rows: range [%d, %d) is not within [0, %d)", lo, hi, e.N)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return nil, fmt.Errorf("sampler: graph rows: %w", err)
	}
	return buildGraphRows(u, nil, e.N, e.D, kind, opt, lo, hi)
}

// NormalizeRowsInPlace L2-normalises every row of e in place, with the
// arithmetic the graph builders use on their copy (zero rows stay zero),
// for BuildGraphRowsNormalized: a program that owns its embeddings saves
// the N×D×4 bytes of that copy.
func NormalizeRowsInPlace(e Embeddings) error {
	if err := checkEmbeddings(e); err != nil {
		return fmt.Errorf("sampler: normalize: %w", err)
	}
	for i := 0; i < e.N; i++ {
		normalizeInto(e.Row(i), e.Row(i))
	}
	return nil
}

// BuildGraphRowsNormalized is BuildGraphRows on embeddings already
// normalised by NormalizeRowsInPlace: the same rows, without the
// normalised copy (peak memory: the embeddings, the rows' neighbour table
// and per-worker scratch).
func BuildGraphRowsNormalized(u Embeddings, kind string, opt GraphOptions, lo, hi int) (*GraphRows, error) {
	if lo < 0 || hi > u.N || lo > hi {
		return nil, fmt.Errorf("sampler: graph rows: range [%d, %d) is not within [0, %d)", lo, hi, u.N)
	}
	if err := checkEmbeddings(u); err != nil {
		return nil, fmt.Errorf("sampler: graph rows: %w", err)
	}
	return buildGraphRows(u.Data, nil, u.N, u.D, kind, opt, lo, hi)
}

// buildGraphRows builds rows [lo, hi) from the normalised rows u (n×d), or
// from the float16 rows h when h is not nil (u unused).
func buildGraphRows(u []float32, h *halfRows, n, d int, kind string, opt GraphOptions, lo, hi int) (*GraphRows, error) {
	switch kind {
	case "", GraphProximity:
		m, k, replace, err := resolveMK(n, opt.M, opt.K, opt.Candidates)
		if err != nil {
			return nil, fmt.Errorf("sampler: graph rows: %w", err)
		}
		out := &GraphRows{N: n, K: k, Lo: lo, Hi: hi, Adj: make([]int32, (hi-lo)*k)}
		if k == 0 || lo == hi {
			return out, nil
		}
		workers := workerCount(opt.Workers)
		switch opt.CandidateSharing {
		case "", ShareBlock:
			bs, err := blockSizeFor(opt.BlockSize, n, m, replace) // as buildProximity
			if err != nil {
				return nil, fmt.Errorf("sampler: graph rows: %w", err)
			}
			buildBlockRows(u, h, n, d, m, k, bs, replace, workers, opt.Seed, lo, hi, out.Adj)
		case ShareNode:
			// The literal (slow) path builds the whole N·K table and keeps
			// the range.
			full := make([]int32, n*k)
			buildPerNode(u, h, n, d, m, k, replace, workers, opt.Seed, full)
			copy(out.Adj, full[lo*k:hi*k])
		default:
			return nil, fmt.Errorf("sampler: graph rows: CandidateSharing is %q, want %q or %q", opt.CandidateSharing, ShareBlock, ShareNode)
		}
		return out, nil
	case GraphKNN:
		if n > 1 && opt.K < 1 {
			return nil, fmt.Errorf("sampler: graph rows: K must be ≥ 1, got %d", opt.K)
		}
		k := min(opt.K, n-1)
		out := &GraphRows{N: n, K: k, Lo: lo, Hi: hi, Adj: make([]int32, (hi-lo)*k)}
		if k == 0 || lo == hi {
			return out, nil
		}
		workers := workerCount(opt.Workers)
		bs := DefaultBlockSize
		b0, b1 := lo/bs, (hi+bs-1)/bs
		ws := make([]*blockWork, workers)
		parallel(workers, b1-b0, func(w, j int) {
			if ws[w] == nil {
				ws[w] = newBlockWork(n, d, bs, min(n, chunkCols), k)
			}
			b := b0 + j
			nodes := make([]int32, 0, bs)
			for i := max(b*bs, lo); i < min((b+1)*bs, hi); i++ {
				nodes = append(nodes, int32(i))
			}
			ws[w].scoreRows(u, h, d, nodes, nil, n, -1, k, lo, out.Adj)
		})
		return out, nil
	}
	return nil, fmt.Errorf("sampler: graph rows: graph kind %q, want %s", kind, quoted(GraphKinds, " or "))
}

// buildBlockRows is buildBlocks restricted to the nodes in [lo, hi): the
// same permutation, blocks, candidate draws and drops, each block scoring
// only its nodes in the range (a pair's score does not depend on the other
// rows of the block, see scoreBlock), written to adj at row v−lo. With h
// not nil the rows are h's (u unused).
func buildBlockRows(u []float32, h *halfRows, n, d, m, k, bs int, replace bool, workers int, seed uint64, lo, hi int, adj []int32) {
	perm := blockPerm(n, seed)
	nc := blockCandidates(n, m, replace)
	blocks := (n + bs - 1) / bs
	ws := make([]*blockWork, workers)
	sub := make([][]int32, workers)
	parallel(workers, blocks, func(w, b int) {
		nodes := sub[w][:0]
		for _, v := range perm[b*bs : min((b+1)*bs, n)] {
			if int(v) >= lo && int(v) < hi {
				nodes = append(nodes, v)
			}
		}
		sub[w] = nodes
		if len(nodes) == 0 {
			return
		}
		bw := ws[w]
		if bw == nil {
			bw = newBlockWork(n, d, bs, min(nc, chunkCols), k)
			ws[w] = bw
		}
		cand, drop := bw.blockDraw(seed, b, n, m, replace)
		bw.scoreRows(u, h, d, nodes, cand, len(cand), drop, k, lo, adj)
	})
}

// scoreRows is blockWork.score writing node v's row to adj[(v−lo)·k:]
// (score is scoreRows with lo = 0): the excluded column of each row is the
// node itself (cand nil), its position among the candidates, or drop (−1
// for a drawMultiset multiset: no column is excluded).
// With h not nil the rows are read from h (u unused), converted to
// normalised float32 rows as they are needed: the block's rows into bw.a
// and each chunk of candidates into bw.p (scoreBlockHalf).
func (bw *blockWork) scoreRows(u []float32, h *halfRows, d int, nodes []int32, cand []int32, nCand, drop, k, lo int, adj []int32) {
	rows := len(nodes)
	if h != nil {
		h.gather(bw, bw.a[:rows*d], nodes)
	} else {
		gatherRows(bw.a[:rows*d], u, d, nodes)
	}
	excl := bw.excl[:rows] // excluded column per row
	for r, v := range nodes {
		bw.sel[r].reset(k)
		excl[r] = drop
		if cand == nil {
			excl[r] = int(v)
		} else if p, ok := bw.set.lookup(v); ok {
			excl[r] = int(p)
		}
	}
	inf := negInf32
	for c0 := 0; c0 < nCand; c0 += bw.ldc {
		cols := min(bw.ldc, nCand-c0)
		var rowsIdx []int32 // nil: candidates c0.. in node order
		if cand != nil {
			rowsIdx = cand[c0 : c0+cols]
		}
		if h != nil {
			scoreBlockHalf(bw, h, d, rows, c0, rowsIdx, cols)
		} else {
			scoreBlock(bw, u, d, rows, c0, rowsIdx, cols)
		}
		for r := 0; r < rows; r++ {
			row := bw.c[r*bw.ldc : r*bw.ldc+cols]
			if x := excl[r] - c0; x >= 0 && x < cols {
				row[x] = inf
			}
			bw.sel[r].push(row, int32(c0))
		}
	}
	for r, v := range nodes {
		top := bw.sel[r].result()
		out := adj[(int(v)-lo)*k : (int(v)-lo+1)*k]
		if cand != nil {
			for j, x := range top {
				out[j] = cand[entryID(x)]
			}
		} else {
			for j, x := range top {
				out[j] = entryID(x)
			}
		}
	}
}

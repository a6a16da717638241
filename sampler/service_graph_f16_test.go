package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/half"
	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// randomFloat16 is n×d standard normal values rounded to float16, with
// row 1 zero, row 2 of subnormals, row 3 equal to row 4 (exact ties) and
// row 5 of coarse values (many equal products).
func randomFloat16(n, d int, seed uint64) Float16Embeddings {
	r := rand.New(rand.NewPCG(seed, 7))
	e := Float16Embeddings{N: n, D: d, Bits: make([]uint16, n*d)}
	for i := range e.Bits {
		e.Bits[i] = npy.Float64ToFloat16(r.NormFloat64())
	}
	if n > 5 {
		clear(e.Bits[d : 2*d])
		for j := 0; j < d; j++ {
			e.Bits[2*d+j] = uint16(1 + j%7) // 2⁻²⁴·(1..7)
			if j%2 == 1 {
				e.Bits[2*d+j] |= 0x8000
			}
			e.Bits[5*d+j] = npy.Float64ToFloat16(float64(j%3 - 1))
		}
		copy(e.Bits[3*d:4*d], e.Bits[4*d:5*d])
	}
	return e
}

// TestBuildGraphRowsFloat16MatchesFloat32: the float16-resident build is
// bit for bit the float32 build of the widened rows (BuildGraphRows, and
// NormalizeRowsInPlace + BuildGraphRowsNormalized as `batchsampler graph`
// runs it), whole or as shards, for every graph kind and candidate
// sharing and any number of workers.
func TestBuildGraphRowsFloat16MatchesFloat32(t *testing.T) {
	e := randomFloat16(700, 12, 3)
	w := e.Widen()
	for _, tc := range []struct {
		graph, sharing string
		m, k           int
	}{
		{GraphProximity, ShareBlock, 90, 7},
		{GraphProximity, ShareBlock, 800, 7}, // M ≥ N−1: all other nodes
		{GraphProximity, ShareNode, 50, 5},
		{GraphKNN, "", 0, 6},
	} {
		t.Run(fmt.Sprintf("%s-%s-m%d", tc.graph, tc.sharing, tc.m), func(t *testing.T) {
			opt := GraphOptions{M: tc.m, K: tc.k, CandidateSharing: tc.sharing, Seed: BuildSeed(11, 1)}
			want, err := BuildGraphRows(w, tc.graph, opt, 0, e.N)
			if err != nil {
				t.Fatal(err)
			}
			u := Embeddings{N: w.N, D: w.D, Data: slices.Clone(w.Data)}
			if err := NormalizeRowsInPlace(u); err != nil {
				t.Fatal(err)
			}
			inPlace, err := BuildGraphRowsNormalized(u, tc.graph, opt, 0, e.N)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(inPlace.Adj, want.Adj) {
				t.Fatal("BuildGraphRowsNormalized differs from BuildGraphRows")
			}
			var cat []int32
			for i, cut := range [][2]int{{0, 1}, {1, 250}, {250, 250}, {250, 699}, {699, 700}} {
				opt.Workers = 1 + i%3
				r, err := BuildGraphRowsFloat16(e, tc.graph, opt, cut[0], cut[1])
				if err != nil {
					t.Fatal(err)
				}
				if r.K != want.K || len(r.Adj) != (cut[1]-cut[0])*r.K {
					t.Fatalf("rows %v: K=%d with %d entries", cut, r.K, len(r.Adj))
				}
				cat = append(cat, r.Adj...)
			}
			if !slices.Equal(cat, want.Adj) {
				t.Fatal("float16 build differs from the float32 build of the widened rows")
			}
		})
	}
}

// TestBuildGraphRowsFloat16Float64Reference checks the float16-resident
// build against an independent float64 reference: the same candidate draws
// (the seed's permutation, blocks and draws, re-derived here), the cosine
// of the decoded float16 rows in float64, and the top K per node. Every
// node's neighbours must be K distinct candidates other than itself, and a
// top-K set up to the float32 rounding of the scores: no candidate left out
// scores more than tol above one kept. Where the float64 scores do not tie
// or nearly tie at the K-th place, the sets are the exact float64 top K.
func TestBuildGraphRowsFloat16Float64Reference(t *testing.T) {
	const n, d, m, k = 3000, 64, 300, 30
	e := randomFloat16(n, d, 5)
	// Duplicate some rows so that exact float64 ties reach the K-th place.
	for i := 100; i < 160; i++ {
		copy(e.Bits[i*d:(i+1)*d], e.Bits[(i%7+100)*d:(i%7+101)*d])
	}
	seed := BuildSeed(3, 2)
	g, err := BuildGraphRowsFloat16(e, GraphProximity, GraphOptions{M: m, K: k, Seed: seed, Workers: 2}, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	// Decoded rows and their float64 norms.
	x := make([]float64, n*d)
	norm := make([]float64, n)
	for i := range x {
		x[i] = float64(npy.Float16ToFloat32(e.Bits[i]))
	}
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range x[i*d : (i+1)*d] {
			s += v * v
		}
		norm[i] = math.Sqrt(s)
	}
	cos := func(a, b int) float64 {
		if norm[a] == 0 || norm[b] == 0 {
			return 0
		}
		var s float64
		for j := 0; j < d; j++ {
			s += x[a*d+j] * x[b*d+j]
		}
		return s / (norm[a] * norm[b])
	}
	// The draws of buildBlockRows: a permutation cut into blocks of bs,
	// M+1 candidates per block (Floyd), one dropped for the nodes not drawn.
	bs := min(DefaultBlockSize, max(minBlockSize, (m+1)/minBlocksPerNode))
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	prng := rand.New(rand.NewPCG(mix64(seed), 0x6b6c6f636b))
	prng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	// A float32 score of unit rows of d elements is within about d·2⁻²⁴ of
	// the float64 cosine; two scores compared, twice that.
	tol := 2 * float64(d) / (1 << 24)
	exact, nearTies := 0, 0
	for b := 0; b*bs < n; b++ {
		rng := rand.New(rand.NewPCG(mix64(seed^0x5a5a), uint64(b)))
		var cand []int
		in := map[int]bool{}
		for j := n - (m + 1); j < n; j++ {
			c := rng.IntN(j + 1)
			if in[c] {
				c = j
			}
			in[c] = true
			cand = append(cand, c)
		}
		dropped := cand[rng.IntN(m+1)]
		for _, v32 := range perm[b*bs : min((b+1)*bs, n)] {
			v := int(v32)
			out := v
			if !in[v] {
				out = dropped
			}
			type sc struct {
				id int
				s  float64
			}
			var all []sc
			for _, c := range cand {
				if c != out {
					all = append(all, sc{c, cos(v, c)})
				}
			}
			if len(all) != m {
				t.Fatalf("node %d: %d candidates, want %d", v, len(all), m)
			}
			score := map[int]float64{}
			for _, c := range all {
				score[c.id] = c.s
			}
			got := g.Adj[v*k : (v+1)*k]
			kept := map[int]bool{}
			minKept := math.Inf(1)
			for _, c := range got {
				s, ok := score[int(c)]
				if !ok || kept[int(c)] {
					t.Fatalf("node %d: neighbour %d is not a candidate, is the node itself or repeats (%v)", v, c, got)
				}
				kept[int(c)] = true
				minKept = min(minKept, s)
			}
			maxLeft := math.Inf(-1)
			for _, c := range all {
				if !kept[c.id] {
					maxLeft = max(maxLeft, c.s)
				}
			}
			if maxLeft > minKept+tol {
				t.Fatalf("node %d: a candidate left out scores %.9f, above a kept one's %.9f by more than %.2g", v, maxLeft, minKept, tol)
			}
			slices.SortFunc(all, func(p, q sc) int {
				if p.s != q.s {
					if p.s > q.s {
						return -1
					}
					return 1
				}
				return 0
			})
			if all[k-1].s-all[k].s > tol {
				// No tie at the K-th place: the float64 top K exactly.
				for _, c := range all[:k] {
					if !kept[c.id] {
						t.Fatalf("node %d: float64 top-K member %d (%.9f) missing; K-th %.9f, (K+1)-th %.9f", v, c.id, c.s, all[k-1].s, all[k].s)
					}
				}
				exact++
			} else {
				nearTies++
			}
		}
	}
	t.Logf("%d nodes: %d with a clear K-th place (float64 top K exactly), %d with a tie or near tie (a valid top K up to %.2g)", n, exact, nearTies, tol)
	if exact < n*9/10 {
		t.Fatalf("only %d of %d nodes without a near tie at the K-th place: the check is vacuous", exact, n)
	}
}

// TestBuildGraphRowsFloat16Errors: bad shapes, non-finite values and bad
// ranges are errors that say so.
func TestBuildGraphRowsFloat16Errors(t *testing.T) {
	e := randomFloat16(50, 4, 1)
	nan := Float16Embeddings{N: 50, D: 4, Bits: slices.Clone(e.Bits)}
	nan.Bits[4*7+2] = 0x7e00
	inf := Float16Embeddings{N: 50, D: 4, Bits: slices.Clone(e.Bits)}
	inf.Bits[3] = 0xfc00
	for _, tc := range []struct {
		name   string
		e      Float16Embeddings
		kind   string
		lo, hi int
		want   string
	}{
		{"range", e, GraphProximity, 10, 60, "range [10, 60)"},
		{"kind", e, "complete", 0, 50, `graph kind "complete"`},
		{"shape", Float16Embeddings{N: 50, D: 4, Bits: e.Bits[:199]}, GraphProximity, 0, 50, "hold 199 values"},
		{"empty", Float16Embeddings{}, GraphProximity, 0, 0, "want N ≥ 1"},
		{"NaN", nan, GraphProximity, 0, 50, "row 7 column 2 is NaN"},
		{"Inf", inf, GraphKNN, 0, 50, "row 0 column 3 is -Inf"},
	} {
		_, err := BuildGraphRowsFloat16(tc.e, tc.kind, GraphOptions{M: 10, K: 5}, tc.lo, tc.hi)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestBuildGraphRowsFloat16Memory: the build allocates what the float32
// path's build allocates (the neighbour table, the permutation and the
// per-worker scratch, GEMM packing included), plus the inverse norms (8N
// bytes) and the staging buffers (halfStage rows per worker) — no N×d
// float32 copy.
func TestBuildGraphRowsFloat16Memory(t *testing.T) {
	const n, d, m, k, workers = 40000, 64, 200, 20, 2
	e := randomFloat16(n, d, 9)
	u := e.Widen()
	if err := NormalizeRowsInPlace(u); err != nil {
		t.Fatal(err)
	}
	opt := GraphOptions{M: m, K: k, Seed: 1, Workers: workers}
	half.Table()
	allocated := func(build func() error) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := build(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	a32 := allocated(func() error {
		_, err := BuildGraphRowsNormalized(u, GraphProximity, opt, 0, n)
		return err
	})
	a16 := allocated(func() error {
		_, err := BuildGraphRowsFloat16(e, GraphProximity, opt, 0, n)
		return err
	})
	// 256 KB of slack: TotalAlloc also counts the runtime's and other
	// goroutines' allocations, which reached ~150 KB in a full package run
	// (never alone); the copy this test rules out is N×d×4 = 10 MB.
	bound := a32 + uint64(8*n+workers*halfStage*(2*d+8)) + 256<<10
	t.Logf("allocated %.2f MB (float32 path %.2f MB, bound %.2f MB); table %.2f MB, an N×d float32 copy would be %.2f MB",
		float64(a16)/1e6, float64(a32)/1e6, float64(bound)/1e6, float64(4*n*k)/1e6, float64(4*n*d)/1e6)
	if a16 > bound {
		t.Fatalf("allocated %d bytes, want at most %d", a16, bound)
	}
}

// BenchmarkGather1001 is the candidate gather of one block at ImageNet
// scale (N = 1,281,167 rows of d = 128, 1001 random rows per op, a new
// draw every op): the float32 path's row copies (gatherRows, asking for
// rows 8 ahead; and plain copies), the float16 path's staged conversion
// (halfRows.gather), and the unstaged conversion it replaces (halfRows.row
// per row). Run alone: it holds 1 GB.
func BenchmarkGather1001(b *testing.B) {
	const n, d, cols = 1281167, 128, 1001
	e := randomFloat16(n, d, 1)
	h, err := newHalfRows(e)
	if err != nil {
		b.Fatal(err)
	}
	u := e.Widen()
	if err := NormalizeRowsInPlace(u); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	idx := make([][]int32, 1024)
	for i := range idx {
		idx[i] = make([]int32, cols)
		for j := range idx[i] {
			idx[i][j] = int32(r.IntN(n))
		}
	}
	bw := newBlockWork(n, d, 1, cols, 1)
	for _, mode := range []string{"float32", "float32-unprefetched", "float16", "float16-unstaged"} {
		b.Run(mode, func(b *testing.B) {
			cpuTimed(b, func(i int) {
				ix := idx[i%len(idx)]
				switch mode {
				case "float32":
					gatherRows(bw.p, u.Data, d, ix)
				case "float32-unprefetched":
					for j, v := range ix {
						copy(bw.p[j*d:(j+1)*d], u.Data[int(v)*d:(int(v)+1)*d])
					}
				case "float16":
					h.gather(bw, bw.p, ix)
				default:
					for j, v := range ix {
						h.row(bw.p[j*d:(j+1)*d], int(v))
					}
				}
			})
		})
	}
}

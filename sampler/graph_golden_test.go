package sampler

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
)

var updateGraphGolden = flag.Bool("update-graph-golden", false, "rewrite testdata/graphs.golden from the builders as they stand (only for an intended change of the graphs)")

// graphGoldenCase is one graph build whose neighbour table is pinned, byte
// for byte, by its SHA-256 in testdata/graphs.golden.
type graphGoldenCase struct {
	name     string
	n, d     int
	kind     string // GraphProximity or GraphKNN
	opt      GraphOptions
	lo, hi   int  // rows (hi 0: all)
	coarse   bool // embeddings in {−1, 0, 1}: many equal scores
	float16  bool // BuildGraphRowsFloat16 (else BuildGraphRows)
	whole    bool // BuildProximityGraph / BuildKNNGraph (whole graph)
	workers1 bool // one worker (the graph must not depend on it)
}

// graphGoldenCases cover the paths of the builders: shared blocks with and
// without replacement, one and several candidate chunks (M+1 > chunkCols),
// K a small share of M and half of it (the ImageNet setting's M = 1000, K
// = 500), per-node draws, the exact kNN graph, M ≥ N−1, shards, float16
// rows, dimensions that are not a multiple of 16, and many exact ties.
var graphGoldenCases = []graphGoldenCase{
	{name: "block-m1000-k500", n: 12000, d: 128, opt: GraphOptions{M: 1000, K: 500, Seed: 1}},
	{name: "block-m1000-k500-1worker", n: 12000, d: 128, opt: GraphOptions{M: 1000, K: 500, Seed: 1}, workers1: true},
	{name: "block-m1000-k100", n: 12000, d: 128, opt: GraphOptions{M: 1000, K: 100, Seed: 2}},
	{name: "block-m1000-k999", n: 3000, d: 64, opt: GraphOptions{M: 1000, K: 999, Seed: 3}},
	{name: "block-m3000-k50-chunks", n: 8000, d: 96, opt: GraphOptions{M: 3000, K: 50, Seed: 4}},
	{name: "block-m5000-k2500-chunks", n: 6000, d: 32, opt: GraphOptions{M: 5000, K: 2500, Seed: 5}},
	{name: "block-m1-k1", n: 500, d: 16, opt: GraphOptions{M: 1, K: 1, Seed: 6}},
	{name: "block-d37-bs16", n: 4000, d: 37, opt: GraphOptions{M: 200, K: 20, BlockSize: 16, Seed: 7}},
	{name: "block-all-candidates", n: 900, d: 24, opt: GraphOptions{M: 5000, K: 30, Seed: 8}},
	{name: "block-coarse-ties", n: 5000, d: 8, coarse: true, opt: GraphOptions{M: 300, K: 150, Seed: 9}},
	{name: "block-coarse-ties-k10", n: 5000, d: 6, coarse: true, opt: GraphOptions{M: 700, K: 10, Seed: 10}},
	{name: "replace-m1000-k500", n: 8000, d: 128, opt: GraphOptions{M: 1000, K: 500, Candidates: CandidatesWithReplacement, Seed: 11}},
	{name: "replace-m1200-k700-over-n", n: 500, d: 20, opt: GraphOptions{M: 1200, K: 700, Candidates: CandidatesWithReplacement, Seed: 12}},
	{name: "replace-m3000-k40-chunks", n: 4000, d: 48, opt: GraphOptions{M: 3000, K: 40, Candidates: CandidatesWithReplacement, Seed: 13}},
	{name: "node-m200-k50", n: 3000, d: 40, opt: GraphOptions{M: 200, K: 50, CandidateSharing: ShareNode, Seed: 14}},
	{name: "node-replace-m300-k150", n: 2000, d: 40, opt: GraphOptions{M: 300, K: 150, CandidateSharing: ShareNode, Candidates: CandidatesWithReplacement, Seed: 15}},
	{name: "node-coarse-ties", n: 2000, d: 8, coarse: true, opt: GraphOptions{M: 400, K: 200, CandidateSharing: ShareNode, Seed: 16}},
	{name: "knn-k20", n: 3000, d: 64, kind: GraphKNN, opt: GraphOptions{K: 20}},
	{name: "knn-k300-coarse", n: 2500, d: 8, kind: GraphKNN, coarse: true, opt: GraphOptions{K: 300}},
	{name: "shard-block-m1000-k500", n: 12000, d: 128, lo: 3001, hi: 7777, opt: GraphOptions{M: 1000, K: 500, Seed: 1}},
	{name: "shard-knn-k20", n: 3000, d: 64, kind: GraphKNN, lo: 100, hi: 1999, opt: GraphOptions{K: 20}},
	{name: "f16-block-m1000-k500", n: 12000, d: 128, float16: true, opt: GraphOptions{M: 1000, K: 500, Seed: 1}},
	{name: "f16-replace-m1000-k500", n: 8000, d: 128, float16: true, opt: GraphOptions{M: 1000, K: 500, Candidates: CandidatesWithReplacement, Seed: 11}},
	{name: "f16-node-m200-k50", n: 3000, d: 40, float16: true, opt: GraphOptions{M: 200, K: 50, CandidateSharing: ShareNode, Seed: 14}},
	{name: "f16-knn-k20", n: 3000, d: 64, float16: true, kind: GraphKNN, opt: GraphOptions{K: 20}},
	{name: "whole-proximity-m1000-k500", n: 6000, d: 128, whole: true, opt: GraphOptions{M: 1000, K: 500, Seed: 17}},
	{name: "whole-knn-k50", n: 2000, d: 64, whole: true, kind: GraphKNN, opt: GraphOptions{K: 50}},
}

// goldenEmbeddings is the case's n×d rows: standard normal (rounded to
// float16 for the float16 cases, as randomFloat16 draws them), or values in
// {−1, 0, 1} for coarse cases.
func goldenEmbeddings(c graphGoldenCase) (Embeddings, Float16Embeddings) {
	if c.float16 {
		h := randomFloat16(c.n, c.d, 31)
		return Embeddings{}, h
	}
	e := randomEmbeddings(c.n, c.d, 31)
	if c.coarse {
		for i, x := range e.Data {
			e.Data[i] = float32(max(-1, min(1, int(x*1.2))))
		}
	}
	return e, Float16Embeddings{}
}

// buildGolden builds the case's rows.
func buildGolden(c graphGoldenCase) ([]int32, error) {
	e, h := goldenEmbeddings(c)
	kind := c.kind
	if kind == "" {
		kind = GraphProximity
	}
	opt := c.opt
	if c.workers1 {
		opt.Workers = 1
	}
	lo, hi := c.lo, c.hi
	if hi == 0 {
		lo, hi = 0, c.n
	}
	switch {
	case c.whole && kind == GraphKNN:
		g, err := BuildKNNGraph(e, opt.K, opt.Workers)
		if err != nil {
			return nil, err
		}
		return g.Adj, nil
	case c.whole:
		g, err := BuildProximityGraph(e, opt)
		if err != nil {
			return nil, err
		}
		return g.Adj, nil
	case c.float16:
		g, err := BuildGraphRowsFloat16(h, kind, opt, lo, hi)
		if err != nil {
			return nil, err
		}
		return g.Adj, nil
	}
	g, err := BuildGraphRows(e, kind, opt, lo, hi)
	if err != nil {
		return nil, err
	}
	return g.Adj, nil
}

// adjDigest is the SHA-256 of the neighbour table as little-endian int32s.
func adjDigest(adj []int32) string {
	h := sha256.New()
	buf := make([]byte, 4*len(adj))
	for i, v := range adj {
		binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

const graphGoldenFile = "testdata/graphs.golden"

// readGraphGolden reads the "backend name sha256" lines of the golden file
// (none if it does not exist yet).
func readGraphGolden(t *testing.T) [][3]string {
	t.Helper()
	f, err := os.Open(graphGoldenFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][3]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) != 3 {
			t.Fatalf("%s: line %q: want \"backend name sha256\"", graphGoldenFile, line)
		}
		rows = append(rows, [3]string{fs[0], fs[1], fs[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestGraphsGolden: every builder's neighbour tables are byte for byte those
// pinned in testdata/graphs.golden, written by the builders of commit
// f7dda73 (before the ImageNet-scale speed-ups of the graph build), so that
// faster builders keep every graph — and hence every walk and batch — of
// the code before them. Scores are products of internal/gemm, whose bits
// depend on its backend (FMA chains with the AVX-512 and AVX2 kernels, plain
// products with gonum's BLAS), so digests are kept per backend
// (gemm.Backend()); the test skips on a backend with none recorded (record
// them there with -update-graph-golden from f7dda73's builders).
func TestGraphsGolden(t *testing.T) {
	backend := gemm.Backend()
	rows := readGraphGolden(t)
	want := map[string]string{}
	for _, r := range rows {
		if r[0] == backend {
			want[r[1]] = r[2]
		}
	}
	if len(want) == 0 && !*updateGraphGolden {
		t.Skipf("%s holds no digests for the gemm backend %q", graphGoldenFile, backend)
	}
	var lines []string
	for _, c := range graphGoldenCases {
		adj, err := buildGolden(c)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := adjDigest(adj)
		lines = append(lines, backend+" "+c.name+" "+got)
		if *updateGraphGolden {
			continue
		}
		if w, ok := want[c.name]; !ok {
			t.Errorf("%s: no golden digest for backend %s in %s", c.name, backend, graphGoldenFile)
		} else if got != w {
			t.Errorf("%s: neighbour table digest %s, want %s", c.name, got, w)
		}
	}
	if !*updateGraphGolden {
		return
	}
	for _, r := range rows { // keep the other backends' digests
		if r[0] != backend {
			lines = append(lines, strings.Join(r[:], " "))
		}
	}
	slices.Sort(lines)
	text := "# backend, case (graphGoldenCases, graph_golden_test.go), SHA-256 of its neighbour table\n" + strings.Join(lines, "\n") + "\n"
	if err := os.MkdirAll(filepath.Dir(graphGoldenFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(graphGoldenFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d digests for backend %s to %s", len(graphGoldenCases), backend, graphGoldenFile)
}

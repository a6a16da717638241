package sampler

import (
	"math/rand/v2"
	"testing"
)

// randomEmbeddings returns n×d standard normal float32 rows.
func randomEmbeddings(n, d int, seed uint64) Embeddings {
	r := rand.New(rand.NewPCG(seed, 99))
	e := Embeddings{N: n, D: d, Data: make([]float32, n*d)}
	for i := range e.Data {
		e.Data[i] = float32(r.NormFloat64())
	}
	return e
}

func benchProximity(b *testing.B, n, d, m, k int, sharing string, bs int) {
	benchProximityOpt(b, n, d, GraphOptions{M: m, K: k, CandidateSharing: sharing, BlockSize: bs})
}

// benchProximityOpt times buildProximity on n×d random rows with opt (its
// Seed replaced by the iteration).
func benchProximityOpt(b *testing.B, n, d int, opt GraphOptions) {
	e := randomEmbeddings(n, d, 1)
	u, err := normalizeRows(e)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		opt.Seed = uint64(i)
		if _, err := buildProximity(u, n, d, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkProximityGraph50k is the acceptance benchmark: N=50,000, d=128,
// M=1000, K=100, shared candidate blocks (the default), on all cores.
func BenchmarkProximityGraph50k(b *testing.B) {
	benchProximity(b, 50000, 128, 1000, 100, ShareBlock, 0)
}

// BenchmarkProximityGraph50kNode is Algorithm 2 literally (per-node candidates).
func BenchmarkProximityGraph50kNode(b *testing.B) {
	benchProximity(b, 50000, 128, 1000, 100, ShareNode, 0)
}

// BenchmarkProximityGraph50kWithReplacement is the acceptance benchmark's
// graph with the published code's draw (candidates: with_replacement): the
// same GEMM per block, M columns instead of M+1.
func BenchmarkProximityGraph50kWithReplacement(b *testing.B) {
	benchProximityOpt(b, 50000, 128, GraphOptions{M: 1000, K: 100, Candidates: CandidatesWithReplacement})
}

// BenchmarkProximityGraph50kNodeWithReplacement is the per-node path with
// the published code's draw.
func BenchmarkProximityGraph50kNodeWithReplacement(b *testing.B) {
	benchProximityOpt(b, 50000, 128, GraphOptions{M: 1000, K: 100, Candidates: CandidatesWithReplacement, CandidateSharing: ShareNode})
}

// BenchmarkProximityGraph1kM6000WithReplacement is the largest M of the
// paper's M table on IMDB-BINARY's N = 1,000 (d = 128): M = 6N draws per
// block, repeated columns scored as often as drawn.
func BenchmarkProximityGraph1kM6000WithReplacement(b *testing.B) {
	benchProximityOpt(b, 1000, 128, GraphOptions{M: 6000, K: 100, Candidates: CandidatesWithReplacement})
}

// BenchmarkProximityGraph1kM6000 is the same without replacement: M clamps
// to N−1, the exact kNN graph (one GEMM of all N columns per block).
func BenchmarkProximityGraph1kM6000(b *testing.B) {
	benchProximityOpt(b, 1000, 128, GraphOptions{M: 6000, K: 100})
}

// graph50k is the N=50,000, d=128, M=1000, K=100 proximity graph shared by
// the walk benchmarks.
var graph50k *Graph

func getGraph50k(b *testing.B) *Graph {
	if graph50k == nil {
		e := randomEmbeddings(50000, 128, 1)
		g, err := BuildProximityGraph(e, GraphOptions{M: 1000, K: 100, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		graph50k = g
	}
	return graph50k
}

func benchWalk(b *testing.B, kind string, alpha float64) {
	g := getGraph50k(b)
	s, err := NewBatchSampler(Config{BatchSize: 256, M: 1000, K: 100, Walk: kind, Alpha: Schedule{Start: alpha, Kind: ScheduleConstant}}, g.N, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.SetGraph(g); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if len(s.Next()) != 256 {
			b.Fatal("short batch")
		}
	}
	b.ReportMetric((processCPU()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkRWRBatch256 is the acceptance benchmark: one RWR batch of 256
// (α = 0.2) on the N=50k, K=100 proximity graph, through Next.
func BenchmarkRWRBatch256(b *testing.B)        { benchWalk(b, WalkRWR, 0.2) }
func BenchmarkRWRBatch256Alpha05(b *testing.B) { benchWalk(b, WalkRWR, 0.5) }
func BenchmarkRWBatch256(b *testing.B)         { benchWalk(b, WalkRW, 0) }
func BenchmarkBFSBatch256(b *testing.B)        { benchWalk(b, WalkBFS, 0) }
func BenchmarkDFSBatch256(b *testing.B)        { benchWalk(b, WalkDFS, 0) }

// BenchmarkTopK1001 selects K=100 of 1001 cosine-like scores (one row of the
// proximity-graph build).
func BenchmarkTopK1001(b *testing.B) {
	e := randomEmbeddings(64, 1001, 3)
	for i := range e.Data {
		e.Data[i] *= 0.09
	}
	var s topK
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.reset(100)
		s.push(e.Row(i%64), 0)
		_ = s.result()
	}
}

// BenchmarkScoreBlock1001 scores one block of the proximity-graph build of
// BenchmarkProximityGraph50k: 62 nodes against 1001 random candidate rows
// of a 50k×128 matrix (gathered, then one GEMM).
func BenchmarkScoreBlock1001(b *testing.B) {
	const n, d, rows, cols = 50000, 128, 62, 1001
	e := randomEmbeddings(n, d, 1)
	r := rand.New(rand.NewPCG(1, 2))
	idx := make([]int32, cols)
	for i := range idx {
		idx[i] = int32(r.IntN(n))
	}
	bw := newBlockWork(n, d, rows, cols, 100)
	copy(bw.a, e.Data[:rows*d])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scoreBlock(bw, e.Data, d, rows, 0, idx, cols)
	}
	b.ReportMetric(2*rows*cols*d*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkKNNGraph10k is the exact kNN graph (Config.Graph = "knn") of
// N=10,000 rows of d=128 with K=100: all N² similarities.
func BenchmarkKNNGraph10k(b *testing.B) {
	e := randomEmbeddings(10000, 128, 1)
	u, _ := normalizeRows(e)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := buildKNN(u, 10000, 128, 100, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKNNSamplerBatch256 is one kNN Sampler batch (anchor + 255
// nearest of N=50,000, d=128).
func BenchmarkKNNSamplerBatch256(b *testing.B) {
	e := randomEmbeddings(50000, 128, 1)
	s, _ := NewKNN(50000, 256, 0, 1)
	if err := s.Refresh(e); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		s.Next()
	}
	b.ReportMetric((processCPU()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
}

package sampler

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestBuildGraphRowsMatchesRefresh checks that BuildGraphRows with
// BuildSeed rebuilds BatchSampler.Refresh's graph, whole or as shards, for
// every graph kind and candidate sharing and any number of workers.
func TestBuildGraphRowsMatchesRefresh(t *testing.T) {
	e := randomEmbeddings(700, 12, 3)
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
			const seed = 11
			s, err := NewBatchSampler(Config{BatchSize: 32, M: max(tc.m, tc.k), K: tc.k, Graph: tc.graph, CandidateSharing: tc.sharing}, e.N, seed)
			if err != nil {
				t.Fatal(err)
			}
			for build := uint64(1); build <= 2; build++ {
				if err := s.Refresh(e); err != nil {
					t.Fatal(err)
				}
				cfg := s.Config()
				opt := GraphOptions{M: cfg.M, K: cfg.K, CandidateSharing: cfg.CandidateSharing, BlockSize: cfg.BlockSize, Seed: BuildSeed(seed, build)}
				var cat []int32
				for i, cut := range [][2]int{{0, 1}, {1, 250}, {250, 250}, {250, 699}, {699, 700}} {
					opt.Workers = 1 + i%3
					r, err := BuildGraphRows(e, tc.graph, opt, cut[0], cut[1])
					if err != nil {
						t.Fatal(err)
					}
					if r.K != s.Graph().K || len(r.Adj) != (cut[1]-cut[0])*r.K {
						t.Fatalf("rows %v: K=%d with %d entries", cut, r.K, len(r.Adj))
					}
					cat = append(cat, r.Adj...)
				}
				if !slices.Equal(cat, s.Graph().Adj) {
					t.Fatalf("build %d: concatenated shards differ from Refresh's graph", build)
				}
				// The in-place path: the same graph without the copy.
				u := Embeddings{N: e.N, D: e.D, Data: slices.Clone(e.Data)}
				if err := NormalizeRowsInPlace(u); err != nil {
					t.Fatal(err)
				}
				r, err := BuildGraphRowsNormalized(u, tc.graph, opt, 0, e.N)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(r.Adj, s.Graph().Adj) {
					t.Fatalf("build %d: BuildGraphRowsNormalized differs from Refresh's graph", build)
				}
			}
		})
	}
}

func TestBuildGraphRowsErrors(t *testing.T) {
	e := randomEmbeddings(50, 4, 1)
	for _, tc := range []struct {
		name   string
		kind   string
		lo, hi int
	}{
		{"range", GraphProximity, 10, 60},
		{"reversed", GraphProximity, 10, 5},
		{"kind", "complete", 0, 50},
	} {
		if _, err := BuildGraphRows(e, tc.kind, GraphOptions{M: 10, K: 5}, tc.lo, tc.hi); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestNormalizeRowsInPlace(t *testing.T) {
	e := Embeddings{N: 3, D: 2, Data: []float32{3, 4, 0, 0, 1, 0}}
	if err := NormalizeRowsInPlace(e); err != nil {
		t.Fatal(err)
	}
	if want := []float32{0.6, 0.8, 0, 0, 1, 0}; !slices.Equal(e.Data, want) {
		t.Fatalf("normalised rows %v, want %v (zero rows stay zero)", e.Data, want)
	}
	bad := Embeddings{N: 2, D: 2, Data: []float32{1, float32(math.NaN()), 1, 1}}
	if err := NormalizeRowsInPlace(bad); err == nil {
		t.Fatal("NaN row: no error")
	}
	if _, err := BuildGraphRowsNormalized(Embeddings{N: 2, D: 2, Data: []float32{1}}, GraphProximity, GraphOptions{M: 1, K: 1}, 0, 2); err == nil {
		t.Fatal("short data: no error")
	}
}

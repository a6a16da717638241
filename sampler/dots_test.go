package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestEdgeDotsMatchScalar: NeighbourStats' dot products give the bits of
// the scalar float64 loop with the 16-edge AVX-512 kernel as without it
// (out-degrees around 16, repeated neighbours and self-loops, coordinates
// of every magnitude), and so do the statistics.
func TestEdgeDotsMatchScalar(t *testing.T) {
	orig := haveDots16
	defer func() { haveDots16 = orig }()
	r := rand.New(rand.NewPCG(18, 19))
	for _, d := range []int{1, 7, 15, 16, 17, 33, 96, 128} {
		for _, k := range []int{1, 15, 16, 17, 40} {
			n := 300
			e := Embeddings{N: n, D: d, Data: make([]float32, n*d)}
			for i := range e.Data {
				e.Data[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
			}
			adj := make([]int32, n*k)
			for i := range adj {
				adj[i] = int32(r.IntN(n))
			}
			adj[5*k] = 5 // a self-loop
			g, err := NewGraph(n, k, adj)
			if err != nil {
				t.Fatal(err)
			}
			labels := make([]int, n)
			for i := range labels {
				labels[i] = r.IntN(3)
			}
			var res [2]NeighbourStatistics
			var dots [2][]float64
			for pass, kernel := range []bool{false, true} {
				if kernel && !orig {
					continue
				}
				haveDots16 = kernel
				var sc dotScratch
				for i := 0; i < n; i++ {
					dots[pass] = edgeDots(dots[pass], e, i, g.Neighbours(i), &sc)
				}
				if res[pass], err = NeighbourStats(g, e, labels); err != nil {
					t.Fatal(err)
				}
			}
			if !orig {
				continue
			}
			for q := range dots[0] {
				if math.Float64bits(dots[0][q]) != math.Float64bits(dots[1][q]) {
					t.Fatalf("d=%d k=%d: edge %d: %v with the kernel, %v scalar", d, k, q, dots[1][q], dots[0][q])
				}
			}
			if math.Float64bits(res[0].MeanCosine) != math.Float64bits(res[1].MeanCosine) {
				t.Fatalf("d=%d k=%d: MeanCosine %v with the kernel, %v scalar", d, k, res[1].MeanCosine, res[0].MeanCosine)
			}
		}
	}
}

// BenchmarkNeighbourStatsNCI1Size times the refresh diagnostics on an
// NCI1-sized graph (4,110 nodes, K = 100, d = 96: 2,621 nodes sampled,
// MaxStatEdges), with and without the 16-edge kernel.
func BenchmarkNeighbourStatsNCI1Size(b *testing.B) {
	orig := haveDots16
	defer func() { haveDots16 = orig }()
	r := rand.New(rand.NewPCG(20, 21))
	n, d, k := 4110, 96, 100
	e := Embeddings{N: n, D: d, Data: make([]float32, n*d)}
	for i := range e.Data {
		e.Data[i] = float32(r.NormFloat64())
	}
	adj := make([]int32, n*k)
	for i := range adj {
		adj[i] = int32(r.IntN(n))
	}
	g, err := NewGraph(n, k, adj)
	if err != nil {
		b.Fatal(err)
	}
	labels := make([]int, n)
	for _, kernel := range []bool{false, true} {
		if kernel && !orig {
			continue
		}
		name := "scalar"
		if kernel {
			name = "avx512"
		}
		b.Run(name, func(b *testing.B) {
			haveDots16 = kernel
			for b.Loop() {
				if _, err := NeighbourStats(g, e, labels); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

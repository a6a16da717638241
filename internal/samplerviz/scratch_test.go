package samplerviz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

func TestScratch(t *testing.T) {
	for _, c := range []struct{ n, b, m, k int; sharing string }{{600, 48, 60, 8, ""}, {600, 48, 60, 8, "node"}, {600, 24, 60, 8, ""}, {1200, 32, 100, 10, ""}} {
		e, labels, _ := CirclePoints(PointsConfig{N: c.n, Classes: 6, Spread: 0.3, RadiusJitter: 0.1, Seed: 1})
		g, _ := sampler.BuildProximityGraph(e, sampler.GraphOptions{M: c.m, K: c.k, Seed: 1, CandidateSharing: c.sharing})
		st, _ := sampler.NeighbourStats(g, e, labels)
		ang := func(i int) float64 { return math.Atan2(float64(e.Data[2*i+1]), float64(e.Data[2*i])) }
		fmt.Printf("%+v edge agreement %.3f cos %.3f\n", c, st.LabelAgreement, st.MeanCosine)
		for _, a := range []float64{0, 0.05, 0.2, 0.5, 0.8, 1} {
			var fn, cs, spread, steps float64
			W := 200
			for w := 0; w < W; w++ {
				u := w % c.n
				tr, _ := TraceRWR(g, u, sampler.WalkOptions{B: c.b, Alpha: a}, rand.NewPCG(uint64(w), 9))
				fn += sampler.FalseNegativeRatio(tr.Batch, labels)
				cs += sampler.MeanCosine(tr.Batch, e)
				for _, v := range tr.Batch {
					spread += math.Abs(math.Remainder(ang(v)-ang(u), 2*math.Pi))
				}
				steps += float64(len(tr.Steps))
			}
			fmt.Printf("  α=%.2f FN %.3f cos %.3f mean|Δangle| %.1f° steps %.0f\n", a, fn/float64(W), cs/float64(W), spread/float64(W*c.b)*180/math.Pi, steps/float64(W))
		}
	}
}

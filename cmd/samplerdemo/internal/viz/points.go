package viz

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// CirclePoints draws the demo's labelled 2-D point set: class c ∈ [0, C) is
// centred at the angle 2πc/C, and point i (label i mod C) lies at the angle
// 2πc/C + Spread·z (z standard normal) and the radius 1 + RadiusJitter·u
// (u uniform in [−1, 1]).
//
// Why a ring: the proximity graph, the kNN Sampler and the diagnostics all
// measure similarity as the cosine of L2-normalised embeddings, and in 2-D
// the cosine of two points is the cosine of the angle between them: the
// radius is normalised away. On a ring, therefore, "close on the page" and
// "similar to the samplers" agree up to the small radial jitter, which only
// keeps points from sitting on top of one another (the pictures say so).
// Neighbouring classes overlap at their borders when Spread is a sizeable
// fraction of the 2π/C between class centres, as classes do in real
// embeddings.
func CirclePoints(cfg PointsConfig) (sampler.Embeddings, []int, error) {
	if cfg.N < 1 || cfg.Classes < 1 || !(cfg.Spread >= 0) || math.IsInf(cfg.Spread, 0) || !(cfg.RadiusJitter >= 0 && cfg.RadiusJitter < 1) {
		return sampler.Embeddings{}, nil, fmt.Errorf("viz: points: need n ≥ 1, classes ≥ 1, finite spread ≥ 0 and radius_jitter in [0,1); got n=%d classes=%d spread=%v radius_jitter=%v",
			cfg.N, cfg.Classes, cfg.Spread, cfg.RadiusJitter)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x636972636c65)) // "circle"
	e := sampler.Embeddings{N: cfg.N, D: 2, Data: make([]float32, 2*cfg.N)}
	labels := make([]int, cfg.N)
	for i := range cfg.N {
		c := i % cfg.Classes
		labels[i] = c
		theta := ClassAngle(c, cfg.Classes) + cfg.Spread*r.NormFloat64()
		rad := 1 + cfg.RadiusJitter*(2*r.Float64()-1)
		e.Data[2*i] = float32(rad * math.Cos(theta))
		e.Data[2*i+1] = float32(rad * math.Sin(theta))
	}
	return e, labels, nil
}

// ClassAngle returns the centre angle 2πc/C of class c of C (radians).
func ClassAngle(c, classes int) float64 { return 2 * math.Pi * float64(c) / float64(classes) }

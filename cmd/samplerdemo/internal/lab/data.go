package lab

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// DataSpec describes the generated point set of Clusters.
type DataSpec struct {
	N       int `json:"n"`       // number of points
	Classes int `json:"classes"` // number of classes C
	// Sub is the number of sub-clusters per class: the C·Sub sub-cluster
	// centres are spread evenly over the circle (Dim 2) or the sphere
	// (Dim 3) and the classes alternate among them, so that a sub-cluster's
	// nearest sub-clusters belong to other classes.
	Sub int `json:"sub"`
	Dim int `json:"dim"` // 2 (circle) or 3 (sphere)
	// Spread is the standard deviation, in radians, of a point's angle
	// from its sub-cluster's centre.
	Spread float64 `json:"spread"`
	Seed   uint64  `json:"seed"`
}

// DefaultData is the page's point set at load.
func DefaultData() DataSpec {
	return DataSpec{N: 600, Classes: 4, Sub: 4, Dim: 2, Spread: 0.08, Seed: 1}
}

// Limits of a generated point set (beyond them the page stops being quick
// or legible).
const (
	MaxPoints  = 5000
	MaxClasses = 12
	MaxSub     = 12
)

// Validate checks the spec and names the offending field.
func (s DataSpec) Validate() error {
	switch {
	case s.N < 8 || s.N > MaxPoints:
		return fmt.Errorf("data.n = %d: want between 8 and %d points", s.N, MaxPoints)
	case s.Classes < 2 || s.Classes > MaxClasses:
		return fmt.Errorf("data.classes = %d: want between 2 and %d", s.Classes, MaxClasses)
	case s.Sub < 1 || s.Sub > MaxSub:
		return fmt.Errorf("data.sub = %d: want between 1 and %d sub-clusters per class", s.Sub, MaxSub)
	case s.Classes*s.Sub > s.N:
		return fmt.Errorf("data.classes·data.sub = %d sub-clusters for %d points: want at most one sub-cluster per point", s.Classes*s.Sub, s.N)
	case s.Dim != 2 && s.Dim != 3:
		return fmt.Errorf("data.dim = %d: want 2 (circle) or 3 (sphere)", s.Dim)
	case !(s.Spread >= 0 && s.Spread <= 1.5):
		return fmt.Errorf("data.spread = %v: want an angle in [0, 1.5] radians", s.Spread)
	}
	return nil
}

// radiusJitter spreads the points of the circle over radii 1 ± 0.06 so that
// they do not sit on one another on the page; the samplers compare cosines,
// which ignore the radius.
const radiusJitter = 0.06

// Clusters generates the point set: point i belongs to sub-cluster
// j = i mod (C·Sub), whose class is ClassOf(j); on the circle its angle is
// the centre's plus Spread·z (z standard normal) and its radius is
// 1 ± radiusJitter (uniform); on the sphere it is the centre plus Spread·z
// (z a standard normal 3-vector), normalised to unit length. It also
// returns the centres (unit vectors, Dim values each).
func Clusters(s DataSpec) (e sampler.Embeddings, labels []int, centres [][]float64, err error) {
	if err := s.Validate(); err != nil {
		return sampler.Embeddings{}, nil, nil, err
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x73756263)) // "subc"
	nc := s.Classes * s.Sub
	centres, cls := centresOf(s.Dim, s.Classes, nc)
	e = sampler.Embeddings{N: s.N, D: s.Dim, Data: make([]float32, s.N*s.Dim)}
	labels = make([]int, s.N)
	for i := range s.N {
		j := i % nc
		labels[i] = cls[j]
		row := e.Data[i*s.Dim : (i+1)*s.Dim]
		if s.Dim == 2 {
			theta := math.Atan2(centres[j][1], centres[j][0]) + s.Spread*r.NormFloat64()
			rad := 1 + radiusJitter*(2*r.Float64()-1)
			row[0], row[1] = float32(rad*math.Cos(theta)), float32(rad*math.Sin(theta))
			continue
		}
		var v [3]float64
		var n2 float64
		for k := range 3 {
			v[k] = centres[j][k] + s.Spread*r.NormFloat64()
			n2 += v[k] * v[k]
		}
		inv := 1 / math.Sqrt(n2)
		for k := range 3 {
			row[k] = float32(v[k] * inv)
		}
	}
	return e, labels, centres, nil
}

// centresOf returns nc sub-cluster centres and their classes. Circle: the
// angles 2πj/nc, class j mod C, so that neighbouring arcs differ. Sphere:
// the Fibonacci lattice (nearly even spacing); each centre takes, in
// lattice order, the class that least clashes with its already placed near
// centres (the nearest weighing most), then the least used; a repair pass
// then recolours any centre whose nearest centre, or a centre it is the
// nearest of, has its class.
func centresOf(dim, classes, nc int) ([][]float64, []int) {
	centres := make([][]float64, nc)
	cls := make([]int, nc)
	if dim == 2 {
		for j := range nc {
			a := 2 * math.Pi * float64(j) / float64(nc)
			centres[j] = []float64{math.Cos(a), math.Sin(a)}
			cls[j] = j % classes
		}
		return centres, cls
	}
	golden := math.Pi * (3 - math.Sqrt(5))
	for j := range nc {
		z := 1 - (2*float64(j)+1)/float64(nc)
		rr := math.Sqrt(1 - z*z)
		a := golden * float64(j)
		centres[j] = []float64{rr * math.Cos(a), rr * math.Sin(a), z}
	}
	// near[j]: the other centres by decreasing cosine (at most 6).
	near := make([][]int, nc)
	for j := range nc {
		var idx []int
		for i := range nc {
			if i != j {
				idx = append(idx, i)
			}
		}
		dot := func(i int) float64 {
			return centres[i][0]*centres[j][0] + centres[i][1]*centres[j][1] + centres[i][2]*centres[j][2]
		}
		for a := 1; a < len(idx); a++ { // insertion sort by decreasing cosine
			for b := a; b > 0 && dot(idx[b]) > dot(idx[b-1]); b-- {
				idx[b], idx[b-1] = idx[b-1], idx[b]
			}
		}
		near[j] = idx[:min(6, len(idx))]
	}
	weights := []float64{32, 16, 8, 4, 2, 1}
	used := make([]int, classes)
	placed := make([]bool, nc)
	for j := range nc {
		clash := make([]float64, classes)
		for r, i := range near[j] {
			if placed[i] {
				clash[cls[i]] += weights[r]
			}
		}
		best := 0
		for c := 1; c < classes; c++ {
			if clash[c] < clash[best] || clash[c] == clash[best] && used[c] < used[best] {
				best = c
			}
		}
		cls[j], placed[j] = best, true
		used[best]++
	}
	// Repair: a centre sharing its class with its nearest centre, or with
	// a centre it is the nearest of, takes a class none of them has (the
	// least used such), if there is one.
	for range 3 {
		for j := range nc {
			ties := []int{near[j][0]}
			for i := range nc {
				if near[i][0] == j {
					ties = append(ties, i)
				}
			}
			bad := false
			for _, i := range ties {
				bad = bad || cls[i] == cls[j]
			}
			if !bad {
				continue
			}
			best := -1
			for c := range classes {
				ok := true
				for _, i := range ties {
					ok = ok && cls[i] != c
				}
				if ok && (best < 0 || used[c] < used[best]) {
					best = c
				}
			}
			if best >= 0 {
				used[cls[j]]--
				cls[j] = best
				used[best]++
			}
		}
	}
	return centres, cls
}

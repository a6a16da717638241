package lab

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestClusters checks the point set: labels balanced by sub-cluster,
// circle radii within the jitter, sphere points of unit length, every point
// nearest (in cosine) to the centre of its own sub-cluster when the spread
// is small, neighbouring sub-clusters of different classes, determinism.
func TestClusters(t *testing.T) {
	for _, s := range []DataSpec{
		DefaultData(),
		{N: 900, Classes: 3, Sub: 5, Dim: 3, Spread: 0.05, Seed: 2},
		{N: 480, Classes: 6, Sub: 2, Dim: 3, Spread: 0.05, Seed: 3},
	} {
		e, labels, centres, err := Clusters(s)
		if err != nil {
			t.Fatal(err)
		}
		nc := s.Classes * s.Sub
		if e.N != s.N || e.D != s.Dim || len(labels) != s.N || len(centres) != nc {
			t.Fatalf("%+v: N=%d D=%d labels %d centres %d", s, e.N, e.D, len(labels), len(centres))
		}
		cls := make([]int, nc)
		for i := range nc {
			cls[i] = labels[i]
		}
		misplaced := 0
		for i := range e.N {
			r := e.Row(i)
			var n2 float64
			for _, x := range r {
				n2 += float64(x) * float64(x)
			}
			if s.Dim == 2 && math.Abs(math.Sqrt(n2)-1) > radiusJitter+1e-6 || s.Dim == 3 && math.Abs(n2-1) > 1e-5 {
				t.Fatalf("%+v: point %d has length %v", s, i, math.Sqrt(n2))
			}
			if labels[i] != cls[i%nc] {
				t.Fatalf("%+v: point %d of sub-cluster %d has label %d, the sub-cluster's class is %d", s, i, i%nc, labels[i], cls[i%nc])
			}
			best, bc := -2.0, -1
			for j, c := range centres {
				var dot float64
				for k := range c {
					dot += c[k] * float64(r[k])
				}
				if dot /= math.Sqrt(n2); dot > best {
					best, bc = dot, j
				}
			}
			if bc != i%nc {
				misplaced++
			}
		}
		if s.Dim == 3 && misplaced > 0 {
			t.Errorf("%+v: %d points nearer another sub-cluster's centre than their own", s, misplaced)
		}
		// Every sub-cluster's nearest other sub-cluster is of another class.
		clash := 0
		for j, c := range centres {
			best, bj := -2.0, -1
			for q, o := range centres {
				if q == j {
					continue
				}
				var dot float64
				for k := range c {
					dot += c[k] * o[k]
				}
				if dot > best {
					best, bj = dot, q
				}
			}
			if cls[bj] == cls[j] {
				clash++
			}
		}
		if clash > 0 {
			t.Errorf("%+v: %d of %d sub-clusters have a nearest sub-cluster of their own class", s, clash, nc)
		}
		e2, l2, _, _ := Clusters(s)
		if !slices.Equal(e.Data, e2.Data) || !slices.Equal(labels, l2) {
			t.Errorf("%+v: two calls differ", s)
		}
	}
}

func TestDataSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(*DataSpec)
		want string
	}{
		{func(s *DataSpec) { s.N = 3 }, "data.n = 3"},
		{func(s *DataSpec) { s.Classes = 1 }, "data.classes = 1"},
		{func(s *DataSpec) { s.Sub = 0 }, "data.sub = 0"},
		{func(s *DataSpec) { s.N, s.Classes, s.Sub = 20, 5, 5 }, "at most one sub-cluster per point"},
		{func(s *DataSpec) { s.Dim = 4 }, "data.dim = 4"},
		{func(s *DataSpec) { s.Spread = math.NaN() }, "data.spread"},
	} {
		s := DefaultData()
		tc.edit(&s)
		if _, _, _, err := Clusters(s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error mentioning %q", s, err, tc.want)
		}
	}
}

package sampler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refTopK returns the k-th largest finite value of v (the reference for
// checking a selection up to ties) and how many values exceed it.
func refKth(v []float32, k int) float32 {
	s := slices.Clone(v)
	s = slices.DeleteFunc(s, func(x float32) bool { return math.IsInf(float64(x), -1) || x != x })
	slices.SortFunc(s, func(a, b float32) int { return -cmpf(a, b) })
	if k > len(s) {
		return float32(math.Inf(-1))
	}
	return s[k-1]
}

func finiteCount(v []float32) int {
	c := 0
	for _, x := range v {
		if !math.IsInf(float64(x), -1) {
			c++
		}
	}
	return c
}

// floatKey must preserve the order of float32 values, -Inf and ±0 included.
func TestFloatKeyOrder(t *testing.T) {
	vals := []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 0,
		math.SmallestNonzeroFloat32, 0.5, 1, math.MaxFloat32, float32(math.Inf(1))}
	for i := range vals {
		if keyFloat(floatKey(vals[i])) != vals[i] {
			t.Errorf("keyFloat(floatKey(%v)) = %v", vals[i], keyFloat(floatKey(vals[i])))
		}
		for j := range vals {
			if (vals[i] < vals[j]) != (floatKey(vals[i]) < floatKey(vals[j])) && vals[i] != vals[j] {
				t.Errorf("order of %v and %v not preserved", vals[i], vals[j])
			}
		}
	}
}

func cmpf(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkTop verifies that ids are k distinct positions of v holding a valid
// top-k: every chosen value ≥ the k-th largest, and the chosen set contains
// every value strictly above it.
func checkTop(t *testing.T, name string, v []float32, ids []int32, k int) {
	t.Helper()
	finite := 0
	for _, x := range v {
		if !math.IsInf(float64(x), -1) && x == x {
			finite++
		}
	}
	want := min(k, finite)
	if len(ids) != want {
		t.Fatalf("%s: %d ids, want %d", name, len(ids), want)
	}
	if want == 0 {
		return
	}
	kth := refKth(v, want)
	seen := map[int32]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("%s: id %d twice", name, id)
		}
		seen[id] = true
		if v[id] < kth || math.IsInf(float64(v[id]), -1) {
			t.Fatalf("%s: chose %v below the k-th largest %v", name, v[id], kth)
		}
	}
	for i, x := range v {
		if x > kth && !seen[int32(i)] {
			t.Fatalf("%s: missed value %v at %d above the k-th largest %v", name, x, i, kth)
		}
	}
}

func TestTopKSelection(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ninf := float32(math.Inf(-1))
	gens := []struct {
		name string
		gen  func(n int) []float32
	}{
		{"normal", func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			return v
		}},
		{"ties", func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.IntN(5))
			}
			return v
		}},
		{"equal", func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = 0.25
			}
			return v
		}},
		{"masked", func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.Float64())
				if r.IntN(3) == 0 {
					v[i] = ninf
				}
			}
			return v
		}},
		{"sorted", func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(i)
			}
			return v
		}},
		{"outlier", func(n int) []float32 {
			v := make([]float32, n)
			for i := range v {
				v[i] = float32(r.Float64()) * 1e-3
			}
			v[n/2] = 1e6
			return v
		}},
	}
	for _, g := range gens {
		name, gen := g.name, g.gen
		for _, tc := range []struct{ n, k, chunk int }{{1, 1, 1}, {10, 3, 10}, {100, 100, 100}, {1001, 100, 1001}, {5000, 100, 700}, {5000, 7, 5000}, {300, 20, 1}} {
			v := gen(tc.n)
			var s topK
			s.reset(tc.k)
			for c0 := 0; c0 < tc.n; c0 += tc.chunk {
				s.push(v[c0:min(c0+tc.chunk, tc.n)], int32(c0))
			}
			checkTop(t, name, v, s.result(), tc.k)
			// selectTop directly, on keys
			if tc.k <= finiteCount(v) {
				keys := make([]int32, tc.n)
				ids := make([]int32, tc.n)
				for i := range ids {
					keys[i], ids[i] = floatKey(v[i]), int32(i)
				}
				selectTop(keys, ids, tc.k)
				checkTop(t, name+"/selectTop", v, ids[:tc.k], tc.k)
				low := minKey(keys[:tc.k])
				for i := range keys {
					if floatKey(v[ids[i]]) != keys[i] || (i >= tc.k && keys[i] > low) {
						t.Fatalf("%s: selectTop lost an id or left %v after the top part", name, keyFloat(keys[i]))
					}
				}
			}
		}
	}
}

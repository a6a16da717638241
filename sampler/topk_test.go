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
			checkTop(t, name, v, entryIDs(s.result()), tc.k)
			// selectTop directly, on entries
			if tc.k <= finiteCount(v) {
				ent := make([]int64, tc.n)
				for i := range ent {
					ent[i] = packEntry(floatKey(v[i]), int32(i))
				}
				selectTop(ent, make([]int64, tc.n+vecSlack), tc.k)
				checkTop(t, name+"/selectTop", v, entryIDs(ent[:tc.k]), tc.k)
				low := minKey(ent[:tc.k])
				for i, x := range ent {
					if floatKey(v[entryID(x)]) != entryKey(x) || (i >= tc.k && entryKey(x) > low) {
						t.Fatalf("%s: selectTop lost an id or left %v after the top part", name, keyFloat(entryKey(x)))
					}
				}
			}
		}
	}
}

// entryIDs returns the ids of entries.
func entryIDs(ent []int64) []int32 {
	ids := make([]int32, len(ent))
	for i, x := range ent {
		ids[i] = entryID(x)
	}
	return ids
}

// withTopKAsm runs f with the AVX-512 kernels of topK on and off (when the
// CPU has them).
func withTopKAsm(t *testing.T, f func(t *testing.T)) {
	modes := []bool{false}
	if haveTopKAsm {
		modes = append(modes, true)
	}
	for _, on := range modes {
		t.Run(map[bool]string{false: "go", true: "asm"}[on], func(t *testing.T) {
			setTopKAsm(t, on)
			f(t)
		})
	}
}

// TestPartitionGTMatchesSwaps: partitionGT leaves every entry of v[lo:hi]
// where the Lomuto partition by swaps of refTopK leaves it, on random
// ranges with many ties (the pivot between, on or outside the keys).
func TestPartitionGTMatchesSwaps(t *testing.T) {
	withTopKAsm(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 3))
		for it := 0; it < 30000; it++ {
			n := 1 + r.IntN(1+r.IntN(300))
			span := 1 + r.IntN(12)
			keys, ids := make([]int32, n), make([]int32, n)
			ent := make([]int64, n)
			for j := range keys {
				keys[j] = int32(r.IntN(span)) - 3
				if r.IntN(50) == 0 { // extreme keys: no overflow in the comparisons
					keys[j] = [...]int32{math.MinInt32, math.MaxInt32, floatKey(negInf32)}[r.IntN(3)]
				}
				ids[j] = int32(r.Uint32())
				ent[j] = packEntry(keys[j], ids[j])
			}
			lo := r.IntN(n)
			hi := lo + r.IntN(n-lo+1)
			p := int32(r.IntN(span+2)) - 4
			if r.IntN(20) == 0 {
				p = [...]int32{math.MinInt32, math.MaxInt32 - 1, floatKey(negInf32)}[r.IntN(3)]
			}
			want := refPartitionGT(keys, ids, lo, hi, p)
			got := partitionGT(ent, make([]int64, n+vecSlack), lo, hi, p)
			if got != want {
				t.Fatalf("case %d (n %d, [%d, %d), p %d): front ends at %d, want %d", it, n, lo, hi, p, got, want)
			}
			for j := range ent {
				if entryKey(ent[j]) != keys[j] || entryID(ent[j]) != ids[j] {
					t.Fatalf("case %d (n %d, [%d, %d), p %d): position %d holds (%d, %d), want (%d, %d)", it, n, lo, hi, p, j, entryKey(ent[j]), entryID(ent[j]), keys[j], ids[j])
				}
			}
		}
	})
}

// TestTopKMatchesReference: topK returns the entries of refTopK (the
// implementation before packed entries), in the same order, for streams of
// every shape the graph builders push: one chunk or several, long first
// chunks (the sampled threshold), K a small share or half of the scores,
// masked scores, ties, sorted and constant scores.
func TestTopKMatchesReference(t *testing.T) {
	withTopKAsm(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(8, 1))
		gens := []func(n int) []float32{
			func(n int) []float32 { // cosine-like
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(r.NormFloat64() * 0.09)
				}
				return v
			},
			func(n int) []float32 { // ties
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(r.IntN(7)) / 4
				}
				return v
			},
			func(n int) []float32 { // masked
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(r.Float64())
					if r.IntN(4) == 0 {
						v[i] = negInf32
					}
				}
				return v
			},
			func(n int) []float32 { // ascending
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(i)
				}
				return v
			},
			func(n int) []float32 { // descending
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(-i)
				}
				return v
			},
			func(n int) []float32 { // constant
				v := make([]float32, n)
				for i := range v {
					v[i] = 0.5
				}
				return v
			},
		}
		for it := 0; it < 3000; it++ {
			n := 1 + r.IntN([]int{40, 1100, 6000}[r.IntN(3)])
			k := 1 + r.IntN(n)
			switch r.IntN(3) {
			case 0:
				k = max(1, n/2)
			case 1:
				k = 1 + r.IntN(min(n, 60))
			}
			chunk := n
			if r.IntN(3) == 0 {
				chunk = 1 + r.IntN(n)
			}
			v := gens[r.IntN(len(gens))](n)
			if r.IntN(2) == 0 && n > 1 {
				v[r.IntN(n)] = negInf32 // the excluded column
			}
			var got topK
			var want refTopK
			got.reset(k)
			want.reset(k)
			for c0 := 0; c0 < n; c0 += chunk {
				seg := v[c0:min(c0+chunk, n)]
				got.push(seg, int32(c0))
				want.push(seg, int32(c0))
			}
			g, w := got.result(), want.result()
			if len(g) != len(w) {
				t.Fatalf("case %d (n %d, k %d, chunk %d): %d entries, want %d", it, n, k, chunk, len(g), len(w))
			}
			for j := range w {
				if entryID(g[j]) != w[j] || entryKey(g[j]) != want.keys[j] {
					t.Fatalf("case %d (n %d, k %d, chunk %d): entry %d is id %d, want %d", it, n, k, chunk, j, entryID(g[j]), w[j])
				}
			}
		}
	})
}

package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// foldStream is the PCG stream of the RNG that shuffles fold assignments.
const foldStream = 0x5f0d_f01d

// StratifiedKFold assigns every sample to one of k test folds so that each
// fold holds about the same share of every class, and returns the test-fold
// id (in [0, k)) of every sample.
//
// Without shuffle it reproduces scikit-learn's StratifiedKFold(k) exactly
// (sklearn ≥ 0.22, _make_test_folds): classes are numbered in order of first
// appearance in y; the per-fold counts of a class come from dealing the
// class-sorted labels round-robin over the folds; and the samples of a class,
// in their order in y, receive fold ids 0,0,…,1,1,…, k−1 in blocks of those
// counts. With shuffle the block of fold ids of each class is permuted by a
// Fisher–Yates shuffle from a PCG generator seeded with seed (classes in
// order of first appearance), which is deterministic but cannot reproduce
// NumPy's random stream.
//
// Unlike scikit-learn, which only warns, it returns an error when a class
// has fewer than k members (some fold would then miss that class), as well
// as for k < 2 or an empty y.
func StratifiedKFold(y []int, k int, shuffle bool, seed uint64) ([]int, error) {
	if k < 2 {
		return nil, fmt.Errorf("eval: StratifiedKFold: k = %d, want at least 2", k)
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("eval: StratifiedKFold: no samples")
	}
	// Encode classes by order of first appearance.
	code := map[int]int{}
	var first []int // label of class c
	enc := make([]int, len(y))
	for i, v := range y {
		c, ok := code[v]
		if !ok {
			c = len(first)
			code[v] = c
			first = append(first, v)
		}
		enc[i] = c
	}
	nc := len(first)
	counts := make([]int, nc)
	for _, c := range enc {
		counts[c]++
	}
	for c, n := range counts {
		if n < k {
			return nil, fmt.Errorf("eval: StratifiedKFold: class %d has %d member(s), fewer than k = %d folds", first[c], n, k)
		}
	}
	// allocation[f][c] = count of class c among y_order[f::k], where y_order
	// is the sorted class codes.
	order := slices.Clone(enc)
	slices.Sort(order)
	alloc := make([][]int, k)
	for f := range alloc {
		alloc[f] = make([]int, nc)
		for i := f; i < len(order); i += k {
			alloc[f][order[i]]++
		}
	}
	var rng *rand.Rand
	if shuffle {
		rng = rand.New(rand.NewPCG(seed, foldStream))
	}
	folds := make([]int, len(y))
	for c := 0; c < nc; c++ {
		ids := make([]int, 0, counts[c])
		for f := 0; f < k; f++ {
			for r := 0; r < alloc[f][c]; r++ {
				ids = append(ids, f)
			}
		}
		if shuffle {
			rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		}
		q := 0
		for i, e := range enc {
			if e == c {
				folds[i] = ids[q]
				q++
			}
		}
	}
	return folds, nil
}

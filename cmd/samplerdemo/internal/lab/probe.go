package lab

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ProbeSplit returns the kNN probe's reference and query rows of n: a
// permutation of [0, n) from a fixed seed, cut in halves (each sorted).
func ProbeSplit(n int) (ref, query []int) {
	perm := rand.New(rand.NewPCG(0, 0x70726f6265)).Perm(n) // "probe"
	ref, query = perm[:(n+1)/2], perm[(n+1)/2:]
	slices.Sort(ref)
	slices.Sort(query)
	return ref, query
}

// KNNProbe returns the accuracy of a k-nearest-neighbour classifier on
// the rows of x (n×d): every query row of ProbeSplit takes the majority
// label of its k most cosine-similar reference rows (ties between labels
// go to the label of the nearest of them). It measures how well nearby
// instances share a class in the representation, which is what a
// contrastive loss shapes.
func KNNProbe(x []float64, n, d int, labels []int, k int) (float64, error) {
	if n < 2 || d < 1 || len(x) != n*d || len(labels) != n || k < 1 {
		return 0, fmt.Errorf("knn probe: need n ≥ 2 rows of d ≥ 1 values, n labels and k ≥ 1; got n=%d d=%d values=%d labels=%d k=%d", n, d, len(x), len(labels), k)
	}
	ref, query := ProbeSplit(n)
	k = min(k, len(ref))
	inv := make([]float64, n)
	for i := range n {
		var s float64
		for _, v := range x[i*d : (i+1)*d] {
			s += v * v
		}
		if s > 0 {
			inv[i] = 1 / math.Sqrt(s)
		}
	}
	type cand struct {
		sim float64
		i   int
	}
	best := make([]cand, 0, k+1)
	votes := map[int]int{}
	right := 0
	for _, q := range query {
		best = best[:0]
		xq := x[q*d : (q+1)*d]
		for _, r := range ref {
			var s float64
			for j, v := range x[r*d : (r+1)*d] {
				s += v * xq[j]
			}
			c := cand{s * inv[r] * inv[q], r}
			if len(best) == k && c.sim <= best[k-1].sim {
				continue
			}
			p := len(best)
			if p < k {
				best = append(best, c)
			} else {
				p = k - 1
				best[p] = c
			}
			for ; p > 0 && best[p].sim > best[p-1].sim; p-- {
				best[p], best[p-1] = best[p-1], best[p]
			}
		}
		clear(votes)
		top, topVotes := labels[best[0].i], 0
		for _, c := range best {
			votes[labels[c.i]]++
		}
		for _, c := range best { // in order of similarity: ties go to the nearest
			if v := votes[labels[c.i]]; v > topVotes {
				top, topVotes = labels[c.i], v
			}
		}
		if top == labels[q] {
			right++
		}
	}
	return float64(right) / float64(len(query)), nil
}

package lab

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// refKNN is the kNN probe by sorting every reference row.
func refKNN(x []float64, n, d int, labels []int, k int) float64 {
	ref, query := ProbeSplit(n)
	cos := func(a, b int) float64 {
		var ab, aa, bb float64
		for j := range d {
			ab += x[a*d+j] * x[b*d+j]
			aa += x[a*d+j] * x[a*d+j]
			bb += x[b*d+j] * x[b*d+j]
		}
		return ab / math.Sqrt(aa*bb)
	}
	right := 0
	for _, q := range query {
		rs := append([]int(nil), ref...)
		sort.SliceStable(rs, func(i, j int) bool { return cos(q, rs[i]) > cos(q, rs[j]) })
		votes := map[int]int{}
		for _, r := range rs[:k] {
			votes[labels[r]]++
		}
		top, tv := -1, 0
		for _, r := range rs[:k] {
			if votes[labels[r]] > tv {
				top, tv = labels[r], votes[labels[r]]
			}
		}
		if top == labels[q] {
			right++
		}
	}
	return float64(right) / float64(len(query))
}

func TestKNNProbe(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	const n, d = 300, 5
	x := make([]float64, n*d)
	labels := make([]int, n)
	for i := range n {
		labels[i] = r.IntN(3)
		for j := range d {
			x[i*d+j] = r.NormFloat64() + 0.8*float64(labels[i]*(j%3))
		}
	}
	for _, k := range []int{1, 5, 10} {
		got, err := KNNProbe(x, n, d, labels, k)
		if err != nil {
			t.Fatal(err)
		}
		if want := refKNN(x, n, d, labels, k); got != want {
			t.Errorf("k=%d: %v, sorting reference %v", k, got, want)
		}
	}
	// Perfectly separated classes: accuracy 1.
	for i := range n {
		for j := range d {
			x[i*d+j] = 0.01 * r.NormFloat64()
		}
		x[i*d+labels[i]] = 1
	}
	if got, _ := KNNProbe(x, n, d, labels, 5); got != 1 {
		t.Errorf("separated classes: accuracy %v, want 1", got)
	}
	ref, query := ProbeSplit(n)
	if len(ref)+len(query) != n || len(ref) != 150 {
		t.Errorf("split %d + %d of %d", len(ref), len(query), n)
	}
	if _, err := KNNProbe(x, n, d, labels[:10], 5); err == nil {
		t.Error("10 labels for 300 rows accepted")
	}
}

package sampler

import (
	"slices"
	"testing"
)

// After a Refresh every kNN batch is its anchor followed by the anchor's
// B−1 most similar other instances (float64 reference) in decreasing
// similarity, and anchors are not yet covered in the epoch.
func TestKNNBatchIsAnchorNeighbourhood(t *testing.T) {
	const n, d, b = 400, 10, 25
	e := randomEmbeddings(n, d, 13)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	s, err := NewKNN(n, b, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	if s.RefreshEvery() != 5 {
		t.Errorf("RefreshEvery = %d", s.RefreshEvery())
	}
	if err := s.Refresh(e); err != nil {
		t.Fatal(err)
	}
	for epoch := 0; epoch < 2; epoch++ {
		covered := map[int]bool{}
		for i := 0; i < s.BatchesPerEpoch(); i++ {
			bt := s.Next()
			checkBatch(t, "knn", bt, b, n)
			if covered[bt[0]] {
				t.Fatalf("anchor %d was already covered in this epoch", bt[0])
			}
			nb := make([]int32, 0, b-1)
			for _, v := range bt[1:] {
				nb = append(nb, int32(v))
			}
			checkNeighbours(t, "knn", e, bt[0], nb, all, 1e-5)
			u := unitRows(bt, e)
			for j := 2; j < len(bt); j++ {
				if refDotF(u[0], u[j]) > refDotF(u[0], u[j-1])+1e-5 {
					t.Fatalf("batch not in decreasing similarity at %d", j)
				}
			}
			for _, v := range bt {
				covered[v] = true
			}
		}
		if got := s.Coverage(); got != float64(len(covered))/n {
			t.Errorf("Coverage %v, counted %v", got, float64(len(covered))/n)
		}
	}
}

func refDotF(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestKNNStateRoundTrip(t *testing.T) {
	e := randomEmbeddings(200, 6, 1)
	a, _ := NewKNN(200, 16, 0, 5)
	a.Next()
	if err := a.Refresh(e); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 9; i++ {
		a.Next()
	}
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewKNN(200, 16, 0, 77)
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		if x, y := a.Next(), b.Next(); !slices.Equal(x, y) {
			t.Fatalf("batch %d differs after restore", i)
		}
	}
	c, _ := NewKNN(200, 15, 0, 5)
	if err := c.UnmarshalBinary(st); err == nil {
		t.Error("restoring into another batch size should fail")
	}
}

func TestKNNErrors(t *testing.T) {
	for _, tc := range []struct{ n, b, t int }{{0, 1, 0}, {5, 0, 0}, {5, 2, -1}} {
		if _, err := NewKNN(tc.n, tc.b, tc.t, 1); err == nil {
			t.Errorf("NewKNN(%d,%d,%d) accepted", tc.n, tc.b, tc.t)
		}
	}
	s, _ := NewKNN(5, 2, 0, 1)
	if err := s.Refresh(randomEmbeddings(4, 2, 1)); err == nil {
		t.Error("Refresh with the wrong N accepted")
	}
}

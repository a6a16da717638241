package sampler

import (
	"slices"
	"testing"
)

func TestUniformEpochIsPermutation(t *testing.T) {
	for _, tc := range []struct{ n, b int }{{10, 3}, {12, 4}, {11, 4}, {5, 5}, {2, 2}} {
		u, err := NewUniform(tc.n, tc.b, 7)
		if err != nil {
			t.Fatal(err)
		}
		var prev []int
		for epoch := 0; epoch < 3; epoch++ {
			var all []int
			for i := 0; i < u.BatchesPerEpoch(); i++ {
				bt := u.Next()
				if len(bt) < 2 || len(bt) > batchLen(tc.n, tc.b, i) {
					t.Fatalf("n=%d b=%d: batch of %d", tc.n, tc.b, len(bt))
				}
				all = append(all, bt...)
			}
			if epoch > 0 && tc.n > 3 && slices.Equal(all, prev) {
				t.Errorf("n=%d: epoch %d repeats the previous order", tc.n, epoch)
			}
			prev = slices.Clone(all)
			slices.Sort(all)
			for i, v := range all {
				if v != i {
					t.Fatalf("n=%d b=%d epoch %d: not a permutation: %v", tc.n, tc.b, epoch, all)
				}
			}
		}
	}
}

func TestUniformStateRoundTrip(t *testing.T) {
	a, _ := NewUniform(50, 7, 3)
	for i := 0; i < 9; i++ {
		a.Next()
	}
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewUniform(50, 7, 999)
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if x, y := a.Next(), b.Next(); !slices.Equal(x, y) {
			t.Fatalf("batch %d differs after restore: %v vs %v", i, x, y)
		}
	}
	c, _ := NewUniform(49, 7, 3)
	if err := c.UnmarshalBinary(st); err == nil {
		t.Error("restoring a state of another size should fail")
	}
}

func TestUniformRejectsBadArgs(t *testing.T) {
	if _, err := NewUniform(0, 4, 1); err == nil {
		t.Error("n=0 accepted")
	}
	if _, err := NewUniform(4, 0, 1); err == nil {
		t.Error("b=0 accepted")
	}
	if _, err := NewUniform(4, 1, 1); err == nil {
		t.Error("b=1 accepted")
	}
	if _, err := NewUniform(1, 1, 1); err == nil {
		t.Error("n=1 accepted")
	}
}

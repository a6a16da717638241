package eval

import (
	"slices"
	"strings"
	"testing"
)

func TestStratifiedKFoldMatchesSklearn(t *testing.T) {
	ref := loadRef(t)
	u := ref.SKFUnbalanced
	cases := []struct {
		name string
		y    []int
		k    int
		want []int
	}{
		{"unbalanced k=3", u.Y, 3, u.K3},
		{"unbalanced k=5", u.Y, 5, u.K5},
		{"unbalanced k=6", u.Y, 6, u.K6},
	}
	for _, name := range []string{"embed2", "embed3"} {
		fx := loadEmbed(t, name)
		cases = append(cases, struct {
			name string
			y    []int
			k    int
			want []int
		}{name + " k=10", fx.y, 10, ref.Datasets[name].SKF10})
	}
	for _, tc := range cases {
		got, err := StratifiedKFold(tc.y, tc.k, false, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: fold ids differ from sklearn\n go %v\n sk %v", tc.name, got, tc.want)
		}
	}
}

// foldClassCounts returns counts[fold][label].
func foldClassCounts(y, folds []int, k int) []map[int]int {
	c := make([]map[int]int, k)
	for f := range c {
		c[f] = map[int]int{}
	}
	for i, f := range folds {
		c[f][y[i]]++
	}
	return c
}

func TestStratifiedKFoldShuffle(t *testing.T) {
	ref := loadRef(t)
	y := ref.SKFUnbalanced.Y
	for _, k := range []int{3, 5, 6} {
		plain, _ := StratifiedKFold(y, k, false, 0)
		a, err := StratifiedKFold(y, k, true, 42)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := StratifiedKFold(y, k, true, 42)
		c, _ := StratifiedKFold(y, k, true, 43)
		if !slices.Equal(a, b) {
			t.Errorf("k=%d: same seed gave different folds", k)
		}
		if slices.Equal(a, c) {
			t.Errorf("k=%d: seeds 42 and 43 gave identical folds", k)
		}
		if slices.Equal(a, plain) {
			t.Errorf("k=%d: shuffled folds equal the unshuffled ones", k)
		}
		// Shuffling permutes fold ids within a class: per-fold class counts
		// are those of the unshuffled (sklearn) split.
		cp, ca := foldClassCounts(y, plain, k), foldClassCounts(y, a, k)
		for f := 0; f < k; f++ {
			for lab, n := range cp[f] {
				if ca[f][lab] != n {
					t.Errorf("k=%d fold %d class %d: %d members shuffled, %d unshuffled", k, f, lab, ca[f][lab], n)
				}
			}
		}
	}
}

func TestStratifiedKFoldBalanced(t *testing.T) {
	// Per fold, every class count is within one of count/k.
	y := make([]int, 0, 97)
	for i := 0; i < 97; i++ {
		y = append(y, []int{3, 1, 1, 2, 3, 3}[i%6])
	}
	for _, k := range []int{2, 5, 10} {
		folds, err := StratifiedKFold(y, k, true, 9)
		if err != nil {
			t.Fatal(err)
		}
		total := map[int]int{}
		for _, v := range y {
			total[v]++
		}
		for f, cnt := range foldClassCounts(y, folds, k) {
			for lab, n := range total {
				lo, hi := n/k, (n+k-1)/k
				if cnt[lab] < lo || cnt[lab] > hi {
					t.Errorf("k=%d fold %d class %d: %d members, want in [%d, %d]", k, f, lab, cnt[lab], lo, hi)
				}
			}
		}
	}
}

func TestStratifiedKFoldErrors(t *testing.T) {
	cases := []struct {
		name string
		y    []int
		k    int
		want string
	}{
		{"k=1", []int{0, 1, 0, 1}, 1, "at least 2"},
		{"empty", nil, 2, "no samples"},
		{"small class", []int{0, 0, 0, 0, 1, 1}, 3, "class 1 has 2 member(s)"},
	}
	for _, tc := range cases {
		_, err := StratifiedKFold(tc.y, tc.k, false, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

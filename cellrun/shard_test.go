package cellrun

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"0/4", Shard{0, 4}, false},
		{"3/4", Shard{3, 4}, false},
		{" 1 / 2 ", Shard{1, 2}, false},
		{"0/1", Shard{0, 1}, false},
		{"4/4", Shard{}, true},
		{"-1/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"2", Shard{}, true},
		{"a/b", Shard{}, true},
		{"", Shard{}, true},
	} {
		got, err := ParseShard(tc.in)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "want i/n with 0 ≤ i < n") {
				t.Errorf("ParseShard(%q) = %v, %v; want an error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestShardSelect: the shards of n are disjoint, cover the plan and deal
// it round-robin; 0/1 and the zero Shard are the whole plan.
func TestShardSelect(t *testing.T) {
	var cells []Cell
	for i := range 11 {
		cells = append(cells, Cell{Dir: fmt.Sprint(i)})
	}
	for _, n := range []int{1, 2, 3, 4, 11, 15} {
		seen := map[string]int{}
		for i := range n {
			sel := Shard{i, n}.Select(cells)
			for k, c := range sel {
				seen[c.Dir]++
				if want := fmt.Sprint(i + k*n); c.Dir != want {
					t.Errorf("shard %d/%d cell %d is %s, want %s", i, n, k, c.Dir, want)
				}
			}
		}
		if len(seen) != len(cells) {
			t.Errorf("n = %d: the shards cover %d of %d cells", n, len(seen), len(cells))
		}
		for d, k := range seen {
			if k != 1 {
				t.Errorf("n = %d: cell %s in %d shards", n, d, k)
			}
		}
	}
	if got := (Shard{}).Select(cells); !slices.Equal(dirs(got), dirs(cells)) {
		t.Error("the zero Shard is not the whole plan")
	}
}

func dirs(cs []Cell) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Dir)
	}
	return out
}

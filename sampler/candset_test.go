package sampler

import (
	"math/rand/v2"
	"testing"
)

// TestCandSetMatchesMap: both forms of candSet (hashed for sets much
// smaller than n, stamp arrays otherwise) answer as a map does, over
// successive sets of every size, members drawn with repeats.
func TestCandSetMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 4))
	forms := map[bool]int{}
	for _, n := range []int{1, 7, 64, 65, 300, 5000, 200000} {
		var s candSet
		for round := 0; round < 40; round++ {
			m := 1 + r.IntN(min(n, 3000))
			s.reset(n, m)
			ref := map[int32]int32{}
			for j := 0; j < m; j++ {
				v := int32(r.IntN(n))
				_, had := ref[v]
				if !had {
					ref[v] = int32(j)
				}
				if added := s.add(v, int32(j)); added == had {
					t.Fatalf("n %d, set of %d: add(%d) = %v with the node %s", n, m, v, added, map[bool]string{true: "present", false: "absent"}[had])
				}
			}
			for q := 0; q < 2*m; q++ {
				v := int32(r.IntN(n))
				p, ok := s.lookup(v)
				wp, wok := ref[v]
				if ok != wok || (ok && p != wp) {
					t.Fatalf("n %d, set of %d: lookup(%d) = (%d, %v), want (%d, %v)", n, m, v, p, ok, wp, wok)
				}
			}
			forms[s.slots != nil]++
		}
	}
	if forms[true] == 0 || forms[false] == 0 {
		t.Fatalf("sets built %d times hashed and %d times as stamp arrays, want both forms", forms[true], forms[false])
	}
}

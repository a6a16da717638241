package cellrun

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is task I of N of an array job (a Slurm job array, a Kubernetes
// indexed Job): it runs the cells k of a plan with k mod N = I. The zero
// Shard (N = 0) and 0/1 are the whole plan. Cells are dealt round-robin
// because plans put their cheap cells first: every task gets some of each.
type Shard struct{ I, N int }

// ParseShard reads "i/n" (0 ≤ i < n), as -shard takes it, e.g.
// $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("-shard %q: want i/n with 0 ≤ i < n, e.g. 0/4 or $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT", s)
	}
	return Shard{I: i, N: n}, nil
}

// All reports whether the shard is the whole plan.
func (s Shard) All() bool { return s.N <= 1 }

func (s Shard) String() string {
	if s.All() {
		return "all"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Select returns the shard's cells, in plan order.
func (s Shard) Select(cells []Cell) []Cell {
	if s.All() {
		return cells
	}
	var out []Cell
	for k := s.I; k < len(cells); k += s.N {
		out = append(out, cells[k])
	}
	return out
}

package sampler

// The assignment problems of balanced k-means (Spectral's clusters of
// exactly B): the Hungarian algorithm on a square cost matrix, and the
// same problem with every cluster's columns repeated, solved as the
// transportation problem it is.

import (
	"fmt"
	"math"
)

// LinearSumAssignment solves the assignment problem of an n×n cost matrix
// (row-major, finite values): it returns col, a permutation, such that
// Σᵢ cost[i][col[i]] is minimal. It is the Hungarian algorithm in its
// shortest-augmenting-path form with row and column potentials (Kuhn 1955,
// Munkres 1957; O(n³)), as SciPy's linear_sum_assignment solves the same
// problem.
func LinearSumAssignment(n int, cost []float64) ([]int, error) {
	if n < 0 || len(cost) != n*n {
		return nil, fmt.Errorf("sampler: assignment: %d costs for a %d×%d matrix", len(cost), n, n)
	}
	for i, v := range cost {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("sampler: assignment: cost[%d][%d] is %v, want a finite value", i/n, i%n, v)
		}
	}
	// 1-based arrays: column 0 is the virtual column of the row being added.
	u := make([]float64, n+1)
	v := make([]float64, n+1)
	p := make([]int, n+1) // p[j]: the row matched to column j (0: none)
	way := make([]int, n+1)
	minv := make([]float64, n+1)
	used := make([]bool, n+1)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta, j1 := math.Inf(1), 0
			row := cost[(i0-1)*n:]
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				cur := row[j-1] - u[i0] - v[j]
				if cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	col := make([]int, n)
	for j := 1; j <= n; j++ {
		col[p[j]-1] = j - 1
	}
	return col, nil
}

// BalancedAssign assigns the n = c·m rows of x (n×d) to the c centres
// (c×d) so that every centre gets exactly m rows and the total Euclidean
// distance (not squared) of the rows to their centres is minimal: the
// assignment problem of the n×n matrix of distances to the centres, each
// repeated m times (Cho et al.'s even-sized spectral clustering solves it
// so, with SciPy's linear_sum_assignment), solved as the transportation
// problem it is (balancedTransport). It returns each row's centre and the
// total distance.
func BalancedAssign(x []float32, n, d int, centres []float32, c int) ([]int32, float64, error) {
	if c < 1 || n%c != 0 || len(x) != n*d || len(centres) != c*d {
		return nil, 0, fmt.Errorf("sampler: balanced assign: %d rows of dimension %d into %d clusters (%d centre values): want n a multiple of c", n, d, c, len(centres))
	}
	cost := make([]float64, n*c)
	for i := range n {
		for j := range c {
			cost[i*c+j] = math.Sqrt(sqDist(x[i*d:(i+1)*d], centres[j*d:(j+1)*d]))
		}
	}
	labels := balancedTransport(cost, n, c, n/c)
	var tot float64
	for i, l := range labels {
		tot += cost[i*c+int(l)]
	}
	return labels, tot, nil
}

// balancedTransport assigns n rows to c groups of capacity m (n = c·m)
// minimising Σ cost[i][group(i)] (cost n×c): the Hungarian algorithm's
// row-by-row shortest augmenting paths on the n×n matrix of the groups'
// columns repeated m times, with the m identical columns of a group taken
// as one node: adding row p, the path goes p → group a₁ → a₂ → … → a
// group with room, each step a → b moving the row of a whose cost rises
// least, by cost[q][b] − cost[q][a] (Bellman–Ford over the c groups, as
// those costs can be negative). O(n²·c + n·c³) instead of the n³ of the
// expanded matrix.
func balancedTransport(cost []float64, n, c, m int) []int32 {
	label := make([]int32, n)
	size := make([]int, c)
	// Improvements below eps (relative to the costs' scale) are rounding:
	// taking them could close a cycle of moves.
	var scale float64
	for _, v := range cost {
		scale = max(scale, math.Abs(v))
	}
	eps := 1e-9 * scale
	onPath := make([]int, c)
	stamp := 0
	w := make([]float64, c*c)
	arg := make([]int, c*c)
	dist := make([]float64, c)
	prev := make([]int, c)
	for p := range n {
		for i := range w {
			w[i], arg[i] = math.Inf(1), -1
		}
		for q := range p {
			a := int(label[q])
			for b := range c {
				if b == a {
					continue
				}
				if v := cost[q*c+b] - cost[q*c+a]; v < w[a*c+b] {
					w[a*c+b], arg[a*c+b] = v, q
				}
			}
		}
		for b := range c {
			dist[b], prev[b] = cost[p*c+b], -1
		}
		for range c {
			changed := false
			for a := range c {
				for b := range c {
					if arg[a*c+b] >= 0 && dist[a]+w[a*c+b] < dist[b]-eps {
						dist[b], prev[b] = dist[a]+w[a*c+b], a
						changed = true
					}
				}
			}
			if !changed {
				break
			}
		}
		t := -1
		for b := range c {
			if size[b] < m && (t < 0 || dist[b] < dist[t]) {
				t = b
			}
		}
		size[t]++
		// The path back from t; should rounding ever close a cycle in
		// prev, p goes to t with no moves (still feasible, never a loop).
		stamp++
		simple := true
		for x := t; x >= 0; x = prev[x] {
			if onPath[x] == stamp {
				simple = false
				break
			}
			onPath[x] = stamp
		}
		cur := t
		for simple && prev[cur] >= 0 {
			a := prev[cur]
			label[arg[a*c+cur]] = int32(cur)
			cur = a
		}
		label[p] = int32(cur)
	}
	return label
}

package model

import (
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// RowAdam is Adam for one Rows×Dim embedding table whose gradient is
// nonzero in only a few rows per step (the rows of the words of a batch:
// about a thousand of the 20,000 rows of the STS experiments).
//
// With Lazy false it is exactly package optim's Adam (the same arithmetic,
// so the same result to the bit): every row's moments decay at every step
// and every row moves, touched or not — Rows×Dim work per step.
//
// With Lazy true it is the "lazy" sparse Adam of PyTorch's
// torch.optim.SparseAdam and TensorFlow's LazyAdam: a step reads, decays and
// updates the moments of the touched rows only, and moves only those rows;
// the moments of the other rows stay as they were (they are not decayed for
// the steps a row sat out, and a row that is not touched does not keep
// moving on its momentum). The bias corrections use the global step count
// t, as both libraries do. Work per step is (touched rows)×Dim. The two
// variants agree exactly while every row is touched at every step; they
// differ for rows that are touched rarely, which is the point.
//
// The moments and the step count live in float32 tensors that State
// exposes as non-trainable Params, so a checkpoint that saves a model's
// Params saves the optimiser too (the step count is exact up to 2²⁴ steps).
type RowAdam struct {
	LR, Beta1, Beta2, Eps float64
	Lazy                  bool

	rows, dim int
	state     []*Param // m, v, t
}

// NewRowAdam returns a RowAdam over a rows×dim table with β₁ = 0.9,
// β₂ = 0.999, Eps = 1e-8; name prefixes the names of its State params.
func NewRowAdam(lr float64, rows, dim int, lazy bool, name string) (*RowAdam, error) {
	if rows <= 0 || dim <= 0 {
		return nil, fmt.Errorf("row adam: table %d×%d, want positive sizes", rows, dim)
	}
	a := &RowAdam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, Lazy: lazy, rows: rows, dim: dim}
	for _, s := range []struct {
		suffix string
		shape  []int
	}{{".adam_m", []int{rows, dim}}, {".adam_v", []int{rows, dim}}, {".adam_step", []int{1}}} {
		a.state = append(a.state, &Param{Name: name + s.suffix, Value: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(s.shape...))})
	}
	return a, nil
}

// State returns the optimiser's state as non-trainable Params: the first
// and second moments (Rows×Dim) and the step count (one value).
func (a *RowAdam) State() []*Param { return a.state }

// Steps returns the number of steps taken.
func (a *RowAdam) Steps() int64 { return int64(a.state[2].Value.Float32s()[0]) }

// Step updates table (Rows×Dim row-major) in place from grad (the same
// shape). With Lazy, only the rows listed in touched are read and updated
// (ids in [0, Rows); listing a row twice updates it twice — pass sorted,
// deduplicated rows such as TextMLP.TableRows); without Lazy, touched is
// ignored and every row is updated. On error nothing is changed.
func (a *RowAdam) Step(table, grad []float32, touched []int32) error {
	n := a.rows * a.dim
	if len(table) != n || len(grad) != n {
		return fmt.Errorf("row adam: table has %d values and gradient %d, want %d×%d = %d", len(table), len(grad), a.rows, a.dim, n)
	}
	switch {
	case !(a.LR >= 0), !(a.Beta1 >= 0 && a.Beta1 < 1), !(a.Beta2 >= 0 && a.Beta2 < 1), !(a.Eps >= 0):
		return fmt.Errorf("row adam: invalid hyperparameters lr=%v betas=(%v, %v) eps=%v", a.LR, a.Beta1, a.Beta2, a.Eps)
	}
	if a.Lazy {
		for k, r := range touched {
			if r < 0 || int(r) >= a.rows {
				return fmt.Errorf("row adam: touched[%d] = %d out of range [0, %d)", k, r, a.rows)
			}
		}
	}
	ts := a.state[2].Value.Float32s()
	t := int64(ts[0]) + 1
	ts[0] = float32(t)
	bc1 := 1 - math.Pow(a.Beta1, float64(t))
	bc2 := 1 - math.Pow(a.Beta2, float64(t))
	stepSize := a.LR / bc1
	sqrtBC2 := math.Sqrt(bc2)
	m, v := a.state[0].Value.Float32s(), a.state[1].Value.Float32s()
	update := func(lo, hi int) {
		for k := lo; k < hi; k++ {
			gr := float64(grad[k])
			mk := a.Beta1*float64(m[k]) + (1-a.Beta1)*gr
			vk := a.Beta2*float64(v[k]) + (1-a.Beta2)*gr*gr
			m[k], v[k] = float32(mk), float32(vk)
			table[k] = float32(float64(table[k]) - stepSize*mk/(math.Sqrt(vk)/sqrtBC2+a.Eps))
		}
	}
	if !a.Lazy {
		update(0, n)
		return nil
	}
	for _, r := range touched {
		update(int(r)*a.dim, (int(r)+1)*a.dim)
	}
	return nil
}

package loss

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// BuildSymmetric adds MoCo v3's symmetric query–key objective to the graph
// of the queries:
//
//	scale · (L(q1, k2) + L(q2, k1))
//
// where L is Build's loss of c with the queries of one view as anchors and
// the keys of the other view as candidates: row i of q1 and row i of k2
// are a positive pair and the other rows of k2 are the negatives. With
// c.Form "simcse" and Kind "infonce", L is MoCo v3's ctr (cross-entropy over
// q·kᵀ/τ of L2-normalised rows with the diagonal as labels), and scale = 2τ
// is its scaling; "dcl" and "hcl" remove the positive from the denominator
// or reweight the negatives as they do for SimCLR. Form "simclr" is refused:
// it contrasts the rows of a view with each other, which queries and keys
// from two networks do not share.
//
// The keys are meant to be constants (the momentum encoder's outputs,
// computed without gradient): give them as value nodes, so the gradient
// flows to q1 and q2 only.
func BuildSymmetric(c Config, q1, q2, k1, k2 *G.Node, scale float64) (*G.Node, error) {
	if c.Form == FormSimCLR {
		return nil, fmt.Errorf("loss.form: %q contrasts the rows of one view with each other; a query–key objective needs %q or %q", c.Form, FormSimCSE, FormGraphCL)
	}
	if !(scale > 0) {
		return nil, fmt.Errorf("loss: symmetric objective: scale %v, want > 0", scale)
	}
	l1, err := Build(c, q1, k2)
	if err != nil {
		return nil, fmt.Errorf("loss(q1, k2): %w", err)
	}
	l2, err := Build(c, q2, k1)
	if err != nil {
		return nil, fmt.Errorf("loss(q2, k1): %w", err)
	}
	sum, err := G.Add(l1, l2)
	if err != nil {
		return nil, fmt.Errorf("loss: symmetric sum: %w", err)
	}
	var s *G.Node
	if q1.Dtype() == tensor.Float64 {
		s = G.NewConstant(scale)
	} else {
		s = G.NewConstant(float32(scale))
	}
	out, err := G.Mul(sum, s)
	if err != nil {
		return nil, fmt.Errorf("loss: symmetric scale: %w", err)
	}
	return out, nil
}

// SymmetricValue computes BuildSymmetric's loss on row-major B×d float32
// queries and keys, with its gradients with respect to q1 and q2 (the
// keys are constants), using Value's kernel.
func SymmetricValue(c Config, q1, q2, k1, k2 []float32, b, d int, scale float64) (loss float64, g1, g2 []float32, err error) {
	if c.Form == FormSimCLR {
		return 0, nil, nil, fmt.Errorf("loss.form: %q is not a query–key objective", c.Form)
	}
	l1, g1, _, err := Value(c, q1, k2, b, d)
	if err != nil {
		return 0, nil, nil, err
	}
	l2, g2, _, err := Value(c, q2, k1, b, d)
	if err != nil {
		return 0, nil, nil, err
	}
	for i := range g1 {
		g1[i] = float32(scale * float64(g1[i]))
		g2[i] = float32(scale * float64(g2[i]))
	}
	return scale * (l1 + l2), g1, g2, nil
}

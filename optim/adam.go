package optim

import (
	"fmt"
	"math"
)

// Adam is PyTorch's torch.optim.Adam (bias-corrected, amsgrad off) or,
// built by NewAdamW, torch.optim.AdamW. With g the gradient, p the
// parameter, η the learning rate, λ WeightDecay and t the step count
// (starting at 1), Adam does
//
//	g ← g + λ·p                      (L2 penalty; not for NoDecay params)
//	m ← β₁·m + (1−β₁)·g
//	v ← β₂·v + (1−β₂)·g²
//	p ← p − η/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + Eps)
//
// and AdamW replaces the L2 penalty by the decoupled decay p ← p·(1 − η·λ)
// before the same update (again not for NoDecay params).
//
// The moments are stored in float32 as in PyTorch; each element's update is
// computed in float64 and rounded once.
type Adam struct {
	Beta1, Beta2, Eps, WeightDecay float64

	base
	decoupled bool // AdamW
	m, v      [][]float32
}

// NewAdam returns torch.optim.Adam's defaults (β₁ = 0.9, β₂ = 0.999,
// Eps = 1e-8, no weight decay) over params with learning rate lr.
func NewAdam(params []Param, lr float64) *Adam {
	return newAdam("adam", params, lr, 0)
}

// NewAdamW returns torch.optim.AdamW over params with learning rate lr and
// decoupled weight decay weightDecay (PyTorch's default is 0.01), β₁ = 0.9,
// β₂ = 0.999 and Eps = 1e-8.
func NewAdamW(params []Param, lr, weightDecay float64) *Adam {
	a := newAdam("adamw", params, lr, weightDecay)
	a.decoupled = true
	return a
}

func newAdam(kind string, params []Param, lr, wd float64) *Adam {
	a := &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: wd, base: newBase(kind, params, lr)}
	for _, p := range a.params {
		a.m = append(a.m, make([]float32, len(p.Value)))
		a.v = append(a.v, make([]float32, len(p.Value)))
	}
	return a
}

// Step implements Optimizer.
func (a *Adam) Step(grads [][]float32) error {
	if err := a.checkGrads(grads); err != nil {
		return err
	}
	if !inUnit(a.Beta1) || !inUnit(a.Beta2) || !nonNeg(a.Eps) || !nonNeg(a.WeightDecay) {
		return fmt.Errorf("%s: invalid hyperparameters betas=(%v, %v) eps=%v weight_decay=%v", a.kind, a.Beta1, a.Beta2, a.Eps, a.WeightDecay)
	}
	a.t++
	// The arithmetic below is model.RowAdam's (without Lazy), operation for
	// operation: the two give the same bits (model's TestRowAdamDenseEqualsAdam),
	// and the golden records pin its order.
	b1, b2, eps := a.Beta1, a.Beta2, a.Eps
	bc1 := 1 - math.Pow(b1, float64(a.t))
	bc2 := 1 - math.Pow(b2, float64(a.t))
	stepSize := a.lr / bc1
	sqrtBC2 := math.Sqrt(bc2)
	for i, g := range grads {
		if g == nil {
			continue
		}
		wd := a.WeightDecay
		if a.params[i].NoDecay {
			wd = 0
		}
		pv, m, v := a.params[i].Value, a.m[i], a.v[i]
		pv, m, v = pv[:len(g)], m[:len(g)], v[:len(g)]
		switch {
		case a.decoupled:
			decay := 1 - a.lr*wd
			for k, gk := range g {
				gr := float64(gk)
				mk := b1*float64(m[k]) + (1-b1)*gr
				vk := b2*float64(v[k]) + (1-b2)*gr*gr
				m[k], v[k] = float32(mk), float32(vk)
				pv[k] = float32(float64(pv[k])*decay - stepSize*mk/(math.Sqrt(vk)/sqrtBC2+eps))
			}
		case wd != 0:
			for k, gk := range g {
				gr := float64(gk)
				gr += wd * float64(pv[k])
				mk := b1*float64(m[k]) + (1-b1)*gr
				vk := b2*float64(v[k]) + (1-b2)*gr*gr
				m[k], v[k] = float32(mk), float32(vk)
				pv[k] = float32(float64(pv[k]) - stepSize*mk/(math.Sqrt(vk)/sqrtBC2+eps))
			}
		default:
			for k, gk := range g {
				gr := float64(gk)
				mk := b1*float64(m[k]) + (1-b1)*gr
				vk := b2*float64(v[k]) + (1-b2)*gr*gr
				m[k], v[k] = float32(mk), float32(vk)
				pv[k] = float32(float64(pv[k]) - stepSize*mk/(math.Sqrt(vk)/sqrtBC2+eps))
			}
		}
	}
	return nil
}

// MarshalBinary implements Optimizer. The buffers of each parameter are
// its first and second moments.
func (a *Adam) MarshalBinary() ([]byte, error) {
	s := &state{
		kind:   a.kind,
		hp:     []float64{a.lr, a.Beta1, a.Beta2, a.Eps, a.WeightDecay},
		t:      a.t,
		params: paramStates(a.params, func(i int) [][]float32 { return [][]float32{a.m[i], a.v[i]} }),
	}
	return s.marshal(), nil
}

// UnmarshalBinary implements Optimizer.
func (a *Adam) UnmarshalBinary(b []byte) error {
	s, err := unmarshalState(b, a.kind, 5, a.params, func(n int) bool { return n == 2 })
	if err != nil {
		return err
	}
	a.lr, a.Beta1, a.Beta2, a.Eps, a.WeightDecay = s.hp[0], s.hp[1], s.hp[2], s.hp[3], s.hp[4]
	a.t = s.t
	for i, p := range s.params {
		copy(a.m[i], p.bufs[0])
		copy(a.v[i], p.bufs[1])
	}
	return nil
}

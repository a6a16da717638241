package optim

import (
	"fmt"
	"math"
)

// LARS is the LARS of MoCo v3 (facebookresearch/moco-v3, moco/optimizer.py)
// and solo-learn, with NoDecay params playing the part of MoCo v3's
// one-dimensional parameters (solo-learn's exclude_bias_n_norm). With g the
// gradient, p the parameter, η the learning rate, λ WeightDecay, μ Momentum
// and c TrustCoefficient:
//
//	d ← g + λ·p                      (params that are not NoDecay)
//	q ← c·‖p‖/‖d‖ if ‖p‖ > 0 and ‖d‖ > 0, else 1
//	d ← q·d
//	d ← g                            (NoDecay params: no decay, no adaptation)
//	b ← μ·b + d                      (b starts at zero)
//	d ← d + μ·b  if Nesterov, else d ← b
//	p ← p − η·d
//
// The norms are computed in float64; the buffers are stored in float32 and
// each element's update is computed in float64 and rounded once.
type LARS struct {
	Momentum, WeightDecay, TrustCoefficient float64
	Nesterov                                bool

	base
	mu [][]float32
}

// NewLARS returns MoCo v3's LARS defaults (momentum 0.9, trust coefficient
// 0.001, no weight decay) over params with learning rate lr. solo-learn
// uses a trust coefficient of 0.02 on CIFAR.
func NewLARS(params []Param, lr float64) *LARS {
	l := &LARS{Momentum: 0.9, TrustCoefficient: 0.001, base: newBase("lars", params, lr)}
	for _, p := range l.params {
		l.mu = append(l.mu, make([]float32, len(p.Value)))
	}
	return l
}

// Step implements Optimizer.
func (l *LARS) Step(grads [][]float32) error {
	if err := l.checkGrads(grads); err != nil {
		return err
	}
	if !nonNeg(l.Momentum) || !nonNeg(l.WeightDecay) || !(l.TrustCoefficient > 0) || math.IsInf(l.TrustCoefficient, 1) {
		return fmt.Errorf("lars: invalid hyperparameters momentum=%v weight_decay=%v trust_coefficient=%v", l.Momentum, l.WeightDecay, l.TrustCoefficient)
	}
	l.t++
	lr, mom, wd := l.lr, l.Momentum, l.WeightDecay
	for i, g := range grads {
		if g == nil {
			continue
		}
		pv, mu := l.params[i].Value[:len(g)], l.mu[i][:len(g)]
		adapt := !l.params[i].NoDecay
		q := 1.0
		if adapt {
			var pn, dn float64
			for k, gk := range g {
				p := float64(pv[k])
				d := float64(gk) + wd*p
				pn += p * p
				dn += d * d
			}
			if pn > 0 && dn > 0 {
				q = l.TrustCoefficient * math.Sqrt(pn) / math.Sqrt(dn)
			}
		}
		for k, gk := range g {
			d := float64(gk)
			if adapt {
				d = q * (d + wd*float64(pv[k]))
			}
			b := mom*float64(mu[k]) + d
			mu[k] = float32(b)
			if l.Nesterov {
				d += mom * b
			} else {
				d = b
			}
			pv[k] = float32(float64(pv[k]) - lr*d)
		}
	}
	return nil
}

// MarshalBinary implements Optimizer. Each parameter has its momentum
// buffer.
func (l *LARS) MarshalBinary() ([]byte, error) {
	s := &state{
		kind:   l.kind,
		hp:     []float64{l.lr, l.Momentum, l.WeightDecay, l.TrustCoefficient, b2f(l.Nesterov)},
		t:      l.t,
		params: paramStates(l.params, func(i int) [][]float32 { return [][]float32{l.mu[i]} }),
	}
	return s.marshal(), nil
}

// UnmarshalBinary implements Optimizer.
func (l *LARS) UnmarshalBinary(b []byte) error {
	s, err := unmarshalState(b, l.kind, 5, l.params, func(n int) bool { return n == 1 })
	if err != nil {
		return err
	}
	l.lr, l.Momentum, l.WeightDecay, l.TrustCoefficient, l.Nesterov = s.hp[0], s.hp[1], s.hp[2], s.hp[3], s.hp[4] != 0
	l.t = s.t
	for i, p := range s.params {
		copy(l.mu[i], p.bufs[0])
	}
	return nil
}

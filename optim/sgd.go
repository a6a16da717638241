package optim

import "fmt"

// SGD is PyTorch's torch.optim.SGD. With g the gradient, p the parameter,
// η the learning rate, λ WeightDecay, μ Momentum and τ Dampening:
//
//	g ← g + λ·p                      (not for NoDecay params)
//	b ← g                            (first step of the parameter)
//	b ← μ·b + (1−τ)·g                (later steps)
//	g ← g + μ·b  if Nesterov, else g ← b
//	p ← p − η·g
//
// With Momentum 0 there is no buffer and p ← p − η·g. Nesterov needs
// Momentum > 0 and Dampening 0, as in PyTorch. The buffers are stored in
// float32; each element's update is computed in float64 and rounded once.
type SGD struct {
	Momentum, Dampening, WeightDecay float64
	Nesterov                         bool

	base
	buf [][]float32 // nil until the parameter's first step with momentum
}

// NewSGD returns plain SGD (no momentum, dampening or weight decay, as
// torch.optim.SGD's defaults) over params with learning rate lr; set
// Momentum and the other fields before the first step.
func NewSGD(params []Param, lr float64) *SGD {
	s := &SGD{base: newBase("sgd", params, lr)}
	s.buf = make([][]float32, len(s.params))
	return s
}

// Step implements Optimizer.
func (s *SGD) Step(grads [][]float32) error {
	if err := s.checkGrads(grads); err != nil {
		return err
	}
	if !nonNeg(s.Momentum) || !nonNeg(s.WeightDecay) || !(s.Dampening >= 0 && s.Dampening <= 1) {
		return fmt.Errorf("sgd: invalid hyperparameters momentum=%v dampening=%v weight_decay=%v", s.Momentum, s.Dampening, s.WeightDecay)
	}
	if s.Nesterov && (s.Momentum <= 0 || s.Dampening != 0) {
		return fmt.Errorf("sgd: nesterov needs momentum > 0 and dampening 0, got momentum=%v dampening=%v", s.Momentum, s.Dampening)
	}
	s.t++
	lr, mu, damp := s.lr, s.Momentum, s.Dampening
	for i, g := range grads {
		if g == nil {
			continue
		}
		wd := s.WeightDecay
		if s.params[i].NoDecay {
			wd = 0
		}
		pv := s.params[i].Value[:len(g)]
		if mu == 0 {
			for k, gk := range g {
				d := float64(gk) + wd*float64(pv[k])
				pv[k] = float32(float64(pv[k]) - lr*d)
			}
			continue
		}
		first := s.buf[i] == nil
		if first {
			s.buf[i] = make([]float32, len(g))
		}
		buf := s.buf[i][:len(g)]
		for k, gk := range g {
			d := float64(gk) + wd*float64(pv[k])
			var b float64
			if first {
				b = d
			} else {
				b = mu*float64(buf[k]) + (1-damp)*d
			}
			buf[k] = float32(b)
			if s.Nesterov {
				d += mu * b
			} else {
				d = b
			}
			pv[k] = float32(float64(pv[k]) - lr*d)
		}
	}
	return nil
}

// MarshalBinary implements Optimizer. Each parameter has its momentum
// buffer, or none before its first step with momentum.
func (s *SGD) MarshalBinary() ([]byte, error) {
	st := &state{
		kind: s.kind,
		hp:   []float64{s.lr, s.Momentum, s.Dampening, s.WeightDecay, b2f(s.Nesterov)},
		t:    s.t,
		params: paramStates(s.params, func(i int) [][]float32 {
			if s.buf[i] == nil {
				return nil
			}
			return [][]float32{s.buf[i]}
		}),
	}
	return st.marshal(), nil
}

// UnmarshalBinary implements Optimizer.
func (s *SGD) UnmarshalBinary(b []byte) error {
	st, err := unmarshalState(b, s.kind, 5, s.params, func(n int) bool { return n <= 1 })
	if err != nil {
		return err
	}
	s.lr, s.Momentum, s.Dampening, s.WeightDecay, s.Nesterov = st.hp[0], st.hp[1], st.hp[2], st.hp[3], st.hp[4] != 0
	s.t = st.t
	for i, p := range st.params {
		s.buf[i] = nil
		if len(p.bufs) == 1 {
			s.buf[i] = p.bufs[0]
		}
	}
	return nil
}

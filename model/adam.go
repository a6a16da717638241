package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"gorgonia.org/tensor"
)

// Adam is PyTorch's torch.optim.Adam (bias-corrected, amsgrad off) over the
// trainable float32 parameters of a model. With g the gradient, p the
// parameter and t the step count (starting at 1):
//
//	g ← g + WeightDecay·p            (L2 penalty, when WeightDecay ≠ 0)
//	m ← β₁·m + (1−β₁)·g
//	v ← β₂·v + (1−β₂)·g²
//	p ← p − LR/(1−β₁ᵗ) · m / (√v/√(1−β₂ᵗ) + Eps)
//
// The moments are stored in float32 as in PyTorch; each update is computed
// in float64 and rounded once.
type Adam struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64

	params []*Param // trainable only, in Params order
	m, v   [][]float32
	t      int64
}

// NewAdam returns an Adam with β₁ = 0.9, β₂ = 0.999, Eps = 1e-8 and no
// weight decay over the trainable entries of params.
func NewAdam(lr float64, params []*Param) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	for _, p := range params {
		if p == nil || !p.Trainable {
			continue
		}
		a.params = append(a.params, p)
		a.m = append(a.m, make([]float32, p.Value.DataSize()))
		a.v = append(a.v, make([]float32, p.Value.DataSize()))
	}
	return a
}

// Steps returns the number of steps taken.
func (a *Adam) Steps() int64 { return a.t }

// Step updates the trainable parameters in place from grads, one slice per
// trainable parameter in Params order (as Bound.Grads returns them). A nil
// slice skips that parameter (its moments are left unchanged). On error
// nothing is changed.
func (a *Adam) Step(grads [][]float32) error {
	if len(grads) != len(a.params) {
		return fmt.Errorf("adam: %d gradients for %d trainable parameters", len(grads), len(a.params))
	}
	for i, g := range grads {
		p := a.params[i]
		if p.Value.Dtype() != tensor.Float32 {
			return fmt.Errorf("adam: %s is %v: %w", p.Name, p.Value.Dtype(), errNotFloat32)
		}
		if g != nil && len(g) != p.Value.DataSize() {
			return fmt.Errorf("adam: gradient of %s has %d values, want %d", p.Name, len(g), p.Value.DataSize())
		}
	}
	switch {
	case !(a.LR >= 0), !(a.Beta1 >= 0 && a.Beta1 < 1), !(a.Beta2 >= 0 && a.Beta2 < 1), !(a.Eps >= 0), !(a.WeightDecay >= 0):
		return fmt.Errorf("adam: invalid hyperparameters lr=%v betas=(%v, %v) eps=%v weight_decay=%v", a.LR, a.Beta1, a.Beta2, a.Eps, a.WeightDecay)
	}
	a.t++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.t))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.t))
	stepSize := a.LR / bc1
	sqrtBC2 := math.Sqrt(bc2)
	for i, g := range grads {
		if g == nil {
			continue
		}
		pv, m, v := a.params[i].Value.Float32s(), a.m[i], a.v[i]
		for k, gk := range g {
			gr := float64(gk)
			if a.WeightDecay != 0 {
				gr += a.WeightDecay * float64(pv[k])
			}
			mk := a.Beta1*float64(m[k]) + (1-a.Beta1)*gr
			vk := a.Beta2*float64(v[k]) + (1-a.Beta2)*gr*gr
			m[k], v[k] = float32(mk), float32(vk)
			pv[k] = float32(float64(pv[k]) - stepSize*mk/(math.Sqrt(vk)/sqrtBC2+a.Eps))
		}
	}
	return nil
}

const adamMagic = "BSADAM\x00\x01"

// MarshalBinary encodes the hyperparameters, the step count and the
// moments (with parameter names and sizes, checked on restore).
func (a *Adam) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(adamMagic)
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	w([5]float64{a.LR, a.Beta1, a.Beta2, a.Eps, a.WeightDecay})
	w(a.t)
	w(uint32(len(a.params)))
	for i, p := range a.params {
		w(uint32(len(p.Name)))
		buf.WriteString(p.Name)
		w(uint32(len(a.m[i])))
		w(a.m[i])
		w(a.v[i])
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores the state written by MarshalBinary into an Adam
// built by NewAdam over the same parameters. Like PyTorch's
// load_state_dict it also restores the hyperparameters. On error a is
// unchanged.
func (a *Adam) UnmarshalBinary(b []byte) error {
	if len(b) < len(adamMagic) || string(b[:len(adamMagic)]) != adamMagic {
		return errors.New("adam state: bad magic (not an Adam state, or another version)")
	}
	r := bytes.NewReader(b[len(adamMagic):])
	rd := func(v any, what string) error {
		if err := binary.Read(r, binary.LittleEndian, v); err != nil {
			return fmt.Errorf("adam state: reading %s: %w", what, err)
		}
		return nil
	}
	var hp [5]float64
	var t int64
	var n uint32
	if err := rd(&hp, "hyperparameters"); err != nil {
		return err
	}
	if err := rd(&t, "step count"); err != nil {
		return err
	}
	if t < 0 {
		return fmt.Errorf("adam state: negative step count %d", t)
	}
	if err := rd(&n, "parameter count"); err != nil {
		return err
	}
	if int(n) != len(a.params) {
		return fmt.Errorf("adam state: %d parameters, optimiser has %d", n, len(a.params))
	}
	ms, vs := make([][]float32, n), make([][]float32, n)
	for i, p := range a.params {
		var ln uint32
		if err := rd(&ln, fmt.Sprintf("name length of parameter %d", i)); err != nil {
			return err
		}
		if int(ln) != len(p.Name) {
			return fmt.Errorf("adam state: parameter %d has a name of %d bytes, want %q", i, ln, p.Name)
		}
		name := make([]byte, ln)
		if _, err := r.Read(name); err != nil || string(name) != p.Name {
			return fmt.Errorf("adam state: parameter %d is %q, want %q", i, name, p.Name)
		}
		var size uint32
		if err := rd(&size, p.Name+" size"); err != nil {
			return err
		}
		if int(size) != len(a.m[i]) {
			return fmt.Errorf("adam state: %s has %d values, want %d", p.Name, size, len(a.m[i]))
		}
		ms[i], vs[i] = make([]float32, size), make([]float32, size)
		if err := rd(ms[i], p.Name+" first moment"); err != nil {
			return err
		}
		if err := rd(vs[i], p.Name+" second moment"); err != nil {
			return err
		}
	}
	if r.Len() != 0 {
		return fmt.Errorf("adam state: %d trailing bytes", r.Len())
	}
	a.LR, a.Beta1, a.Beta2, a.Eps, a.WeightDecay = hp[0], hp[1], hp[2], hp[3], hp[4]
	a.t = t
	for i := range a.params {
		copy(a.m[i], ms[i])
		copy(a.v[i], vs[i])
	}
	return nil
}

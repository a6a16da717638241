package optim

import (
	"fmt"
	"math"
)

// Param is one parameter tensor seen by an optimizer: its values, updated
// in place, and whether it is excluded from weight decay and from LARS's
// trust-ratio adaptation (biases and normalisation scale/shift, as MoCo v3
// and SimCLR exclude them).
type Param struct {
	Name    string
	Value   []float32
	NoDecay bool
}

// Optimizer steps parameters from their gradients.
type Optimizer interface {
	// Step updates the parameters in place. grads[i] belongs to params[i]
	// as given to the constructor and has as many values; a nil slice
	// skips that parameter (its value and state are unchanged). The step
	// count advances by one. On error nothing changes.
	Step(grads [][]float32) error
	// SetLR sets the learning rate of the following steps; a training
	// loop sets the scheduled rate before each step.
	SetLR(lr float64)
	// LR returns the learning rate of the next step.
	LR() float64
	// Steps returns the number of steps taken.
	Steps() int64
	// MarshalBinary encodes the state for a checkpoint: the kind, the
	// hyperparameters (learning rate included), the step count and the
	// per-parameter buffers with the names and sizes of their parameters.
	MarshalBinary() ([]byte, error)
	// UnmarshalBinary restores a state written by MarshalBinary of an
	// optimizer of the same kind over parameters of the same names and
	// sizes, hyperparameters included (as PyTorch's load_state_dict). On
	// error the optimizer is unchanged and the error says what is wrong.
	UnmarshalBinary([]byte) error
}

// base holds what every optimizer has: its parameters, the learning rate
// and the step count.
type base struct {
	kind   string // "adam", ..., for messages and the state
	params []Param
	lr     float64
	t      int64
}

func newBase(kind string, params []Param, lr float64) base {
	return base{kind: kind, params: append([]Param(nil), params...), lr: lr}
}

// SetLR sets the learning rate of the following steps.
func (b *base) SetLR(lr float64) { b.lr = lr }

// LR returns the learning rate of the next step.
func (b *base) LR() float64 { return b.lr }

// Steps returns the number of steps taken.
func (b *base) Steps() int64 { return b.t }

// checkGrads checks that grads match the parameters and that the learning
// rate is usable.
func (b *base) checkGrads(grads [][]float32) error {
	if len(grads) != len(b.params) {
		return fmt.Errorf("%s: %d gradients for %d parameters", b.kind, len(grads), len(b.params))
	}
	for i, g := range grads {
		if g != nil && len(g) != len(b.params[i].Value) {
			return fmt.Errorf("%s: gradient of %s has %d values, want %d", b.kind, b.params[i].Name, len(g), len(b.params[i].Value))
		}
	}
	if !(b.lr >= 0) || math.IsInf(b.lr, 0) {
		return fmt.Errorf("%s: learning rate must be a finite number >= 0, got %v", b.kind, b.lr)
	}
	return nil
}

// inUnit reports whether 0 <= x < 1.
func inUnit(x float64) bool { return x >= 0 && x < 1 }

// nonNeg reports whether x is a finite number >= 0.
func nonNeg(x float64) bool { return x >= 0 && !math.IsInf(x, 1) }

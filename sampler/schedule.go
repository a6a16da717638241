package sampler

import (
	"fmt"
	"math"
)

// Schedule kinds.
const (
	ScheduleConstant = "constant" // Start throughout
	ScheduleLinear   = "linear"   // Start at the first step to End at the last
	// ScheduleStepwise is the published code's α schedule: Start −
	// StepwiseDrop·⌊epoch/StepwiseEvery⌋, floored at End, where epoch is the
	// sampler's own 0-based epoch (BatchSampler.SamplerEpoch), not the step.
	ScheduleStepwise = "stepwise"
)

// The step of a stepwise schedule: it drops by StepwiseDrop every
// StepwiseEvery epochs (as the published BatchSampler code's restart
// probability, with the epoch division taken as integer division).
const (
	StepwiseDrop  = 0.1
	StepwiseEvery = 5
)

// Defaults of a stepwise α schedule (Start and End, the floor): the
// published code's 0.2 and 0.05.
const (
	StepwiseStart = 0.2
	StepwiseFloor = 0.05
)

// Schedule is a value that may change over training, such as the restart
// probability α of BatchSampler. The zero Schedule means "the default of the
// setting it is used in" (for Config.Alpha: the paper's linear 0.2 → 0.05).
type Schedule struct {
	Start float64 // value at the first step (the value of a constant schedule)
	End   float64 // value at the last step of a linear schedule; the floor of a stepwise one
	Kind  string  // ScheduleConstant, ScheduleLinear or ScheduleStepwise
}

// DefaultAlpha is the paper's restart-probability schedule: α decays
// linearly from 0.2 to 0.05 over training.
var DefaultAlpha = Schedule{Start: 0.2, End: 0.05, Kind: ScheduleLinear}

// IsZero reports whether s is the zero Schedule.
func (s Schedule) IsZero() bool { return s == Schedule{} }

// Validate checks the kind and that the values lie in [lo, hi].
func (s Schedule) Validate(lo, hi float64) error {
	switch s.Kind {
	case ScheduleConstant, ScheduleLinear, ScheduleStepwise:
	default:
		return fmt.Errorf("schedule kind %q is not %q, %q or %q", s.Kind, ScheduleConstant, ScheduleLinear, ScheduleStepwise)
	}
	vals := []float64{s.Start}
	if s.Kind != ScheduleConstant {
		vals = append(vals, s.End)
	}
	for _, v := range vals {
		if math.IsNaN(v) || v < lo || v > hi {
			return fmt.Errorf("schedule value %v is outside [%v, %v]", v, lo, hi)
		}
	}
	return nil
}

// Value returns the value at 0-based step of total steps: Start for a
// constant schedule; for a linear one Start·(1−f) + End·f with f = step/(total−1),
// with step clamped to [0, total−1] (Start when total ≤ 1). A stepwise
// schedule depends on the epoch, not the step: Value is its value in epoch
// 0 (see ValueAt).
func (s Schedule) Value(step, total int) float64 { return s.ValueAt(step, total, 0) }

// ValueAt is Value for a schedule that may depend on the sampler's 0-based
// epoch: a stepwise schedule is max(Start − StepwiseDrop·⌊epoch/StepwiseEvery⌋,
// End) (0.2, 0.2, 0.2, 0.2, 0.2, 0.1, …, 0.1, 0.05, … for Start 0.2, End
// 0.05); the other kinds ignore epoch.
func (s Schedule) ValueAt(step, total, epoch int) float64 {
	if s.Kind == ScheduleStepwise {
		return max(s.Start-StepwiseDrop*float64(max(epoch, 0)/StepwiseEvery), s.End)
	}
	if s.Kind != ScheduleLinear || total <= 1 {
		return s.Start
	}
	f := float64(min(max(step, 0), total-1)) / float64(total-1)
	return s.Start*(1-f) + s.End*f // exact at both ends
}

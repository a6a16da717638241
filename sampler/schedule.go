package sampler

import (
	"fmt"
	"math"
)

// Schedule kinds.
const (
	ScheduleConstant = "constant" // Start throughout
	ScheduleLinear   = "linear"   // Start at the first step to End at the last
	// SchedulePerEpoch is the published code's α schedule (THUDM/BatchSampler
	// main.py: restart_p − (epoch/5)·0.1, floored at 0.05): Start −
	// (e/PerEpochEvery)·PerEpochDrop with e the sampler's 1-based epoch
	// (BatchSampler.SamplerEpoch + 1) and a true division, so α falls by
	// 0.02 an epoch, floored at End. It depends on the epoch, not the step.
	SchedulePerEpoch = "per_epoch"
)

// The decrement of a per-epoch schedule, as the published code writes it:
// (epoch/PerEpochEvery)·PerEpochDrop, a true division (0.02 an epoch).
const (
	PerEpochDrop  = 0.1
	PerEpochEvery = 5
)

// Defaults of a per-epoch α schedule (Start and End, the floor): the
// published code's 0.2 and 0.05.
const (
	PerEpochStart = 0.2
	PerEpochFloor = 0.05
)

// Schedule is a value that may change over training, such as the restart
// probability α of BatchSampler. The zero Schedule means "the default of the
// setting it is used in" (for Config.Alpha: the paper's linear 0.2 → 0.05).
type Schedule struct {
	Start float64 // value at the first step (the value of a constant schedule)
	End   float64 // value at the last step of a linear schedule; the floor of a per-epoch one
	Kind  string  // ScheduleConstant, ScheduleLinear or SchedulePerEpoch
}

// DefaultAlpha is the paper's restart-probability schedule: α decays
// linearly from 0.2 to 0.05 over training.
var DefaultAlpha = Schedule{Start: 0.2, End: 0.05, Kind: ScheduleLinear}

// IsZero reports whether s is the zero Schedule.
func (s Schedule) IsZero() bool { return s == Schedule{} }

// Validate checks the kind and that the values lie in [lo, hi].
func (s Schedule) Validate(lo, hi float64) error {
	switch s.Kind {
	case ScheduleConstant, ScheduleLinear, SchedulePerEpoch:
	default:
		return fmt.Errorf("schedule kind %q is not %q, %q or %q", s.Kind, ScheduleConstant, ScheduleLinear, SchedulePerEpoch)
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
// with step clamped to [0, total−1] (Start when total ≤ 1). A per-epoch
// schedule depends on the epoch, not the step: Value is its value in epoch
// 0 (see ValueAt).
func (s Schedule) Value(step, total int) float64 { return s.ValueAt(step, total, 0) }

// ValueAt is Value for a schedule that may depend on the sampler's 0-based
// epoch: a per-epoch schedule is max(Start −
// ((epoch+1)/PerEpochEvery)·PerEpochDrop, End), computed as the published
// Python does (0.18, 0.16, 0.14, 0.12, 0.1, 0.08000000000000002, …, then
// 0.05 from the 0-based epoch 7 for Start 0.2, End 0.05); the other kinds
// ignore epoch.
func (s Schedule) ValueAt(step, total, epoch int) float64 {
	if s.Kind == SchedulePerEpoch {
		if a := s.Start - (float64(max(epoch, 0)+1)/PerEpochEvery)*PerEpochDrop; a > s.End {
			return a
		}
		return s.End
	}
	if s.Kind != ScheduleLinear || total <= 1 {
		return s.Start
	}
	f := float64(min(max(step, 0), total-1)) / float64(total-1)
	return s.Start*(1-f) + s.End*f // exact at both ends
}

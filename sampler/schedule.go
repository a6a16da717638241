package sampler

import (
	"fmt"
	"math"
)

// Schedule kinds.
const (
	ScheduleConstant = "constant" // Start throughout
	ScheduleLinear   = "linear"   // Start at the first step to End at the last
)

// Schedule is a value that may change over training, such as the restart
// probability α of BatchSampler. The zero Schedule means "the default of the
// setting it is used in" (for Config.Alpha: the paper's linear 0.2 → 0.05).
type Schedule struct {
	Start float64 // value at the first step (the value of a constant schedule)
	End   float64 // value at the last step of a linear schedule
	Kind  string  // ScheduleConstant or ScheduleLinear
}

// DefaultAlpha is the paper's restart-probability schedule: α decays
// linearly from 0.2 to 0.05 over training.
var DefaultAlpha = Schedule{Start: 0.2, End: 0.05, Kind: ScheduleLinear}

// IsZero reports whether s is the zero Schedule.
func (s Schedule) IsZero() bool { return s == Schedule{} }

// Validate checks the kind and that the values lie in [lo, hi].
func (s Schedule) Validate(lo, hi float64) error {
	switch s.Kind {
	case ScheduleConstant, ScheduleLinear:
	default:
		return fmt.Errorf("schedule kind %q is not %q or %q", s.Kind, ScheduleConstant, ScheduleLinear)
	}
	vals := []float64{s.Start}
	if s.Kind == ScheduleLinear {
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
// with step clamped to [0, total−1] (Start when total ≤ 1).
func (s Schedule) Value(step, total int) float64 {
	if s.Kind != ScheduleLinear || total <= 1 {
		return s.Start
	}
	f := float64(min(max(step, 0), total-1)) / float64(total-1)
	return s.Start*(1-f) + s.End*f // exact at both ends
}

package optim

import (
	"fmt"
	"math"
)

// Schedule kinds.
const (
	Constant     = "constant"
	WarmupCosine = "warmup_cosine"
)

// ScheduleKinds are the schedule kinds ScheduleConfig accepts (the empty
// kind is Constant).
var ScheduleKinds = []string{Constant, WarmupCosine}

// Schedule is a learning-rate schedule: the multiplier of the base
// learning rate at each step.
type Schedule struct {
	// Kind is Constant (the multiplier is always 1) or WarmupCosine.
	Kind string
	// Warmup is the number of warm-up steps of WarmupCosine.
	Warmup int
	// MinFactor is the multiplier the cosine decays to at the last step
	// (0 in MoCo v3; a minimum learning rate divided by the base one).
	MinFactor float64
}

// Factor returns the multiplier of the base learning rate for step, the
// 0-based index of the step about to be taken, of total steps. For
// WarmupCosine, with W = Warmup, T = total and f = MinFactor, it is MoCo
// v3's adjust_learning_rate (main_moco.py) evaluated at the fractional
// epoch of the step — MoCo v3 calls it with epoch + i/iters_per_epoch
// before every step, so in steps, with W and T counted in steps:
//
//	step/W                                  step < W (linear warm-up from 0)
//	f + (1−f)·½·(1 + cos(π·(step−W)/(T−W)))  W ≤ step < T
//	f                                       step ≥ T
//
// The first step has a multiplier of 0 (it only fills the optimizer's
// moments or momentum), step W has 1, the midpoint of the cosine ½(1+f), and
// the last step, T−1, a little more than f. MoCo v3 itself has f = 0;
// solo-learn's LinearWarmupCosineAnnealingLR starts its warm-up at
// warmup_start_lr rather than 0 and reaches the base rate one step earlier.
// Any other kind gives 1.
func (s Schedule) Factor(step, total int) float64 {
	if s.Kind != WarmupCosine {
		return 1
	}
	if step < s.Warmup {
		return float64(step) / float64(s.Warmup)
	}
	if step >= total {
		return s.MinFactor
	}
	progress := float64(step-s.Warmup) / float64(total-s.Warmup)
	return s.MinFactor + (1-s.MinFactor)*0.5*(1+math.Cos(math.Pi*progress))
}

// EMAMomentum is MoCo v3's momentum schedule for the momentum (EMA)
// encoder (adjust_moco_momentum in main_moco.py), per step:
//
//	m = 1 − (1 − m0)·(cos(π·step/total) + 1)/2
//
// It is m0 at step 0 and rises along a half cosine to 1 at step = total.
// step is clamped to [0, total]; with total <= 0 it returns m0.
func EMAMomentum(m0 float64, step, total int) float64 {
	if total <= 0 {
		return m0
	}
	step = min(max(step, 0), total)
	return 1 - (1-m0)*(math.Cos(math.Pi*float64(step)/float64(total))+1)/2
}

// EMA updates target towards online: t ← m·t + (1−m)·o for every element,
// computed in float64 and rounded once (MoCo's momentum encoder, BYOL's
// target network). The two slices must have the same length.
func EMA(target, online []float32, m float64) error {
	if len(target) != len(online) {
		return fmt.Errorf("ema: target has %d values, online %d", len(target), len(online))
	}
	online = online[:len(target)]
	for k, o := range online {
		target[k] = float32(m*float64(target[k]) + (1-m)*float64(o))
	}
	return nil
}

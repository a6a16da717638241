package optim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Kinds of optimizer accepted by Config.Kind.
var Kinds = []string{"adam", "adamw", "sgd", "lars"}

// Config selects and parameterises an optimizer and its learning-rate
// schedule, as read from a YAML configuration. Fields a kind does not use
// are ignored: Beta1, Beta2 and Eps are Adam's and AdamW's, Momentum and
// Nesterov SGD's and LARS's, TrustCoefficient LARS's.
type Config struct {
	Kind string `yaml:"kind"`
	// LR is the base learning rate. It has no YAML key of its own: the
	// training configuration gives it as train.lr and copies it here.
	LR               float64        `yaml:"-"`
	WeightDecay      float64        `yaml:"weight_decay"`
	Momentum         float64        `yaml:"momentum"`
	Beta1            float64        `yaml:"beta1"`
	Beta2            float64        `yaml:"beta2"`
	Eps              float64        `yaml:"eps"`
	TrustCoefficient float64        `yaml:"trust_coefficient"`
	Nesterov         bool           `yaml:"nesterov"`
	Schedule         ScheduleConfig `yaml:"schedule"`
}

// ScheduleConfig is the learning-rate schedule of a Config. Warm-up is
// given in steps or in epochs (converted by Resolve), not both.
type ScheduleConfig struct {
	Kind         string  `yaml:"kind"`          // "constant" (or empty) or "warmup_cosine"
	WarmupSteps  int     `yaml:"warmup_steps"`  // warm-up length in steps
	WarmupEpochs int     `yaml:"warmup_epochs"` // or in epochs
	MinLR        float64 `yaml:"min_lr"`        // learning rate at the end of the cosine (absolute)
}

// Default returns Adam with lr 1e-3, betas 0.9/0.999, eps 1e-8, no weight
// decay and a constant schedule. Momentum (0.9) and TrustCoefficient
// (0.001) are MoCo v3's LARS values, used only if Kind is changed to "sgd"
// or "lars"; decode a YAML configuration into Default() so that unset keys
// keep these values.
func Default() Config {
	return Config{
		Kind: "adam", LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
		Momentum: 0.9, TrustCoefficient: 0.001,
		Schedule: ScheduleConfig{Kind: Constant},
	}
}

// Validate checks every value and returns one error per problem, each
// naming its key under the prefix key (e.g. "optim.weight_decay: must be
// >= 0, got -1"); key may be empty. It returns nil if c is valid.
func (c Config) Validate(key string) []error {
	k := func(name string) string {
		if key == "" {
			return name
		}
		return key + "." + name
	}
	var errs []error
	add := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{k(name)}, args...)...))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if !slices.Contains(Kinds, c.Kind) {
		add("kind", "%q is not allowed; allowed values: %s", c.Kind, strings.Join(Kinds, ", "))
	}
	if !(c.LR > 0) || !finite(c.LR) {
		add("lr", "must be a positive number, got %v", c.LR)
	}
	if !(c.WeightDecay >= 0) || !finite(c.WeightDecay) {
		add("weight_decay", "must be >= 0, got %v", c.WeightDecay)
	}
	switch c.Kind {
	case "adam", "adamw":
		if !inUnit(c.Beta1) {
			add("beta1", "must be in [0, 1), got %v", c.Beta1)
		}
		if !inUnit(c.Beta2) {
			add("beta2", "must be in [0, 1), got %v", c.Beta2)
		}
		if !(c.Eps >= 0) || !finite(c.Eps) {
			add("eps", "must be >= 0, got %v", c.Eps)
		}
		if c.Nesterov {
			add("nesterov", "applies to sgd and lars only, not %s", c.Kind)
		}
	case "sgd", "lars":
		if !inUnit(c.Momentum) {
			add("momentum", "must be in [0, 1), got %v", c.Momentum)
		}
		if c.Nesterov && !(c.Momentum > 0) {
			add("nesterov", "needs momentum > 0, got momentum %v", c.Momentum)
		}
		if c.Kind == "lars" && (!(c.TrustCoefficient > 0) || !finite(c.TrustCoefficient)) {
			add("trust_coefficient", "must be a positive number, got %v", c.TrustCoefficient)
		}
	}
	s := c.Schedule
	switch s.Kind {
	case Constant, "":
		if s.WarmupSteps != 0 || s.WarmupEpochs != 0 {
			add("schedule.kind", "%q has no warm-up; use %q for warmup_steps or warmup_epochs", Constant, WarmupCosine)
		}
		if s.MinLR != 0 {
			add("schedule.min_lr", "applies to %q only", WarmupCosine)
		}
	case WarmupCosine:
	default:
		add("schedule.kind", "%q is not allowed; allowed values: %s", s.Kind, strings.Join(ScheduleKinds, ", "))
	}
	if s.WarmupSteps < 0 {
		add("schedule.warmup_steps", "must be >= 0, got %d", s.WarmupSteps)
	}
	if s.WarmupEpochs < 0 {
		add("schedule.warmup_epochs", "must be >= 0, got %d", s.WarmupEpochs)
	}
	if s.WarmupSteps > 0 && s.WarmupEpochs > 0 {
		add("schedule.warmup_steps", "give warmup_steps or warmup_epochs, not both")
	}
	if !(s.MinLR >= 0) || !finite(s.MinLR) || (c.LR > 0 && s.MinLR > c.LR) {
		add("schedule.min_lr", "must be in [0, lr = %v], got %v", c.LR, s.MinLR)
	}
	return errs
}

// Resolve returns the Schedule of base learning rate baseLR, converting
// warm-up epochs to steps with stepsPerEpoch and MinLR to a fraction of
// baseLR. stepsPerEpoch is used only with WarmupEpochs and must then be
// positive.
func (s ScheduleConfig) Resolve(baseLR float64, stepsPerEpoch int) (Schedule, error) {
	out := Schedule{Kind: s.Kind, Warmup: s.WarmupSteps}
	if s.WarmupEpochs > 0 {
		if stepsPerEpoch <= 0 {
			return Schedule{}, fmt.Errorf("schedule: warmup_epochs %d needs a positive number of steps per epoch, got %d", s.WarmupEpochs, stepsPerEpoch)
		}
		out.Warmup = s.WarmupEpochs * stepsPerEpoch
	}
	if s.MinLR != 0 {
		if !(baseLR > 0) {
			return Schedule{}, fmt.Errorf("schedule: min_lr %v needs a positive base learning rate, got %v", s.MinLR, baseLR)
		}
		out.MinFactor = s.MinLR / baseLR
	}
	return out, nil
}

// New returns the optimizer c describes over params, with learning rate
// c.LR (a training loop then sets the scheduled rate before each step with
// SetLR). The errors of c.Validate("") are joined into one.
func New(c Config, params []Param) (Optimizer, error) {
	if errs := c.Validate(""); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	switch c.Kind {
	case "adam", "adamw":
		var a *Adam
		if c.Kind == "adamw" {
			a = NewAdamW(params, c.LR, c.WeightDecay)
		} else {
			a = NewAdam(params, c.LR)
		}
		a.Beta1, a.Beta2, a.Eps, a.WeightDecay = c.Beta1, c.Beta2, c.Eps, c.WeightDecay
		return a, nil
	case "sgd":
		s := NewSGD(params, c.LR)
		s.Momentum, s.WeightDecay, s.Nesterov = c.Momentum, c.WeightDecay, c.Nesterov
		return s, nil
	default: // "lars"
		l := NewLARS(params, c.LR)
		l.Momentum, l.WeightDecay, l.TrustCoefficient, l.Nesterov = c.Momentum, c.WeightDecay, c.TrustCoefficient, c.Nesterov
		return l, nil
	}
}

package optim

import (
	"errors"
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestValidate(t *testing.T) {
	mod := func(f func(*Config)) Config {
		c := Default()
		f(&c)
		return c
	}
	for _, c := range []struct {
		name string
		cfg  Config
		key  string
		want []string // each message, in order; nil = valid
	}{
		{"default", Default(), "optim", nil},
		{"lars with warm-up", mod(func(c *Config) {
			c.Kind, c.LR, c.WeightDecay = "lars", 9.6, 1e-6
			c.Schedule = ScheduleConfig{Kind: WarmupCosine, WarmupEpochs: 10}
		}), "optim", nil},
		{"empty schedule kind", mod(func(c *Config) { c.Schedule.Kind = "" }), "optim", nil},
		{"kind", mod(func(c *Config) { c.Kind = "adan" }), "optim",
			[]string{`optim.kind: "adan" is not allowed; allowed values: adam, adamw, sgd, lars`}},
		{"weight decay", mod(func(c *Config) { c.WeightDecay = -1 }), "optim",
			[]string{"optim.weight_decay: must be >= 0, got -1"}},
		{"no prefix", mod(func(c *Config) { c.WeightDecay = -1 }), "",
			[]string{"weight_decay: must be >= 0, got -1"}},
		{"nested prefix", mod(func(c *Config) { c.LR = 0 }), "train.optim",
			[]string{"train.optim.lr: must be a positive number, got 0"}},
		{"NaN lr", mod(func(c *Config) { c.LR = math.NaN() }), "optim",
			[]string{"optim.lr: must be a positive number, got NaN"}},
		{"betas and eps", mod(func(c *Config) { c.Beta1, c.Beta2, c.Eps = 1, -0.1, -1 }), "optim", []string{
			"optim.beta1: must be in [0, 1), got 1",
			"optim.beta2: must be in [0, 1), got -0.1",
			"optim.eps: must be >= 0, got -1"}},
		{"nesterov on adam", mod(func(c *Config) { c.Nesterov = true }), "optim",
			[]string{"optim.nesterov: applies to sgd and lars only, not adam"}},
		{"sgd momentum", mod(func(c *Config) { c.Kind, c.Momentum = "sgd", 1.5 }), "optim",
			[]string{"optim.momentum: must be in [0, 1), got 1.5"}},
		{"nesterov without momentum", mod(func(c *Config) { c.Kind, c.Momentum, c.Nesterov = "sgd", 0, true }), "optim",
			[]string{"optim.nesterov: needs momentum > 0, got momentum 0"}},
		{"trust coefficient", mod(func(c *Config) { c.Kind, c.TrustCoefficient = "lars", 0 }), "optim",
			[]string{"optim.trust_coefficient: must be a positive number, got 0"}},
		{"schedule kind", mod(func(c *Config) { c.Schedule.Kind = "step" }), "optim",
			[]string{`optim.schedule.kind: "step" is not allowed; allowed values: constant, warmup_cosine`}},
		{"warm-up on constant", mod(func(c *Config) { c.Schedule.WarmupSteps = 5 }), "optim",
			[]string{`optim.schedule.kind: "constant" has no warm-up; use "warmup_cosine" for warmup_steps or warmup_epochs`}},
		{"schedule values", mod(func(c *Config) {
			c.Schedule = ScheduleConfig{Kind: WarmupCosine, WarmupSteps: -1, WarmupEpochs: -2, MinLR: 1}
		}), "optim", []string{
			"optim.schedule.warmup_steps: must be >= 0, got -1",
			"optim.schedule.warmup_epochs: must be >= 0, got -2",
			"optim.schedule.min_lr: must be in [0, lr = 0.001], got 1"}},
		{"both warm-ups", mod(func(c *Config) { c.Schedule = ScheduleConfig{Kind: WarmupCosine, WarmupSteps: 1, WarmupEpochs: 2} }), "optim",
			[]string{"optim.schedule.warmup_steps: give warmup_steps or warmup_epochs, not both"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := c.cfg.Validate(c.key)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("Validate(%q):\n got %q\nwant %q", c.key, got, c.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	params := []Param{{Name: "w", Value: []float32{1, 2}}}
	for _, c := range []struct {
		yaml  string
		check func(Optimizer) bool
	}{
		{"kind: adam", func(o Optimizer) bool {
			a, ok := o.(*Adam)
			return ok && a.kind == "adam" && a.Beta1 == 0.9 && a.Beta2 == 0.999 && a.Eps == 1e-8 && o.LR() == 1e-3
		}},
		{"{kind: adamw, lr: 0.01, weight_decay: 0.05, beta2: 0.95}", func(o Optimizer) bool {
			a, ok := o.(*Adam)
			return ok && a.kind == "adamw" && a.decoupled && a.WeightDecay == 0.05 && a.Beta2 == 0.95 && o.LR() == 0.01
		}},
		{"{kind: sgd, lr: 0.5, momentum: 0.8, nesterov: true, weight_decay: 1e-4}", func(o Optimizer) bool {
			s, ok := o.(*SGD)
			return ok && s.Momentum == 0.8 && s.Nesterov && s.WeightDecay == 1e-4 && s.Dampening == 0 && o.LR() == 0.5
		}},
		{"{kind: lars, lr: 4.8, weight_decay: 1e-6, trust_coefficient: 0.02, schedule: {kind: warmup_cosine, warmup_epochs: 10}}", func(o Optimizer) bool {
			l, ok := o.(*LARS)
			return ok && l.Momentum == 0.9 && l.TrustCoefficient == 0.02 && l.WeightDecay == 1e-6 && !l.Nesterov && o.LR() == 4.8
		}},
	} {
		cfg := Default()
		if err := yaml.Unmarshal([]byte(c.yaml), &cfg); err != nil {
			t.Fatal(err)
		}
		// lr has no YAML key of its own (train.lr is copied into it).
		var lr struct {
			LR *float64 `yaml:"lr"`
		}
		if err := yaml.Unmarshal([]byte(c.yaml), &lr); err != nil {
			t.Fatal(err)
		}
		if lr.LR != nil {
			cfg.LR = *lr.LR
		}
		o, err := New(cfg, params)
		if err != nil {
			t.Errorf("%s: %v", c.yaml, err)
			continue
		}
		if !c.check(o) {
			t.Errorf("%s: got %+v", c.yaml, o)
		}
	}
	cfg := Default()
	cfg.Kind, cfg.LR = "rmsprop", -1
	_, err := New(cfg, params)
	if err == nil || !strings.Contains(err.Error(), `kind: "rmsprop" is not allowed`) || !strings.Contains(err.Error(), "lr: must be a positive number, got -1") {
		t.Errorf("New with a bad config: %v", err)
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 2 {
		t.Errorf("New's error should join the two problems: %v", err)
	}
}

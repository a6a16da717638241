package optim

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// torchFixture is testdata/torch_fixture.json, written by
// testdata/gen_torch.py from PyTorch's optimizers and MoCo v3's LARS.
type torchFixture struct {
	Generator string
	Params    []struct {
		Name    string
		Shape   []int
		NoDecay bool `json:"no_decay"`
		Init    []float32
	}
	Grads []map[string][]float32
	Cases []struct {
		Name, Kind          string
		LRs                 []float64
		WeightDecay         float64 `json:"weight_decay"`
		Momentum, Dampening float64
		Nesterov            bool
		Beta1, Beta2, Eps   float64
		TrustCoefficient    float64 `json:"trust_coefficient"`
		After               []map[string][]float64
	}
}

// TestTorchFixture runs each optimizer on the fixture's parameters and
// gradients and compares every step with PyTorch's, which computes in
// float32 throughout: the two agree to float32 precision.
func TestTorchFixture(t *testing.T) {
	raw, err := os.ReadFile("testdata/torch_fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx torchFixture
	if err := json.Unmarshal(raw, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.Cases) < 8 || len(fx.Grads) != 5 {
		t.Fatalf("fixture has %d cases and %d steps", len(fx.Cases), len(fx.Grads))
	}
	for _, c := range fx.Cases {
		t.Run(c.Name, func(t *testing.T) {
			worst := 0.0
			params := make([]Param, len(fx.Params))
			for i, p := range fx.Params {
				params[i] = Param{Name: p.Name, Value: append([]float32(nil), p.Init...), NoDecay: p.NoDecay}
			}
			var opt Optimizer
			switch c.Kind {
			case "adam", "adamw":
				a := NewAdam(params, c.LRs[0])
				if c.Kind == "adamw" {
					a = NewAdamW(params, c.LRs[0], c.WeightDecay)
				}
				a.Beta1, a.Beta2, a.Eps, a.WeightDecay = c.Beta1, c.Beta2, c.Eps, c.WeightDecay
				opt = a
			case "sgd":
				s := NewSGD(params, c.LRs[0])
				s.Momentum, s.Dampening, s.WeightDecay, s.Nesterov = c.Momentum, c.Dampening, c.WeightDecay, c.Nesterov
				opt = s
			case "lars":
				l := NewLARS(params, c.LRs[0])
				l.Momentum, l.WeightDecay, l.TrustCoefficient, l.Nesterov = c.Momentum, c.WeightDecay, c.TrustCoefficient, c.Nesterov
				opt = l
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			for step, g := range fx.Grads {
				grads := make([][]float32, len(params))
				for i, p := range params {
					grads[i] = g[p.Name]
				}
				opt.SetLR(c.LRs[step])
				if err := opt.Step(grads); err != nil {
					t.Fatal(err)
				}
				for _, p := range params {
					want := c.After[step][p.Name]
					for k, x := range p.Value {
						// 1e-6 relative to max(|torch|, 1): the parameters and
						// gradients are of order 1, so float32 rounding leaves
						// errors of order 1e-7 absolute even on the values an
						// update brings near zero.
						d := math.Abs(float64(x)-want[k]) / math.Max(math.Abs(want[k]), 1)
						worst = math.Max(worst, d)
						if d > 1e-6 {
							t.Errorf("step %d: %s[%d] = %v, torch %v (relative difference %.2g)", step+1, p.Name, k, x, want[k], d)
						}
					}
				}
			}
			t.Logf("%s: largest difference %.2g", fx.Generator, worst)
		})
	}
}

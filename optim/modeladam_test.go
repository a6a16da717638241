package optim_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/optim"
	"gorgonia.org/tensor"
)

// TestAdamBitIdenticalToModelAdam runs model.Adam and optim.Adam side by
// side for 50 steps on the same random parameters and gradients (some of
// them nil) and requires the same bits after every step. This test is the
// only place the package meets Gorgonia.
func TestAdamBitIdenticalToModelAdam(t *testing.T) {
	for _, c := range []struct {
		name string
		lr   float64
		wd   float64
	}{{"no weight decay", 1e-3, 0}, {"weight decay", 3e-3, 0.05}, {"large lr", 0.1, 1e-4}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(c.wd*1e6)))
			sizes := []int{257, 64, 1, 33}
			var mps []*model.Param
			var ops []optim.Param
			for i, n := range sizes {
				a, b := make([]float32, n), make([]float32, n)
				for k := range a {
					a[k] = float32(rng.NormFloat64() * 0.5)
				}
				copy(b, a)
				name := string(rune('a' + i))
				mps = append(mps, &model.Param{Name: name, Value: tensor.New(tensor.WithShape(n), tensor.WithBacking(a)), Trainable: true})
				ops = append(ops, optim.Param{Name: name, Value: b})
			}
			// A non-trainable model param is skipped by model.Adam.
			mps = append(mps, &model.Param{Name: "buffer", Value: tensor.New(tensor.WithShape(2), tensor.WithBacking([]float32{1, 2}))})
			ma := model.NewAdam(c.lr, mps)
			ma.WeightDecay = c.wd
			oa := optim.NewAdam(ops, c.lr)
			oa.WeightDecay = c.wd
			for step := 1; step <= 50; step++ {
				grads := make([][]float32, len(sizes))
				for i, n := range sizes {
					if rng.IntN(7) == 0 {
						continue // nil: skipped by both
					}
					grads[i] = make([]float32, n)
					for k := range grads[i] {
						grads[i][k] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(5)-3)))
					}
				}
				if err := ma.Step(grads); err != nil {
					t.Fatal(err)
				}
				if err := oa.Step(grads); err != nil {
					t.Fatal(err)
				}
				for i := range sizes {
					want, got := mps[i].Value.Float32s(), ops[i].Value
					for k := range want {
						if math.Float32bits(want[k]) != math.Float32bits(got[k]) {
							t.Fatalf("step %d: %s[%d] = %v (%08x), model.Adam %v (%08x)",
								step, ops[i].Name, k, got[k], math.Float32bits(got[k]), want[k], math.Float32bits(want[k]))
						}
					}
				}
			}
			if oa.Steps() != ma.Steps() {
				t.Errorf("steps %d vs %d", oa.Steps(), ma.Steps())
			}
		})
	}
}

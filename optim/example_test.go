package optim_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/optim"
)

// ExampleNew builds LARS with MoCo v3's warm-up and cosine schedule from a
// Config and takes a few steps on ½‖w‖² + ½b². The first step has a
// learning rate of 0 (MoCo v3's warm-up starts at 0) but fills the momentum
// buffers. w moves by the trust ratio: its update is 0.02·w, whatever the
// gradient's scale; the bias is NoDecay, so it gets no weight decay and no
// adaptation, and overshoots on the raw gradient with momentum 0.9.
func ExampleNew() {
	cfg := optim.Default()
	cfg.Kind, cfg.LR, cfg.WeightDecay, cfg.TrustCoefficient = "lars", 0.5, 1e-4, 0.02
	cfg.Schedule = optim.ScheduleConfig{Kind: optim.WarmupCosine, WarmupEpochs: 1}
	if errs := cfg.Validate("optim"); errs != nil {
		fmt.Println(errs)
		return
	}
	w := []float32{3, 4}
	b := []float32{1}
	opt, err := optim.New(cfg, []optim.Param{{Name: "w", Value: w}, {Name: "b", Value: b, NoDecay: true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	const stepsPerEpoch, epochs = 2, 3
	sched, err := cfg.Schedule.Resolve(cfg.LR, stepsPerEpoch)
	if err != nil {
		fmt.Println(err)
		return
	}
	total := stepsPerEpoch * epochs
	for step := range total {
		opt.SetLR(cfg.LR * sched.Factor(step, total))
		grads := [][]float32{{w[0], w[1]}, {b[0]}} // ∇ ½‖w‖² = w, ∇ ½b² = b
		if err := opt.Step(grads); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("step %d lr %.3f  w %.4f  b %.4f\n", step, opt.LR(), w, b)
	}
	// Output:
	// step 0 lr 0.000  w [3.0000 4.0000]  b [1.0000]
	// step 1 lr 0.250  w [2.9715 3.9620]  b [0.5250]
	// step 2 lr 0.500  w [2.8905 3.8540]  b [-0.5925]
	// step 3 lr 0.427  w [2.8036 3.7381]  b [-1.1981]
	// step 4 lr 0.250  w [2.7437 3.6583]  b [-1.2178]
	// step 5 lr 0.073  w [2.7240 3.6319]  b [-1.1339]
}

// BenchmarkAdamStep is one Adam step over about a million parameters (a
// 1000×1000 matrix and a bias), with weight decay.
func BenchmarkAdamStep(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1000 * 1000, 1000}
	params := make([]optim.Param, len(sizes))
	grads := make([][]float32, len(sizes))
	n := 0
	for i, s := range sizes {
		params[i] = optim.Param{Name: fmt.Sprint("p", i), Value: make([]float32, s), NoDecay: i == 1}
		grads[i] = make([]float32, s)
		for k := range grads[i] {
			params[i].Value[k] = float32(rng.NormFloat64())
			grads[i][k] = float32(rng.NormFloat64() * 1e-2)
		}
		n += s
	}
	opt := optim.NewAdam(params, 1e-3)
	opt.WeightDecay = 1e-4
	b.SetBytes(int64(4 * n)) // parameter bytes per step
	b.ResetTimer()
	for b.Loop() {
		if err := opt.Step(grads); err != nil {
			b.Fatal(err)
		}
	}
}

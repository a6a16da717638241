package eval_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/eval"
)

// GraphCL's protocol on a small embedding: two noisy classes in 8
// dimensions, 10 outer folds, C chosen by an inner 5-fold search.
func ExampleSVMCrossValidate() {
	const n, d = 200, 8
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		y[i] = i % 2
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(rng.NormFloat64() + 0.8*float64(y[i]))
		}
	}
	res, err := eval.SVMCrossValidate(x, n, d, y, eval.SVMOptions{Seed: 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("accuracy %.3f ± %.3f over %d folds\n", res.Mean, res.Std, len(res.FoldAcc))
	// Output: accuracy 0.880 ± 0.071 over 10 folds
}

// A single RBF SVC with scikit-learn's defaults (gamma="scale").
func ExampleSVC() {
	x := []float64{0, 0, 0, 1, 1, 0, 1, 1, 5, 5, 5, 6, 6, 5, 6, 6}
	y := []int{0, 0, 0, 0, 1, 1, 1, 1}
	svc := &eval.SVC{C: 1}
	if err := svc.Fit(x, 8, 2, y); err != nil {
		fmt.Println(err)
		return
	}
	pred, _ := svc.Predict([]float64{0.5, 0.5, 5.5, 5.5}, 2)
	fmt.Println(pred, svc.NSupport())
	// Output: [0 1] [2 2]
}

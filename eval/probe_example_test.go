package eval_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/eval"
)

// blobs draws n rows of d features in classes Gaussian clusters (unit
// noise) whose centres are sep·e_c, the c-th basis vector scaled by sep.
func blobs(rng *rand.Rand, n, d, classes int, sep float64) ([]float32, []int) {
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := range y {
		y[i] = i % classes
		for j := 0; j < d; j++ {
			v := rng.NormFloat64()
			if j == y[i] {
				v += sep
			}
			x[i*d+j] = float32(v)
		}
	}
	return x, y
}

// A linear probe on frozen features: multinomial logistic regression on
// standardised features, fitted by L-BFGS, scored by top-1 test accuracy.
func ExampleLinearProbe() {
	const d, classes = 16, 4
	rng := rand.New(rand.NewPCG(1, 2))
	xTrain, yTrain := blobs(rng, 800, d, classes, 5)
	xTest, yTest := blobs(rng, 400, d, classes, 5)
	acc, err := eval.LinearProbe(xTrain, yTrain, xTest, yTest, d, classes, eval.ProbeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("linear probe accuracy %.2f\n", acc)
	// Output: linear probe accuracy 1.00
}

// TrainProbe keeps the fitted classifier (weights, standardisation,
// convergence report) for predicting new rows.
func ExampleTrainProbe() {
	const d, classes = 16, 4
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := blobs(rng, 800, d, classes, 5)
	p, err := eval.TrainProbe(x, len(y), d, y, classes, eval.ProbeOptions{L2Grid: []float64{1e-4, 1e-2, 1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("converged:", p.Converged, "weights:", len(p.W), "biases:", len(p.B), "L2 candidates:", len(p.Selection))
	newRows := make([]float32, 2*d)
	newRows[2] = 6   // near the centre of class 2
	newRows[d+0] = 6 // near the centre of class 0
	pred, err := p.Predict(newRows, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("predicted:", pred)
	// Output:
	// converged: true weights: 64 biases: 4 L2 candidates: 3
	// predicted: [2 0]
}

package eval_test

import (
	"fmt"
	"log"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/eval"
)

// The weighted kNN monitor of SimCLR implementations: cosine similarity to
// the 200 nearest training embeddings, votes weighted by exp(sim/0.1).
func ExampleKNNAccuracy() {
	const d, classes = 32, 5
	rng := rand.New(rand.NewPCG(5, 6))
	train, yTrain := blobs(rng, 2000, d, classes, 6)
	test, yTest := blobs(rng, 500, d, classes, 6)
	acc, err := eval.KNNAccuracy(train, yTrain, test, yTest, d, classes, eval.KNNOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("kNN accuracy %.2f\n", acc)

	// k = 1 is the nearest-neighbour rule.
	query := make([]float32, d)
	query[3] = 9 // towards the centre of class 3
	pred, err := eval.KNNPredict(train, yTrain, query, 1, d, classes, eval.KNNOptions{K: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nearest neighbour's class:", pred[0])
	// Output:
	// kNN accuracy 1.00
	// nearest neighbour's class: 3
}

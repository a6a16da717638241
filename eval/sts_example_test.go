package eval_test

import (
	"fmt"
	"log"

	"github.com/batchsampler-go/batchsampler/eval"
)

// STSScore is Spearman × 100 between the cosine similarities of paired
// sentence embeddings and the gold scores; ties get average ranks.
func ExampleSTSScore() {
	emb1 := []float32{1, 0, 1, 0, 1, 0, 1, 0} // 4 pairs, d = 2
	emb2 := []float32{1, 0.1, 1, 1, 0, 1, 1, 1}
	gold := []float64{4.8, 2.5, 0.4, 3.0}
	score, err := eval.STSScore(emb1, emb2, 4, 2, gold)
	if err != nil {
		log.Fatal(err)
	}
	rho, _ := eval.Spearman([]float64{1, 2, 2, 3}, []float64{1, 3, 2, 4})
	fmt.Printf("%.2f %.4f\n", score, rho)
	// Output:
	// 94.87 0.9487
}

package wordvec_test

import (
	"fmt"
	"log"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/wordvec"
)

// Words that share contexts get similar PPMI-SVD vectors.
func ExampleTrain() {
	var sents []string
	for range 50 {
		sents = append(sents,
			"the cat drinks milk", "the dog drinks water", "a cat chases a mouse", "a dog chases a ball",
			"stocks fell on monday", "bonds fell on friday", "stocks rose on friday", "bonds rose on monday")
	}
	vocab, err := data.BuildVocab(sents, data.Tokenizer{}, data.VocabOptions{})
	if err != nil {
		log.Fatal(err)
	}
	opt := wordvec.DefaultOptions()
	opt.Dim = 8
	opt.Window = 2
	vec, info, err := wordvec.Train(sents, vocab, opt)
	if err != nil {
		log.Fatal(err)
	}
	catDog, _ := vec.Similarity("cat", "dog")
	catStocks, _ := vec.Similarity("cat", "stocks")
	fmt.Println(info.Method, vec.Dim, catDog > 0.5, catStocks < 0.1)
	// Output:
	// dense 8 true true
}

// SIF weights shrink frequent words; CommonDirections finds the direction
// every sentence bag shares, which SIF projects out.
func ExampleSIFWeights() {
	vocab, err := data.NewVocabFromWords([]string{data.UnkToken, "the", "whale"}, []int64{0, 99, 1}, data.Tokenizer{})
	if err != nil {
		log.Fatal(err)
	}
	w, err := wordvec.SIFWeights(vocab, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("the %.3f, whale %.3f\n", w[vocab.ID("the")], w[vocab.ID("whale")])
	// Three 2-d sentence bags, all close to the direction (1, 1)/√2.
	bags := []float32{1, 1.1, 2, 1.9, 0.9, 1}
	dirs, err := wordvec.CommonDirections(bags, 3, 2, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("common direction (%.2f, %.2f)\n", dirs[0], dirs[1])
	// Output:
	// the 0.010, whale 0.500
	// common direction (0.71, 0.71)
}

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

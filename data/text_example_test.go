package data_test

import (
	"fmt"
	"log"

	"github.com/batchsampler-go/batchsampler/data"
)

// The default tokenizer lower-cases, keeps apostrophes inside words and
// decimal numbers, and drops punctuation; KeepPunct keeps it as tokens.
func ExampleTokenize() {
	fmt.Printf("%q\n", data.Tokenize("Don’t panic: 3.14 > 3, CAFÉ!"))
	fmt.Printf("%q\n", data.Tokenizer{KeepPunct: true}.Tokenize("Don’t panic!"))
	// Output:
	// ["don't" "panic" "3.14" "3" "café"]
	// ["don't" "panic" "!"]
}

// A vocabulary keeps the frequent words; everything else maps to <unk>.
func ExampleBuildVocab() {
	sents := []string{"the cat sat", "the dog sat", "a bird"}
	v, err := data.BuildVocab(sents, data.Tokenizer{}, data.VocabOptions{MinCount: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Words(), v.Encode("The cat sat on the mat"))
	// Output:
	// [<unk> sat the] [2 0 1 0 2 0]
}

// ReadSTS reads the STS Benchmark files (original or SentEval copy); this
// fixture mixes 7- and 9-field lines and has unbalanced quotes.
func ExampleReadSTS() {
	pairs, err := data.ReadSTS("testdata/text/sts-fixture.csv")
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range pairs[:2] {
		fmt.Printf("%.1f | %s | %s\n", p.Score, p.S1, p.S2)
	}
	// Output:
	// 5.0 | A man is playing a flute. | A man is playing a flute.
	// 1.2 | "He said it was fine. | She said "nothing" at all.
}

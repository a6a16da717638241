package yamlcfg_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/internal/yamlcfg"
)

type Train struct {
	Epochs    int     `yaml:"epochs"`
	BatchSize int     `yaml:"batch_size"`
	LR        float64 `yaml:"lr"`
}

type Config struct {
	Name  string   `yaml:"name"`
	Train Train    `yaml:"train"`
	Seeds []uint64 `yaml:"seeds"`
}

func defaults() Config {
	return Config{Train: Train{Epochs: 20, BatchSize: 128, LR: 0.01}, Seeds: []uint64{0}}
}

// Parse a document with -set overrides, decode it over the defaults, and
// see how the errors read.
func ExampleParse() {
	src := []byte(`
name: demo
train:
  epochs: 5
`)
	doc, err := yamlcfg.Parse(src, "demo.yaml", []string{"train.lr=0.1", "seeds=[0,1,2]"})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := defaults()
	if err := doc.Decode(&c); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", c)

	// An unknown key in the document, a wrong type in an override.
	doc, _ = yamlcfg.Parse([]byte("name: demo\ntrain:\n  bach_size: 64\n"), "demo.yaml", nil)
	fmt.Println(doc.Decode(&c))
	doc, _ = yamlcfg.Parse(src, "demo.yaml", []string{"train.batch_size=abc"})
	fmt.Println(doc.Decode(&c))

	// Validation, after decoding, names the line of the key.
	doc, _ = yamlcfg.Parse([]byte("name: demo\ntrain:\n  batch_size: -5\n"), "demo.yaml", nil)
	c = defaults()
	_ = doc.Decode(&c)
	fmt.Println(yamlcfg.Errors([]error{
		yamlcfg.Positive(doc.Locate("train.epochs"), c.Train.Epochs),
		yamlcfg.Positive(doc.Locate("train.batch_size"), c.Train.BatchSize),
	}))
	// Output:
	// {Name:demo Train:{Epochs:5 BatchSize:128 LR:0.1} Seeds:[0 1 2]}
	// demo.yaml: train.bach_size (line 3): unknown key; allowed keys under train: batch_size, epochs, lr
	// -set train.batch_size=abc: expected an integer, got "abc"
	// invalid config:
	//   train.batch_size (line 3): must be a positive integer, got -5
}

package model_test

import (
	"fmt"
	"math/rand/v2"

	"gorgonia.org/gorgonia"

	"github.com/batchsampler-go/batchsampler/model"
)

// A SimCSE step with the text encoder: the two views are two
// training-mode passes of the same sentences with different dropout masks
// drawn from the step's rng; Embed is the evaluation-mode forward.
func ExampleNewTextMLP() {
	// A 5-word vocabulary (id 0 is <unk>) with 3-d vectors.
	vectors := []float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0}
	m, err := model.NewTextMLP(model.TextConfig{VocabSize: 5, EmbDim: 3, Vectors: vectors, Hidden: 8, ProjDim: 4, TrainEmbeddings: true}, 1)
	if err != nil {
		panic(err)
	}
	sentences := [][]int32{{1, 2}, {3, 0, 4}, {2}}
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	rng := rand.New(rand.NewPCG(7, 0))
	var proj [2]*gorgonia.Node
	for i := range proj {
		emb, _ := b.Encode(sentences, true, rng)
		proj[i], _ = b.Project(emb)
	}
	fmt.Println("views:", proj[0].Shape(), proj[1].Shape(), "masks drawn:", len(b.Masks()))
	// ... loss.Build(cfg, proj[0], proj[1]), gorgonia.Grad(l, b.Learnables()...),
	// a TapeMachine, b.Grads() and Adam.Step make one training step.
	emb, _ := m.Embed(sentences)
	fmt.Println("sentence embeddings:", len(emb)/m.EmbedDim(), "×", m.EmbedDim())
	// Output:
	// views: (3, 4) (3, 4) masks drawn: 2
	// sentence embeddings: 3 × 8
}

// A sparse table update: after a step's Grads, RowAdam with Lazy moves only
// the rows TableRows lists (the words of the batch), however large the
// vocabulary.
func ExampleRowAdam() {
	vectors := []float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 0}
	m, err := model.NewTextMLP(model.TextConfig{VocabSize: 5, EmbDim: 3, Vectors: vectors, Hidden: 8, TrainEmbeddings: true, WordDropout: 0.2}, 1)
	if err != nil {
		panic(err)
	}
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	views, _ := b.EncodeViews([][]int32{{1, 2}, {2, 0}}, 2, true, rand.New(rand.NewPCG(7, 0)))
	l := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(views[0], views[1]))))
	if _, err := gorgonia.Grad(l, b.Learnables()...); err != nil {
		panic(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		panic(err)
	}
	grads, _ := b.Grads()
	opt, _ := model.NewRowAdam(1e-3, 5, 3, true, "embedding.weight")
	table := m.Params()[0].Value.Float32s()
	if err := opt.Step(table, grads[0], m.TableRows()); err != nil {
		panic(err)
	}
	fmt.Println("rows updated:", m.TableRows(), "row 4 unchanged:", table[12] == 1 && table[13] == 1 && table[14] == 0)
	// Output:
	// rows updated: [1 2] row 4 unchanged: true
}

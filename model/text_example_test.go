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

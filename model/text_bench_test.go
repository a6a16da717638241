package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
)

// BenchmarkTextStep measures one SimCSE training step of a TextMLP at the
// size of the STS experiments (vocabulary 20,000, 300-d vectors, B=64
// sentences of ~20 tokens, two dropout views): forward, backward and Adam.
// The loss is a stand-in (Σ p1⊙p2); the InfoNCE of B=64 is negligible next
// to the encoder. "sparse_adam" steps the table with a lazy RowAdam (only
// the ~550 rows of the batch's words) instead of the dense Adam over all
// 20,000 rows.
//
//	go test ./model -run '^$' -bench TextStep -benchtime 20x
func BenchmarkTextStep(b *testing.B) {
	const v, d, n = 20000, 300, 64
	r := rand.New(rand.NewPCG(1, 1))
	vec := make([]float32, v*d)
	for i := range vec {
		vec[i] = float32(r.NormFloat64() / 17)
	}
	batch := make([][]int32, n)
	for i := range batch {
		s := make([]int32, 10+r.IntN(20))
		for k := range s {
			s[k] = int32(r.IntN(v))
		}
		batch[i] = s
	}
	for _, tc := range []struct {
		hidden int
		train  bool
		mode   bagMode
		sparse bool // the table stepped by a lazy RowAdam instead of Adam
	}{
		{512, true, bagScatter, false}, {512, true, bagScatter, true}, {512, true, bagSpMM, false}, {512, false, bagScatter, false},
		{300, true, bagScatter, false}, {300, true, bagScatter, true}, {300, false, bagScatter, false},
	} {
		name := fmt.Sprintf("hidden%d/train_embeddings=%v", tc.hidden, tc.train)
		if tc.train {
			name += map[bagMode]string{bagScatter: "/scatter", bagSpMM: "/spmm"}[tc.mode]
			name += map[bool]string{false: "/adam", true: "/sparse_adam"}[tc.sparse]
		}
		b.Run(name, func(b *testing.B) {
			m, err := NewTextMLP(TextConfig{VocabSize: v, EmbDim: d, Vectors: vec, Hidden: tc.hidden, TrainEmbeddings: tc.train}, 1)
			if err != nil {
				b.Fatal(err)
			}
			params := m.Params()
			var ra *RowAdam
			if tc.sparse {
				// The table is stepped by ra; Adam sees it as frozen.
				params = append([]*Param{{Name: "embedding.weight", Value: params[0].Value}}, params[1:]...)
				if ra, err = NewRowAdam(1e-3, v, d, true, "embedding.weight"); err != nil {
					b.Fatal(err)
				}
			}
			opt := newAdam(1e-3, params)
			rng := rand.New(rand.NewPCG(2, 2))
			b.ResetTimer()
			for range b.N {
				g := gorgonia.NewGraph()
				bd := m.Bind(g)
				bd.mode = tc.mode
				var p [2]*gorgonia.Node
				views, err := bd.EncodeViews(batch, 2, true, rng)
				if err != nil {
					b.Fatal(err)
				}
				for i, e := range views {
					if p[i], err = bd.Project(e); err != nil {
						b.Fatal(err)
					}
				}
				l := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(p[0], p[1]))))
				if _, err := gorgonia.Grad(l, bd.Learnables()...); err != nil {
					b.Fatal(err)
				}
				vm := gorgonia.NewTapeMachine(g)
				if err := vm.RunAll(); err != nil {
					b.Fatal(err)
				}
				grads, err := bd.Grads()
				if err != nil {
					b.Fatal(err)
				}
				vm.Close()
				if ra != nil {
					if err := ra.Step(params[0].Value.Float32s(), grads[0], m.TableRows()); err != nil {
						b.Fatal(err)
					}
					grads = grads[1:]
				}
				if err := opt.Step(grads); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

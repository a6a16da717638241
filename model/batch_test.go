package model

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"gorgonia.org/gorgonia"
)

func TestPackGraphs(t *testing.T) {
	g0 := &data.Graph{NumNodes: 3, Edges: [][2]int32{{0, 1}, {1, 2}, {2, 2}, {0, 1}}, FeatDim: 2, X: []float32{1, 2, 3, 4, 5, 6}}
	g1 := &data.Graph{NumNodes: 0, FeatDim: 2, X: []float32{}}
	g2 := &data.Graph{NumNodes: 2, Edges: [][2]int32{{0, 1}}, FeatDim: 2, X: []float32{7, 8, 9, 10}}
	b, err := PackGraphs([]*data.Graph{g0, g1, g2})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	// Node 0: 1, 1 (repeated edge); node 1: 0, 2, 0; node 2: 1, 2 (self-loop
	// once); node 3 (graph 2's 0): 4; node 4: 3.
	wantPtr := []int32{0, 2, 5, 7, 8, 9}
	wantCol := []int32{1, 1, 0, 2, 0, 1, 2, 4, 3}
	if b.NumGraphs != 3 || b.NumNodes != 5 || b.FeatDim != 2 ||
		!slices.Equal(b.GraphPtr, []int32{0, 3, 3, 5}) || !slices.Equal(b.RowPtr, wantPtr) {
		t.Fatalf("batch = %+v", b)
	}
	for v := 0; v < 5; v++ {
		got := slices.Clone(b.Col[b.RowPtr[v]:b.RowPtr[v+1]])
		want := slices.Clone(wantCol[wantPtr[v]:wantPtr[v+1]])
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("neighbours of %d = %v, want %v", v, got, want)
		}
	}
	if !slices.Equal(b.X, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("X = %v", b.X)
	}
	for _, bad := range [][]*data.Graph{
		nil,
		{g0, nil},
		{g0, {NumNodes: 1}},
		{g0, {NumNodes: 1, FeatDim: 3, X: []float32{1, 2, 3}}},
		{{NumNodes: 2, Edges: [][2]int32{{0, 2}}, FeatDim: 2, X: make([]float32, 4)}},
	} {
		if _, err := PackGraphs(bad); err == nil {
			t.Errorf("PackGraphs(%v): want an error", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	good := func() *GraphBatch {
		return &GraphBatch{NumGraphs: 2, NumNodes: 3, FeatDim: 1, X: []float32{1, 2, 3},
			RowPtr: []int32{0, 1, 2, 2}, Col: []int32{1, 0}, GraphPtr: []int32{0, 2, 3}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(b *GraphBatch)
		want string
	}{
		{"feat dim", func(b *GraphBatch) { b.FeatDim = 0 }, "FeatDim"},
		{"x length", func(b *GraphBatch) { b.X = b.X[:2] }, "len(X)"},
		{"nan", func(b *GraphBatch) { b.X[1] = float32(math.NaN()) }, "NaN"},
		{"graphptr length", func(b *GraphBatch) { b.GraphPtr = b.GraphPtr[:2] }, "len(GraphPtr)"},
		{"graphptr start", func(b *GraphBatch) { b.GraphPtr[0] = 1 }, "GraphPtr[0]"},
		{"graphptr decreasing", func(b *GraphBatch) { b.GraphPtr[1] = 4 }, "decreases"},
		{"graphptr end", func(b *GraphBatch) { b.GraphPtr[2] = 2 }, "NumNodes"},
		{"rowptr", func(b *GraphBatch) { b.RowPtr = b.RowPtr[:3] }, "adjacency"},
		{"col range", func(b *GraphBatch) { b.Col[0] = 3 }, "adjacency"},
		{"cross-graph edge", func(b *GraphBatch) { b.Col[1] = 2 }, "leaves graph 0"},
		{"negative", func(b *GraphBatch) { b.NumGraphs = -1 }, "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := good()
			c.edit(b)
			if err := b.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	var nilBatch *GraphBatch
	if nilBatch.Validate() == nil {
		t.Error("nil batch: want an error")
	}
}

func TestEncodeRejects(t *testing.T) {
	m, _ := NewGIN(GINConfig{InDim: 3, Hidden: 4, Layers: 1}, 1)
	b := m.Bind(gorgonia.NewGraph())
	wrongDim := smallBatch(t, 1, 4)
	if _, err := b.Encode(wrongDim, false); err == nil || !strings.Contains(err.Error(), "InDim") {
		t.Errorf("wrong feature dimension: err = %v", err)
	}
	one := &GraphBatch{NumGraphs: 1, NumNodes: 1, FeatDim: 3, X: []float32{1, 2, 3}, RowPtr: []int32{0, 0}, GraphPtr: []int32{0, 1}}
	if _, err := b.Encode(one, true); err == nil || !strings.Contains(err.Error(), "at least 2 nodes") {
		t.Errorf("one node in training mode: err = %v", err)
	}
	if _, err := b.Encode(one, false); err != nil {
		t.Errorf("one node in eval mode: %v", err)
	}
	if _, err := b.Project(nil); err == nil {
		t.Error("Project(nil): want an error")
	}
	if _, err := m.Embed(wrongDim); err == nil {
		t.Error("Embed with the wrong feature dimension: want an error")
	}
	m64, _ := NewGIN(GINConfig{InDim: 3, Float64: true}, 1)
	if _, err := m64.Embed(smallBatch(t, 1, 3)); err == nil {
		t.Error("Embed of a float64 model: want an error")
	}
}

// TestGradsOfUnusedHead checks that a graph without the projection head
// binds only the encoder: Learnables excludes the head, Grads gives nil
// there and Adam leaves the head unchanged.
func TestGradsOfUnusedHead(t *testing.T) {
	m, _ := NewGIN(GINConfig{InDim: 5, Hidden: 4, Layers: 2}, 1)
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	emb, err := b.Encode(smallBatch(t, 2, 5), true)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.Learnables()); n != 2*6 {
		t.Fatalf("%d learnables, want 12 (encoder only)", n)
	}
	if _, err := gorgonia.Grad(sumSquares(t, emb), b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	grads, err := b.Grads()
	if err != nil {
		t.Fatal(err)
	}
	head := m.Params()[m.head.w1].Value.Float32s()[0]
	for i, gr := range grads {
		if (i < 12) != (gr != nil) {
			t.Errorf("gradient %d nil = %t", i, gr == nil)
		}
	}
	a := newAdam(0.01, m.Params())
	if err := a.Step(grads); err != nil {
		t.Fatal(err)
	}
	if m.Params()[m.head.w1].Value.Float32s()[0] != head {
		t.Error("Adam moved a parameter without a gradient")
	}
}

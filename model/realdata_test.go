package model

import (
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

// TestRealMUTAG packs the real MUTAG set (skipped without the shared data),
// runs a training step on it and checks that the pure-Go Embed agrees with
// the Gorgonia evaluation forward after the running statistics changed.
func TestRealMUTAG(t *testing.T) {
	dir := testenv.Path(t, "tu", "MUTAG")
	set, err := data.ReadTU(dir, "MUTAG")
	if err != nil {
		t.Fatal(err)
	}
	if err := set.SetFeatures(data.FeatureOptions{}); err != nil {
		t.Fatal(err)
	}
	batch, err := PackGraphs(set.Graphs)
	if err != nil {
		t.Fatal(err)
	}
	if batch.NumGraphs != 188 || batch.NumNodes != set.TotalNodes() {
		t.Fatalf("packed %d graphs, %d nodes; want 188 and %d", batch.NumGraphs, batch.NumNodes, set.TotalNodes())
	}
	m, err := NewGIN(GINConfig{InDim: batch.FeatDim}, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := newAdam(0.01, m.Params())
	trainStep(t, m, a, []*GraphBatch{batch, batch}, linearFused)
	embs, _, _ := encodeRun(t, m, false, batch)
	emb, err := m.Embed(batch)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRel64(to64(emb), embs[0]); d > 1e-5 {
		t.Errorf("Embed vs Gorgonia on MUTAG: max relative difference %.3g", d)
	}
}

package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
)

// sumSquares returns Σ x² of a node, a scalar loss for tests.
func sumSquares(t testing.TB, x *gorgonia.Node) *gorgonia.Node {
	t.Helper()
	s, err := gorgonia.Sum(gorgonia.Must(gorgonia.Square(x)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCommitStats(t *testing.T) {
	const inDim = 5
	m, err := NewGIN(GINConfig{InDim: inDim, Hidden: 6, ProjDim: 4}, 21)
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := smallBatch(t, 22, inDim), smallBatch(t, 23, inDim)
	ref := refFrom(m) // copies the parameters before any update
	_, _, means1, vars1 := ref.forward(v1, true)
	_, _, means2, vars2 := ref.forward(v2, true)

	// A training step: two views through one Bound.
	_, _, b := encodeRun(t, m, true, v1, v2)
	if b.PendingStats() != 2*3 {
		t.Fatalf("PendingStats = %d, want 6 (3 layers × 2 views)", b.PendingStats())
	}
	if err := b.CommitStats(); err != nil {
		t.Fatal(err)
	}
	// Expected: two successive PyTorch updates starting from mean 0, var 1,
	// with the unbiased variance.
	for l := 0; l < 3; l++ {
		li := m.layers[l]
		rm, rv := floats64(m.params[li.bn.runMean].Value), floats64(m.params[li.bn.runVar].Value)
		for j := range rm {
			n1, n2 := float64(v1.NumNodes), float64(v2.NumNodes)
			wm := 0.9*(0.9*0+0.1*means1[l][j]) + 0.1*means2[l][j]
			wv := 0.9*(0.9*1+0.1*vars1[l][j]*n1/(n1-1)) + 0.1*vars2[l][j]*n2/(n2-1)
			if math.Abs(rm[j]-wm) > 1e-5*math.Max(1, math.Abs(wm)) || math.Abs(rv[j]-wv) > 1e-5*math.Max(1, wv) {
				t.Errorf("layer %d channel %d: running (%v, %v), want (%v, %v)", l, j, rm[j], rv[j], wm, wv)
			}
		}
	}
	// Nothing pending any more: a second commit changes nothing.
	before := floats64(m.params[m.layers[0].bn.runMean].Value)
	if err := b.CommitStats(); err != nil {
		t.Fatal(err)
	}
	if d := maxRel64(floats64(m.params[m.layers[0].bn.runMean].Value), before); d != 0 {
		t.Errorf("a second CommitStats changed the running mean by %v", d)
	}

	// The new statistics are used by a new Bind on a new graph (eval mode)
	// and by Embed, and agree with the reference using them.
	want, _, _, _ := refFrom(m).forward(v1, false)
	embs, _, _ := encodeRun(t, m, false, v1)
	if d := maxRel64(embs[0], flat(want)); d > 1e-4 {
		t.Errorf("eval forward after CommitStats differs from the reference by %.3g", d)
	}
	emb, err := m.Embed(v1)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRelDiff(emb, flat(want)); d > 1e-4 {
		t.Errorf("Embed after CommitStats differs from the reference by %.3g", d)
	}
	// And they differ from the initial statistics' output.
	old, _, _, _ := ref.forward(v1, false)
	if d := maxRel64(embs[0], flat(old)); d < 1e-3 {
		t.Errorf("eval forward did not change after CommitStats (difference %.3g)", d)
	}
}

func TestCommitStatsBeforeRunFails(t *testing.T) {
	m, err := NewGIN(GINConfig{InDim: 3, Hidden: 4, Layers: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bind(gorgonia.NewGraph())
	if _, err := b.Encode(smallBatch(t, 2, 3), true); err != nil {
		t.Fatal(err)
	}
	before := floats64(m.params[m.layers[0].bn.runMean].Value)
	if err := b.CommitStats(); err == nil {
		t.Fatal("CommitStats before the machine ran: want an error")
	}
	if d := maxRel64(floats64(m.params[m.layers[0].bn.runMean].Value), before); d != 0 {
		t.Error("a failed CommitStats changed the buffers")
	}
}

func TestEvalIndependentOfBatchComposition(t *testing.T) {
	const inDim = 37
	m, err := NewGIN(GINConfig{InDim: inDim}, 31)
	if err != nil {
		t.Fatal(err)
	}
	perturbModel(m, 32)
	rng := rand.New(rand.NewPCG(33, 1))
	a := synthGraphs(rng, 6, 3, 12, 1.5, inDim, true)
	other := synthGraphs(rng, 300, 3, 30, 2, inDim, true) // > one Embed chunk
	ab := mustPack(t, append(a[:len(a):len(a)], other...))
	alone := mustPack(t, a)
	e := m.EmbedDim()

	embAB, err := m.Embed(ab)
	if err != nil {
		t.Fatal(err)
	}
	embA, err := m.Embed(alone)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxRel64(to64(embAB[:len(a)*e]), to64(embA)); d > 1e-6 {
		t.Errorf("Embed of the same graphs in two batches differs by %.3g", d)
	}
	evalAB, _, _ := encodeRun(t, m, false, ab)
	evalA, _, _ := encodeRun(t, m, false, alone)
	if d := maxRel64(evalAB[0][:len(a)*e], evalA[0]); d > 1e-6 {
		t.Errorf("eval-mode Encode of the same graphs in two batches differs by %.3g", d)
	}
	// Training mode uses batch statistics: the same graphs embed differently.
	trainAB, _, _ := encodeRun(t, m, true, ab)
	trainA, _, _ := encodeRun(t, m, true, alone)
	if d := maxRel64(trainAB[0][:len(a)*e], trainA[0]); d < 1e-3 {
		t.Errorf("training-mode embeddings do not depend on the batch (difference %.3g)", d)
	}
}

// TestMachineRerun runs one compiled machine twice (Reset in between): no
// state may leak between runs (BatchNorm keeps its batch statistics in the
// op), so the loss and the gradients repeat exactly.
func TestMachineRerun(t *testing.T) {
	m, err := NewGIN(GINConfig{InDim: 37, Hidden: 16, Layers: 2}, 51)
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := nci1Like(t, 52, 20), nci1Like(t, 53, 20)
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	var ps []*gorgonia.Node
	for _, v := range []*GraphBatch{v1, v2} {
		e, err := b.Encode(v, true)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Project(e)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	loss := sumSquares(t, gorgonia.Must(gorgonia.Sub(ps[0], ps[1])))
	if _, err := gorgonia.Grad(loss, b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	var losses []float32
	var grads [][][]float32
	for run := 0; run < 2; run++ {
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		gr, err := b.Grads()
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss.Value().Data().(float32))
		grads = append(grads, gr)
		vm.Reset()
	}
	if losses[0] != losses[1] {
		t.Fatalf("loss %v then %v", losses[0], losses[1])
	}
	for i := range grads[0] {
		for k := range grads[0][i] {
			if grads[0][i][k] != grads[1][i][k] {
				t.Fatalf("gradient %d[%d]: %v then %v", i, k, grads[0][i][k], grads[1][i][k])
			}
		}
	}
	if b.PendingStats() != 2*2 {
		t.Errorf("PendingStats = %d, want 4", b.PendingStats())
	}
}

package model

import (
	"fmt"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/optim"
	"gorgonia.org/gorgonia"
)

// trainStep runs one GraphCL-shaped step: encode and project each view
// through one Bound, a simple loss (Σ p² for one view, Σ (p₁ − p₂)² for
// two), gradients, Adam, CommitStats.
func trainStep(tb testing.TB, m *GIN, a *optim.Adam, views []*GraphBatch, mode linearMode) float64 {
	g := gorgonia.NewGraph()
	b := m.Bind(g)
	b.mode = mode
	var ps []*gorgonia.Node
	for _, v := range views {
		e, err := b.Encode(v, true)
		if err != nil {
			tb.Fatal(err)
		}
		p, err := b.Project(e)
		if err != nil {
			tb.Fatal(err)
		}
		ps = append(ps, p)
	}
	d := ps[0]
	if len(ps) == 2 {
		d = gorgonia.Must(gorgonia.Sub(ps[0], ps[1]))
	}
	loss := sumSquares(tb, d)
	if _, err := gorgonia.Grad(loss, b.Learnables()...); err != nil {
		tb.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		tb.Fatal(err)
	}
	grads, err := b.Grads()
	if err != nil {
		tb.Fatal(err)
	}
	if err := a.Step(grads); err != nil {
		tb.Fatal(err)
	}
	if err := b.CommitStats(); err != nil {
		tb.Fatal(err)
	}
	return float64(loss.Value().Data().(float32))
}

// BenchmarkTrainStep measures forward + backward + Adam + CommitStats on
// batches shaped like 128 NCI1 graphs (≈2,520 nodes, ≈10,000 directed
// adjacency entries, 37 features), with one view or two (GraphCL), for the
// three ways of building a Linear layer. cpu-ms/op is the process CPU time
// (user+system) per step, less sensitive than ns/op to other load.
func BenchmarkTrainStep(b *testing.B) {
	modes := []struct {
		name string
		mode linearMode
	}{{"fused", linearFused}, {"mul+biasact", linearBiasAct}, {"gorgonia", linearGorgonia}}
	for _, views := range []int{1, 2} {
		for _, md := range modes {
			b.Run(fmt.Sprintf("views=%d/linear=%s", views, md.name), func(b *testing.B) {
				m, err := NewGIN(GINConfig{InDim: 37}, 1)
				if err != nil {
					b.Fatal(err)
				}
				var vs []*GraphBatch
				for v := 0; v < views; v++ {
					vs = append(vs, nci1Like(b, uint64(100+v), 128))
				}
				a := newAdam(0.01, m.Params())
				c0 := cpuTime()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					trainStep(b, m, a, vs, md.mode)
				}
				b.StopTimer()
				b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(vs[0].NumNodes), "nodes")
				b.ReportMetric(float64(len(vs[0].Col)), "adj")
			})
		}
	}
}

// BenchmarkEmbedNCI1Like embeds 4,110 synthetic NCI1-shaped graphs in one
// call, as the sampler's refresh does.
func BenchmarkEmbedNCI1Like(b *testing.B) {
	m, err := NewGIN(GINConfig{InDim: 37}, 1)
	if err != nil {
		b.Fatal(err)
	}
	batch := nci1Like(b, 7, 4110)
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Embed(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(batch.NumNodes), "nodes")
}

// BenchmarkEmbedNCI1 embeds the real NCI1 (skipped without shared data).
func BenchmarkEmbedNCI1(b *testing.B) {
	dir := testenv.Path(b, "tu", "NCI1")
	set, err := data.ReadTU(dir, "NCI1")
	if err != nil {
		b.Fatal(err)
	}
	if err := set.SetFeatures(data.FeatureOptions{}); err != nil {
		b.Fatal(err)
	}
	batch, err := PackGraphs(set.Graphs)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewGIN(GINConfig{InDim: batch.FeatDim}, 1)
	if err != nil {
		b.Fatal(err)
	}
	c0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Embed(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-c0)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(batch.NumGraphs), "graphs")
}

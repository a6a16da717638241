package sampler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pairLoop computes, by a plain float64 double loop, the share of same-label
// pairs and the mean pair cosine of a batch, and all pair cosines.
func pairLoop(batch []int, labels []int, e Embeddings) (fn, cos float64, all []float64) {
	var pairs float64
	for i := 0; i < len(batch); i++ {
		for j := i + 1; j < len(batch); j++ {
			a, b := e.Row(batch[i]), e.Row(batch[j])
			var ab, aa, bb float64
			for k := range a {
				ab += float64(a[k]) * float64(b[k])
				aa += float64(a[k]) * float64(a[k])
				bb += float64(b[k]) * float64(b[k])
			}
			c := 0.0
			if aa > 0 && bb > 0 {
				c = ab / math.Sqrt(aa*bb)
			}
			all = append(all, c)
			cos += c
			if labels[batch[i]] == labels[batch[j]] {
				fn++
			}
			pairs++
		}
	}
	return fn / pairs, cos / pairs, all
}

func TestDiagnosticsMatchFloat64Loops(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	e := randomEmbeddings(100, 7, 5)
	for j := 0; j < 7; j++ { // one zero row
		e.Data[42*7+j] = 0
	}
	labels := make([]int, 100)
	for i := range labels {
		labels[i] = r.IntN(4)
	}
	for _, size := range []int{2, 3, 17, 64} {
		batch := r.Perm(100)[:size]
		batch[0] = 42
		fn, cos, all := pairLoop(batch, labels, e)
		if got := FalseNegativeRatio(batch, labels); math.Abs(got-fn) > 1e-12 {
			t.Errorf("B=%d: FalseNegativeRatio %v, loop %v", size, got, fn)
		}
		if got := MeanCosine(batch, e); math.Abs(got-cos) > 1e-9 {
			t.Errorf("B=%d: MeanCosine %v, loop %v", size, got, cos)
		}
		pc := PairCosines(batch, e)
		if len(pc) != len(all) {
			t.Fatalf("B=%d: %d pair cosines, want %d", size, len(pc), len(all))
		}
		for i := range pc {
			if math.Abs(pc[i]-all[i]) > 1e-9 {
				t.Fatalf("B=%d: pair %d cosine %v, loop %v", size, i, pc[i], all[i])
			}
		}
		h := CosineHistogram(batch, e, 8)
		want := make([]float64, 8)
		for _, c := range all {
			b := int(math.Floor((c + 1) / 0.25))
			want[min(max(b, 0), 7)] += 1 / float64(len(all))
		}
		for i := range h {
			if math.Abs(h[i]-want[i]) > 1e-12 {
				t.Fatalf("B=%d: histogram %v, loop %v", size, h, want)
			}
		}
	}
	if FalseNegativeRatio([]int{1}, labels) != 0 || MeanCosine(nil, e) != 0 {
		t.Error("batches of fewer than two should give 0")
	}
	if !math.IsNaN(FalseNegativeRatio([]int{1, 100}, labels)) || !math.IsNaN(MeanCosine([]int{-1, 2}, e)) {
		t.Error("out-of-range indices should give NaN")
	}
	if CosineHistogram([]int{1, 2}, e, 0) != nil {
		t.Error("zero bins should give nil")
	}
	// all same label, identical rows: ratio 1, cosine 1
	same := Embeddings{N: 3, D: 2, Data: []float32{1, 2, 2, 4, 3, 6}}
	if FalseNegativeRatio([]int{0, 1, 2}, []int{5, 5, 5}) != 1 || math.Abs(MeanCosine([]int{0, 1, 2}, same)-1) > 1e-12 {
		t.Error("known values wrong")
	}
}

func TestNeighbourStatsMatchesLoop(t *testing.T) {
	e := randomEmbeddings(60, 5, 9)
	labels := make([]int, 60)
	for i := range labels {
		labels[i] = i % 3
	}
	g, err := BuildProximityGraph(e, GraphOptions{M: 20, K: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	st, err := NeighbourStats(g, e, labels)
	if err != nil {
		t.Fatal(err)
	}
	var cos, agree float64
	in := make([]int, 60)
	for i := 0; i < 60; i++ {
		for _, v := range g.Neighbours(i) {
			_, c, _ := pairLoop([]int{i, int(v)}, labels, e)
			cos += c
			if labels[i] == labels[v] {
				agree++
			}
			in[v]++
		}
	}
	zero, maxIn := 0, 0
	for _, d := range in {
		if d == 0 {
			zero++
		}
		maxIn = max(maxIn, d)
	}
	if st.Edges != 240 || math.Abs(st.MeanCosine-cos/240) > 1e-9 || math.Abs(st.LabelAgreement-agree/240) > 1e-12 ||
		st.ZeroInDegree != float64(zero)/60 || st.MaxInDegree != maxIn {
		t.Errorf("NeighbourStats %+v, loop cos %v agree %v zero %v max %v", st, cos/240, agree/240, float64(zero)/60, maxIn)
	}
	if st, _ := NeighbourStats(g, e, nil); !math.IsNaN(st.LabelAgreement) {
		t.Error("label agreement without labels should be NaN")
	}
	if _, err := NeighbourStats(g, randomEmbeddings(59, 5, 1), nil); err == nil {
		t.Error("mismatched embeddings accepted")
	}
}

// TestNeighbourStatsSamplesLargeGraphs checks that above MaxStatEdges the
// cosine and label statistics come from evenly spaced nodes and stay close
// to the all-edge values, while the in-degree statistics stay exact.
func TestNeighbourStatsSamplesLargeGraphs(t *testing.T) {
	const n, k = 3000, 100 // 300,000 edges > MaxStatEdges
	e := randomEmbeddings(n, 8, 4)
	labels := make([]int, n)
	for i := range labels {
		labels[i] = i % 5
	}
	g, err := BuildKNNGraph(e, k, 2)
	if err != nil {
		t.Fatal(err)
	}
	st, err := NeighbourStats(g, e, labels)
	if err != nil {
		t.Fatal(err)
	}
	nodes := MaxStatEdges / k
	if st.Edges != n*k || st.SampledEdges != nodes*k {
		t.Fatalf("Edges %d SampledEdges %d, want %d and %d", st.Edges, st.SampledEdges, n*k, nodes*k)
	}
	var cosAll, cosSample float64
	var agreeAll float64
	sampled := map[int]bool{}
	for j := 0; j < nodes; j++ {
		sampled[j*n/nodes] = true
	}
	for i := 0; i < n; i++ {
		for _, v := range g.Neighbours(i) {
			_, c, _ := pairLoop([]int{i, int(v)}, labels, e)
			cosAll += c
			if labels[i] == labels[v] {
				agreeAll++
			}
			if sampled[i] {
				cosSample += c
			}
		}
	}
	if d := math.Abs(st.MeanCosine - cosSample/float64(nodes*k)); d > 1e-9 {
		t.Errorf("sampled mean cosine %v, loop over the same nodes %v", st.MeanCosine, cosSample/float64(nodes*k))
	}
	if d := math.Abs(st.MeanCosine - cosAll/float64(n*k)); d > 0.01 {
		t.Errorf("sampled mean cosine %v far from the all-edge %v", st.MeanCosine, cosAll/float64(n*k))
	}
	if d := math.Abs(st.LabelAgreement - agreeAll/float64(n*k)); d > 0.01 {
		t.Errorf("sampled label agreement %v far from the all-edge %v", st.LabelAgreement, agreeAll/float64(n*k))
	}
}

package train

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/optim"
)

// nci1Modality loads NCI1 from the shared data (skipping when absent) and
// builds the GraphCL modality with the default config.
func nci1Modality(b *testing.B) (Method, *Config, int) {
	root := testenv.Path(b)
	return benchModality(b, "data: {source: tu, name: NCI1, path: tu/NCI1}\n", "data.root="+root)
}

// benchModality parses a config, loads its dataset and builds the modality
// of seed 1.
func benchModality(b testing.TB, yaml string, sets ...string) (Method, *Config, int) {
	cfg, err := ParseConfig([]byte(yaml), sets)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	ms, err := methodFor(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	mod, err := ms.New(&cfg, ds, 1)
	if err != nil {
		b.Fatal(err)
	}
	return mod, &cfg, ds.NumInstances()
}

// BenchmarkGraphCLStepNCI1 measures one GraphCL training step on 128 NCI1
// graphs: augmentation, packing, two GIN forward passes, the loss, the
// backward pass and Adam.
func BenchmarkGraphCLStepNCI1(b *testing.B) {
	mod, cfg, n := nci1Modality(b)
	opt := optim.NewAdam(optimParams(mod.Params()), cfg.Train.LR)
	rng := rand.New(rand.NewPCG(1, 2))
	idx := make([]int, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range idx {
			idx[j] = rng.IntN(n)
		}
		res, err := mod.Step(idx, rng)
		if err != nil {
			b.Fatal(err)
		}
		if err := opt.Step(res.Grads); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedNCI1 measures embedding all 4,110 NCI1 graphs in
// evaluation mode (what a fresh BatchSampler refresh costs).
func BenchmarkEmbedNCI1(b *testing.B) {
	mod, _, _ := nci1Modality(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := mod.Embed("train", "projection"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMVGRLStepLarge measures MVGRL steps on a generated stand-in of
// REDDIT-BINARY's graph sizes (400 graphs of 60–800 nodes; a batch of 128
// has about 55,000 nodes), with scripts/standin-reddit-mvgrl.yaml's model:
// the time a step takes, the tensors its arena holds (arena-MB: about what
// is live at once within a step) and the live heap after a collection
// that follows it (live-MB: the dataset's views, the model and the arena).
func BenchmarkMVGRLStepLarge(b *testing.B) {
	mod, _, n := benchModality(b, "name: standin\nmodality: graph\nmethod: mvgrl\n"+
		"data: {source: synthetic, features: auto-degree, max_degree: 64, synthetic: {graphs: 400, classes: 2, min_nodes: 60, max_nodes: 800, noise: 0.1, seed: 7}}\n"+
		"model: {kind: gcn, hidden: 128, layers: 4, diffusion: {alpha: 0.2, eps: 1.0e-4, top_k: 64}}\n"+
		"loss: {kind: jsd}\ntrain: {batch_size: 128, lr: 0.001}\n")
	rng := rand.New(rand.NewPCG(5, 6))
	idx := make([]int, 128)
	var ms runtime.MemStats
	var arenaMB, liveMB float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range idx {
			idx[j] = rng.IntN(n)
		}
		if _, err := mod.Step(idx, rng); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		for _, a := range mod.(*mvgrlMethod).arenas { // one per view's graph
			if a != nil {
				arenaMB += 4 * float64(a.Size()) / (1 << 20)
			}
		}
		liveMB += float64(ms.HeapAlloc) / (1 << 20)
		b.StartTimer()
	}
	b.ReportMetric(arenaMB/float64(b.N), "arena-MB")
	b.ReportMetric(liveMB/float64(b.N), "live-MB")
}

package train

import (
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/model"
)

// nci1Modality loads NCI1 from the shared data (skipping when absent) and
// builds the GraphCL modality with the default config.
func nci1Modality(b *testing.B) (Method, *Config, int) {
	root := testenv.Path(b)
	return benchModality(b, "data: {source: tu, name: NCI1, path: tu/NCI1}\n", "data.root="+root)
}

// benchModality parses a config, loads its dataset and builds the modality
// of seed 1.
func benchModality(b *testing.B, yaml string, sets ...string) (Method, *Config, int) {
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
	opt := model.NewAdam(cfg.Train.LR, mod.Params())
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

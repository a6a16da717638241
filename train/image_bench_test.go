package train

import (
	"math/rand/v2"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/optim"
)

// benchImageModality builds the SimCLR modality of the throughput
// benchmark on generated 32×32 images: ResNet-14 (3×3 stem of 16 channels,
// three stages of two BasicBlocks at 16/32/64), projection 64-64-128,
// NT-Xent τ = 0.5, Adam 1e-3.
func benchImageModality(b *testing.B, arch string, sets ...string) (Method, *Config, int) {
	return benchModality(b, "modality: image\n", append([]string{
		"data.image.images=512", "data.image.test_images=64", "model.arch=" + arch, "model.proj_hidden=64"}, sets...)...)
}

// BenchmarkSimCLRStep measures one SimCLR training step on B = 128 images:
// two augmented views (256 images through the network), forward, NT-Xent,
// backward and Adam. img/s counts both views, as the issue does. The
// -winograd variants set model.conv: winograd.
func BenchmarkSimCLRStep(b *testing.B) {
	for _, v := range []struct{ name, arch, conv string }{
		{"resnet14", "resnet14", "direct"}, {"resnet14-winograd", "resnet14", "winograd"},
		{"resnet8", "resnet8", "direct"}, {"resnet8-winograd", "resnet8", "winograd"},
	} {
		b.Run(v.name, func(b *testing.B) {
			mod, cfg, n := benchImageModality(b, v.arch, "model.conv="+v.conv)
			opt := optim.NewAdam(optimParams(mod.Params()), cfg.Train.LR)
			rng := rand.New(rand.NewPCG(1, 2))
			idx := make([]int, 128)
			step := func() {
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
			step() // compile the graph and allocate its buffers
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
			b.ReportMetric(float64(2*len(idx)*b.N)/b.Elapsed().Seconds(), "img/s")
			b.Logf("gemm backend: %s", gemm.Backend())
		})
	}
}

// BenchmarkImageEmbed measures evaluation-mode embedding of 512 images
// (what one BatchSampler refresh costs per 512 training images).
func BenchmarkImageEmbed(b *testing.B) {
	for _, conv := range []string{"direct", "winograd"} {
		b.Run(conv, func(b *testing.B) {
			mod, _, _ := benchImageModality(b, "resnet14", "model.conv="+conv)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := mod.Embed("train", "projection"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(512*b.N)/b.Elapsed().Seconds(), "img/s")
		})
	}
}

// BenchmarkMoCoV3Step measures one MoCo v3 training step beside
// BenchmarkSimCLRStep: the same encoders, images and B = 128; two
// augmented views through the online network (ResNet + projector 1024 →
// 128 + predictor 1024, forward and backward) and through the momentum
// network (forward only), the symmetric loss, LARS and the EMA update.
// img/s counts both views, as BenchmarkSimCLRStep; the -winograd variants
// set model.conv: winograd.
func BenchmarkMoCoV3Step(b *testing.B) {
	for _, v := range []struct{ name, arch, conv string }{
		{"resnet14", "resnet14", "direct"}, {"resnet14-winograd", "resnet14", "winograd"},
		{"resnet8", "resnet8", "direct"}, {"resnet8-winograd", "resnet8", "winograd"},
	} {
		b.Run(v.name, func(b *testing.B) {
			mod, cfg, n := benchModality(b, "modality: image\nmethod: mocov3\n",
				"data.image.images=512", "data.image.test_images=64", "model.arch="+v.arch, "model.conv="+v.conv)
			oc := cfg.Optim
			oc.LR = cfg.Train.LR
			opt, err := optim.New(oc, optimParams(mod.Params()))
			if err != nil {
				b.Fatal(err)
			}
			after := mod.(AfterStepper)
			rng := rand.New(rand.NewPCG(1, 2))
			idx := make([]int, 128)
			steps := 0
			step := func() {
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
				steps++
				if _, err := after.AfterStep(steps, 1000); err != nil {
					b.Fatal(err)
				}
			}
			step() // compile the graphs and allocate their buffers
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
			b.ReportMetric(float64(2*len(idx)*b.N)/b.Elapsed().Seconds(), "img/s")
		})
	}
}

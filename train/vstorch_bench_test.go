package train

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/optim"
)

// The VsTorch benchmarks are the Go side of scripts/bench_vs_pytorch.py
// (make bench-vs-pytorch), which runs them interleaved with the same
// workloads in PyTorch. They measure what BenchmarkGraphCLStepNCI1 and
// BenchmarkSimCLRStep measure, with three differences that make the two
// sides comparable: untimed warm-up steps (-vstorch.warmup) before the
// timer starts, the real CIFAR-10 subset instead of generated images, and
// the parts timed separately (the views alone, the step without image
// augmentation). They log the parameters (names, shapes) for the script to
// check against the PyTorch model, and the per-view graph sizes.

var vsTorchWarmup = flag.Int("vstorch.warmup", 3, "untimed training steps before a VsTorch benchmark starts its timer")

// vsTorchProfile, when set, is a file name prefix: BenchmarkVsTorchMVGRL
// writes the CPU profile of its timed steps alone (not the dataset, views
// or warm-up, which -test.cpuprofile would include) to <prefix>-<dataset>.prof.
var vsTorchProfile = flag.String("vstorch.cpuprofile", "", "write the CPU profile of the timed MVGRL steps to `prefix`-<dataset>.prof")

// vsTorchRun is one model with its optimizer, kept across the calls of one
// (sub-)benchmark function: the testing package calls it once with b.N = 1
// and again with the -benchtime count, and the model, the data and the
// warm-up need not be redone.
type vsTorchRun struct {
	mod   Method
	opt   optim.Optimizer
	after AfterStepper // the method's per-step work after the optimizer (MoCo v3's EMA), or nil
	// steps counts the steps taken, total is the step count AfterStep is
	// told (a training run's: train.epochs × batches of len(idx) per epoch).
	steps, total int
	n            int
	rng          *rand.Rand
	idx          []int
	warmed       bool
}

var vsTorchRuns = map[string]*vsTorchRun{}

// vsTorchRunFor returns the run cached under key, building it with build
// the first time. The optimizer is the config's (optim.New over the
// trainable parameters at train.lr, as the training loop makes it: Adam
// unless the config says otherwise, LARS for MoCo v3) at a constant
// learning rate.
func vsTorchRunFor(b *testing.B, key string, build func(*testing.B) (Method, *Config, int)) *vsTorchRun {
	if r := vsTorchRuns[key]; r != nil {
		return r
	}
	mod, cfg, n := build(b)
	oc := cfg.Optim
	oc.LR = cfg.Train.LR
	opt, err := optim.New(oc, optimParams(mod.Params()))
	if err != nil {
		b.Fatalf("optim: %v", err)
	}
	r := &vsTorchRun{mod: mod, opt: opt, n: n, total: vsTorchTotal(cfg, n),
		rng: rand.New(rand.NewPCG(1, 2)), idx: make([]int, vsTorchBatch)}
	r.after, _ = mod.(AfterStepper)
	vsTorchRuns[key] = r
	logParams(b, mod.Params())
	return r
}

// draw fills r.idx with instances drawn uniformly with replacement.
func (r *vsTorchRun) draw() {
	for j := range r.idx {
		r.idx[j] = r.rng.IntN(r.n)
	}
}

// step runs one training step as the training loop does: the method's
// Step (views, forward, backward), the optimizer, and the method's
// AfterStep where it has one (MoCo v3's momentum update).
func (r *vsTorchRun) step(b *testing.B) {
	r.draw()
	res, err := r.mod.Step(r.idx, r.rng)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.opt.Step(res.Grads); err != nil {
		b.Fatal(err)
	}
	r.steps++
	if r.after != nil {
		if _, err := r.after.AfterStep(r.steps, r.total); err != nil {
			b.Fatal(err)
		}
	}
}

// warm runs the warm-up steps once per run.
func (r *vsTorchRun) warm(b *testing.B) {
	if r.warmed {
		return
	}
	for range *vsTorchWarmup {
		r.step(b)
	}
	r.warmed = true
}

// timeImageSteps runs the warm-up, then times b.N steps and reports
// ms/step and img/s (both views of each image counted).
func (r *vsTorchRun) timeImageSteps(b *testing.B) {
	r.warm(b)
	b.ResetTimer()
	for range b.N {
		r.step(b)
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
	b.ReportMetric(float64(2*len(r.idx)*b.N)/b.Elapsed().Seconds(), "img/s")
}

// logParams logs the parameter count and, on one line after
// "vstorch-params ", every parameter's name, shape and trainability as JSON
// (the script compares them with the PyTorch model's; Linear weights are
// stored in×out here, out×in there).
func logParams(b *testing.B, ps []*model.Param) {
	trainable, buffers := 0, 0
	for _, p := range ps {
		if p.Trainable {
			trainable += p.Value.DataSize()
		} else {
			buffers += p.Value.DataSize()
		}
	}
	js, err := json.Marshal(vsTorchParams(ps))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("parameters: %d trainable values, %d buffer values, %d tensors", trainable, buffers, len(ps))
	b.Logf("vstorch-params %s", js)
}

// vsTorchParam is one parameter as the script reads it (its
// torch_params' entries).
type vsTorchParam struct {
	Name      string `json:"name"`
	Shape     []int  `json:"shape"`
	Trainable bool   `json:"trainable"`
}

// vsTorchParams lists ps for logParams.
func vsTorchParams(ps []*model.Param) []vsTorchParam {
	es := make([]vsTorchParam, 0, len(ps))
	for _, p := range ps {
		es = append(es, vsTorchParam{p.Name, p.Value.Shape().Clone(), p.Trainable})
	}
	return es
}

// BenchmarkVsTorchGraphCL is BenchmarkGraphCLStepNCI1 (128 NCI1 graphs,
// view 1 the graphs, view 2 GraphCL's random choice of augmentation; GIN
// 3×32 with batch norm and sum pooling, head 96-96-96, GraphCL's InfoNCE at
// τ = 0.2, Adam 0.01) after the warm-up steps ("step"), and its views
// alone: augmenting and packing both views ("views"), with the mean size of
// each view's batch.
func BenchmarkVsTorchGraphCL(b *testing.B) {
	b.Run("step", func(b *testing.B) {
		r := vsTorchRunFor(b, "graphcl", nci1Modality)
		g := r.mod.(*graphCL)
		c := g.gin.Config()
		b.Logf("gin: in %d, hidden %d, layers %d, projection %d; augment %v; loss %+v; lr %g",
			c.InDim, c.Hidden, c.Layers, c.ProjDim, g.aug, g.cfg.Loss, g.cfg.Train.LR)
		r.warm(b)
		b.ResetTimer()
		for range b.N {
			r.step(b)
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
	})
	b.Run("views", func(b *testing.B) {
		r := vsTorchRunFor(b, "graphcl", nci1Modality)
		g := r.mod.(*graphCL)
		v1 := make([]*data.Graph, len(r.idx))
		v2 := make([]*data.Graph, len(r.idx))
		var nodes, adj [2]int
		views := func() {
			r.draw()
			for i, j := range r.idx {
				v1[i] = g.set.Graphs[j]
				v2[i] = g.aug.Augment(g.set.Graphs[j], r.rng)
			}
			for k, v := range [][]*data.Graph{v1, v2} {
				p, err := model.PackGraphs(v)
				if err != nil {
					b.Fatal(err)
				}
				nodes[k] += p.NumNodes
				adj[k] += len(p.Col)
			}
		}
		for range *vsTorchWarmup {
			views()
		}
		nodes, adj = [2]int{}, [2]int{}
		b.ResetTimer()
		for range b.N {
			views()
		}
		b.StopTimer()
		b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
		b.ReportMetric(float64(nodes[0])/float64(b.N), "nodes/view1")
		b.ReportMetric(float64(nodes[1])/float64(b.N), "nodes/view2")
		b.ReportMetric(float64(adj[0])/float64(b.N), "adj/view1")
		b.ReportMetric(float64(adj[1])/float64(b.N), "adj/view2")
	})
}

// vsTorchCIFAR builds BenchmarkSimCLRStep's modality (ResNet-14 16/32/64,
// projection 64-64-128, NT-Xent τ = 0.5, Adam 1e-3) on the shared CIFAR-10
// subset, with augment.image set to image ("simclr" or "none": the
// gathered images normalised, nothing else).
func vsTorchCIFAR(image string, sets ...string) func(*testing.B) (Method, *Config, int) {
	return func(b *testing.B) (Method, *Config, int) {
		root := testenv.Path(b)
		testenv.Path(b, "cifar10")
		return benchModality(b, "modality: image\ndata: {source: cifar10, path: cifar10}\n", append([]string{
			"data.root=" + root, "model.arch=resnet14", "model.proj_hidden=64", "augment.image=" + image}, sets...)...)
	}
}

// BenchmarkVsTorchSimCLR is BenchmarkSimCLRStep/resnet14 on the CIFAR-10
// subset, B = 128 × 2 views, after the warm-up steps: with SimCLR's CIFAR
// augmentation ("step"), the same with model.conv: winograd
// ("step-winograd"), without augmentation ("noaug": gather and normalise
// only), and the augmentation of both views alone ("views"). img/s counts
// both views.
func BenchmarkVsTorchSimCLR(b *testing.B) {
	for _, v := range []struct{ name, image, conv string }{
		{"step", "simclr", "direct"}, {"step-winograd", "simclr", "winograd"}, {"noaug", "none", "direct"},
	} {
		b.Run(v.name, func(b *testing.B) {
			r := vsTorchRunFor(b, "simclr-"+v.image+"-"+v.conv, vsTorchCIFAR(v.image, "model.conv="+v.conv))
			im := r.mod.(*simCLR)
			c := im.net.Config()
			b.Logf("resnet: widths %v, blocks %v, stem %d, projection %d-%d-%d, forward %d FLOP/image; augment %v; loss %+v; lr %g; gemm %s",
				c.Widths, c.Blocks, c.Stem, im.net.EmbedDim(), c.ProjHidden, c.ProjDim,
				im.net.ForwardFLOPs(im.ds.train.H, im.ds.train.W), im.aug, im.cfg.Loss, im.cfg.Train.LR, gemm.Backend())
			r.timeImageSteps(b)
		})
	}
	b.Run("views", func(b *testing.B) {
		r := vsTorchRunFor(b, "simclr-simclr", vsTorchCIFAR("simclr"))
		im := r.mod.(*simCLR)
		tr := im.ds.train
		d := tr.C * tr.H * tr.W
		var dst [2][]float32
		for v := range dst {
			dst[v] = make([]float32, len(r.idx)*d)
		}
		views := func() {
			r.draw()
			for v := range dst {
				if err := augment.AugmentGather(im.aug[0], dst[v], tr.Pixels, r.idx, tr.C, tr.H, tr.W, r.rng.Uint64(), runtime.GOMAXPROCS(0)); err != nil {
					b.Fatal(err)
				}
			}
		}
		for range *vsTorchWarmup {
			views()
		}
		b.ResetTimer()
		for range b.N {
			views()
		}
		b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
		b.ReportMetric(float64(2*len(r.idx)*b.N)/b.Elapsed().Seconds(), "img/s")
	})
}

// vsTorchMoCoConfig is the shipped MoCo v3 config whose model, loss and
// optimizer BenchmarkVsTorchMoCoV3 runs (scripts/bench_vs_pytorch.py's
// MOCO holds the same values and checks them against the logged ones).
const vsTorchMoCoConfig = "../configs/mocov3-cifar10-subset.yaml"

// vsTorchMoCo builds the MoCo v3 modality of vsTorchMoCoConfig on the
// CIFAR-10 subset with the ResNet-14 of vsTorchCIFAR (model.arch resnet14)
// and SimCLR's CIFAR augmentation for both views (augment.image simclr,
// the VsTorch SimCLR workload's: the config's mocov3 views also solarize
// the second one), model.conv set to conv. Everything else is the
// config's: projector 1024 → 128 with the last BatchNorm without affine,
// predictor 1024, momentum 0.99 → 1, 2τ·(ctr(q1,k2) + ctr(q2,k1)) at
// τ = 0.2, LARS lr 0.3 (trust coefficient 0.02, weight decay 1e-5,
// momentum 0.9), here at a constant learning rate.
func vsTorchMoCo(conv string) func(*testing.B) (Method, *Config, int) {
	return func(b *testing.B) (Method, *Config, int) { return vsTorchMoCoModality(b, conv) }
}

// vsTorchMoCoModality builds vsTorchMoCo's modality.
func vsTorchMoCoModality(tb testing.TB, conv string) (Method, *Config, int) {
	root := testenv.Path(tb)
	testenv.Path(tb, "cifar10")
	src, err := os.ReadFile(vsTorchMoCoConfig)
	if err != nil {
		tb.Fatal(err)
	}
	return benchModality(tb, string(src), "data.root="+root, "model.arch=resnet14", "augment.image=simclr", "model.conv="+conv)
}

// vsTorchMoCoHParams are the hyperparameters BenchmarkVsTorchMoCoV3 logs
// on its "vstorch-moco" line (the keys of the script's MOCO, with the
// momentum schedule's length total instead of epochs).
func vsTorchMoCoHParams(m *mocoV3, total int) map[string]any {
	c := m.cfg
	return map[string]any{
		"proj_hidden": c.Model.ProjHidden, "proj_dim": c.Model.ProjDim, "pred_hidden": c.Model.PredHidden,
		"momentum": c.Model.Momentum, "temperature": c.Loss.Temperature, "loss_form": c.Loss.Form,
		"optim": c.Optim.Kind, "lr": c.Train.LR, "weight_decay": c.Optim.WeightDecay,
		"trust_coefficient": c.Optim.TrustCoefficient, "lars_momentum": c.Optim.Momentum,
		"nesterov": c.Optim.Nesterov, "total_steps": total,
	}
}

// vsTorchTotal is the step count a VsTorch run gives AfterStep: a
// training run's, train.epochs × the batches of vsTorchBatch images in an
// epoch of n instances.
func vsTorchTotal(cfg *Config, n int) int {
	return cfg.Train.Epochs * ((n + vsTorchBatch - 1) / vsTorchBatch)
}

// vsTorchBatch is the batch size of the VsTorch workloads (each view's).
const vsTorchBatch = 128

// BenchmarkVsTorchMoCoV3 is one MoCo v3 training step as the training loop
// runs it (BenchmarkMoCoV3Step/resnet14 on the CIFAR-10 subset, with
// vsTorchMoCo's model, augmentation and optimizer), B = 128 × 2 views,
// after the warm-up steps: both views through the online ResNet-14,
// projector and predictor (forward and backward) and through the momentum
// encoder and projector (forward only, training-mode BatchNorm), the
// symmetric loss, LARS, and the momentum update (AfterStep); "step" with
// model.conv direct, "step-winograd" with winograd. img/s counts both
// views, as BenchmarkVsTorchSimCLR. The momentum copies are logged by
// logParams as non-trainable ("momentum." + the online name), as
// mocoV3.Params lists them; "vstorch-moco" logs the hyperparameters for
// the script to check against its own.
func BenchmarkVsTorchMoCoV3(b *testing.B) {
	for _, v := range []struct{ name, conv string }{{"step", "direct"}, {"step-winograd", "winograd"}} {
		b.Run(v.name, func(b *testing.B) {
			r := vsTorchRunFor(b, "moco-"+v.conv, vsTorchMoCo(v.conv))
			m := r.mod.(*mocoV3)
			c, pc, qc := m.enc.Config(), m.proj.Config(), m.pred.Config()
			tr := m.ds.train
			heads := 2 * int64(pc.In*pc.Hidden+pc.Hidden*pc.Out+qc.In*qc.Hidden+qc.Hidden*qc.Out)
			b.Logf("resnet: widths %v, blocks %v, stem %d, conv %s; projector %d-%d-%d, predictor %d-%d-%d, online forward %d FLOP/image; augment %v; loss %+v ×2τ; optim %s lr %g; momentum %g → 1 over %d steps; gemm %s",
				c.Widths, c.Blocks, c.Stem, m.cfg.Model.Conv, pc.In, pc.Hidden, pc.Out, qc.In, qc.Hidden, qc.Out,
				m.enc.ForwardFLOPs(tr.H, tr.W)+heads, m.aug, m.cfg.Loss, m.cfg.Optim.Kind, m.cfg.Train.LR,
				m.cfg.Model.Momentum, r.total, gemm.Backend())
			hp, err := json.Marshal(vsTorchMoCoHParams(m, r.total))
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("vstorch-moco %s", hp)
			r.timeImageSteps(b)
		})
	}
}

// vsTorchMVGRLData is the data line of the VsTorch MVGRL workloads: the
// graph table's MVGRL cells (table.GraphConfigYAML): one-hot node labels
// (NCI1) or degrees (COLLAB, up to 491), the diffusion's top_k 64 on COLLAB.
var vsTorchMVGRLData = map[string]string{
	"nci1":   "data: {source: tu, name: NCI1, path: tu/NCI1, features: auto-degree}\nmodel: {kind: gcn, hidden: 128, layers: 4, diffusion: {alpha: 0.2, eps: 1.0e-4}}\n",
	"collab": "data: {source: gin, name: COLLAB, path: tu_gin_format/COLLAB/COLLAB.txt.gz, features: auto-degree}\nmodel: {kind: gcn, hidden: 128, layers: 4, diffusion: {alpha: 0.2, eps: 1.0e-4, top_k: 64}}\n",
}

// vsTorchMVGRL builds the MVGRL modality of the graph table's cell on a
// dataset (vsTorchMVGRLData): two GCN encoders of 4 layers × 128, the
// node and graph heads, InfoGraph's JSD local–global loss, Adam 1e-3.
func vsTorchMVGRL(name string) func(*testing.B) (Method, *Config, int) {
	return func(b *testing.B) (Method, *Config, int) {
		root := testenv.Path(b)
		return benchModality(b, "modality: graph\nmethod: mvgrl\n"+vsTorchMVGRLData[name]+
			"loss: {kind: jsd}\ntrain: {batch_size: 128, lr: 0.001}\n", "data.root="+root)
	}
}

// BenchmarkVsTorchMVGRL is one MVGRL training step of the graph table's
// cells ("nci1", "collab": 128 graphs drawn with replacement, both views
// packed, two GCN encoders, the heads, the JSD loss in both directions,
// backward, Adam) after the warm-up steps, with the mean nodes and
// propagation entries (adjacency, diffusion) of a batch; cpu-ms/step is
// the process's CPU time per step (both cores' worth), steadier than the
// wall time on a shared machine.
func BenchmarkVsTorchMVGRL(b *testing.B) {
	for _, name := range []string{"nci1", "collab"} {
		b.Run(name, func(b *testing.B) {
			r := vsTorchRunFor(b, "mvgrl-"+name, vsTorchMVGRL(name))
			g := r.mod.(*mvgrlMethod)
			c := g.m.Config()
			b.Logf("mvgrl: dataset %s, %d graphs, in %d, hidden %d, layers %d", g.set.Name, len(g.set.Graphs), c.InDim, c.Hidden, c.Layers)
			r.warm(b)
			var nodes, nnz [2]int
			stop := startStepProfile(b, name)
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				r.step(b)
				b.StopTimer()
				for _, j := range r.idx {
					nodes[0] += g.set.Graphs[j].NumNodes
					nnz[0] += g.views[0][j].NNZ()
					nnz[1] += g.views[1][j].NNZ()
				}
				b.StartTimer()
			}
			b.StopTimer()
			stop()
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/step")
			b.ReportMetric((processCPU()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/step")
			b.ReportMetric(float64(nodes[0])/float64(b.N), "nodes/batch")
			b.ReportMetric(float64(nnz[0])/float64(b.N), "adj/batch")
			b.ReportMetric(float64(nnz[1])/float64(b.N), "diff/batch")
		})
	}
}

// startStepProfile starts the CPU profile of -vstorch.cpuprofile for the
// benchmark of dataset name (b.N > 1 only: the testing package's first
// call with b.N = 1 is not the measured one) and returns its stop.
func startStepProfile(b *testing.B, name string) func() {
	if *vsTorchProfile == "" || b.N == 1 {
		return func() {}
	}
	f, err := os.Create(*vsTorchProfile + "-" + name + ".prof")
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatalf("-vstorch.cpuprofile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

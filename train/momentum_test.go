package train

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/batchsampler-go/batchsampler/augment"
	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model"
	"github.com/batchsampler-go/batchsampler/optim"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// tinyMomentum is a momentum-encoder method (MoCo v3's shape on a GIN,
// small enough for a test) added without touching the loop: a file and one
// RegisterMethod call. The online branch is GIN encoder + projection head +
// a linear predictor; the target branch is an EMA copy of the GIN (encoder
// and head), updated after every optimizer step with MoCo v3's cosine
// momentum schedule; the loss is symmetric, loss(q1, k2) + loss(q2, k1),
// with the keys as constants (no gradient through the target).
type tinyMomentum struct {
	cfg            *Config
	set            *data.GraphSet
	online, target *model.GIN
	pred           *model.Param // ProjDim × ProjDim
	aug            augment.GraphAugmenter
	params         []*model.Param
	m0             float64
	all            *model.GraphBatch
}

func init() {
	RegisterMethod("test-momentum", MethodSpec{Modalities: []string{"graph"}, Validate: validateGIN, New: newTinyMomentum})
}

func newTinyMomentum(cfg *Config, ds Dataset, seed uint64) (Method, error) {
	gd := ds.(graphDataset)
	aug, err := graphAugmenter(cfg)
	if err != nil {
		return nil, err
	}
	gc := model.GINConfig{InDim: gd.set.FeatDim, Hidden: cfg.Model.Hidden, Layers: cfg.Model.Layers, ProjDim: cfg.Model.ProjDim}
	online, err := model.NewGIN(gc, seed)
	if err != nil {
		return nil, err
	}
	target, err := model.NewGIN(gc, seed) // same initialisation, as MoCo v3 copies it
	if err != nil {
		return nil, err
	}
	d := online.ProjDim()
	w := make([]float32, d*d)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.05)
	}
	for i := 0; i < d; i++ {
		w[i*d+i]++
	}
	t := &tinyMomentum{cfg: cfg, set: gd.set, online: online, target: target, aug: aug, m0: 0.9,
		pred: &model.Param{Name: "predictor.w", Trainable: true, Value: tensor.New(tensor.WithShape(d, d), tensor.WithBacking(w))}}
	t.params = append(append(t.params, online.Params()...), t.pred)
	for _, p := range target.Params() { // the EMA copy: non-trainable, checkpointed
		t.params = append(t.params, &model.Param{Name: "target." + p.Name, Value: p.Value})
	}
	return t, nil
}

func (t *tinyMomentum) Params() []*model.Param { return t.params }

func (t *tinyMomentum) Step(idx []int, rng *rand.Rand) (StepResult, error) {
	views := [2][]*data.Graph{}
	for _, j := range idx {
		views[0] = append(views[0], t.set.Graphs[j])
		views[1] = append(views[1], t.aug.Augment(t.set.Graphs[j], rng))
	}
	eg := G.NewGraph()
	bound := t.online.Bind(eg)
	w := G.NewMatrix(eg, tensor.Float32, G.WithShape(t.pred.Value.Shape()...), G.WithName("predictor.w"), G.WithValue(t.pred.Value))
	var q, k [2]*G.Node
	var proj0 *G.Node
	for v := range 2 {
		b, err := model.PackGraphs(views[v])
		if err != nil {
			return StepResult{}, err
		}
		emb, err := bound.Encode(b, true)
		if err != nil {
			return StepResult{}, err
		}
		p, err := bound.Project(emb)
		if err != nil {
			return StepResult{}, err
		}
		if v == 0 {
			proj0 = p
		}
		if q[v], err = G.Mul(p, w); err != nil {
			return StepResult{}, err
		}
		kv, err := t.target.EmbedProjected(b)
		if err != nil {
			return StepResult{}, err
		}
		k[v] = G.NewMatrix(eg, tensor.Float32, G.WithShape(len(idx), t.target.ProjDim()), G.WithName(fmt.Sprintf("key%d", v)),
			G.WithValue(tensor.New(tensor.WithShape(len(idx), t.target.ProjDim()), tensor.WithBacking(kv))))
	}
	l1, err := loss.Build(t.cfg.Loss, q[0], k[1])
	if err != nil {
		return StepResult{}, err
	}
	l2, err := loss.Build(t.cfg.Loss, q[1], k[0])
	if err != nil {
		return StepResult{}, err
	}
	l := G.Must(G.Add(l1, l2))
	learn := append(bound.Learnables(), w)
	if _, err := G.Grad(l, learn...); err != nil {
		return StepResult{}, err
	}
	vm := G.NewTapeMachine(eg)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return StepResult{}, err
	}
	grads, err := bound.Grads()
	if err != nil {
		return StepResult{}, err
	}
	if err := bound.CommitStats(); err != nil {
		return StepResult{}, err
	}
	gw, err := w.Grad()
	if err != nil {
		return StepResult{}, err
	}
	grads = append(grads, append([]float32(nil), gw.Data().([]float32)...))
	lv, err := scalarOf(l.Value())
	if err != nil {
		return StepResult{}, err
	}
	return StepResult{Loss: lv, Grads: grads, Proj: append([]float32(nil), proj0.Value().Data().([]float32)...), ProjDim: proj0.Shape()[1]}, nil
}

// AfterStep is the momentum update of the target branch (after the
// optimizer's step, before the next keys are computed).
func (t *tinyMomentum) AfterStep(step, total int) ([]map[string]any, error) {
	m := optim.EMAMomentum(t.m0, step, total)
	on, tg := t.online.Params(), t.target.Params()
	for i := range on {
		if err := optim.EMA(tg[i].Value.Float32s(), on[i].Value.Float32s(), m); err != nil {
			return nil, err
		}
	}
	return []map[string]any{{"event": "ema", "step": step, "momentum": m}}, nil
}

func (t *tinyMomentum) Embed(split, which string) (sampler.Embeddings, error) {
	if t.all == nil {
		b, err := model.PackGraphs(t.set.Graphs)
		if err != nil {
			return sampler.Embeddings{}, err
		}
		t.all = b
	}
	var (
		e   []float32
		err error
	)
	if which == "projection" {
		e, err = t.online.EmbedProjected(t.all)
	} else {
		e, err = t.online.Embed(t.all)
	}
	n := len(t.set.Graphs)
	return sampler.Embeddings{N: n, D: len(e) / n, Data: e}, err
}

// TestMomentumMethodNeedsNoLoopEdit trains the test method with two
// samplers, interrupts it mid-epoch, resumes it, and checks that the
// resumed run ends bit for bit where an uninterrupted one does (losses,
// scores, and the EMA target's parameters in the checkpointed state), that
// the target moved with the scheduled momentum, and that it evaluates.
func TestMomentumMethodNeedsNoLoopEdit(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "method=test-momentum", "model.proj_dim=8",
		`samplers=[{kind: uniform}, {kind: batchsampler, label: bs, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`)
	ref := t.TempDir()
	want, err := Run(context.Background(), cfg, Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range want.Runs {
		if r.Metric != "svm_accuracy" || !(r.Value > 0) {
			t.Errorf("%s: %s %v", r.ID, r.Metric, r.Value)
		}
	}
	// The target follows MoCo v3's momentum schedule, one update per step.
	moms := emaMomenta(t, ref, "uniform-seed0")
	if len(moms) != 9 || moms[0] != optim.EMAMomentum(0.9, 1, 9) || moms[8] != 1 {
		t.Errorf("momenta %v, want 9 updates from EMAMomentum(0.9, 1, 9) up to 1", moms)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	obs := Observer{Step: func(s StepInfo) {
		if s.Run == "bs-seed1" && s.Step == 5 {
			cancel()
		}
	}}
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: obs}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	c, err := loadCheckpoint(filepath.Join(dir, "runs", "bs-seed1", "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	targets := 0
	for name := range c.Params {
		if strings.HasPrefix(name, "target.") {
			targets++
		}
	}
	if targets == 0 || targets != len(c.Params)-targets-1 { // online + predictor vs target
		t.Errorf("checkpoint holds %d target parameters of %d: want the EMA copy of every online GIN parameter", targets, len(c.Params))
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := resultsOf(t, got), resultsOf(t, want); !maps.Equal(g, w) {
		t.Errorf("resumed %v, uninterrupted %v", g, w)
	}
	sameLosses(t, readLosses(t, ref), readLosses(t, dir))
}

// emaMomenta reads a run's "ema" records.
func emaMomenta(t *testing.T, dir, run string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "runs", run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] == "ema" {
			out = append(out, m["momentum"].(float64))
		}
	}
	return out
}

// TestOptimizerAndScheduleFromConfig trains GraphCL with LARS and a
// warm-up + cosine schedule chosen in the config alone: the learning rate
// logged at every step is train.lr × the schedule's factor.
func TestOptimizerAndScheduleFromConfig(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, "seeds=[0]",
		"optim={kind: lars, weight_decay: 1e-6, trust_coefficient: 0.02, schedule: {kind: warmup_cosine, warmup_steps: 3}}")
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sched := optim.Schedule{Kind: optim.WarmupCosine, Warmup: 3}
	steps := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] != nil {
			continue
		}
		s := int(m["step"].(float64))
		want := cfg.Train.LR * sched.Factor(s-1, 9)
		if got := m["lr"].(float64); math.Abs(got-want) > 1e-15 {
			t.Errorf("step %d: lr %v, want %v", s, got, want)
		}
		steps++
	}
	if steps != 9 {
		t.Errorf("%d steps logged, want 9", steps)
	}
	c, err := loadCheckpoint(filepath.Join(dir, "runs", "uniform-seed0", "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	restored := optim.NewLARS(optimParams(mustMethod(t, &cfg).Params()), 1)
	if err := restored.UnmarshalBinary(c.Optimizer); err != nil || restored.Steps() != 9 || restored.TrustCoefficient != 0.02 {
		t.Errorf("checkpointed optimizer: %v, %d steps, trust %v; want LARS after 9 steps with trust 0.02", err, restored.Steps(), restored.TrustCoefficient)
	}
}

// mustMethod builds the method of cfg on its dataset, seed 1.
func mustMethod(t *testing.T, cfg *Config) Method {
	t.Helper()
	ds, err := dataSpecs[cfg.Modality].Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := methodFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ms.New(cfg, ds, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

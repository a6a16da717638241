package train

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/loss"
)

// tinyMVGRL is MVGRL on tinySynthetic's graphs, sized for a test.
var tinyMVGRL = []string{"method=mvgrl", "model={kind: gcn, hidden: 8, layers: 2}", "loss={kind: jsd}"}

// TestMVGRLDefaults: naming the method brings its recipe (GCN sizes, the
// diffusion, loss.kind jsd, lr 1e-3); the file still overrides any of it,
// and other methods keep theirs.
func TestMVGRLDefaults(t *testing.T) {
	cfg := mustParse(t, "modality: graph\nmethod: mvgrl\ndata: {source: synthetic, synthetic: {graphs: 40, classes: 2, min_nodes: 6, max_nodes: 8}}\n")
	m := cfg.Model
	if m.Kind != "gcn" || m.Hidden != 128 || m.Layers != 4 || m.Diffusion != (DiffusionConfig{Alpha: 0.2, Eps: 1e-4}) ||
		cfg.Loss.Kind != loss.KindJSD || cfg.Train.LR != 1e-3 || cfg.Train.BatchSize != 128 || cfg.Train.Epochs != 20 || len(cfg.Augment.List) != 0 {
		t.Errorf("mvgrl defaults not applied: model %+v loss %+v train %+v augment %+v", m, cfg.Loss, cfg.Train, cfg.Augment)
	}
	cfg = mustParse(t, tinySynthetic, "method=mvgrl", "model={hidden: 16, diffusion: {alpha: 0.15, eps: 0, top_k: 5}}", "loss={kind: jsd}", "train.lr=0.002")
	if cfg.Model.Hidden != 16 || cfg.Model.Layers != 4 || cfg.Model.Diffusion != (DiffusionConfig{Alpha: 0.15, TopK: 5}) || cfg.Train.LR != 0.002 {
		t.Errorf("overrides lost: %+v %+v", cfg.Model, cfg.Train)
	}
	if plain := mustParse(t, tinySynthetic); plain.Method != "graphcl" || plain.Loss.Kind != loss.KindInfoNCE || plain.Model.Kind != "gin" {
		t.Errorf("graphcl config picked up mvgrl defaults: %+v %+v", plain.Model, plain.Loss)
	}
}

func TestMVGRLConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want []string
	}{
		{[]string{"loss.kind=dcl"}, []string{"loss.kind (", `"dcl" does not apply to method mvgrl`, "allowed: jsd", "dcl debiases the negatives of an InfoNCE loss"}},
		{[]string{"loss.kind=hcl"}, []string{"loss.kind (", `"hcl" does not apply to method mvgrl`, "hcl debiases"}},
		{[]string{"loss.kind=infonce"}, []string{"loss.kind (", `"infonce" does not apply to method mvgrl`, "allowed: jsd, nce_local_global"}},
		{[]string{"loss.kind=nce_local_global", "loss.temperature=0"}, []string{"loss.temperature"}},
		{[]string{"model.kind=gin"}, []string{"model.kind", "gcn"}},
		{[]string{"model.hidden=0"}, []string{"model.hidden"}},
		{[]string{"model.layers=-1"}, []string{"model.layers"}},
		{[]string{"model.diffusion.alpha=1"}, []string{"model.diffusion.alpha", "(0, 1)"}},
		{[]string{"model.diffusion.eps=-0.1"}, []string{"model.diffusion.eps"}},
		{[]string{"model.diffusion.top_k=-3"}, []string{"model.diffusion.top_k"}},
		{[]string{"model.proj_dim=8"}, []string{"model.proj_dim (", "not used by method mvgrl"}},
		{[]string{"augment.list=[{kind: node_drop, ratio: 0.1}]"}, []string{"augment.list (", "not used by method mvgrl"}},
	} {
		_, err := ParseConfig([]byte(tinySynthetic), append(slices.Clone(tinyMVGRL), tc.sets...))
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("-set %v: error %v, want one containing %q", tc.sets, err, w)
			}
		}
	}
	// The other way round: GraphCL refuses MVGRL's objective.
	_, err := ParseConfig([]byte(tinySynthetic), []string{"loss.kind=jsd"})
	if err == nil || !strings.Contains(err.Error(), `"jsd" does not apply to method graphcl`) || !strings.Contains(err.Error(), "objective of method mvgrl") {
		t.Errorf("graphcl with loss.kind jsd: error %v", err)
	}
	_, err = ParseConfig([]byte(tinySynthetic), []string{"loss.kind=nce_local_global"})
	if err == nil || !strings.Contains(err.Error(), `"nce_local_global" does not apply to method graphcl`) || !strings.Contains(err.Error(), "objective of method mvgrl") {
		t.Errorf("graphcl with loss.kind nce_local_global: error %v", err)
	}
	// The InfoNCE form takes loss.temperature, 0.2 unless set.
	cfg := mustParse(t, "modality: graph\nmethod: mvgrl\nloss: {kind: nce_local_global}\ndata: {source: synthetic, synthetic: {graphs: 40, classes: 2, min_nodes: 6, max_nodes: 8}}\n")
	if cfg.Loss.Kind != loss.KindNCELocalGlobal || cfg.Loss.Temperature != 0.2 {
		t.Errorf("nce_local_global config: %+v", cfg.Loss)
	}
}

// TestMVGRLStepAndEmbed: a step returns a finite loss, a gradient for every
// parameter, and as projections the evaluation embeddings of its graphs
// (what Embed gives for them within float32 rounding); the views are
// computed once per dataset.
func TestMVGRLStepAndEmbed(t *testing.T) {
	ms := tinyMVGRLModels(t, 2, 1, tinyMVGRL...)
	if &ms[0].views[1][0].RowPtr[0] != &ms[1].views[1][0].RowPtr[0] {
		t.Error("the diffusion was computed twice for one dataset")
	}
	m := ms[0]
	idx := []int{5, 17, 3, 40, 41, 88}
	res, err := m.Step(idx, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(res.Loss) || math.IsInf(res.Loss, 0) || res.Loss < -4*math.Ln2 {
		t.Errorf("loss %v outside [−4 log 2, ∞)", res.Loss)
	}
	if len(res.Grads) != len(m.Params()) {
		t.Fatalf("%d gradients for %d parameters", len(res.Grads), len(m.Params()))
	}
	for i, g := range res.Grads {
		if len(g) != m.Params()[i].Value.DataSize() {
			t.Fatalf("%s: gradient of %d values", m.Params()[i].Name, len(g))
		}
	}
	emb, err := m.Embed("train", "encoder")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := m.Embed("train", "projection")
	if err != nil {
		t.Fatal(err)
	}
	if emb.N != 90 || emb.D != 8 || res.ProjDim != 8 || !slices.Equal(emb.Data, proj.Data) {
		t.Fatalf("embeddings %d×%d (projection equal: %v), step projections of width %d", emb.N, emb.D, slices.Equal(emb.Data, proj.Data), res.ProjDim)
	}
	for i, j := range idx {
		for k := 0; k < 8; k++ {
			a, b := res.Proj[i*8+k], emb.Data[j*8+k]
			if math.Abs(float64(a-b)) > 1e-4*math.Max(1, math.Abs(float64(b))) {
				t.Fatalf("graph %d: step projection %v, embedding %v", j, a, b)
			}
		}
	}
	if _, err := m.Step([]int{3}, nil); err == nil || !strings.Contains(err.Error(), "B >= 2") {
		t.Errorf("batch of one: err = %v", err)
	}
	if _, err := m.Embed("train", "key"); err == nil {
		t.Error("unknown representation: want an error")
	}
}

// runScored runs cfg into dir, uninterrupted, and checks that every run is
// scored by a positive svm_accuracy.
func runScored(t *testing.T, cfg Config, dir string) *Results {
	t.Helper()
	res, err := Run(context.Background(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if r.Metric != "svm_accuracy" || !(r.Value > 0) {
			t.Errorf("%s: %s %v", r.ID, r.Metric, r.Value)
		}
	}
	return res
}

// TestMVGRLRunAndResume trains MVGRL with Uniform, kNN and BatchSampler,
// interrupts the BatchSampler run mid-epoch, resumes it, and checks that
// the resumed experiment ends bit for bit where an uninterrupted one does:
// every logged loss, every score and every checkpointed parameter.
func TestMVGRLRunAndResume(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, append(slices.Clone(tinyMVGRL), "seeds=[0]",
		`samplers=[{kind: uniform}, {kind: knn, refresh_every: 2}, {kind: batchsampler, label: bs, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`)...)
	ref := t.TempDir()
	want := runScored(t, cfg, ref)
	dir := t.TempDir()
	interruptAt(t, cfg, dir, "bs-seed0", 5)
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := resultsOf(t, got), resultsOf(t, want); !maps.Equal(g, w) {
		t.Errorf("resumed %v, uninterrupted %v", g, w)
	}
	sameLosses(t, readLosses(t, ref), readLosses(t, dir))
	a := sameCheckpoints(t, ref, dir, "bs-seed0", nil)
	for _, name := range []string{"gnn1.layers.0.fc.weight", "gnn2.layers.1.act.weight", "mlp2.linear_shortcut.bias"} {
		if _, ok := a.Params[name]; !ok {
			t.Errorf("checkpoint lacks %s", name)
		}
	}
}

// TestMVGRLConfigRoundTrip: the written config.yaml of an mvgrl run keeps
// only the keys the method reads and parses back to the same config.
func TestMVGRLConfigRoundTrip(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "configs", "mvgrl-mutag.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteConfig(&b, &c); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"proj_dim", "list:", "drop_isolated", "pred_hidden", "projection:", "arch:"} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("written config has %q:\n%s", absent, b.String())
		}
	}
	c2, err := ParseConfig([]byte(b.String()), nil)
	if err != nil {
		t.Fatalf("written config does not parse: %v\n%s", err, b.String())
	}
	var b2 strings.Builder
	if err := WriteConfig(&b2, &c2); err != nil {
		t.Fatal(err)
	}
	if b.String() != b2.String() {
		t.Errorf("round trip changed the config:\n%s\nvs\n%s", b.String(), b2.String())
	}
}

// tinyMVGRLNCE is tinyMVGRL with the InfoNCE form of the local–global
// objective.
var tinyMVGRLNCE = []string{"method=mvgrl", "model={kind: gcn, hidden: 8, layers: 2}", "loss={kind: nce_local_global, temperature: 0.2}"}

// TestMVGRLNCEStep: with loss.kind nce_local_global a step's loss is the
// sum of the two directions' LocalGlobalNCE terms, each in (0, ∞) and
// near log B for an untrained model, not the JSD value.
func TestMVGRLNCEStep(t *testing.T) {
	idx := []int{5, 17, 3, 40, 41, 88}
	var losses [2]float64
	for i, sets := range [][]string{tinyMVGRL, tinyMVGRLNCE} {
		m := tinyMVGRLModels(t, 1, 1, sets...)[0]
		res, err := m.Step(idx, nil)
		if err != nil {
			t.Fatal(err)
		}
		losses[i] = res.Loss
	}
	if nce := losses[1]; !(nce > 0) || math.Abs(nce-2*math.Log(float64(len(idx)))) > 1 || nce == losses[0] {
		t.Errorf("nce_local_global step loss %v (jsd %v), want about 2 log %d = %.3f", nce, losses[0], len(idx), 2*math.Log(float64(len(idx))))
	}
}

// TestMVGRLNCETrainsAndResumes trains MVGRL with loss.kind
// nce_local_global, checks that the loss goes down (mean of the last epoch
// below the first's), then interrupts the BatchSampler run mid-epoch,
// resumes it, and checks that it ends bit for bit where an uninterrupted
// experiment does (as TestMVGRLRunAndResume does for jsd).
func TestMVGRLNCETrainsAndResumes(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, append(slices.Clone(tinyMVGRLNCE), "seeds=[0]", "train.epochs=8",
		`samplers=[{kind: uniform}, {kind: batchsampler, label: bs, m: 30, k: 5, alpha: 0.3, refresh_every: 2}]`)...)
	ref := t.TempDir()
	want := runScored(t, cfg, ref)
	for _, e := range want.Results {
		if e.Loss != loss.KindNCELocalGlobal {
			t.Errorf("%s: results loss %q", e.Sampler, e.Loss)
		}
	}
	losses := readLosses(t, ref)
	for run, steps := range losses {
		perEpoch := (len(steps) + 7) / 8 // 90 graphs, B = 32: 3 steps an epoch
		var first, last float64
		for s := 1; s <= perEpoch; s++ {
			first += steps[s]
			last += steps[len(steps)-perEpoch+s]
		}
		if len(steps) != 24 || !(last < first) {
			t.Errorf("%s: %d steps; first epoch's loss %v, last epoch's %v: not decreasing", run, len(steps), first/float64(perEpoch), last/float64(perEpoch))
		}
	}
	dir := t.TempDir()
	interruptAt(t, cfg, dir, "bs-seed0", 10)
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := resultsOf(t, got), resultsOf(t, want); !maps.Equal(g, w) {
		t.Errorf("resumed %v, uninterrupted %v", g, w)
	}
	sameLosses(t, losses, readLosses(t, dir))
	if a := sameCheckpoints(t, ref, dir, "bs-seed0", nil); len(a.Params) == 0 {
		t.Fatal("empty checkpoint")
	}
}

// tinyMVGRLModels builds n MVGRL models with the given seed on the tiny
// synthetic graphs with the config settings sets (one dataset load, so the
// models share its views).
func tinyMVGRLModels(t *testing.T, n int, seed uint64, sets ...string) []*mvgrlMethod {
	t.Helper()
	cfg := mustParse(t, tinySynthetic, sets...)
	ds, err := dataSpecs["graph"].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*mvgrlMethod, n)
	for i := range ms {
		m, err := newMVGRL(&cfg, ds, seed)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m.(*mvgrlMethod)
	}
	return ms
}

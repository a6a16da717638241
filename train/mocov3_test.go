package train

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/loss"
)

// tinyMoCo is MoCo v3 on tinyImages' generated set, heads sized for a test.
var tinyMoCo = []string{"method=mocov3", "model={kind: resnet, arch: resnet8, widths: [4, 8], blocks: [1, 1], proj_hidden: 16, proj_dim: 8, pred_hidden: 16}"}

func mocoMethod(t *testing.T, sets ...string) (*mocoV3, Config) {
	t.Helper()
	cfg := mustParse(t, tinyImages, append(slices.Clone(tinyMoCo), sets...)...)
	return mustMethod(t, &cfg).(*mocoV3), cfg
}

// TestMoCoV3Defaults: naming the method brings its recipe (loss form and
// τ, LARS with warm-up + cosine, heads, momentum, solarized views); the
// config file still overrides any of it.
func TestMoCoV3Defaults(t *testing.T) {
	cfg := mustParse(t, tinyImages, "method=mocov3", "model={kind: resnet, arch: resnet8}")
	if cfg.Loss.Form != loss.FormSimCSE || cfg.Loss.Temperature != 0.2 || cfg.Optim.Kind != "lars" || cfg.Optim.TrustCoefficient != 0.02 ||
		cfg.Model.ProjHidden != 1024 || cfg.Model.PredHidden != 1024 || cfg.Model.Momentum != 0.99 || cfg.Model.Projection != "query" || cfg.Augment.Image != "mocov3" {
		t.Errorf("mocov3 defaults not applied: loss %+v optim %+v model %+v augment %+v", cfg.Loss, cfg.Optim, cfg.Model, cfg.Augment)
	}
	cfg = mustParse(t, tinyImages, "method=mocov3", "model={kind: resnet, arch: resnet8, momentum: 0.9}", "loss.temperature=1", "optim.kind=adamw")
	if cfg.Model.Momentum != 0.9 || cfg.Loss.Temperature != 1 || cfg.Optim.Kind != "adamw" {
		t.Errorf("overrides lost: %+v %+v %+v", cfg.Model, cfg.Loss, cfg.Optim)
	}
	if plain := mustParse(t, tinyImages); plain.Loss.Form != loss.FormSimCLR || plain.Optim.Kind != "adam" {
		t.Errorf("simclr config picked up mocov3 defaults: %+v %+v", plain.Loss, plain.Optim)
	}
}

func TestMoCoV3ConfigErrors(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"loss.form=simclr", "loss.form"},
		{"model.projection=target", "model.projection"},
		{"model.momentum=1", "model.momentum"},
		{"model.pred_hidden=0", "model.pred_hidden"},
		{"augment.image=strong", "augment.image"},
		{"model.hidden=4", "model.hidden"},
	} {
		_, err := ParseConfig([]byte(tinyImages), append(slices.Clone(tinyMoCo), tc.set))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-set %s: error %v, want one naming %s", tc.set, err, tc.want)
		}
	}
}

// TestMoCoV3StepAndMomentumUpdate checks one step and one momentum update
// against independent computations: the momentum branch starts as a copy
// of the online one; the step's loss is loss.SymmetricValue on its own
// queries and keys (scale 2τ); every trainable parameter gets a gradient,
// the momentum copies none; AfterStep sets every momentum parameter to
// m·old + (1−m)·online with m = 1 − (1−0.99)(cos(π·3/10)+1)/2, computed
// here by hand in float64, and leaves the momentum branch's BatchNorm
// running statistics alone.
func TestMoCoV3StepAndMomentumUpdate(t *testing.T) {
	m, cfg := mocoMethod(t)
	for i := range m.online {
		if !slices.Equal(m.online[i].Value.Float32s(), m.momentum[i].Value.Float32s()) {
			t.Fatalf("%s: momentum copy differs at initialisation", m.online[i].Name)
		}
	}
	trainable := 0
	for _, p := range m.Params() {
		if p.Trainable {
			trainable++
			if strings.HasPrefix(p.Name, "momentum.") {
				t.Fatalf("%s is trainable", p.Name)
			}
		}
	}
	idx := []int{3, 1, 4, 15, 9, 26, 5, 35}
	res, err := m.Step(idx, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Grads) != trainable {
		t.Fatalf("%d gradients for %d trainable parameters", len(res.Grads), trainable)
	}
	for i, g := range res.Grads {
		if g == nil {
			t.Fatalf("gradient %d is nil: every online parameter is used", i)
		}
	}
	mg := m.graphs[len(idx)]
	q1 := mg.q[0].Value().Data().([]float32)
	q2 := mg.q[1].Value().Data().([]float32)
	want, _, _, err := loss.SymmetricValue(cfg.Loss, q1, q2, mg.keyIn[0].Float32s(), mg.keyIn[1].Float32s(), len(idx), cfg.Model.ProjDim, 2*cfg.Loss.Temperature)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Loss-want) > 1e-5*math.Max(1, math.Abs(want)) {
		t.Fatalf("step loss %v, SymmetricValue of its queries and keys %v", res.Loss, want)
	}
	if res.ProjDim != cfg.Model.ProjDim || !slices.Equal(res.Proj, q1) {
		t.Fatalf("Proj is not the first view's queries")
	}

	// An optimizer step moves the online parameters; then the EMA.
	old := make([][]float32, len(m.momentum))
	for i, p := range m.online {
		old[i] = slices.Clone(m.momentum[i].Value.Float32s())
		for k, v := range p.Value.Float32s() {
			p.Value.Float32s()[k] = v + 0.01*float32(k%7-3)
		}
	}
	var stats [][]float32
	for _, p := range m.mEnc.Params() {
		if !p.Trainable {
			stats = append(stats, slices.Clone(p.Value.Float32s()))
		}
	}
	if _, err := m.AfterStep(3, 10); err != nil {
		t.Fatal(err)
	}
	mom := 1 - 0.01*(math.Cos(0.3*math.Pi)+1)/2 // 0.99 → 1 on a cosine, step 3 of 10
	for i, p := range m.online {
		on, got := p.Value.Float32s(), m.momentum[i].Value.Float32s()
		for k := range got {
			w := float32(mom*float64(old[i][k]) + (1-mom)*float64(on[k]))
			if got[k] != w {
				t.Fatalf("%s[%d]: momentum %v, want %v·%v + (1−%v)·%v = %v", p.Name, k, got[k], mom, old[i][k], mom, on[k], w)
			}
		}
	}
	k := 0
	for _, p := range m.mEnc.Params() {
		if !p.Trainable {
			if !slices.Equal(p.Value.Float32s(), stats[k]) {
				t.Fatalf("%s: the EMA changed a running statistic", p.Name)
			}
			k++
		}
	}
}

// TestMoCoV3Embed checks the representations and that model.projection
// chooses which one the sampler reads.
func TestMoCoV3Embed(t *testing.T) {
	for _, proj := range []string{"query", "key"} {
		m, cfg := mocoMethod(t, "model.projection="+proj)
		n := m.ds.train.N
		for _, tc := range []struct {
			which string
			d     int
		}{{"encoder", 8}, {"query", 8}, {"key", 8}, {"projection", 8}} {
			e, err := m.Embed("train", tc.which)
			if err != nil {
				t.Fatal(err)
			}
			if e.N != n || e.D != tc.d || len(e.Data) != n*tc.d {
				t.Fatalf("%s: %d×%d (%d values), want %d×%d", tc.which, e.N, e.D, len(e.Data), n, tc.d)
			}
		}
		p, _ := m.Embed("test", "projection")
		w, _ := m.Embed("test", proj)
		if !slices.Equal(p.Data, w.Data) {
			t.Errorf("model.projection=%s: projection is not the %s embedding", proj, proj)
		}
		if _, err := m.Embed("train", "bag"); err == nil {
			t.Error("unknown representation: no error")
		}
		res, err := m.Step([]int{0, 1, 2, 3}, rand.New(rand.NewPCG(5, 6)))
		if err != nil {
			t.Fatal(err)
		}
		mg := m.graphs[4]
		src := mg.q[0].Value().Data().([]float32)
		if proj == "key" {
			src = mg.keyIn[0].Float32s()
		}
		if !slices.Equal(res.Proj, src) {
			t.Errorf("model.projection=%s: the step's Proj is not the first view's %s", proj, proj)
		}
		_ = cfg
	}
}

// TestMoCoV3RunAndResume trains MoCo v3 with Uniform and BatchSampler,
// interrupts it mid-run, resumes, and checks that the resumed run ends bit
// for bit where an uninterrupted one does (losses and scores), that the
// checkpoint holds the momentum encoder, and that the logged momenta
// follow the schedule.
func TestMoCoV3RunAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("image training run: skipped with -short")
	}
	cfg := mustParse(t, tinyImages, tinyMoCo...)
	ref := t.TempDir()
	want, err := Run(context.Background(), cfg, Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	res := resultsOf(t, want)
	for run, v := range res {
		if !(v > 25 && v <= 100) {
			t.Errorf("%s: linear probe accuracy %v%%, want in (25, 100]", run, v)
		}
	}
	moms := loggedMomenta(t, ref, "uniform-seed0")
	total := len(readLosses(t, ref)["uniform-seed0"])
	if len(moms) != total {
		t.Fatalf("%d momentum records for %d steps", len(moms), total)
	}
	for s, m := range moms {
		if w := 1 - 0.01*(math.Cos(math.Pi*float64(s)/float64(total))+1)/2; math.Abs(m-w) > 1e-15 {
			t.Errorf("step %d: momentum %v, want %v", s, m, w)
		}
	}

	dir := t.TempDir()
	interruptAt(t, cfg, dir, "bs-seed0", 7)
	c, err := loadCheckpoint(filepath.Join(dir, "runs", "bs-seed0", "checkpoint.gob"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Params["momentum.conv1.weight"]; !ok {
		t.Fatalf("checkpoint lacks the momentum encoder")
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g := resultsOf(t, got); !maps.Equal(g, res) {
		t.Errorf("resumed results %v, uninterrupted %v", g, res)
	}
	sameLosses(t, readLosses(t, ref), readLosses(t, dir))
	sameCheckpoints(t, ref, dir, "bs-seed0", func(name string) bool { return strings.HasPrefix(name, "momentum.") })
}

// loggedMomenta reads a run's "momentum" records, indexed by step.
func loggedMomenta(t *testing.T, dir, run string) map[int]float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "runs", run, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] == "momentum" {
			out[int(m["step"].(float64))] = m["momentum"].(float64)
		}
	}
	return out
}

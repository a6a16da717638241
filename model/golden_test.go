package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/loss"
	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// updateGolden rewrites the golden file of this platform
// (go test ./model -run TestGoldenBits -update-golden).
var updateGolden = flag.Bool("update-golden", false, "rewrite model/testdata/golden-GOARCH-BACKEND.txt")

// golden records named values as SHA-256 digests of their exact bits, and
// the signatures of the ops of whole graphs, so that a refactor can be
// checked to leave every float and every op (hash, type, arity) unchanged.
type golden struct {
	t     *testing.T
	lines []string
	ops   map[string]string // the signature text behind each ops.* record
}

func (r *golden) add(name string, b []byte) {
	s := sha256.Sum256(b)
	r.lines = append(r.lines, name+" "+hex.EncodeToString(s[:]))
}

func (r *golden) f32(name string, v []float32) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	r.add(fmt.Sprintf("%s[f32×%d]", name, len(v)), b)
}

func (r *golden) f64(name string, v []float64) {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	r.add(fmt.Sprintf("%s[f64×%d]", name, len(v)), b)
}

func (r *golden) value(name string, v gorgonia.Value) {
	r.t.Helper()
	switch d := v.Data().(type) {
	case []float32:
		r.f32(name, d)
	case []float64:
		r.f64(name, d)
	case float32:
		r.f32(name, []float32{d})
	case float64:
		r.f64(name, []float64{d})
	default:
		r.t.Fatalf("%s: value of type %T", name, d)
	}
}

func (r *golden) grads(name string, gs [][]float32) {
	for i, g := range gs {
		r.f32(fmt.Sprintf("%s.grad%d", name, i), g)
	}
}

func (r *golden) params(name string, ps []*Param) {
	for _, p := range ps {
		r.value(name+"."+p.Name, p.Value)
	}
}

var bnID = regexp.MustCompile(`id=\d+`)

// graph records, for every op node of g in order, its op's String,
// WriteHash bytes, arity, type and flags, its shape and its children
// (BatchNorm ids, which depend on how many ops the process built before,
// are renumbered by first appearance). It also checks that every op of
// this module hashes to the FNV-1a hash of its WriteHash bytes.
func (r *golden) graph(name string, g *gorgonia.ExprGraph) {
	r.t.Helper()
	ids := map[string]string{}
	norm := func(s string) string {
		return bnID.ReplaceAllStringFunc(s, func(m string) string {
			if _, ok := ids[m]; !ok {
				ids[m] = fmt.Sprintf("id=#%d", len(ids))
			}
			return ids[m]
		})
	}
	var sb strings.Builder
	for _, n := range g.AllNodes() {
		op := n.Op()
		if op == nil {
			fmt.Fprintf(&sb, "%d input %v %v\n", n.ID(), n.Shape(), n.Dtype())
			continue
		}
		var hb bufHash
		op.WriteHash(&hb)
		h := fnv.New32a()
		op.WriteHash(h)
		t := reflect.TypeOf(op)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if strings.Contains(t.PkgPath(), "batchsampler") && op.Hashcode() != h.Sum32() {
			r.t.Errorf("%s: op %v: Hashcode %x, FNV-1a of WriteHash %x", name, op, op.Hashcode(), h.Sum32())
		}
		var kids []int64
		for it := g.From(n.ID()); it.Next(); {
			kids = append(kids, it.Node().ID())
		}
		fmt.Fprintf(&sb, "%d %s | hash=%q | arity=%d | type=%v | ptr=%t extern=%t overwrites=%d | shape=%v | children=%v\n",
			n.ID(), norm(op.String()), norm(hb.String()), op.Arity(), op.Type(), op.ReturnsPtr(), op.CallsExtern(), op.OverwritesInput(), n.Shape(), kids)
	}
	r.add("ops."+name, []byte(sb.String()))
	if r.ops == nil {
		r.ops = map[string]string{}
	}
	r.ops["ops."+name] = sb.String()
}

// bufHash is a hash.Hash that keeps what is written.
type bufHash struct{ bytes.Buffer }

func (h *bufHash) Sum(b []byte) []byte { return b }
func (h *bufHash) Size() int           { return 0 }
func (h *bufHash) BlockSize() int      { return 1 }

// check compares the records with the golden file of this platform (the
// architecture and the GEMM kernels decide the rounding), or writes it with
// -update-golden; without a golden file the test is skipped.
func (r *golden) check() {
	r.t.Helper()
	got := strings.Join(r.lines, "\n") + "\n"
	path := filepath.Join("testdata", fmt.Sprintf("golden-%s-%s.txt", runtime.GOARCH, gemm.Backend()))
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			r.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		r.t.Skipf("no %s for this platform (create it with -update-golden on a known-good commit)", path)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	if len(wl) != len(r.lines) {
		r.t.Errorf("%d golden records, want %d", len(r.lines), len(wl))
	}
	for i := 0; i < min(len(wl), len(r.lines)); i++ {
		if wl[i] == r.lines[i] {
			continue
		}
		r.t.Errorf("record %d:\n got %s\nwant %s", i, r.lines[i], wl[i])
		name := strings.SplitN(r.lines[i], " ", 2)[0]
		if text, ok := r.ops[name]; ok {
			f := filepath.Join(r.t.TempDir(), name+".txt")
			if os.WriteFile(f, []byte(text), 0o644) == nil {
				r.t.Logf("the op signatures of %s are in %s", name, f)
			}
		}
	}
}

// embedded returns a function that passes on an embedding and fails t
// on an error, for r.f32(name, embedded(t)(m.Embed(batch))).
func embedded(t *testing.T) func([]float32, error) []float32 {
	return func(e []float32, err error) []float32 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}

// contrastiveStep builds the default loss of kind on the two projections,
// runs the backward pass of g and records under name the loss, the
// projections and the gradients grads returns. It returns the gradients
// and the machine that ran, for the caller to close when done with g.
func (r *golden) contrastiveStep(t *testing.T, name, kind string, g *gorgonia.ExprGraph, projs []*gorgonia.Node, learnables gorgonia.Nodes, grads func() ([][]float32, error)) ([][]float32, gorgonia.VM) {
	t.Helper()
	l, err := loss.Build(loss.Default(kind), projs[0], projs[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gorgonia.Grad(l, learnables...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	r.value(name+".loss", l.Value())
	for i, p := range projs {
		r.value(fmt.Sprintf("%s.proj%d", name, i), p.Value())
	}
	gs, err := grads()
	if err != nil {
		t.Fatal(err)
	}
	r.grads(name, gs)
	return gs, vm
}

// TestGoldenBits runs fixed-seed training steps of every model (GIN in
// each Linear mode, float32 and float64, training and evaluation mode;
// ResNet-8 on a compiled graph run twice with output reuse; the text MLP
// with both embedding-bag modes) and a small graph of the remaining ops,
// and checks the losses, values, gradients, updated parameters and
// running statistics, bit for bit, and the signatures of all graph ops
// against testdata/golden-GOARCH-BACKEND.txt (see check).
func TestGoldenBits(t *testing.T) {
	r := &golden{t: t}
	goldenGIN(t, r)
	goldenResNet(t, r)
	goldenText(t, r)
	goldenOps(t, r)
	r.check()
}

func goldenGIN(t *testing.T, r *golden) {
	for _, tc := range []struct {
		name    string
		mode    linearMode
		f64     bool
		train   bool
		perturb bool
	}{
		{"gin.fused", linearFused, false, true, false},
		{"gin.biasact", linearBiasAct, false, true, false},
		{"gin.gorgonia", linearGorgonia, false, true, false},
		{"gin.f64", linearFused, true, true, true},
		{"gin.eval", linearFused, false, false, true},
	} {
		m, err := NewGIN(GINConfig{InDim: 5, Hidden: 6, Layers: 3, ProjDim: 7, Float64: tc.f64}, 42)
		if err != nil {
			t.Fatal(err)
		}
		if tc.perturb {
			perturbModel(m, 43)
		}
		v1, v2 := smallBatch(t, 1, 5), smallBatch(t, 2, 5)
		g := gorgonia.NewGraph()
		b := m.Bind(g)
		b.mode = tc.mode
		var projs []*gorgonia.Node
		for _, v := range []*GraphBatch{v1, v2} {
			e, err := b.Encode(v, tc.train)
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.Project(e)
			if err != nil {
				t.Fatal(err)
			}
			projs = append(projs, p)
		}
		gs, vm := r.contrastiveStep(t, tc.name, "graph", g, projs, b.Learnables(), b.Grads)
		if tc.f64 {
			for i, n := range b.Learnables() {
				gv, err := n.Grad()
				if err != nil {
					t.Fatal(err)
				}
				r.value(fmt.Sprintf("%s.grad64.%d", tc.name, i), gv)
			}
		}
		if tc.train {
			if err := b.CommitStats(); err != nil {
				t.Fatal(err)
			}
		}
		if !tc.f64 {
			if err := newAdam(1e-3, m.Params()).Step(gs); err != nil {
				t.Fatal(err)
			}
		}
		r.params(tc.name+".after", m.Params())
		r.graph(tc.name, g)
		vm.Close()
		if !tc.f64 {
			r.f32(tc.name+".embed", embedded(t)(m.Embed(v1)))
			r.f32(tc.name+".embedproj", embedded(t)(m.EmbedProjected(v2)))
		}
	}
}

func goldenResNet(t *testing.T, r *golden) {
	for _, reuse := range []bool{false, true} {
		name := fmt.Sprintf("resnet8.reuse%t", reuse)
		prev := ops.SetOutputReuse(reuse)
		cfg, err := ResNetPreset("resnet8")
		if err != nil {
			t.Fatal(err)
		}
		cfg.ProjDim = 16
		m, err := NewResNet(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		const n, h, w = 4, 8, 8
		g := gorgonia.NewGraph()
		b := m.Bind(g)
		var xs []*tensor.Dense
		var projs []*gorgonia.Node
		for v := 0; v < 2; v++ {
			x, xv := b.Input(n, h, w)
			xs = append(xs, xv)
			e, err := b.Encode(x, true)
			if err != nil {
				t.Fatal(err)
			}
			p, err := b.Project(e)
			if err != nil {
				t.Fatal(err)
			}
			projs = append(projs, p)
		}
		l, err := loss.Build(loss.Default("image"), projs[0], projs[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gorgonia.Grad(l, b.Learnables()...); err != nil {
			t.Fatal(err)
		}
		vm := gorgonia.NewTapeMachine(g)
		rng := rand.New(rand.NewPCG(77, 1))
		adam := newAdam(1e-2, m.Params())
		var gs [][]float32
		for step := 0; step < 2; step++ {
			for _, xv := range xs {
				for i := range xv.Float32s() {
					xv.Float32s()[i] = float32(rng.NormFloat64())
				}
			}
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			s := fmt.Sprintf("%s.step%d", name, step)
			r.value(s+".loss", l.Value())
			for i, p := range projs {
				r.value(fmt.Sprintf("%s.proj%d", s, i), p.Value())
			}
			if gs, err = b.Grads(gs); err != nil {
				t.Fatal(err)
			}
			r.grads(s, gs)
			if err := b.CommitStats(); err != nil {
				t.Fatal(err)
			}
			if err := adam.Step(gs); err != nil {
				t.Fatal(err)
			}
			r.params(s+".after", m.Params())
			vm.Reset()
		}
		r.graph(name, g)
		vm.Close()
		pix := make([]float32, 5*3*h*w)
		for i := range pix {
			pix[i] = float32(rng.NormFloat64())
		}
		emb, proj, err := m.EmbedImages(pix, 5, h, w, 3)
		if err != nil {
			t.Fatal(err)
		}
		r.f32(name+".embedimages.emb", emb)
		r.f32(name+".embedimages.proj", proj)
		ops.SetOutputReuse(prev)
	}

	// float64: a tiny two-stage ResNet, one training-mode forward and backward.
	m := tinyResNet(t, true)
	const n = 3
	rng := rand.New(rand.NewPCG(11, 12))
	x := randomImages(rng, n*2*6*5)
	rr := randomImages(rng, n*m.ProjDim())
	g, obj, b := resnetObjective(t, m, x, n, rr)
	if _, err := gorgonia.Grad(obj, b.Learnables()...); err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	r.value("resnet.f64.obj", obj.Value())
	for i, ln := range b.Learnables() {
		gv, err := ln.Grad()
		if err != nil {
			t.Fatal(err)
		}
		r.value(fmt.Sprintf("resnet.f64.grad%d", i), gv)
	}
	if err := b.CommitStats(); err != nil {
		t.Fatal(err)
	}
	r.params("resnet.f64.after", m.Params())
	r.graph("resnet.f64", g)
}

func goldenText(t *testing.T, r *golden) {
	for _, tc := range []struct {
		name string
		cfg  TextConfig
		mode bagMode
	}{
		{"text.extras", textExtras(true, false), bagScatter},
		{"text.frozen", TextConfig{}, bagScatter},
		{"text.spmm", TextConfig{TrainEmbeddings: true}, bagSpMM},
		{"text.residual", TextConfig{TrainEmbeddings: true, Residual: true, InputDropout: 0.2}, bagScatter},
		{"text.f64", textExtras(true, true), bagScatter},
	} {
		m := smallTextWith(t, tc.cfg, 13)
		g := gorgonia.NewGraph()
		b := m.Bind(g)
		b.mode = tc.mode
		rng := rand.New(rand.NewPCG(14, 2))
		views, err := b.EncodeViews(textBatch, 2, true, rng)
		if err != nil {
			t.Fatal(err)
		}
		var projs []*gorgonia.Node
		for _, e := range views {
			p, err := b.Project(e)
			if err != nil {
				t.Fatal(err)
			}
			projs = append(projs, p)
		}
		gs, vm := r.contrastiveStep(t, tc.name, "text", g, projs, b.Learnables(), b.Grads)
		if !tc.cfg.Float64 {
			if err := newAdam(1e-2, m.Params()).Step(gs); err != nil {
				t.Fatal(err)
			}
		}
		r.params(tc.name+".after", m.Params())
		r.graph(tc.name, g)
		vm.Close()
		if !tc.cfg.Float64 {
			r.f32(tc.name+".embed", embedded(t)(m.Embed(textBatch)))
			r.f32(tc.name+".embedproj", embedded(t)(m.EmbedProjected(textBatch)))
			r.f32(tc.name+".embedbag", embedded(t)(m.EmbedBag(textBatch)))
		}
	}
}

// goldenOps runs the ops no model uses in its default configuration
// (ReLU, BiasAct without ReLU, ColSum and its gradient), in float32 and
// float64.
func goldenOps(t *testing.T, r *golden) {
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		name := fmt.Sprintf("ops.%v", dt)
		rng := rand.New(rand.NewPCG(21, 3))
		val := func(shape ...int) *tensor.Dense {
			d := tensor.New(tensor.Of(dt), tensor.WithShape(shape...))
			for i := 0; i < d.DataSize(); i++ {
				v := rng.NormFloat64()
				if dt == tensor.Float32 {
					d.Float32s()[i] = float32(v)
				} else {
					d.Float64s()[i] = v
				}
			}
			return d
		}
		g := gorgonia.NewGraph()
		x := gorgonia.NewMatrix(g, dt, gorgonia.WithShape(6, 4), gorgonia.WithName("x"), gorgonia.WithValue(val(6, 4)))
		bias := gorgonia.NewVector(g, dt, gorgonia.WithShape(4), gorgonia.WithName("b"), gorgonia.WithValue(val(4)))
		rv := gorgonia.NewVector(g, dt, gorgonia.WithShape(4), gorgonia.WithName("r"), gorgonia.WithValue(val(4)))
		y, err := ops.ReLU(x)
		if err != nil {
			t.Fatal(err)
		}
		if y, err = ops.BiasAct(y, bias, false); err != nil {
			t.Fatal(err)
		}
		y2, err := ops.BiasAct(x, bias, true)
		if err != nil {
			t.Fatal(err)
		}
		if y, err = gorgonia.Add(y, y2); err != nil {
			t.Fatal(err)
		}
		s, err := ops.ColSum(y)
		if err != nil {
			t.Fatal(err)
		}
		obj := gorgonia.Must(gorgonia.Sum(gorgonia.Must(gorgonia.HadamardProd(s, rv))))
		if _, err := gorgonia.Grad(obj, x, bias); err != nil {
			t.Fatal(err)
		}
		vm := gorgonia.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		r.value(name+".obj", obj.Value())
		r.value(name+".colsum", s.Value())
		for _, n := range []*gorgonia.Node{x, bias} {
			gv, err := n.Grad()
			if err != nil {
				t.Fatal(err)
			}
			r.value(name+".grad."+n.Name(), gv)
		}
		r.graph(name, g)
		vm.Close()
	}
}

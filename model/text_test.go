package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// textRef is an independent float64 forward of a TextMLP from a copy of
// its parameters: bag mean → ReLU(x·W1+b1) ⊙ mask → ·W2+b2 → head.
type textRef struct {
	v, d, h, p int
	w          [][]float64 // parameters in Params order
	weights    []float64   // per word id; nil = 1
	remove     [][]float64 // directions projected out of the bag
	residual   bool
}

func newTextRef(m *TextMLP) *textRef {
	r := &textRef{v: m.cfg.VocabSize, d: m.cfg.EmbDim, h: m.cfg.Hidden, p: m.cfg.ProjDim, residual: m.cfg.Residual}
	for _, p := range m.params {
		r.w = append(r.w, floats64(p.Value))
	}
	for _, w := range m.cfg.WordWeights {
		r.weights = append(r.weights, float64(w))
	}
	for c := 0; c < len(m.cfg.Remove); c += r.d {
		r.remove = append(r.remove, f64s(m.cfg.Remove[c:c+r.d]))
	}
	return r
}

// bag is the weighted mean of the known tokens' rows, minus its components
// along the removed directions (computed together from the original bag,
// which equals one after the other for orthonormal directions).
func (r *textRef) bag(batch [][]int32) []float64 {
	x := make([]float64, len(batch)*r.d)
	for i, s := range batch {
		row := x[i*r.d : (i+1)*r.d]
		tot := 0.0
		for _, id := range s {
			if id != 0 {
				tot += r.weight(id)
			}
		}
		if tot == 0 {
			continue
		}
		for _, id := range s {
			if id == 0 {
				continue
			}
			for j := range row {
				row[j] += r.weight(id) / tot * r.w[tEmb][int(id)*r.d+j]
			}
		}
		dots := make([]float64, len(r.remove))
		for c, u := range r.remove {
			for j := range row {
				dots[c] += row[j] * u[j]
			}
		}
		for c, u := range r.remove {
			for j := range row {
				row[j] -= dots[c] * u[j]
			}
		}
	}
	return x
}

func (r *textRef) weight(id int32) float64 {
	if r.weights == nil {
		return 1
	}
	return r.weights[id]
}

func textRefLinear(x []float64, n, in int, w, b []float64, out int, relu bool) []float64 {
	y := make([]float64, n*out)
	for i := 0; i < n; i++ {
		for j := 0; j < out; j++ {
			s := b[j]
			for k := 0; k < in; k++ {
				s += x[i*in+k] * w[k*out+j]
			}
			if relu && s < 0 {
				s = 0
			}
			y[i*out+j] = s
		}
	}
	return y
}

// forward returns the embeddings and projections; mask nil = eval mode.
func (r *textRef) forward(batch [][]int32, mask []float64) (emb, proj []float64) {
	return r.forwardIn(batch, nil, mask)
}

// forwardIn is forward with a bag dropout mask inMask (nil: none).
func (r *textRef) forwardIn(batch [][]int32, inMask, mask []float64) (emb, proj []float64) {
	n := len(batch)
	x := r.bag(batch)
	for i := range inMask {
		x[i] *= inMask[i]
	}
	hid := textRefLinear(x, n, r.d, r.w[tW1], r.w[tB1], r.h, true)
	if mask != nil {
		for i := range hid {
			hid[i] *= mask[i]
		}
	}
	emb = textRefLinear(hid, n, r.h, r.w[tW2], r.w[tB2], r.h, false)
	if r.residual {
		for i := range emb {
			emb[i] += x[i]
		}
	}
	q := textRefLinear(emb, n, r.h, r.w[tPW1], r.w[tPB1], r.p, true)
	proj = textRefLinear(q, n, r.p, r.w[tPW2], r.w[tPB2], r.p, false)
	return emb, proj
}

var textBatch = [][]int32{
	{1, 2, 3},
	{4, 0, 4, 5}, // an unknown token and a repeated one
	{0, 0},       // nothing known: the zero bag
	{6},
	{2, 6, 1, 0, 3},
}

func smallText(t *testing.T, train, f64 bool, seed uint64) *TextMLP {
	t.Helper()
	return smallTextWith(t, TextConfig{TrainEmbeddings: train, Float64: f64}, seed)
}

// smallTextWith builds the small test model (vocabulary 7, EmbDim 4,
// Hidden 5, ProjDim 3, Dropout 0.3, seeded random vectors) with the other
// options of extra.
func smallTextWith(t *testing.T, extra TextConfig, seed uint64) *TextMLP {
	t.Helper()
	vec := make([]float32, 7*4)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range vec {
		vec[i] = float32(r.NormFloat64())
	}
	cfg := extra
	cfg.VocabSize, cfg.EmbDim, cfg.Vectors, cfg.Hidden, cfg.ProjDim, cfg.Dropout = 7, 4, vec, 5, 3, 0.3
	if cfg.Residual {
		cfg.Hidden = 4
	}
	m, err := NewTextMLP(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// textExtras are SIF-like word weights (one zero weight, so that a
// sentence of only that word has the zero bag), two orthonormal removed
// directions, word dropout and bag dropout.
func textExtras(train, f64 bool) TextConfig {
	s := 1 / math.Sqrt(2)
	return TextConfig{
		TrainEmbeddings: train, Float64: f64,
		WordWeights: []float32{1, 0.5, 2, 0.25, 1, 0, 3},
		Remove:      []float32{float32(s), float32(s), 0, 0, 0, 0, 0.6, 0.8},
		WordDropout: 0.4, InputDropout: 0.2,
	}
}

func values64(t *testing.T, n *gorgonia.Node) []float64 {
	t.Helper()
	switch v := n.Value().Data().(type) {
	case []float64:
		return v
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	t.Fatalf("unexpected value %T", n.Value().Data())
	return nil
}

// textLoss builds Σ proj1⊙R1 + Σ proj2⊙R2 for two training views.
func textLoss(t *testing.T, m *TextMLP, g *gorgonia.ExprGraph, seed uint64, r1, r2 []float64, shared bool, mode bagMode) (*TextBound, [2]*gorgonia.Node, [2]*gorgonia.Node, *gorgonia.Node) {
	t.Helper()
	b := m.Bind(g)
	b.mode = mode
	rng := rand.New(rand.NewPCG(seed, 2))
	var emb, proj [2]*gorgonia.Node
	var terms []*gorgonia.Node
	var views []*gorgonia.Node
	if shared {
		var err error
		if views, err = b.EncodeViews(textBatch, 2, true, rng); err != nil {
			t.Fatal(err)
		}
	}
	for v, rv := range [][]float64{r1, r2} {
		var e *gorgonia.Node
		var err error
		if shared {
			e = views[v]
		} else if e, err = b.Encode(textBatch, true, rng); err != nil {
			t.Fatal(err)
		}
		p, err := b.Project(e)
		if err != nil {
			t.Fatal(err)
		}
		emb[v], proj[v] = e, p
		rn := gorgonia.NewMatrix(g, tensor.Float64, gorgonia.WithShape(p.Shape()...), gorgonia.WithName(fmt.Sprintf("r%d", v)), gorgonia.WithValue(tensor.New(tensor.WithShape(p.Shape()...), tensor.WithBacking(rv))))
		hp, err := gorgonia.HadamardProd(p, rn)
		if err != nil {
			t.Fatal(err)
		}
		s, err := gorgonia.Sum(hp)
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, s)
	}
	l, err := gorgonia.Add(terms[0], terms[1])
	if err != nil {
		t.Fatal(err)
	}
	return b, emb, proj, l
}

func TestTextForwardAndGradient(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		train, shared, extras, residual bool
		mode                            bagMode
	}{
		{"trainable table, scatter", true, false, false, false, bagScatter},
		{"trainable table, scatter, EncodeViews", true, true, false, false, bagScatter},
		{"trainable table, SpMM", true, false, false, false, bagSpMM},
		{"trainable table, SpMM, EncodeViews", true, true, false, false, bagSpMM},
		{"frozen table", false, false, false, false, bagScatter},
		{"frozen table, EncodeViews", false, true, false, false, bagScatter},
		{"weights, removal, word and bag dropout, trainable table", true, false, true, false, bagScatter},
		{"weights, removal, word and bag dropout, trainable table, EncodeViews", true, true, true, false, bagScatter},
		{"weights, removal, word and bag dropout, frozen table, EncodeViews", false, true, true, false, bagScatter},
		{"residual, trainable table, SpMM", true, false, false, true, bagSpMM},
		{"residual, weights, removal, word and bag dropout, trainable table, EncodeViews", true, true, true, true, bagScatter},
		{"residual, weights, removal, word and bag dropout, frozen table", false, false, true, true, bagScatter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := TextConfig{TrainEmbeddings: tc.train, Float64: true}
			if tc.extras {
				extra = textExtras(tc.train, true)
			}
			extra.Residual = tc.residual
			m := smallTextWith(t, extra, 5)
			if tc.residual {
				// mlp.3 starts at zero; give it values so that the gradients
				// of the layers below it are not trivially zero.
				wr := rand.New(rand.NewPCG(6, 6))
				fill(m.params[tW2].Value, func() float64 { return wr.NormFloat64() })
				fill(m.params[tB2].Value, func() float64 { return wr.NormFloat64() })
			}
			n, p := len(textBatch), m.cfg.ProjDim
			rr := rand.New(rand.NewPCG(9, 9))
			r1, r2 := make([]float64, n*p), make([]float64, n*p)
			for i := range r1 {
				r1[i], r2[i] = rr.NormFloat64(), rr.NormFloat64()
			}
			g := gorgonia.NewGraph()
			b, emb, proj, l := textLoss(t, m, g, 3, r1, r2, tc.shared, tc.mode)
			if _, err := gorgonia.Grad(l, b.Learnables()...); err != nil {
				t.Fatal(err)
			}
			vm := gorgonia.NewTapeMachine(g)
			defer vm.Close()
			if err := vm.RunAll(); err != nil {
				t.Fatal(err)
			}
			// The masks and dropped words are the ones DropWords and
			// DropoutMask draw from the same seed, in the documented order:
			// per view, word dropout, bag mask, hidden mask.
			mrng := rand.New(rand.NewPCG(3, 2))
			var masks, inMasks [][]float64
			var views [][][]int32
			for range 2 {
				vb, in := textBatch, []float64(nil)
				if tc.extras {
					vb = DropWords(mrng, textBatch, 0.4)
					in = DropoutMask(mrng, n*m.cfg.EmbDim, 0.2)
				}
				views, inMasks = append(views, vb), append(inMasks, in)
				masks = append(masks, DropoutMask(mrng, n*m.cfg.Hidden, 0.3))
			}
			if len(b.Masks()) != 2 {
				t.Fatalf("%d masks recorded, want 2", len(b.Masks()))
			}
			if tc.extras && (len(b.InputMasks()) != 2 || len(b.ViewBatches()) != 2) {
				t.Fatalf("%d bag masks and %d view batches recorded, want 2 each", len(b.InputMasks()), len(b.ViewBatches()))
			}
			ref := newTextRef(m)
			lossOf := func(ref *textRef) float64 {
				s := 0.0
				for v, rv := range [][]float64{r1, r2} {
					_, pr := ref.forwardIn(views[v], inMasks[v], masks[v])
					for i := range pr {
						s += pr[i] * rv[i]
					}
				}
				return s
			}
			for v := range 2 {
				for i, x := range b.Masks()[v] {
					if x != masks[v][i] {
						t.Fatalf("view %d mask[%d] = %v, reference %v", v, i, x, masks[v][i])
					}
				}
				if tc.extras {
					for i, x := range b.InputMasks()[v] {
						if x != inMasks[v][i] {
							t.Fatalf("view %d bag mask[%d] = %v, reference %v", v, i, x, inMasks[v][i])
						}
					}
					if fmt.Sprint(b.ViewBatches()[v]) != fmt.Sprint(views[v]) {
						t.Fatalf("view %d bagged %v, reference %v", v, b.ViewBatches()[v], views[v])
					}
				}
				we, wp := ref.forwardIn(views[v], inMasks[v], masks[v])
				closeAll(t, "embedding", values64(t, emb[v]), we, 1e-12)
				closeAll(t, "projection", values64(t, proj[v]), wp, 1e-12)
			}
			grads, err := b.Grads()
			if err != nil {
				t.Fatal(err)
			}
			gi := 0
			for pi, prm := range m.params {
				if !prm.Trainable {
					continue
				}
				gr := grads[gi]
				gi++
				// Read the float64 gradient (Grads rounds to float32).
				var g64 []float64
				if pi == tEmb && tc.mode == bagScatter {
					dxs, err := b.bagGrads()
					if err != nil {
						t.Fatal(err)
					}
					g64 = make([]float64, len(gr))
					for k, c := range b.bags {
						scatterBag(m, g64, c.batch, dxs[k], nil)
					}
				} else {
					gv, err := b.nodes[pi].Grad()
					if err != nil {
						t.Fatal(err)
					}
					g64 = gv.Data().([]float64)
				}
				for k := range g64 {
					if math.Abs(float64(gr[k])-g64[k]) > 1e-5*(1+math.Abs(g64[k])) {
						t.Fatalf("%s[%d]: Grads %v, float64 gradient %v", prm.Name, k, gr[k], g64[k])
					}
				}
				if len(gr) != len(g64) {
					t.Fatalf("%s: %d grads", prm.Name, len(gr))
				}
				for k := range g64 {
					const eps = 1e-6
					orig := ref.w[pi][k]
					ref.w[pi][k] = orig + eps
					lp := lossOf(ref)
					ref.w[pi][k] = orig - eps
					lm := lossOf(ref)
					ref.w[pi][k] = orig
					fd := (lp - lm) / (2 * eps)
					if math.Abs(fd-g64[k]) > 1e-6*(1+math.Abs(fd)) {
						t.Errorf("%s[%d]: gradient %v, finite difference %v", prm.Name, k, g64[k], fd)
					}
				}
				if pi == tEmb {
					// Rows of tokens no view uses (or of zero weight) get no
					// gradient, and TableRows lists exactly the used ones.
					used := map[int32]bool{}
					for _, vb := range views {
						for _, s := range vb {
							for _, id := range s {
								used[id] = ref.weight(id) > 0
							}
						}
					}
					if tc.mode == bagScatter {
						var want []int32
						for id := int32(1); id < 7; id++ {
							if used[id] {
								want = append(want, id)
							}
						}
						if fmt.Sprint(m.TableRows()) != fmt.Sprint(want) {
							t.Errorf("TableRows %v, want %v", m.TableRows(), want)
						}
					}
					for id := int32(0); id < 7; id++ {
						if used[id] && id != 0 {
							continue
						}
						for j := 0; j < 4; j++ {
							if g64[int(id)*4+j] != 0 {
								t.Errorf("embedding row %d (unused or <unk>) has gradient %v", id, g64[int(id)*4+j])
							}
						}
					}
				}
			}
			if gi != len(grads) {
				t.Fatalf("%d grads for %d trainable params", len(grads), gi)
			}
		})
	}
}

func closeAll(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestTextDropoutMasks(t *testing.T) {
	masksOf := func(seed uint64) [][]float64 {
		m := smallText(t, true, false, 1)
		b := m.Bind(gorgonia.NewGraph())
		rng := rand.New(rand.NewPCG(seed, 0))
		for range 2 {
			if _, err := b.Encode(textBatch, true, rng); err != nil {
				t.Fatal(err)
			}
		}
		return b.Masks()
	}
	a, again, other := masksOf(1), masksOf(1), masksOf(2)
	differ := func(x, y []float64) bool {
		for i := range x {
			if x[i] != y[i] {
				return true
			}
		}
		return false
	}
	if !differ(a[0], a[1]) {
		t.Error("the two views have the same dropout mask")
	}
	if differ(a[0], again[0]) || differ(a[1], again[1]) {
		t.Error("the same seed gave different masks")
	}
	if !differ(a[0], other[0]) {
		t.Error("different seeds gave the same mask")
	}
	// Values and rate: 0 or 1/(1−p), zero with probability p.
	const p, n = 0.3, 200000
	mk := DropoutMask(rand.New(rand.NewPCG(7, 7)), n, p)
	zeros := 0
	for _, v := range mk {
		switch v {
		case 0:
			zeros++
		case 1 / (1 - p):
		default:
			t.Fatalf("mask value %v, want 0 or %v", v, 1/(1-p))
		}
	}
	rate := float64(zeros) / n
	if sd := math.Sqrt(p * (1 - p) / n); math.Abs(rate-p) > 5*sd {
		t.Errorf("zero rate %v, want %v ± %v", rate, p, 5*sd)
	}
}

func TestTextEvalModeAndEmbed(t *testing.T) {
	residual := textExtras(true, false)
	residual.Residual = true
	for _, cfg := range []TextConfig{{TrainEmbeddings: true}, {}, textExtras(false, false), residual} {
		m := smallTextWith(t, cfg, 11)
		if cfg.Residual {
			wr := rand.New(rand.NewPCG(6, 6))
			fill(m.params[tW2].Value, func() float64 { return wr.NormFloat64() })
		}
		g := gorgonia.NewGraph()
		b := m.Bind(g)
		e, err := b.Encode(textBatch, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := b.Project(e)
		if err != nil {
			t.Fatal(err)
		}
		vm := gorgonia.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Close()
		if len(b.Masks()) != 0 {
			t.Errorf("eval mode drew %d dropout masks", len(b.Masks()))
		}
		we, wp := newTextRef(m).forward(textBatch, nil)
		closeAll(t, "eval-mode graph embedding", values64(t, e), we, 1e-5)
		closeAll(t, "eval-mode graph projection", values64(t, p), wp, 1e-5)
		ge, err := m.Embed(textBatch)
		if err != nil {
			t.Fatal(err)
		}
		gp, err := m.EmbedProjected(textBatch)
		if err != nil {
			t.Fatal(err)
		}
		closeAll(t, "Embed", f64s(ge), we, 1e-5)
		closeAll(t, "EmbedProjected", f64s(gp), wp, 1e-5)
		// The zero bag (all <unk>) gives the MLP of a zero input.
		if len(ge) != len(textBatch)*m.EmbedDim() || len(gp) != len(textBatch)*m.ProjDim() {
			t.Fatalf("Embed sizes %d, %d", len(ge), len(gp))
		}
	}
}

// TestTextResidualStartsAtTheBag checks that an untrained residual encoder
// is its bag: Embed equals EmbedBag, with weights and removed directions.
func TestTextResidualStartsAtTheBag(t *testing.T) {
	cfg := textExtras(true, false)
	cfg.Residual = true
	m := smallTextWith(t, cfg, 3)
	e, err := m.Embed(textBatch)
	if err != nil {
		t.Fatal(err)
	}
	bag, err := m.EmbedBag(textBatch)
	if err != nil {
		t.Fatal(err)
	}
	closeAll(t, "untrained residual Embed vs EmbedBag", f64s(e), f64s(bag), 1e-6)
	closeAll(t, "EmbedBag vs reference", f64s(bag), newTextRef(m).bag(textBatch), 1e-6)
	if _, err := NewTextMLP(TextConfig{VocabSize: 3, EmbDim: 2, Hidden: 3, Residual: true}, 0); err == nil {
		t.Error("Residual with Hidden != EmbDim: no error")
	}
}

// TestTextEmbedChunks checks the parallel chunked Embed on more sentences
// than one chunk against the reference.
func TestTextEmbedChunks(t *testing.T) {
	m := smallText(t, false, false, 4)
	r := rand.New(rand.NewPCG(4, 4))
	batch := make([][]int32, 3*textEmbedChunk+17)
	for i := range batch {
		s := make([]int32, 1+r.IntN(6))
		for k := range s {
			s[k] = int32(r.IntN(7))
		}
		batch[i] = s
	}
	got, err := m.Embed(batch)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := newTextRef(m).forward(batch, nil)
	closeAll(t, "Embed", f64s(got), want, 1e-5)
}

func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func TestTextErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  TextConfig
	}{
		{"no vocabulary", TextConfig{EmbDim: 4}},
		{"dropout 1", TextConfig{VocabSize: 3, EmbDim: 2, Dropout: 1}},
		{"negative dropout", TextConfig{VocabSize: 3, EmbDim: 2, Dropout: -0.1}},
		{"vectors size", TextConfig{VocabSize: 3, EmbDim: 2, Vectors: make([]float32, 5)}},
	} {
		if _, err := NewTextMLP(tc.cfg, 0); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	m := smallText(t, true, false, 0)
	b := m.Bind(gorgonia.NewGraph())
	if _, err := b.Encode([][]int32{{1, 7}}, false, nil); err == nil {
		t.Error("out-of-range id: no error")
	}
	if _, err := b.Encode(nil, false, nil); err == nil {
		t.Error("empty batch: no error")
	}
	if _, err := b.Encode(textBatch, true, nil); err == nil {
		t.Error("training without rng: no error")
	}
	if _, err := m.Embed([][]int32{{-1}}); err == nil {
		t.Error("Embed negative id: no error")
	}
	// Only the table's trainability changes the trainable count.
	nt := 0
	for _, p := range smallText(t, false, false, 0).Params() {
		if p.Trainable {
			nt++
		}
	}
	if nt != 8 {
		t.Errorf("frozen table: %d trainable params, want 8", nt)
	}
}

// TestTextGradBufferReuse checks that the reused table-gradient buffer is
// cleared between steps: the second step's gradient holds only its own rows.
func TestTextGradBufferReuse(t *testing.T) {
	m := smallText(t, true, false, 2)
	run := func(batch [][]int32) ([]float32, *TextBound) {
		g := gorgonia.NewGraph()
		b := m.Bind(g)
		e, err := b.Encode(batch, true, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		l := gorgonia.Must(gorgonia.Sum(e))
		if _, err := gorgonia.Grad(l, b.Learnables()...); err != nil {
			t.Fatal(err)
		}
		vm := gorgonia.NewTapeMachine(g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		gr, err := b.Grads()
		if err != nil {
			t.Fatal(err)
		}
		return gr[0], b
	}
	first, _ := run([][]int32{{1, 2, 3}, {4, 5}})
	if first[1*4] == 0 && first[1*4+1] == 0 && first[1*4+2] == 0 && first[1*4+3] == 0 {
		t.Fatal("row 1 should have a gradient after the first step")
	}
	second, b := run([][]int32{{6, 6}})
	dxs, err := b.bagGrads()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float64, len(second))
	scatterBag(m, want, b.bags[0].batch, dxs[0], nil)
	for k := range second {
		if math.Abs(float64(second[k])-want[k]) > 1e-6 {
			t.Fatalf("second step table gradient[%d] = %v, want %v (stale rows of the first step?)", k, second[k], want[k])
		}
	}
}

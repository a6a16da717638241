package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/batchsampler-go/batchsampler/model/ops"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// DefaultTextDropout is the dropout probability of a TextMLP when
// TextConfig.Dropout is 0 (SimCSE's 0.1).
const DefaultTextDropout = 0.1

// TextConfig sizes a TextMLP, the SimCSE-style sentence encoder without a
// transformer: embedding bag → Linear → ReLU → dropout → Linear, with a
// projection head Linear → ReLU → Linear for the loss. Zero fields take
// their defaults.
type TextConfig struct {
	// VocabSize × EmbDim is the embedding table; both required (> 0).
	VocabSize, EmbDim int
	// Vectors initialises the table (VocabSize×EmbDim row-major, e.g. the
	// PPMI-SVD word vectors); nil draws it from N(0, 1/EmbDim).
	Vectors []float32
	// Hidden is the width of the MLP and the size of the sentence
	// embedding; default 512.
	Hidden int
	// ProjDim is the projection head's width and output; default Hidden.
	ProjDim int
	// Dropout is the probability p of zeroing a hidden unit in training
	// mode, in [0, 1); 0 means DefaultTextDropout (set NoDropout to train
	// without dropout).
	Dropout   float64
	NoDropout bool
	// TrainEmbeddings makes the embedding table a trainable parameter; when
	// false it is a frozen buffer.
	TrainEmbeddings bool
	// WordWeights, when non-nil, holds one finite weight >= 0 per
	// vocabulary id and makes the embedding bag the weighted mean
	// Σ w(t)·E[t] / Σ w(t) over the known tokens t of a sentence (e.g. SIF's
	// a/(a+p(w)), Arora et al. 2017, or IDF); nil weighs every token 1. A
	// sentence whose known tokens all weigh 0 has the zero bag.
	WordWeights []float32
	// Remove holds k orthonormal directions (k×EmbDim row-major) projected
	// out of every bag, x ← x − Σ_c (x·u_c) u_c (SIF's common-component
	// removal). They are fixed: they do not follow a trained table.
	Remove []float32
	// WordDropout is the probability of dropping each known token of a
	// sentence before bagging, in training mode, drawn independently for
	// every view (a sentence keeps at least one known token); in [0, 1).
	WordDropout float64
	// InputDropout is the dropout probability on the bag (the MLP's
	// input), in training mode, one mask per view; in [0, 1).
	InputDropout float64
	// Residual makes the encoder x + MLP(x) for the bag x (after bag
	// dropout) and initialises the MLP's last layer (mlp.3) to zero, so that
	// the untrained encoder is the bag itself and training learns a
	// correction to it. Needs Hidden = EmbDim.
	Residual bool
	// Float64 makes parameters and activations float64 (gradient checks).
	// Embed, EmbedProjected and the optimizers need float32.
	Float64 bool
}

func (c TextConfig) withDefaults() (TextConfig, error) {
	if c.Hidden == 0 {
		c.Hidden = 512
	}
	if c.ProjDim == 0 {
		c.ProjDim = c.Hidden
	}
	if c.Dropout == 0 && !c.NoDropout {
		c.Dropout = DefaultTextDropout
	}
	if c.NoDropout {
		c.Dropout = 0
	}
	switch {
	case c.VocabSize <= 0 || c.EmbDim <= 0:
		return c, fmt.Errorf("text config: VocabSize %d and EmbDim %d must be > 0", c.VocabSize, c.EmbDim)
	case c.Hidden < 0 || c.ProjDim < 0:
		return c, fmt.Errorf("text config: negative size (Hidden %d, ProjDim %d)", c.Hidden, c.ProjDim)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return c, fmt.Errorf("text config: Dropout %v, want in [0, 1)", c.Dropout)
	case c.Vectors != nil && len(c.Vectors) != c.VocabSize*c.EmbDim:
		return c, fmt.Errorf("text config: %d initial vectors values, want VocabSize×EmbDim = %d×%d", len(c.Vectors), c.VocabSize, c.EmbDim)
	case !(c.WordDropout >= 0 && c.WordDropout < 1):
		return c, fmt.Errorf("text config: WordDropout %v, want in [0, 1)", c.WordDropout)
	case !(c.InputDropout >= 0 && c.InputDropout < 1):
		return c, fmt.Errorf("text config: InputDropout %v, want in [0, 1)", c.InputDropout)
	case c.WordWeights != nil && len(c.WordWeights) != c.VocabSize:
		return c, fmt.Errorf("text config: %d word weights, want VocabSize = %d", len(c.WordWeights), c.VocabSize)
	case c.Residual && c.Hidden != c.EmbDim:
		return c, fmt.Errorf("text config: Residual needs Hidden = EmbDim, got Hidden %d and EmbDim %d", c.Hidden, c.EmbDim)
	case len(c.Remove)%c.EmbDim != 0:
		return c, fmt.Errorf("text config: %d values in Remove, want a multiple of EmbDim = %d", len(c.Remove), c.EmbDim)
	}
	for id, w := range c.WordWeights {
		if !(w >= 0) || math.IsInf(float64(w), 0) {
			return c, fmt.Errorf("text config: WordWeights[%d] = %v, want finite and >= 0", id, w)
		}
	}
	k := len(c.Remove) / c.EmbDim
	for a := range k {
		for b := a; b < k; b++ {
			var dot float64
			for j := range c.EmbDim {
				dot += float64(c.Remove[a*c.EmbDim+j]) * float64(c.Remove[b*c.EmbDim+j])
			}
			want := 0.0
			if a == b {
				want = 1
			}
			if math.Abs(dot-want) > 1e-4 {
				return c, fmt.Errorf("text config: Remove rows %d and %d have dot product %.6g, want orthonormal rows", a, b, dot)
			}
		}
	}
	return c, nil
}

// TextMLP is the sentence encoder with its projection head. Parameters, in
// Params order: embedding.weight (VocabSize×EmbDim, trainable only with
// TrainEmbeddings), mlp.0.{weight,bias} (EmbDim×Hidden), mlp.3.{weight,bias}
// (Hidden×Hidden), proj.0.{weight,bias}, proj.2.{weight,bias}. Linear
// weights are stored in×out, so a layer is x·W + b.
//
// A sentence is a list of token ids; ids equal to UnkID (0, data.UnkID) are
// ignored, and the embedding bag is the mean of the remaining rows of the
// table (the zero vector when none is left), weighted by
// TextConfig.WordWeights and with the TextConfig.Remove directions
// projected out when those are set.
type TextMLP struct {
	cfg    TextConfig
	params []*Param
	// gradBuf holds the gradient slices Grads returns, reused between
	// steps: allocating a fresh VocabSize×EmbDim slice per step costs more
	// than the copy itself.
	gradBuf [][]float32
	// touched lists the table rows gradBuf[embedding] holds nonzero values
	// in (the rows the previous Grads scattered into), sorted, without
	// duplicates.
	touched []int32
}

// UnkID is the token id the embedding bag ignores (data.UnkID).
const UnkID int32 = 0

const (
	tEmb = iota
	tW1
	tB1
	tW2
	tB2
	tPW1
	tPB1
	tPW2
	tPB2
)

// NewTextMLP builds a TextMLP: the table copied from cfg.Vectors (or drawn
// from N(0, 1/EmbDim)), every Linear weight and bias drawn from
// U(−1/√fan_in, 1/√fan_in) as PyTorch does, from a PCG source seeded with
// seed, in Params order.
func NewTextMLP(cfg TextConfig, seed uint64) (*TextMLP, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &TextMLP{cfg: cfg}
	p := &paramBuilder{dt: tensor.Float32, rng: rand.New(rand.NewPCG(seed, 0x7e47a11ce))}
	if cfg.Float64 {
		p.dt = tensor.Float64
	}
	emb := p.add("embedding.weight", cfg.TrainEmbeddings, cfg.VocabSize, cfg.EmbDim)
	if cfg.Vectors != nil {
		i := 0
		fill(p.value(emb), func() float64 { v := cfg.Vectors[i]; i++; return float64(v) })
	} else {
		s := 1 / math.Sqrt(float64(cfg.EmbDim))
		fill(p.value(emb), func() float64 { return p.rng.NormFloat64() * s })
	}
	h := cfg.Hidden
	p.uniform(p.add("mlp.0.weight", true, cfg.EmbDim, h), cfg.EmbDim)
	p.uniform(p.add("mlp.0.bias", true, h), cfg.EmbDim)
	w2, b2 := p.add("mlp.3.weight", true, h, h), p.add("mlp.3.bias", true, h)
	p.uniform(w2, h)
	p.uniform(b2, h)
	if cfg.Residual {
		// Drawn and then zeroed, so that the other parameters are the same
		// with and without Residual.
		p.constant(w2, 0)
		p.constant(b2, 0)
	}
	p.head(h, cfg.ProjDim, cfg.ProjDim)
	m.params = p.params
	return m, nil
}

// Config returns the configuration with defaults filled in (Vectors is
// the slice given to NewTextMLP).
func (m *TextMLP) Config() TextConfig { return m.cfg }

// Params returns the parameters in a stable order (see TextMLP); the slice
// is shared with the model.
func (m *TextMLP) Params() []*Param { return m.params }

// EmbedDim is the size of a sentence embedding (Hidden).
func (m *TextMLP) EmbedDim() int { return m.cfg.Hidden }

// ProjDim is the size of the projection head's output.
func (m *TextMLP) ProjDim() int { return m.cfg.ProjDim }

// TextBound is a TextMLP bound into one Gorgonia expression graph; encode
// both SimCSE views through the same TextBound so that the gradients of the
// shared parameter nodes accumulate. Used by one goroutine at a time.
type TextBound struct {
	binding
	m     *TextMLP
	n     int
	masks [][]float64 // the hidden-layer dropout masks drawn by Encode, in call order
	// inputMasks are the bag dropout masks and viewBatches the token lists
	// each view was bagged from (after word dropout), in view order.
	inputMasks  [][]float64
	viewBatches [][][]int32
	bags        []bagCall // embedding bags of a trainable table, for Grads
	mode        bagMode
}

// bagCall is one embedding bag of a trainable table: its input node (the
// bag means, differentiated) and the batch it averaged.
type bagCall struct {
	x     *gorgonia.Node
	batch [][]int32
}

// bagMode selects how the gradient reaches a trainable embedding table.
type bagMode int

const (
	// bagScatter: the bag means are an input node that Gorgonia
	// differentiates; Grads scatters dL/dx into the rows of the used words
	// (len(batch)·tokens·EmbDim work, no VocabSize×EmbDim tensor per step).
	bagScatter bagMode = iota
	// bagSpMM: the table is a Gorgonia node and the bag is ops.SpMM times
	// 1/length; the backward is a VocabSize×EmbDim SpMM (for the benchmark
	// and as a cross-check of bagScatter).
	bagSpMM
)

// Bind prepares m for the expression graph g; parameter nodes are created
// on first use. Call Bind once per graph.
func (m *TextMLP) Bind(g *gorgonia.ExprGraph) *TextBound {
	return &TextBound{binding: newBinding(g, m.params), m: m}
}

// constant adds to the bound graph the rows×cols constant v, named
// text.N.name, in the model's dtype.
func (b *TextBound) constant(name string, rows, cols int, v []float64) *gorgonia.Node {
	dt := tensor.Float32
	if b.m.cfg.Float64 {
		dt = tensor.Float64
	}
	return constMatrix(b.g, dt, fmt.Sprintf("text.%d.%s", b.n, name), rows, cols, v)
}

// checkBatch validates token ids and returns the known ones per sentence.
func (m *TextMLP) checkBatch(batch [][]int32) error {
	if len(batch) == 0 {
		return fmt.Errorf("empty batch")
	}
	for i, s := range batch {
		for k, id := range s {
			if id < 0 || int(id) >= m.cfg.VocabSize {
				return fmt.Errorf("sentence %d token %d: id %d out of range [0, %d)", i, k, id, m.cfg.VocabSize)
			}
		}
	}
	return nil
}

// bag returns the CSR "sentence × vocabulary" pattern of the known tokens
// (a repeated token counts twice) and 1/(number of known tokens) per
// sentence (0 for a sentence without any).
func bag(batch [][]int32, vocab int) (*ops.CSR, []float64, error) {
	rowPtr := make([]int32, len(batch)+1)
	var col []int32
	inv := make([]float64, len(batch))
	for i, s := range batch {
		n := 0
		for _, id := range s {
			if id != UnkID {
				col = append(col, id)
				n++
			}
		}
		rowPtr[i+1] = int32(len(col))
		if n > 0 {
			inv[i] = 1 / float64(n)
		}
	}
	if col == nil {
		col = []int32{}
	}
	csr, err := ops.NewCSR(len(batch), vocab, rowPtr, col)
	return csr, inv, err
}

// DropoutMask draws an n-value inverted-dropout mask from rng: each value
// is 0 with probability p and 1/(1−p) otherwise, so the expected
// activation is unchanged. Encode uses it, one mask per call.
func DropoutMask(rng *rand.Rand, n int, p float64) []float64 {
	m := make([]float64, n)
	keep := 1 / (1 - p)
	for i := range m {
		if rng.Float64() >= p {
			m[i] = keep
		}
	}
	return m
}

// Encode adds the encoder applied to batch (one token-id list per sentence)
// and returns the sentence embeddings (len(batch) × Hidden). With train
// true and p > 0, a dropout mask drawn from rng (DropoutMask over the
// len(batch) × Hidden hidden units, row-major) is multiplied into the hidden
// layer: two calls with the same rng give the two SimCSE views with
// different masks, and the same seed gives the same masks. With train false
// there is no dropout and rng may be nil.
func (b *TextBound) Encode(batch [][]int32, train bool, rng *rand.Rand) (*gorgonia.Node, error) {
	v, err := b.EncodeViews(batch, 1, train, rng)
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// EncodeViews is views calls of Encode on the same batch. Without word
// dropout the views share one embedding bag node and differ only by their
// dropout masks, so the embedding table's gradient is computed once for all
// views instead of once per view. In training mode each view draws from
// rng, in this order: its word-dropout choices (TextConfig.WordDropout),
// its bag dropout mask (InputDropout), its hidden dropout mask (Dropout);
// with only Dropout set this is the sequence of successive Encode calls.
func (b *TextBound) EncodeViews(batch [][]int32, views int, train bool, rng *rand.Rand) ([]*gorgonia.Node, error) {
	cfg := b.m.cfg
	if views < 1 {
		return nil, fmt.Errorf("encode: %d views, want >= 1", views)
	}
	if err := b.m.checkBatch(batch); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if train && (cfg.Dropout > 0 || cfg.WordDropout > 0 || cfg.InputDropout > 0) && rng == nil {
		return nil, fmt.Errorf("encode: training-mode dropout needs an rng")
	}
	n, d, h := len(batch), cfg.EmbDim, cfg.Hidden
	perView := train && cfg.WordDropout > 0
	var shared *gorgonia.Node
	out := make([]*gorgonia.Node, views)
	for v := range out {
		vb := batch
		if perView {
			vb = DropWords(rng, batch, cfg.WordDropout)
		}
		b.viewBatches = append(b.viewBatches, vb)
		x := shared
		if x == nil {
			var err error
			if x, err = b.bagNode(vb, v); err != nil {
				return nil, err
			}
			if !perView {
				shared = x
			}
		}
		if train && cfg.InputDropout > 0 {
			mask := DropoutMask(rng, n*d, cfg.InputDropout)
			b.inputMasks = append(b.inputMasks, mask)
			var err error
			if x, err = gorgonia.HadamardProd(x, b.constant(fmt.Sprintf("input_dropout.%d", v), n, d, mask)); err != nil {
				return nil, fmt.Errorf("encode: bag dropout: %w", err)
			}
		}
		hid, err := b.linear(x, tW1, tB1, true, !cfg.TrainEmbeddings)
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		if train && cfg.Dropout > 0 {
			mask := DropoutMask(rng, n*h, cfg.Dropout)
			b.masks = append(b.masks, mask)
			if hid, err = gorgonia.HadamardProd(hid, b.constant(fmt.Sprintf("dropout.%d", v), n, h, mask)); err != nil {
				return nil, fmt.Errorf("encode: dropout: %w", err)
			}
		}
		if out[v], err = b.linear(hid, tW2, tB2, false, false); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		if cfg.Residual {
			if out[v], err = gorgonia.Add(x, out[v]); err != nil {
				return nil, fmt.Errorf("encode: residual: %w", err)
			}
		}
	}
	b.n++
	return out, nil
}

// bagNode returns the embedding-bag node of batch (view v of the current
// Encode call).
func (b *TextBound) bagNode(batch [][]int32, v int) (*gorgonia.Node, error) {
	cfg := b.m.cfg
	n, d := len(batch), cfg.EmbDim
	name := fmt.Sprintf("bag.%d", v)
	switch {
	case cfg.TrainEmbeddings && b.mode == bagScatter:
		x := b.constant(name, n, d, b.m.bagMean(batch))
		b.bags = append(b.bags, bagCall{x: x, batch: batch})
		return x, nil
	case cfg.TrainEmbeddings:
		if cfg.WordWeights != nil || len(cfg.Remove) > 0 {
			return nil, fmt.Errorf("encode: the SpMM embedding bag supports neither word weights nor removed directions")
		}
		csr, inv, err := bag(batch, cfg.VocabSize)
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		sum, err := ops.SpMM(csr, b.node(tEmb))
		if err != nil {
			return nil, fmt.Errorf("encode: embedding bag: %w", err)
		}
		scale := make([]float64, n*d)
		for i, s := range inv {
			for j := range d {
				scale[i*d+j] = s
			}
		}
		x, err := gorgonia.HadamardProd(sum, b.constant("inv_len."+name, n, d, scale))
		if err != nil {
			return nil, fmt.Errorf("encode: embedding bag mean: %w", err)
		}
		return x, nil
	default:
		// A frozen table: the mean is an input computed here.
		return b.constant(name, n, d, b.m.bagMean(batch)), nil
	}
}

// DropWords returns a copy of batch in which every known token (not UnkID)
// of every sentence is dropped with probability p, one rng.Float64 per
// known token in order; unknown tokens are dropped too (the bag ignores
// them). A sentence that would lose all its known tokens keeps one, chosen
// with one more draw (rng.IntN), so that no view of a non-empty sentence is
// empty. Sentences without known tokens come out empty.
func DropWords(rng *rand.Rand, batch [][]int32, p float64) [][]int32 {
	out := make([][]int32, len(batch))
	for i, s := range batch {
		kept := make([]int32, 0, len(s))
		known := 0
		for _, id := range s {
			if id == UnkID {
				continue
			}
			known++
			if rng.Float64() >= p {
				kept = append(kept, id)
			}
		}
		if len(kept) == 0 && known > 0 {
			k := rng.IntN(known)
			for _, id := range s {
				if id == UnkID {
					continue
				}
				if k == 0 {
					kept = append(kept, id)
					break
				}
				k--
			}
		}
		out[i] = kept
	}
	return out
}

// Masks returns the hidden-layer dropout masks drawn so far, one per
// training-mode view (for tests and diagnostics).
func (b *TextBound) Masks() [][]float64 { return b.masks }

// InputMasks returns the bag dropout masks drawn so far, one per
// training-mode view when TextConfig.InputDropout > 0.
func (b *TextBound) InputMasks() [][]float64 { return b.inputMasks }

// ViewBatches returns the token lists every view was bagged from, in view
// order (the batch itself unless word dropout changed it).
func (b *TextBound) ViewBatches() [][][]int32 { return b.viewBatches }

// Project adds the projection head applied to emb (n × Hidden) and returns
// n × ProjDim.
func (b *TextBound) Project(emb *gorgonia.Node) (*gorgonia.Node, error) {
	return b.project(emb, b.m.cfg.Hidden, headIdx{tPW1, tPB1, tPW2, tPB2}, b.linear)
}

// Learnables returns the nodes to differentiate, pass them to
// gorgonia.Grad: the trainable parameters used so far in Params order, with
// a trainable embedding table represented by the embedding-bag nodes of the
// Encode calls (Grads turns their gradients into the table's).
func (b *TextBound) Learnables() gorgonia.Nodes {
	var ns gorgonia.Nodes
	for i, p := range b.m.params {
		if !p.Trainable {
			continue
		}
		if i == tEmb {
			for _, c := range b.bags {
				ns = append(ns, c.x)
			}
		}
		if b.nodes[i] != nil {
			ns = append(ns, b.nodes[i])
		}
	}
	return ns
}

// bagGrads returns dL/dx of every embedding bag (float64, len(batch)×EmbDim).
func (b *TextBound) bagGrads() ([][]float64, error) {
	d := b.m.cfg.EmbDim
	out := make([][]float64, len(b.bags))
	for k, c := range b.bags {
		gv, err := c.x.Grad()
		if err != nil {
			return nil, fmt.Errorf("grads: embedding bag %d: %w (did gorgonia.Grad include Learnables() and the machine run?)", k, err)
		}
		dense, ok := gv.(*tensor.Dense)
		if !ok || dense.DataSize() != len(c.batch)*d {
			return nil, fmt.Errorf("grads: embedding bag %d: gradient is %v, want %d×%d", k, gv, len(c.batch), d)
		}
		out[k] = floats64(dense)
	}
	return out, nil
}

// bagWeight returns the bag weight of a known token id.
func (m *TextMLP) bagWeight(id int32) float64 {
	if m.cfg.WordWeights == nil {
		return 1
	}
	return float64(m.cfg.WordWeights[id])
}

// bagTotal returns Σ w(t) over the known tokens t of s.
func (m *TextMLP) bagTotal(s []int32) float64 {
	var tot float64
	for _, id := range s {
		if id != UnkID {
			tot += m.bagWeight(id)
		}
	}
	return tot
}

// removeDirs projects the directions of TextConfig.Remove out of x (length
// EmbDim) in place. The directions are orthonormal, so removing them one
// after the other equals removing their span.
func (m *TextMLP) removeDirs(x []float64) {
	d := m.cfg.EmbDim
	for c := 0; c+d <= len(m.cfg.Remove); c += d {
		u := m.cfg.Remove[c : c+d]
		var dot float64
		for j, v := range x {
			dot += v * float64(u[j])
		}
		for j := range x {
			x[j] -= dot * float64(u[j])
		}
	}
}

// bagInto writes into dst (length EmbDim, float64) the embedding bag of s
// read from table (VocabSize×EmbDim).
func bagInto[T float32 | float64](m *TextMLP, dst []float64, table []T, s []int32) {
	d := m.cfg.EmbDim
	clear(dst)
	tot := m.bagTotal(s)
	if tot == 0 {
		return
	}
	for _, id := range s {
		if id == UnkID {
			continue
		}
		w := m.bagWeight(id) / tot
		if w == 0 {
			continue
		}
		row := table[int(id)*d : (int(id)+1)*d]
		for j, v := range row {
			dst[j] += w * float64(v)
		}
	}
	m.removeDirs(dst)
}

// scatterBag adds to the table gradient dst (VocabSize×d) the gradient of
// one embedding bag: with P the projection that removes the Remove
// directions and g_s = P·dx_s, row w gets Σ over sentences s and
// occurrences of w in s of g_s · w(w) / Σ_{t∈s} w(t). It appends the rows it
// touched to touched.
func scatterBag[T float32 | float64](m *TextMLP, dst []T, batch [][]int32, dx []float64, touched []int32) []int32 {
	d := m.cfg.EmbDim
	g := make([]float64, d)
	for i, s := range batch {
		tot := m.bagTotal(s)
		if tot == 0 {
			continue
		}
		copy(g, dx[i*d:(i+1)*d])
		m.removeDirs(g)
		for _, id := range s {
			if id == UnkID {
				continue
			}
			w := m.bagWeight(id) / tot
			if w == 0 {
				continue
			}
			touched = append(touched, id)
			row := dst[int(id)*d : (int(id)+1)*d]
			for j, v := range g {
				row[j] += T(v * w)
			}
		}
	}
	return touched
}

// scatterTableGrad returns the table's gradient in the model's float32
// buffer: the rows the previous call touched are zeroed first, so the work
// is proportional to the batch's tokens, not to the vocabulary.
func (b *TextBound) scatterTableGrad() ([]float32, error) {
	m := b.m
	d := m.cfg.EmbDim
	dxs, err := b.bagGrads()
	if err != nil {
		return nil, err
	}
	g := m.gradBuf[tEmb]
	if len(g) != m.cfg.VocabSize*d {
		g = make([]float32, m.cfg.VocabSize*d)
		m.gradBuf[tEmb] = g
		m.touched = nil
	}
	for _, id := range m.touched {
		clear(g[int(id)*d : (int(id)+1)*d])
	}
	m.touched = m.touched[:0]
	for k, c := range b.bags {
		m.touched = scatterBag(m, g, c.batch, dxs[k], m.touched)
	}
	slices.Sort(m.touched)
	m.touched = slices.Compact(m.touched)
	return g, nil
}

// TableRows returns the rows of the embedding table in which the table
// gradient of the last Grads call may be nonzero (every other row is
// exactly zero), sorted and without duplicates: the rows a sparse optimiser
// (RowAdam with Lazy) updates. The slice belongs to the model and changes
// with the next Grads call. It is nil before the first Grads of a
// trainable table.
func (m *TextMLP) TableRows() []int32 { return m.touched }

// Grads returns, after the machine ran, one gradient per trainable
// parameter in Params order (copied, float32); nil for a parameter the
// graph did not use. The slices belong to the model and are overwritten by
// the next Grads call on any TextBound of it: consume them (an optimizer's Step)
// before the next step.
func (b *TextBound) Grads() ([][]float32, error) {
	if b.m.gradBuf == nil {
		b.m.gradBuf = make([][]float32, len(b.m.params))
	}
	var out [][]float32
	for i, p := range b.m.params {
		if !p.Trainable {
			continue
		}
		if i == tEmb && b.mode == bagScatter {
			if len(b.bags) == 0 {
				out = append(out, nil)
				continue
			}
			g, err := b.scatterTableGrad()
			if err != nil {
				return nil, err
			}
			out = append(out, g)
			continue
		}
		n := b.nodes[i]
		if n == nil {
			out = append(out, nil)
			continue
		}
		g, err := readGrad(n, p, b.m.gradBuf[i])
		if err != nil {
			return nil, err
		}
		b.m.gradBuf[i] = g
		out = append(out, g)
	}
	return out, nil
}

// bagMean returns the embedding bags of batch (len(batch) × EmbDim, as
// float64) from the current table.
func (m *TextMLP) bagMean(batch [][]int32) []float64 {
	d := m.cfg.EmbDim
	out := make([]float64, len(batch)*d)
	t := m.params[tEmb].Value
	for i, s := range batch {
		if m.cfg.Float64 {
			bagInto(m, out[i*d:(i+1)*d], t.Float64s(), s)
		} else {
			bagInto(m, out[i*d:(i+1)*d], t.Float32s(), s)
		}
	}
	return out
}

// Embed returns the sentence embeddings of batch in evaluation mode (no
// dropout), len(batch) × Hidden row-major: a pure-Go forward in parallel
// chunks. It only reads the parameters.
func (m *TextMLP) Embed(batch [][]int32) ([]float32, error) {
	return m.embed(batch, false)
}

// EmbedProjected is Embed followed by the projection head: len(batch) ×
// ProjDim.
func (m *TextMLP) EmbedProjected(batch [][]int32) ([]float32, error) {
	return m.embed(batch, true)
}

// EmbedBag returns the embedding bags of batch, the MLP's input in
// evaluation mode (weighted, with the Remove directions projected out):
// len(batch) × EmbDim row-major.
func (m *TextMLP) EmbedBag(batch [][]int32) ([]float32, error) {
	if m.cfg.Float64 {
		return nil, fmt.Errorf("embed bag: the model must be float32 (TextConfig.Float64 false)")
	}
	if len(batch) == 0 {
		return []float32{}, nil
	}
	if err := m.checkBatch(batch); err != nil {
		return nil, fmt.Errorf("embed bag: %w", err)
	}
	d := m.cfg.EmbDim
	out := make([]float32, len(batch)*d)
	acc := make([]float64, d)
	table := m.params[tEmb].Value.Float32s()
	for i, s := range batch {
		bagInto(m, acc, table, s)
		for j, v := range acc {
			out[i*d+j] = float32(v)
		}
	}
	return out, nil
}

// textEmbedChunk is the number of sentences one worker embeds at a time.
const textEmbedChunk = 512

func (m *TextMLP) embed(batch [][]int32, project bool) ([]float32, error) {
	if m.cfg.Float64 {
		return nil, fmt.Errorf("embed: the model must be float32 (TextConfig.Float64 false)")
	}
	if len(batch) == 0 {
		return []float32{}, nil
	}
	if err := m.checkBatch(batch); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	cfg := m.cfg
	d, h, p := cfg.EmbDim, cfg.Hidden, cfg.ProjDim
	outDim := h
	if project {
		outDim = p
	}
	f := func(i int) []float32 { return m.params[i].Value.Float32s() }
	table := f(tEmb)
	out := make([]float32, len(batch)*outDim)
	chunks := (len(batch) + textEmbedChunk - 1) / textEmbedChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	next := make(chan int, chunks)
	for c := range chunks {
		next <- c
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var x, t, e, q []float32
			acc := make([]float64, d)
			for c := range next {
				lo, hi := c*textEmbedChunk, min((c+1)*textEmbedChunk, len(batch))
				n := hi - lo
				x = grow(x, n*d)
				for i, s := range batch[lo:hi] {
					bagInto(m, acc, table, s)
					for j, v := range acc {
						x[i*d+j] = float32(v)
					}
				}
				t = grow(t, n*h)
				linear(x, n, d, f(tW1), f(tB1), h, t, true)
				e = grow(e, n*h)
				if !project {
					e = out[lo*h : hi*h]
				}
				linear(t, n, h, f(tW2), f(tB2), h, e, false)
				if cfg.Residual {
					for i, v := range x[:n*d] {
						e[i] += v
					}
				}
				if !project {
					continue
				}
				q = grow(q, n*p)
				linear(e, n, h, f(tPW1), f(tPB1), p, q, true)
				linear(q, n, p, f(tPW2), f(tPB2), p, out[lo*p:hi*p], false)
			}
		}()
	}
	wg.Wait()
	return out, nil
}

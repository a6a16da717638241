package loss

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"sync"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/gop"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// InfoGraph's Jensen–Shannon local–global objective (Sun et al. 2020,
// fanyun-sun/InfoGraph, local_global_loss_ with measure "JSD"), the loss
// MVGRL trains with across its two views (kind "jsd"). For node
// representations L (N×d) of a batch of B graphs and graph representations
// G (B×d), with s_vj = L_v·G_j (no normalisation, no temperature) and g(v)
// the graph of node v:
//
//	E_pos = (1/N)        Σ_v          (log 2 − softplus(−s_{v,g(v)}))
//	E_neg = (1/(N(B−1))) Σ_v Σ_{j≠g(v)} (softplus(−s_vj) + s_vj − log 2)
//	loss  = E_neg − E_pos
//
// Each node is a positive with its own graph and a negative with every
// other graph of the batch, so the sampler decides the negatives. N counts
// the nodes of the batch: InfoGraph's normalisation. MVGRL's copy of the
// function runs on graphs zero-padded to the dataset's largest node count
// and divides by B times that count instead (padded entries add 0 to the
// sums), a constant rescaling of the loss by the mean over the maximum
// node count.

// LocalGlobal adds the objective above for the node representations local
// (N×d) and the graph representations global (B×d) to their graph; node v
// belongs to graph j when graphPtr[j] <= v < graphPtr[j+1] (graphPtr has
// B+1 entries, from 0 to N). Both inputs are float32 or float64 and get
// gradients; B >= 2. MVGRL's loss is LocalGlobal(local view 1, global view
// 2) + LocalGlobal(local view 2, global view 1). The similarities are one
// GEMM in the inputs' precision; everything else is float64.
func LocalGlobal(local, global *G.Node, graphPtr []int32) (*G.Node, error) {
	return localGlobal(local, global, graphPtr, 0)
}

// localGlobal checks the inputs of a local–global objective and applies
// its op: JSD for tau = 0, InfoNCE with temperature tau > 0 (localnce.go).
func localGlobal(local, global *G.Node, graphPtr []int32, tau float64) (*G.Node, error) {
	if local == nil || global == nil {
		return nil, fmt.Errorf("loss: local–global objective needs node and graph representations, got local=%v global=%v", local, global)
	}
	ls, gs := local.Shape(), global.Shape()
	if ls.Dims() != 2 || gs.Dims() != 2 || ls[1] != gs[1] {
		return nil, fmt.Errorf("loss: local–global objective: node representations %v and graph representations %v; expected N×d and B×d", ls, gs)
	}
	if err := checkSegments(graphPtr, ls[0], gs[0], ls[1]); err != nil {
		return nil, err
	}
	if local.Dtype() != global.Dtype() || (local.Dtype() != tensor.Float32 && local.Dtype() != tensor.Float64) {
		return nil, fmt.Errorf("loss: local–global objective: dtypes %v and %v; expected both float32 or both float64", local.Dtype(), global.Dtype())
	}
	if local.Graph() != global.Graph() {
		return nil, fmt.Errorf("loss: local–global objective: inputs belong to different expression graphs")
	}
	op := newJSDOp(slices.Clone(graphPtr), tau, new(jsdCache))
	out, err := G.ApplyOp(op, local, global)
	if err != nil {
		return nil, fmt.Errorf("loss: apply local–global objective: %w", err)
	}
	return out, nil
}

// LocalGlobalValue computes LocalGlobal's loss on row-major float32 node
// representations (N×d) and graph representations (B×d), with its
// gradients (float32): the kernel the op runs.
func LocalGlobalValue(local, global []float32, graphPtr []int32, d int) (loss float64, gLocal, gGlobal []float32, err error) {
	return localGlobalValue(local, global, graphPtr, d, 0)
}

// localGlobalValue is LocalGlobalValue for the objective of tau (see
// localGlobal).
func localGlobalValue(local, global []float32, graphPtr []int32, d int, tau float64) (loss float64, gLocal, gGlobal []float32, err error) {
	if d < 1 || len(local)%d != 0 || len(global)%d != 0 {
		return 0, nil, nil, fmt.Errorf("loss: local–global objective: %d and %d values are not rows of d = %d", len(local), len(global), d)
	}
	n, b := len(local)/d, len(global)/d
	if err := checkSegments(graphPtr, n, b, d); err != nil {
		return 0, nil, nil, err
	}
	ds := make([]float64, n*b)
	loss = lgForward(tau, local, global, n, b, d, graphPtr, ds)
	gLocal, gGlobal = make([]float32, n*d), make([]float32, b*d)
	lgBackward(tau, local, global, n, b, d, ds, 1, gLocal, gGlobal)
	return loss, gLocal, gGlobal, nil
}

// checkSegments validates the node-to-graph map of N nodes in B graphs.
func checkSegments(graphPtr []int32, n, b, d int) error {
	switch {
	case b < 2:
		return fmt.Errorf("loss: local–global objective: %d graphs in the batch; the negatives of a node are the other graphs, so B >= 2", b)
	case n < 1:
		return fmt.Errorf("loss: local–global objective: no nodes in the batch")
	case d < 1:
		return fmt.Errorf("loss: local–global objective: representation dimension %d; expected >= 1", d)
	case len(graphPtr) != b+1 || graphPtr[0] != 0 || int(graphPtr[b]) != n:
		return fmt.Errorf("loss: local–global objective: graphPtr has %d entries from %v; expected B+1 = %d from 0 to N = %d", len(graphPtr), graphPtr[:min(len(graphPtr), 1)], b+1, n)
	}
	for j := 0; j < b; j++ {
		if graphPtr[j+1] < graphPtr[j] {
			return fmt.Errorf("loss: local–global objective: graphPtr decreases at graph %d (%d → %d)", j, graphPtr[j], graphPtr[j+1])
		}
	}
	return nil
}

// softplusSigmoid returns softplus(s) = log(1+e^s) and σ(s) = 1/(1+e^{−s}),
// from one exponential, stable for any s.
func softplusSigmoid(s float64) (sp, sig float64) {
	e := math.Exp(-math.Abs(s))
	sp = math.Max(s, 0) + math.Log1p(e)
	if s >= 0 {
		return sp, 1 / (1 + e)
	}
	return sp, e / (1 + e)
}

// jsdRowChunk is the number of nodes per chunk of the element-wise pass;
// chunk sums are added in chunk order, so the loss does not depend on the
// core count.
const jsdRowChunk = 256

// jsdForward returns the loss of node representations l (n×d) and graph
// representations g (b×d) and writes ∂loss/∂S into ds (n×b).
func jsdForward[T float32 | float64](l, g []T, n, b, d int, graphPtr []int32, ds []float64) float64 {
	s := getBuf[T](n * b)
	defer putBuf(s)
	clear(s)
	gemmT(false, true, n, b, d, l, d, g, d, s, b) // S = L·Gᵀ
	owner := owners(graphPtr, n)
	invPos, invNeg := 1/float64(n), 1/(float64(n)*float64(b-1))
	chunks := (n + jsdRowChunk - 1) / jsdRowChunk
	pos, neg := make([]float64, chunks), make([]float64, chunks)
	forChunks(chunks, n*b, func(c int) {
		var p, q float64
		// A row's softplusSigmoid values first (softplusSigmoids: the same
		// bits, 8 at a time), then the sums in the row's order.
		arg, sps, sigs := make([]float64, b), make([]float64, b), make([]float64, b)
		bad := make([]uint8, b/8+1)
		for v := c * jsdRowChunk; v < min((c+1)*jsdRowChunk, n); v++ {
			row, drow := s[v*b:(v+1)*b], ds[v*b:(v+1)*b]
			own := int(owner[v])
			for j, x := range row {
				arg[j] = float64(x)
			}
			arg[own] = -arg[own]
			softplusSigmoids(arg, sps, sigs, bad)
			for j := range row {
				sp, sig := sps[j], sigs[j]
				if j == own {
					// −E_pos term: softplus(−s) − log 2; d/ds = −σ(−s).
					p += sp - math.Ln2
					drow[j] = -sig * invPos
				} else {
					// E_neg term: softplus(s) − log 2; d/ds = σ(s).
					q += sp - math.Ln2
					drow[j] = sig * invNeg
				}
			}
		}
		pos[c], neg[c] = p, q
	})
	var p, q float64
	for c := range pos {
		p += pos[c]
		q += neg[c]
	}
	return q*invNeg + p*invPos
}

// owners returns the graph of each of the n nodes of graphPtr.
func owners(graphPtr []int32, n int) []int32 {
	owner := make([]int32, n)
	for j := 0; j+1 < len(graphPtr); j++ {
		for v := graphPtr[j]; v < graphPtr[j+1]; v++ {
			owner[v] = int32(j)
		}
	}
	return owner
}

// jsdBackward writes scale·∂loss/∂L = scale·dS·G into gl (n×d) and
// scale·∂loss/∂G = scale·dSᵀ·L into gg (b×d).
func jsdBackward[T float32 | float64](l, g []T, n, b, d int, ds []float64, scale float64, gl, gg []T) {
	dst := getBuf[T](len(ds))
	defer putBuf(dst)
	for i, v := range ds {
		dst[i] = T(scale * v)
	}
	clear(gl)
	clear(gg)
	gemmT(false, false, n, d, b, dst, b, g, d, gl, d)
	gemmT(true, false, b, d, n, dst, b, l, d, gg, d)
}

// forChunks runs fn(c) for every chunk c < chunks, on several goroutines
// when work is large; each chunk is run by one goroutine.
func forChunks(chunks, work int, fn func(c int)) {
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers < 2 || work < 1<<15 {
		for c := 0; c < chunks; c++ {
			fn(c)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := w; c < chunks; c += workers {
				fn(c)
			}
		}()
	}
	wg.Wait()
}

// gemmT computes c += op(a)·op(b) (c is m×n, inner size k; row-major with
// strides lda, ldb, ldc): float32 on the module's GEMM kernel (the same
// result on any number of workers), float64 on gonum's.
func gemmT[T float32 | float64](transA, transB bool, m, n, k int, a []T, lda int, b []T, ldb int, c []T, ldc int) {
	if m == 0 || n == 0 || k == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float32:
		igemm.SgemmParallel(runtime.GOMAXPROCS(0), transA, transB, m, n, k, 1, a, lda, any(b).([]float32), ldb, 1, any(c).([]float32), ldc)
	case []float64:
		igemm.Dgemm(transA, transB, m, n, k, 1, a, lda, any(b).([]float64), ldb, 1, any(c).([]float64), ldc)
	}
}

// jsdCache lets the backward op reuse ∂loss/∂S from the forward pass of
// the same run: it is used only when the backward op's inputs are
// bit-identical to the forward's (else the backward recomputes it). Its
// buffers come from getBuf and go back to it when the backward pass has
// used them (takeJSD), so that a training step reuses the last step's.
type jsdCache struct {
	mu   sync.Mutex
	l, g any // the forward pass's inputs, copied: []float32 or []float64
	ds   []float64
	hits int // backward passes served from the cache (for tests)
}

// storeJSD records copies of the inputs of a forward pass and takes ds
// (∂loss/∂S, from getBuf), which the caller must no longer use.
func storeJSD[T float32 | float64](c *jsdCache, l, g []T, ds []float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
	lc, gc := getBuf[T](len(l)), getBuf[T](len(g))
	copy(lc, l)
	copy(gc, g)
	c.l, c.g, c.ds = lc, gc, ds
}

// takeJSD returns the cached ∂loss/∂S if l and g are bit for bit the
// cached inputs, and empties the cache; the caller returns the slice with
// putBuf. It returns nil, and keeps the cache, otherwise.
func takeJSD[T float32 | float64](c *jsdCache, l, g []T) []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok1 := c.l.([]T)
	cg, ok2 := c.g.([]T)
	if c.ds == nil || !ok1 || !ok2 || !sameBits(cl, l) || !sameBits(cg, g) {
		return nil
	}
	c.hits++
	ds := c.ds
	c.ds = nil
	c.drop()
	return ds
}

// drop returns the cached buffers to getBuf's pools.
func (c *jsdCache) drop() {
	for _, b := range []any{c.l, c.g} {
		switch b := b.(type) {
		case []float32:
			putBuf(b)
		case []float64:
			putBuf(b)
		}
	}
	if c.ds != nil {
		putBuf(c.ds)
	}
	c.l, c.g, c.ds = nil, nil, nil
}

// sameBits reports whether a and b hold the same bits (so a NaN matches
// itself, and 0 does not match −0).
func sameBits[T float32 | float64](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	switch a := any(a).(type) {
	case []float32:
		for i, v := range any(b).([]float32) {
			if math.Float32bits(v) != math.Float32bits(a[i]) {
				return false
			}
		}
	case []float64:
		for i, v := range any(b).([]float64) {
			if math.Float64bits(v) != math.Float64bits(a[i]) {
				return false
			}
		}
	}
	return true
}

// The pools of getBuf: scratch of the objective reused across steps
// instead of allocated per op run (an N×B score matrix of a large batch is
// tens of megabytes).
var (
	bufs32 sync.Pool // *[]float32
	bufs64 sync.Pool // *[]float64
)

// getBuf returns a slice of n values with unspecified contents, from the
// pool when it holds one large enough.
func getBuf[T float32 | float64](n int) []T {
	pool := &bufs64
	if _, ok := any(T(0)).(float32); ok {
		pool = &bufs32
	}
	if p, ok := pool.Get().(*[]T); ok {
		if cap(*p) >= n {
			return (*p)[:n]
		}
		pool.Put(p)
	}
	return make([]T, n)
}

// putBuf returns b to getBuf's pool.
func putBuf[T float32 | float64](b []T) {
	if cap(b) == 0 {
		return
	}
	pool := &bufs64
	if _, ok := any(T(0)).(float32); ok {
		pool = &bufs32
	}
	pool.Put(&b)
}

// jsdKey names the objective and its node-to-graph map, for op hashes.
func jsdKey(name string, graphPtr []int32) string {
	h := fnv.New64a()
	b := make([]byte, 0, 4*len(graphPtr))
	for _, v := range graphPtr {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	h.Write(b)
	return fmt.Sprintf("%s{graphs=%d,nodes=%d,h=%x}", name, len(graphPtr)-1, graphPtr[len(graphPtr)-1], h.Sum64())
}

// jsdInputs extracts the op's two matrices (N×d and B×d, one dtype) and
// checks them against the node-to-graph map.
func jsdInputs(graphPtr []int32, v1, v2 G.Value) (l, g *tensor.Dense, err error) {
	var out [2]*tensor.Dense
	for i, v := range []G.Value{v1, v2} {
		t, ok := v.(*tensor.Dense)
		if !ok {
			return nil, nil, fmt.Errorf("local–global op: input %d is %T; expected a *tensor.Dense", i+1, v)
		}
		if t.RequiresIterator() {
			t = t.Materialize().(*tensor.Dense)
		}
		if t.Dims() != 2 {
			return nil, nil, fmt.Errorf("local–global op: input %d has shape %v; expected a matrix", i+1, t.Shape())
		}
		out[i] = t
	}
	l, g = out[0], out[1]
	if l.Dtype() != g.Dtype() || l.Shape()[1] != g.Shape()[1] {
		return nil, nil, fmt.Errorf("local–global op: inputs %v %v and %v %v; expected N×d and B×d of one dtype", l.Shape(), l.Dtype(), g.Shape(), g.Dtype())
	}
	if err := checkSegments(graphPtr, l.Shape()[0], g.Shape()[0], l.Shape()[1]); err != nil {
		return nil, nil, err
	}
	return l, g, nil
}

// jsdOp is the forward op of a local–global objective: (N×d, B×d) →
// scalar. tau selects the objective: 0 is the JSD estimator above, τ > 0
// the InfoNCE form with temperature τ (localnce.go).
type jsdOp struct {
	gop.Base
	graphPtr []int32
	tau      float64
	cache    *jsdCache // shared with the gradient op; not part of the hash
}

func newJSDOp(graphPtr []int32, tau float64, cache *jsdCache) jsdOp {
	return jsdOp{Base: gop.New(jsdKey(lgName(tau, ""), graphPtr), "", 2, 2, 0), graphPtr: graphPtr, tau: tau, cache: cache}
}

// InferShape returns the scalar shape.
func (op jsdOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.ScalarShape(), nil }

// Do computes the loss into a new scalar.
func (op jsdOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

// UsePreallocDo computes the loss into prealloc when it is a scalar of the
// inputs' type, else into a new scalar, and caches ∂loss/∂S.
func (op jsdOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("local–global op: got %d inputs; expected 2", len(inputs))
	}
	l, g, err := jsdInputs(op.graphPtr, inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	n, b, d := l.Shape()[0], g.Shape()[0], l.Shape()[1]
	ds := getBuf[float64](n * b)
	clear(ds)
	switch l.Dtype() {
	case tensor.Float64:
		v := lgForward(op.tau, l.Float64s(), g.Float64s(), n, b, d, op.graphPtr, ds)
		storeJSD(op.cache, l.Float64s(), g.Float64s(), ds)
		if p, ok := prealloc.(*G.F64); ok {
			*p = G.F64(v)
			return p, nil
		}
		return G.NewF64(v), nil
	case tensor.Float32:
		v := lgForward(op.tau, l.Float32s(), g.Float32s(), n, b, d, op.graphPtr, ds)
		storeJSD(op.cache, l.Float32s(), g.Float32s(), ds)
		if p, ok := prealloc.(*G.F32); ok {
			*p = G.F32(v)
			return p, nil
		}
		return G.NewF32(float32(v)), nil
	}
	return nil, fmt.Errorf("local–global op: dtype %v; expected float32 or float64", l.Dtype())
}

// DiffWRT: differentiable with respect to both inputs.
func (op jsdOp) DiffWRT(int) []bool { return []bool{true, true} }

// SymDiff adds one op computing the stacked ((N+B)×d) gradient scaled by
// the upstream gradient, and two row-block selections of it.
func (op jsdOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("local–global op SymDiff: got %d inputs; expected 2", len(inputs))
	}
	both, err := G.ApplyOp(jsdGradOp{Base: gop.New(jsdKey(lgName(op.tau, "Grad"), op.graphPtr), "", 2, 2, 0, 2), graphPtr: op.graphPtr, tau: op.tau, cache: op.cache},
		inputs[0], inputs[1], grad)
	if err != nil {
		return nil, fmt.Errorf("local–global op SymDiff: %w", err)
	}
	n, b := inputs[0].Shape()[0], inputs[1].Shape()[0]
	dl, err := G.ApplyOp(newRowsOp(0, n), both)
	if err != nil {
		return nil, fmt.Errorf("local–global op SymDiff: %w", err)
	}
	dg, err := G.ApplyOp(newRowsOp(n, n+b), both)
	if err != nil {
		return nil, fmt.Errorf("local–global op SymDiff: %w", err)
	}
	return G.Nodes{dl, dg}, nil
}

// jsdGradOp computes g·[∂loss/∂L; ∂loss/∂G] ((N+B)×d) from L, G and the
// upstream scalar gradient g. It is not itself differentiated.
type jsdGradOp struct {
	gop.Base
	graphPtr []int32
	tau      float64
	cache    *jsdCache
}

// InferShape returns (N+B, d).
func (op jsdGradOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) < 2 {
		return nil, fmt.Errorf("local–global grad op: %d input shapes; expected 3", len(in))
	}
	l, ok1 := in[0].(tensor.Shape)
	g, ok2 := in[1].(tensor.Shape)
	if !ok1 || !ok2 || l.Dims() != 2 || g.Dims() != 2 {
		return nil, fmt.Errorf("local–global grad op: input shapes %v and %v; expected N×d and B×d", in[0], in[1])
	}
	return tensor.Shape{l[0] + g[0], l[1]}, nil
}

// Do computes the gradient into a new tensor.
func (op jsdGradOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

// UsePreallocDo overwrites prealloc ((N+B)×d, the inputs' dtype) with the
// gradient, allocating when prealloc does not fit.
func (op jsdGradOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 3 {
		return nil, fmt.Errorf("local–global grad op: got %d inputs; expected 3", len(inputs))
	}
	l, g, err := jsdInputs(op.graphPtr, inputs[0], inputs[1])
	if err != nil {
		return nil, err
	}
	up, err := scalarValue(inputs[2])
	if err != nil {
		return nil, err
	}
	n, b, d := l.Shape()[0], g.Shape()[0], l.Shape()[1]
	out, ok := prealloc.(*tensor.Dense)
	if !ok || out.Dtype() != l.Dtype() || out.Shape().TotalSize() != (n+b)*d || out.RequiresIterator() {
		out = tensor.New(tensor.Of(l.Dtype()), tensor.WithShape(n+b, d))
	}
	switch l.Dtype() {
	case tensor.Float64:
		jsdGrad(op, l.Float64s(), g.Float64s(), n, b, d, up, out.Float64s())
	case tensor.Float32:
		jsdGrad(op, l.Float32s(), g.Float32s(), n, b, d, up, out.Float32s())
	default:
		return nil, fmt.Errorf("local–global grad op: dtype %v; expected float32 or float64", l.Dtype())
	}
	return out, nil
}

func jsdGrad[T float32 | float64](op jsdGradOp, l, g []T, n, b, d int, up float64, out []T) {
	ds := takeJSD(op.cache, l, g)
	if ds == nil {
		ds = getBuf[float64](n * b)
		clear(ds)
		lgForward(op.tau, l, g, n, b, d, op.graphPtr, ds)
	}
	lgBackward(op.tau, l, g, n, b, d, ds, up, out[:n*d], out[n*d:])
	putBuf(ds)
}

// rowsOp selects rows lo..hi−1 of a matrix, copying them. It is only
// used on gradients and is not itself differentiated.
type rowsOp struct {
	gop.Base
	lo, hi int
}

func newRowsOp(lo, hi int) rowsOp {
	return rowsOp{Base: gop.New(fmt.Sprintf("Rows{%d:%d}", lo, hi), "", 2, 2), lo: lo, hi: hi}
}

// InferShape returns (hi−lo, d).
func (op rowsOp) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	if len(in) != 1 {
		return nil, fmt.Errorf("rows op: %d input shapes; expected 1", len(in))
	}
	s, ok := in[0].(tensor.Shape)
	if !ok || s.Dims() != 2 || s[0] < op.hi {
		return nil, fmt.Errorf("rows op: input shape %v; expected a matrix of at least %d rows", in[0], op.hi)
	}
	return tensor.Shape{op.hi - op.lo, s[1]}, nil
}

// Do copies the rows into a new tensor.
func (op rowsOp) Do(inputs ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, inputs...) }

// UsePreallocDo overwrites prealloc with the rows, allocating when it does
// not fit.
func (op rowsOp) UsePreallocDo(prealloc G.Value, inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("rows op: got %d inputs; expected 1", len(inputs))
	}
	in, ok := inputs[0].(*tensor.Dense)
	if !ok || in.Dims() != 2 || in.Shape()[0] < op.hi {
		return nil, fmt.Errorf("rows op: input %v; expected a *tensor.Dense matrix of at least %d rows", inputs[0], op.hi)
	}
	if in.RequiresIterator() {
		in = in.Materialize().(*tensor.Dense)
	}
	d := in.Shape()[1]
	out, ok := prealloc.(*tensor.Dense)
	if !ok || out.Dtype() != in.Dtype() || out.Shape().TotalSize() != (op.hi-op.lo)*d || out.RequiresIterator() {
		out = tensor.New(tensor.Of(in.Dtype()), tensor.WithShape(op.hi-op.lo, d))
	}
	switch in.Dtype() {
	case tensor.Float64:
		copy(out.Float64s(), in.Float64s()[op.lo*d:op.hi*d])
	case tensor.Float32:
		copy(out.Float32s(), in.Float32s()[op.lo*d:op.hi*d])
	default:
		return nil, fmt.Errorf("rows op: dtype %v; expected float32 or float64", in.Dtype())
	}
	return out, nil
}

package model

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	igemm "github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/model/ops"
)

// embedChunkNodes is the target number of nodes in one chunk of Embed:
// large enough for efficient GEMMs, small enough for the cache.
const embedChunkNodes = 2048

// Embed runs the encoder in evaluation mode (BatchNorm with the running
// statistics, no graph, no gradients) and returns the graph embeddings,
// NumGraphs × EmbedDim row-major. It is a pure-Go forward (gonum GEMM and
// CSR loops) that splits the batch into chunks of whole graphs processed in
// parallel, so a whole dataset can be packed into one batch and embedded in
// one call. Each output row depends only on its own graph, so the result
// does not depend on the batch composition or on the chunking. Embed only
// reads the parameters: do not run it concurrently with an optimizer's Step or
// Bound.CommitStats on the same model.
func (m *GIN) Embed(batch *GraphBatch) ([]float32, error) {
	emb, _, err := m.forward(batch, false)
	return emb, err
}

// EmbedProjected is Embed followed by the projection head: it returns
// NumGraphs × ProjDim.
func (m *GIN) EmbedProjected(batch *GraphBatch) ([]float32, error) {
	_, proj, err := m.forward(batch, true)
	return proj, err
}

// evalLayer holds the float32 parameters of one layer with BatchNorm folded
// into a per-channel scale and shift.
type evalLayer struct {
	in               int
	w1, b1, w2, b2   []float32
	bnScale, bnShift []float32
}

func (m *GIN) forward(batch *GraphBatch, project bool) (emb, proj []float32, err error) {
	if m.cfg.Float64 {
		return nil, nil, fmt.Errorf("embed: %w", errNotFloat32)
	}
	if err := batch.Validate(); err != nil {
		return nil, nil, fmt.Errorf("embed: %w", err)
	}
	cfg := m.cfg
	if batch.FeatDim != cfg.InDim {
		return nil, nil, fmt.Errorf("embed: batch has FeatDim %d, model InDim is %d", batch.FeatDim, cfg.InDim)
	}
	layers := make([]evalLayer, cfg.Layers)
	in := cfg.InDim
	for l, li := range m.layers {
		el := evalLayer{
			in: in,
			w1: m.params[li.w1].Value.Float32s(), b1: m.params[li.b1].Value.Float32s(),
			w2: m.params[li.w2].Value.Float32s(), b2: m.params[li.b2].Value.Float32s(),
			bnScale: make([]float32, cfg.Hidden), bnShift: make([]float32, cfg.Hidden),
		}
		gamma, beta := m.params[li.bn.gamma].Value.Float32s(), m.params[li.bn.beta].Value.Float32s()
		rm, rv := m.params[li.bn.runMean].Value.Float32s(), m.params[li.bn.runVar].Value.Float32s()
		for j := 0; j < cfg.Hidden; j++ {
			s := float64(gamma[j]) / math.Sqrt(float64(rv[j])+cfg.BNEps)
			el.bnScale[j] = float32(s)
			el.bnShift[j] = float32(float64(beta[j]) - float64(rm[j])*s)
		}
		layers[l] = el
		in = cfg.Hidden
	}

	e := m.EmbedDim()
	emb = make([]float32, batch.NumGraphs*e)
	// Chunks of whole graphs with about embedChunkNodes nodes each.
	var bounds []int
	for g := 0; g < batch.NumGraphs; {
		bounds = append(bounds, g)
		start := batch.GraphPtr[g]
		g++
		for g < batch.NumGraphs && int(batch.GraphPtr[g+1]-start) <= embedChunkNodes {
			g++
		}
	}
	bounds = append(bounds, batch.NumGraphs)
	nChunks := len(bounds) - 1
	workers := min(runtime.GOMAXPROCS(0), nChunks)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s embedScratch
			for c := range next {
				s.run(batch, layers, cfg.Hidden, bounds[c], bounds[c+1], emb[bounds[c]*e:bounds[c+1]*e])
			}
		}()
	}
	for c := 0; c < nChunks; c++ {
		next <- c
	}
	close(next)
	wg.Wait()

	if !project {
		return emb, nil, nil
	}
	proj, err = m.projectEval(emb, batch.NumGraphs)
	return emb, proj, err
}

// projectEval applies the projection head to n embeddings.
func (m *GIN) projectEval(emb []float32, n int) ([]float32, error) {
	e, p := m.EmbedDim(), m.cfg.ProjDim
	if n == 0 {
		return []float32{}, nil
	}
	h := make([]float32, n*p)
	linear(emb, n, e, m.params[m.head.w1].Value.Float32s(), m.params[m.head.b1].Value.Float32s(), p, h, true)
	out := make([]float32, n*p)
	linear(h, n, p, m.params[m.head.w2].Value.Float32s(), m.params[m.head.b2].Value.Float32s(), p, out, false)
	return out, nil
}

// linear computes out = act(x·W + b) for x (n×in), W (in×outDim), on the
// calling goroutine (Embed already runs one chunk per core), with the bits
// of gonum's blas32.Gemm that it used before: gemm.SgemmAxpyNN.
func linear(x []float32, n, in int, w, b []float32, outDim int, out []float32, relu bool) {
	for i := 0; i < n; i++ {
		copy(out[i*outDim:(i+1)*outDim], b)
	}
	if outDim == 0 {
		return
	}
	if relu {
		// The ReLU (v < 0 → 0) on the values still in registers.
		igemm.SgemmAxpyNNReLU(n, outDim, in, x, in, w, outDim, out, outDim)
		return
	}
	igemm.SgemmAxpyNN(n, outDim, in, x, in, w, outDim, out, outDim)
}

// embedScratch holds one worker's buffers, grown as needed.
type embedScratch struct {
	agg, t, h, u []float32
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// run embeds graphs [g0, g1) of batch into out ((g1−g0) × Layers·hidden).
func (s *embedScratch) run(batch *GraphBatch, layers []evalLayer, hidden, g0, g1 int, out []float32) {
	n0, n1 := int(batch.GraphPtr[g0]), int(batch.GraphPtr[g1])
	n := n1 - n0
	e := len(layers) * hidden
	clear(out)
	h := batch.X[n0*batch.FeatDim : n1*batch.FeatDim]
	for l, el := range layers {
		f := el.in
		s.agg = grow(s.agg, n*f)
		// (A + I)·h over the chunk's rows; columns are shifted by n0.
		for v := 0; v < n; v++ {
			dst := s.agg[v*f : v*f+f]
			copy(dst, h[v*f:v*f+f])
			for _, c := range batch.Col[batch.RowPtr[n0+v]:batch.RowPtr[n0+v+1]] {
				src := h[(int(c)-n0)*f : (int(c)-n0)*f+f]
				for j := range dst {
					dst[j] += src[j]
				}
			}
		}
		s.t = grow(s.t, n*hidden)
		linear(s.agg, n, f, el.w1, el.b1, hidden, s.t, true)
		s.u = grow(s.u, n*hidden)
		linear(s.t, n, hidden, el.w2, el.b2, hidden, s.u, true)
		// BatchNorm with the running statistics: u·scale + shift per row.
		ops.ScaleShiftRows(s.u[:n*hidden], el.bnScale, el.bnShift)
		// Sum pooling: each graph's rows added in order into its slot.
		for g := g0; g < g1; g++ {
			dst := out[(g-g0)*e+l*hidden : (g-g0)*e+(l+1)*hidden]
			v0, v1 := int(batch.GraphPtr[g])-n0, int(batch.GraphPtr[g+1])-n0
			ops.AddRows(dst, s.u[v0*hidden:v1*hidden])
		}
		// The next layer reads u; swap buffers so u can be rewritten.
		s.h, s.u = s.u, s.h
		h = s.h
	}
}

package model

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/model/ops"
)

// PackViews packs graphs and their two propagation matrices (views[v][i]
// belongs to graphs[i] and is NumNodes×NumNodes of that graph) into one
// batch. Every graph needs features (data.GraphSet.SetFeatures), all of
// the same dimension and finite. It is NewViewPacker(graphs, views)
// followed by Pack of every graph in order.
func PackViews(graphs []*data.Graph, views [2][]data.SparseMatrix) (*ViewBatch, error) {
	p, err := NewViewPacker(graphs, views)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(graphs))
	for i := range idx {
		idx[i] = i
	}
	return p.Pack(idx)
}

// ViewPacker packs batches drawn from a fixed list of graphs with their
// two views (a dataset's): NewViewPacker checks the graphs' features and
// the views once and records which graphs have one-hot features (and the
// column of each row's 1), so that Pack only copies: the features, the
// one-hot columns, and each view's entries with its transpose and float32
// values assembled graph by graph (ops.BlockDiagWeighted). The graphs and
// views must not change while the packer is in use.
type ViewPacker struct {
	graphs  []*data.Graph
	views   [2][]data.SparseMatrix
	featDim int
	// hot[i] holds the column of the 1 of every row of graph i when all
	// its rows are one-hot vectors (isHot[i]), else nil.
	hot   [][]int32
	isHot []bool
}

// NewViewPacker checks graphs and views (as PackViews documents; errors
// name the graph's index in graphs) and returns their packer.
func NewViewPacker(graphs []*data.Graph, views [2][]data.SparseMatrix) (*ViewPacker, error) {
	if len(graphs) == 0 {
		return nil, errors.New("pack views: no graphs")
	}
	p := &ViewPacker{graphs: graphs, views: views, hot: make([][]int32, len(graphs)), isHot: make([]bool, len(graphs))}
	for v := range views {
		if len(views[v]) != len(graphs) {
			return nil, fmt.Errorf("pack views: view %d has %d matrices for %d graphs", v+1, len(views[v]), len(graphs))
		}
	}
	for i, g := range graphs {
		if g == nil {
			return nil, fmt.Errorf("pack views: graph %d is nil", i)
		}
		if g.X == nil || g.FeatDim <= 0 || len(g.X) != g.NumNodes*g.FeatDim {
			return nil, fmt.Errorf("pack views: graph %d has no features (FeatDim %d, %d values for %d nodes): call GraphSet.SetFeatures first", i, g.FeatDim, len(g.X), g.NumNodes)
		}
		if i == 0 {
			p.featDim = g.FeatDim
		} else if g.FeatDim != p.featDim {
			return nil, fmt.Errorf("pack views: graph %d has FeatDim %d, graph 0 has %d", i, g.FeatDim, p.featDim)
		}
		for v := range views {
			if m := views[v][i]; m.N != g.NumNodes {
				return nil, fmt.Errorf("pack views: view %d of graph %d is %d×%d, the graph has %d nodes", v+1, i, m.N, m.N, g.NumNodes)
			}
			if err := views[v][i].Validate(); err != nil {
				return nil, fmt.Errorf("pack views: view %d of graph %d: %w", v+1, i, err)
			}
		}
		hot := make([]int32, g.NumNodes)
		if oneHotRows(g.X, g.NumNodes, g.FeatDim, hot) {
			p.hot[i], p.isHot[i] = hot, true
		} else if k := nonFinite(g.X); k >= 0 {
			return nil, fmt.Errorf("pack views: graph %d feature %d is %v", i, k, g.X[k])
		}
	}
	return p, nil
}

// Pack packs the graphs idx (indices into the packer's graphs, repeats
// allowed) in that order.
func (p *ViewPacker) Pack(idx []int) (*ViewBatch, error) {
	if len(idx) == 0 {
		return nil, errors.New("pack views: no graphs")
	}
	b := &ViewBatch{NumGraphs: len(idx), FeatDim: p.featDim, GraphPtr: make([]int32, len(idx)+1)}
	allHot := true
	for i, j := range idx {
		if j < 0 || j >= len(p.graphs) {
			return nil, fmt.Errorf("pack views: graph %d out of range [0, %d)", j, len(p.graphs))
		}
		b.NumNodes += p.graphs[j].NumNodes
		if b.NumNodes > math.MaxInt32 {
			return nil, fmt.Errorf("pack views: more than %d nodes", math.MaxInt32)
		}
		b.GraphPtr[i+1] = int32(b.NumNodes)
		allHot = allHot && p.isHot[j]
	}
	// The two views are assembled on goroutines of their own while the
	// features are copied.
	var (
		wg     sync.WaitGroup
		errs   [2]error
		packed [2]*ops.WeightedCSR
	)
	for v := range p.views {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blocks := make([]ops.WeightedBlock, len(idx))
			for i, j := range idx {
				m := p.views[v][j]
				blocks[i] = ops.WeightedBlock{N: m.N, RowPtr: m.RowPtr, Col: m.Col, Val: m.Val}
			}
			if packed[v], errs[v] = ops.BlockDiagWeighted(blocks); errs[v] == nil {
				packed[v].Prepare() // the hashes, here in parallel
			}
		}()
	}
	b.X = make([]float32, 0, b.NumNodes*b.FeatDim)
	for _, j := range idx {
		b.X = append(b.X, p.graphs[j].X...)
	}
	if allHot {
		b.OneHot = make([]int32, 0, b.NumNodes)
		for _, j := range idx {
			b.OneHot = append(b.OneHot, p.hot[j]...)
		}
	}
	col := make([]int32, b.NumNodes)
	for v := range col {
		col[v] = int32(v)
	}
	pool, err := ops.NewCSR(b.NumGraphs, b.NumNodes, b.GraphPtr, col)
	wg.Wait()
	for v, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("pack views: view %d: %w", v+1, err)
		}
		b.Views[v] = packed[v]
	}
	if err != nil {
		return nil, fmt.Errorf("pack views: pooling: %w", err)
	}
	b.Pool = pool
	return b, nil
}

// nonFinite returns the index of the first NaN or infinite value of x, or
// −1 (from the exponent bits).
func nonFinite(x []float32) int {
	for k, v := range x {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return k
		}
	}
	return -1
}

// oneHotRows writes the column of the 1 of every row of the n×d matrix x
// to hot and reports whether every row is a one-hot vector (one 1, zeros
// elsewhere; hot is then complete).
func oneHotRows(x []float32, n, d int, hot []int32) bool {
	for i := range n {
		c := -1
		for j, v := range x[i*d : (i+1)*d] {
			switch {
			case v == 0:
			case v == 1 && c < 0:
				c = j
			default:
				return false
			}
		}
		if c < 0 {
			return false
		}
		hot[i] = int32(c)
	}
	return true
}

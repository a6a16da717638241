package model

import (
	"errors"
	"fmt"
	"math"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/model/ops"
)

// GraphBatch is a packed batch of graphs: the nodes of all graphs numbered
// consecutively, their features, and one CSR adjacency over the packed ids.
type GraphBatch struct {
	NumGraphs, NumNodes, FeatDim int
	// X holds the node features, NumNodes×FeatDim row-major.
	X []float32
	// RowPtr (len NumNodes+1) and Col are the CSR adjacency over packed node
	// ids: both directions of an undirected edge are listed, a self-loop
	// once, and duplicates count. Neighbours of v are Col[RowPtr[v]:RowPtr[v+1]].
	RowPtr, Col []int32
	// GraphPtr (len NumGraphs+1): the nodes of graph j are
	// GraphPtr[j] .. GraphPtr[j+1]-1. A graph may have no nodes.
	GraphPtr []int32
}

// Validate checks sizes, ranges and finiteness, and that every edge stays
// inside its graph. It returns an error naming the first problem.
func (b *GraphBatch) Validate() error {
	if b == nil {
		return errors.New("graph batch: nil")
	}
	if b.NumGraphs < 0 || b.NumNodes < 0 {
		return fmt.Errorf("graph batch: negative size: %d graphs, %d nodes", b.NumGraphs, b.NumNodes)
	}
	if b.FeatDim <= 0 {
		return fmt.Errorf("graph batch: FeatDim = %d, want > 0", b.FeatDim)
	}
	if len(b.X) != b.NumNodes*b.FeatDim {
		return fmt.Errorf("graph batch: len(X) = %d, want NumNodes×FeatDim = %d×%d", len(b.X), b.NumNodes, b.FeatDim)
	}
	for i, v := range b.X {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 { // exponent all ones: Inf or NaN
			return fmt.Errorf("graph batch: X[%d] (node %d, feature %d) is %v", i, i/b.FeatDim, i%b.FeatDim, v)
		}
	}
	if len(b.GraphPtr) != b.NumGraphs+1 {
		return fmt.Errorf("graph batch: len(GraphPtr) = %d, want NumGraphs+1 = %d", len(b.GraphPtr), b.NumGraphs+1)
	}
	if b.GraphPtr[0] != 0 {
		return fmt.Errorf("graph batch: GraphPtr[0] = %d, want 0", b.GraphPtr[0])
	}
	for j := 0; j < b.NumGraphs; j++ {
		if b.GraphPtr[j+1] < b.GraphPtr[j] {
			return fmt.Errorf("graph batch: GraphPtr decreases at graph %d (%d → %d)", j, b.GraphPtr[j], b.GraphPtr[j+1])
		}
	}
	if int(b.GraphPtr[b.NumGraphs]) != b.NumNodes {
		return fmt.Errorf("graph batch: GraphPtr[%d] = %d, want NumNodes = %d", b.NumGraphs, b.GraphPtr[b.NumGraphs], b.NumNodes)
	}
	if _, err := ops.NewCSR(b.NumNodes, b.NumNodes, b.RowPtr, b.Col); err != nil {
		return fmt.Errorf("graph batch: adjacency: %w", err)
	}
	for j := 0; j < b.NumGraphs; j++ {
		lo, hi := b.GraphPtr[j], b.GraphPtr[j+1]
		for v := lo; v < hi; v++ {
			for k := b.RowPtr[v]; k < b.RowPtr[v+1]; k++ {
				if u := b.Col[k]; u < lo || u >= hi {
					return fmt.Errorf("graph batch: edge %d→%d (Col[%d]) leaves graph %d (nodes %d..%d)", v, u, k, j, lo, hi-1)
				}
			}
		}
	}
	return nil
}

// adjacencyPlusSelf returns the CSR of A + I (every row gets its own index
// appended), the aggregation matrix of GIN with ε = 0.
func (b *GraphBatch) adjacencyPlusSelf() (*ops.CSR, error) {
	n := b.NumNodes
	rowPtr := make([]int32, n+1)
	col := make([]int32, 0, len(b.Col)+n)
	for v := 0; v < n; v++ {
		col = append(col, int32(v))
		col = append(col, b.Col[b.RowPtr[v]:b.RowPtr[v+1]]...)
		rowPtr[v+1] = int32(len(col))
	}
	m, err := ops.NewCSR(n, n, rowPtr, col)
	if err != nil {
		return nil, fmt.Errorf("graph batch: A+I: %w", err)
	}
	return m, nil
}

// pooling returns the NumGraphs×NumNodes sum-pooling matrix.
func (b *GraphBatch) pooling() (*ops.CSR, error) {
	col := make([]int32, b.NumNodes)
	for v := range col {
		col[v] = int32(v)
	}
	m, err := ops.NewCSR(b.NumGraphs, b.NumNodes, b.GraphPtr, col)
	if err != nil {
		return nil, fmt.Errorf("graph batch: pooling: %w", err)
	}
	return m, nil
}

// PackGraphs packs graphs into one batch: node features from each graph's
// X (set by data.GraphSet.SetFeatures), both directions of every edge, a
// self-loop once. All graphs must have the same FeatDim.
func PackGraphs(graphs []*data.Graph) (*GraphBatch, error) {
	if len(graphs) == 0 {
		return nil, errors.New("pack graphs: no graphs")
	}
	b := &GraphBatch{NumGraphs: len(graphs), GraphPtr: make([]int32, len(graphs)+1)}
	nnz := 0
	for i, g := range graphs {
		if g == nil {
			return nil, fmt.Errorf("pack graphs: graph %d is nil", i)
		}
		if err := g.Validate(); err != nil {
			return nil, fmt.Errorf("pack graphs: graph %d: %w", i, err)
		}
		if g.X == nil || g.FeatDim <= 0 {
			return nil, fmt.Errorf("pack graphs: graph %d has no features (FeatDim %d): call GraphSet.SetFeatures first", i, g.FeatDim)
		}
		if i == 0 {
			b.FeatDim = g.FeatDim
		} else if g.FeatDim != b.FeatDim {
			return nil, fmt.Errorf("pack graphs: graph %d has FeatDim %d, graph 0 has %d", i, g.FeatDim, b.FeatDim)
		}
		b.NumNodes += g.NumNodes
		if b.NumNodes > math.MaxInt32 {
			return nil, fmt.Errorf("pack graphs: more than %d nodes", math.MaxInt32)
		}
		b.GraphPtr[i+1] = int32(b.NumNodes)
		nnz += 2 * len(g.Edges)
	}
	if nnz > math.MaxInt32 {
		return nil, fmt.Errorf("pack graphs: more than %d adjacency entries", math.MaxInt32)
	}
	b.X = make([]float32, 0, b.NumNodes*b.FeatDim)
	b.RowPtr = make([]int32, b.NumNodes+1)
	for i, g := range graphs {
		b.X = append(b.X, g.X...)
		base := b.GraphPtr[i]
		for _, e := range g.Edges {
			b.RowPtr[base+e[0]+1]++
			if e[0] != e[1] {
				b.RowPtr[base+e[1]+1]++
			}
		}
	}
	for v := 0; v < b.NumNodes; v++ {
		b.RowPtr[v+1] += b.RowPtr[v]
	}
	b.Col = make([]int32, b.RowPtr[b.NumNodes])
	next := append([]int32(nil), b.RowPtr[:b.NumNodes]...)
	for i, g := range graphs {
		base := b.GraphPtr[i]
		for _, e := range g.Edges {
			u, v := base+e[0], base+e[1]
			b.Col[next[u]] = v
			next[u]++
			if u != v {
				b.Col[next[v]] = u
				next[v]++
			}
		}
	}
	return b, nil
}

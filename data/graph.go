// Package data reads, generates and holds the datasets of batchsampler-go.
// It has no dependency on Gorgonia.
//
//   - Graphs: TU Dortmund (ReadTU) and GIN/DGCNN text (ReadGIN) readers, node
//     features (SetFeatures), labelled synthetic graphs (GenerateGraphs).
//   - Images: CIFAR-10/100 binary (ReadCIFAR10, ReadCIFAR100) and IDX
//     (ReadIDX, MNIST/Fashion-MNIST) readers, synthetic images (GenerateImages).
//   - Text: sentence corpora (ReadCorpus), a tokenizer and vocabulary
//     (Tokenize, BuildVocab), STS Benchmark and SICK readers (ReadSTS, ReadSICK).
//   - Downloads with checksum verification and safe zip/tar.gz extraction
//     (Download, ExtractZip, FetchCIFAR, ExtractTarGz).
package data

import "fmt"

// Graph is one undirected graph with node information and a class label.
//
// Edges are stored once per undirected edge with Edges[i][0] <= Edges[i][1];
// a self-loop is stored as {v, v}. Node ids are 0-based and local to the graph.
type Graph struct {
	NumNodes   int
	Edges      [][2]int32
	NodeLabels []int32   // len NumNodes, or nil when the dataset has none
	NodeAttrs  []float32 // NumNodes × AttrDim row-major, or nil
	AttrDim    int
	EdgeLabels []int32 // aligned with Edges, or nil
	// X holds the features the encoder sees: NumNodes × FeatDim, row-major.
	// It is filled by GraphSet.SetFeatures.
	X       []float32
	FeatDim int
	Label   int // class index in [0, NumClasses)
}

// Validate checks the internal consistency of g and returns an error that
// says what is wrong.
func (g *Graph) Validate() error {
	if g.NumNodes < 0 {
		return fmt.Errorf("graph has negative node count %d", g.NumNodes)
	}
	for i, e := range g.Edges {
		if e[0] < 0 || e[1] < 0 || int(e[0]) >= g.NumNodes || int(e[1]) >= g.NumNodes {
			return fmt.Errorf("edge %d (%d,%d) out of range for %d nodes", i, e[0], e[1], g.NumNodes)
		}
		if e[0] > e[1] {
			return fmt.Errorf("edge %d (%d,%d) not stored with u <= v", i, e[0], e[1])
		}
	}
	if g.NodeLabels != nil && len(g.NodeLabels) != g.NumNodes {
		return fmt.Errorf("%d node labels for %d nodes", len(g.NodeLabels), g.NumNodes)
	}
	if g.NodeAttrs != nil && len(g.NodeAttrs) != g.NumNodes*g.AttrDim {
		return fmt.Errorf("%d node attribute values for %d nodes × %d", len(g.NodeAttrs), g.NumNodes, g.AttrDim)
	}
	if g.EdgeLabels != nil && len(g.EdgeLabels) != len(g.Edges) {
		return fmt.Errorf("%d edge labels for %d edges", len(g.EdgeLabels), len(g.Edges))
	}
	if g.X != nil && len(g.X) != g.NumNodes*g.FeatDim {
		return fmt.Errorf("%d feature values for %d nodes × %d", len(g.X), g.NumNodes, g.FeatDim)
	}
	return nil
}

// Degrees returns the degree of every node (a self-loop counts once).
func (g *Graph) Degrees() []int {
	d := make([]int, g.NumNodes)
	for _, e := range g.Edges {
		d[e[0]]++
		if e[1] != e[0] {
			d[e[1]]++
		}
	}
	return d
}

// Clone returns a deep copy of g.
func (g *Graph) Clone() *Graph {
	c := *g
	c.Edges = append([][2]int32(nil), g.Edges...)
	c.NodeLabels = append([]int32(nil), g.NodeLabels...)
	c.NodeAttrs = append([]float32(nil), g.NodeAttrs...)
	c.EdgeLabels = append([]int32(nil), g.EdgeLabels...)
	c.X = append([]float32(nil), g.X...)
	if g.NodeLabels == nil {
		c.NodeLabels = nil
	}
	if g.NodeAttrs == nil {
		c.NodeAttrs = nil
	}
	if g.EdgeLabels == nil {
		c.EdgeLabels = nil
	}
	if g.X == nil {
		c.X = nil
	}
	return &c
}

// GraphSet is a labelled graph classification dataset.
type GraphSet struct {
	Name       string
	Graphs     []*Graph
	NumClasses int
	// ClassValues[c] is the label as written in the source file for class c.
	ClassValues []int
	// NumNodeLabels is 1 + the largest node label (0 when there are none).
	NumNodeLabels int
	// NumEdgeLabels is 1 + the largest edge label (0 when there are none).
	NumEdgeLabels int
	AttrDim       int
	FeatDim       int
}

// Labels returns the class index of every graph.
func (s *GraphSet) Labels() []int {
	y := make([]int, len(s.Graphs))
	for i, g := range s.Graphs {
		y[i] = g.Label
	}
	return y
}

// Package augment builds the random views of contrastive learning. For
// images it has SimCLR's CIFAR pipeline (SimCLRCIFAR: random resized crop,
// flip, colour jitter, grayscale) behind ImageAugmenter. For graphs:
// GraphCL's node dropping, edge removal / perturbation, subgraph and
// attribute masking (You et al., NeurIPS 2020), their random choice and
// composition, and the removal of isolated nodes that GraphCL's data loader
// applies after augmenting.
//
// Every augmenter returns a fresh copy and never modifies its input. Node ids
// of the output are renumbered 0..n'-1 in the order of the original ids, and
// the rows of X, NodeLabels and NodeAttrs and the entries of EdgeLabels stay
// aligned with their nodes and edges. All counts are ⌊n·ratio⌋ (see [Count]).
// The package does not depend on Gorgonia.
//
// Augmenters are plain values without mutable state: one augmenter may be
// used by many goroutines at once, each with its own *rand.Rand. Scratch
// memory comes from a sync.Pool, so an augmentation allocates only its
// output (at most four allocations).
//
// # Differences from GraphCL's unsupervised_TU code
//
// The augmentations follow aug.py and gsimclr.py of GraphCL's repository
// with these deliberate changes, each documented at its type:
//   - [NodeDrop] and [Subgraph] remove the nodes and renumber the rest
//     directly (GraphCL zeroes adjacency rows and lets the loader compact).
//   - [Subgraph] updates its frontier (GraphCL's never grows, so it keeps at
//     most the start node and its neighbours) and keeps exactly
//     ⌊n·ratio⌋ nodes (GraphCL keeps up to one more).
//   - [EdgeRemove] removes whole undirected edges (GraphCL removes entries of
//     the directed edge list, which can leave one direction of an edge).
//   - [DropIsolated] also removes nodes that merely lost all neighbours:
//     GraphCL gives every node a self-loop first, which protects them.
package augment

import (
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/data"
)

// GraphAugmenter returns an augmented copy of g; g is never modified.
//
// Implementations in this package return nil for a nil g, and an unchanged
// copy of g when g fails (*data.Graph).Validate (they never panic on it). The
// returned graph shares no memory with g.
type GraphAugmenter interface {
	Augment(g *data.Graph, rng *rand.Rand) *data.Graph
}

// Identity returns an unchanged copy of the graph.
type Identity struct{}

// Augment returns a deep copy of g.
func (Identity) Augment(g *data.Graph, _ *rand.Rand) *data.Graph {
	if g == nil {
		return nil
	}
	return clone(g)
}

// String returns "identity".
func (Identity) String() string { return "identity" }

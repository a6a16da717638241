// Package viz is the teaching demo of BatchSampler (cmd/samplerdemo):
// it draws, with gonum.org/v1/plot, what global hard-negative batching does
// on a labelled 2-D point set.
//
// The point set (CirclePoints) lies on a ring, class c centred at the angle
// 2πc/C. All samplers compare instances by the cosine of their L2-normalised
// embeddings, which in 2-D is the cosine of the angle between two points, so
// on a ring "near on the page" means "similar to the samplers" (the small
// radial jitter only keeps the dots apart and is ignored by the cosine).
//
// Run writes, into one directory:
//   - points.png: the points coloured by class, with one angle θ marked;
//   - proximity_graph.png and proximity_graph_M.png: the proximity graph of
//     Algorithm 2 (M candidates, K neighbours) and, side by side, M = K
//     (random neighbours) and M = N−1 (the exact kNN graph);
//   - batch_uniform.png, batch_knn.png, batch_batchsampler.png: one batch of
//     each sampler over the grey cloud, with its false-negative ratio (share
//     of same-class pairs) and mean cosine;
//   - batches_alpha.png: random walks with restart from one start node for
//     several α, each with the path it took (TraceRWR, which mirrors
//     sampler.Walk step by step) and how often each node lands in the batch;
//   - summary.md: the false-negative ratio and mean cosine of every sampler
//     averaged over many batches (sampler.MeasureBatches).
//
// The package imports sampler only (never Gorgonia); everything is a
// deterministic function of the Config.
package viz

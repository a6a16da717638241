// Package lab is the engine of the teaching page of cmd/samplerdemo: what
// the page shows is computed here, by the project's sampler package, and
// the page (compiled to WebAssembly, cmd/samplerdemo/wasm) only draws it.
//
//   - data.go: the generated point set, classes made of sub-clusters
//     interleaved with other classes' sub-clusters on a circle or a sphere,
//     so that a near neighbour may be a hard true negative or a false
//     negative; npy.go: "your own run", the .npy embeddings and labels of
//     cmd/train -embed, shown through a 2-D PCA (pca.go).
//   - lab.go: a Lab holds the data and the sampler being looked at; Batch
//     hands out its batches with the walk that built them (BatchSampler's
//     SetWalkTrace), the graph rows around it and the batch's diagnostics
//     (sampler.FalseNegativeRatio, HardNegativeRatio, MeanCosine,
//     CosineHistogram); Measure averages them over many batches.
//   - mlp.go, train.go: train mode, a small MLP trained with InfoNCE once
//     per sampler from the same seed (sampler.Driver refreshes the graphs
//     from the encoder's embeddings), with a kNN probe.
//   - api.go: the JSON calls the page makes (Call), the same in a native
//     test as in the browser.
//
// Everything is a deterministic function of its inputs and seeds.
package lab

// Package model holds the encoders of batchsampler-go on Gorgonia, their
// projection heads, and the optimizer that steps an embedding table:
//
//   - [GIN] (gin.go): GraphCL's graph isomorphism network with its
//     projection head, and a pure-Go evaluation-mode forward (embed.go) for
//     embedding whole datasets; graphs are packed by [PackGraphs];
//   - [MVGRL] (gcn.go, mvgrl.go): two [GCN] encoders, one per view of a
//     [ViewBatch] (adjacency and diffusion), with two [ShortcutMLP] heads;
//   - [ResNet] (resnet.go): CIFAR-style residual networks (presets ResNet-8,
//     -14, -20 and a narrow ResNet-18, [ResNetPreset]; a CIFAR or ImageNet
//     stem) with a SimCLR projection head and BatchNorm running statistics;
//   - [MLP] (mlp.go): MoCo v3's bias-free projector and predictor heads;
//   - [TextMLP] (text.go): the sentence encoder, a weighted bag of word
//     vectors followed by a residual MLP with seeded dropout;
//   - [RowAdam] (Adam on the rows of an embedding table that a batch
//     touches, the text encoder's sparse update); the dense optimizers
//     (Adam, AdamW, SGD, LARS) are package optim's.
//
// The layers' operations are package model/ops.
//
// GIN (GraphCL's TU setting): Layers GIN layers of width Hidden, layer ℓ
// computing h' = BN(ReLU(MLP_ℓ(h_v + Σ_{u∈N(v)} h_u))) with MLP = Linear →
// ReLU → Linear and BatchNorm as PyTorch's BatchNorm1d; the graph embedding
// concatenates the sum-pooled node outputs of every layer (Layers·Hidden
// values); the projection head is Linear → ReLU → Linear.
//
// A training step binds the parameters into a Gorgonia graph, encodes both
// views through the same [Bound], differentiates, reads [Bound.Grads],
// steps an optimizer of package optim and folds the batch statistics into the BatchNorm running
// buffers with [Bound.CommitStats] (see the package example). The other
// models bind the same way ([MVGRLBound], [ResNetBound], [MLPBound],
// [TextBound]).
package model

// Package ops holds the custom Gorgonia operations of the encoders.
//
// Graph and text encoders:
//
//   - [SpMM]: a fixed, non-differentiable sparse CSR matrix times a dense
//     node, with the gradient csrᵀ·dY (neighbour aggregation and sum pooling);
//   - [BatchNorm]: batch normalisation over the rows of an n×C matrix, in
//     training mode (batch statistics, exposed for the running buffers) or in
//     evaluation mode (given running statistics), with analytic gradients
//     with respect to x, γ and β;
//   - [Linear]: act(x·W + b) in one op (float32 GEMMs on internal/gemm, rows
//     split between goroutines, bias and ReLU fused), whose backward can skip
//     dx for inputs that need no gradient;
//   - [BiasAct]: a fused row-broadcast bias addition with an optional ReLU;
//   - [ColSum]: the column sums of a matrix (used by the gradients above);
//   - [WSpMM]: a fixed sparse matrix with values ([WeightedCSR]: a
//     normalised adjacency or a graph diffusion) times a dense node, with
//     the gradient Mᵀ·dY (MVGRL's GCN propagation);
//   - [PReLU]: max(x, 0) + a·min(x, 0) with a learnable slope (one, or one
//     per column), with gradients with respect to x and the slope.
//
// Image encoders (a CIFAR ResNet), on [N,C,H,W] tensors:
//
//   - [Conv2D]: 2-D convolution without bias (im2col + GEMM per image,
//     written straight into NCHW; 1×1 stride-1 convolutions skip im2col,
//     and other stride-1 ones read the columns from a padded copy of the
//     image through a table of offsets, with the same bits; or, with
//     ConvOpts.Winograd, Winograd's F(2×2, 3×3) for float32 3×3 stride-1
//     convolutions of 8 or more channels: the same function, other
//     rounding), with dX (skippable) and dW as further ops;
//   - [BatchNorm2D]: per-channel batch normalisation over N·H·W, the same
//     [BNConfig] and [BatchNormOp] as [BatchNorm], optionally fused with a
//     ReLU (BNConfig.ReLU);
//   - [ScaleShiftRows] and [AddRows]: row kernels for the models'
//     evaluation-mode passes outside the graph;
//   - [ReLU] and [AddReLU] (the residual join relu(a+b)): tensors of any
//     shape, gradients masked by the output's sign in one pass;
//   - [GlobalAvgPool]: [N,C,H,W] → [N,C].
//
// Between graphs: an [Exchange] lets two graphs run at the same time by two
// tape machines swap one tensor mid-run (a SimCLR step runs each view's
// network in a graph of its own, one per core, and swaps the projections
// for the loss); the swapped value is a constant to the receiving graph.
// SwapGrad also swaps the gradients back in the backward pass (MVGRL's
// step: each view's graph-head output feeds the other view's objective
// term), so that each graph's input gets the gradient one graph holding
// both would give it.
//
// Every op works on float32 and float64, writes its whole output (the tape
// machine reuses buffers), includes all of its parameters in WriteHash (so
// common-subexpression elimination never merges different ops), and
// implements SymDiff for gorgonia.Grad with gradients made of further ops.
// The parts of gorgonia.Op that follow from an op's parameters (arity,
// type, hash, name) come from an embedded internal/gop.Base that the op's
// constructor fills in, so ops are built by the functions of this package:
// the zero value of an op type is not usable.
// Parallel kernels give every output element to exactly one goroutine, and
// reductions across goroutines (dW of a convolution, xᵀ·dz of Linear) add
// partial results over a fixed partition in a fixed order, so results are
// bit-identical from run to run and for any GOMAXPROCS. Scratch memory
// (im2col columns, partial sums) comes from a package pool and is reused
// across runs; [SetOutputReuse] (off by default) also keeps the ops' output
// tensors across runs of a tape machine.
//
// Why written by hand: Gorgonia 0.9.18 has no sparse matrix product, and its
// Conv2d, SoftMax and BatchNorm are slow or wrong for these networks; it
// gives every op output a new tensor, and Go has no reference counts to free
// one after its last reader, hence [Arena]. The AVX-512 row kernels multiply
// and add separately so that every lane rounds as the scalar loop does (the
// recorded results keep their bits); Winograd's F(2×2, 3×3) exists in no Go
// library. docs/dependencies.md lists every hand-written part of the module.
package ops

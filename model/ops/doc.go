// Package ops holds the custom Gorgonia operations of the graph encoder:
//
//   - [SpMM]: a fixed, non-differentiable sparse CSR matrix times a dense
//     node, with the gradient csrᵀ·dY (neighbour aggregation and sum pooling);
//   - [BatchNorm]: batch normalisation over the rows of an n×C matrix, in
//     training mode (batch statistics, exposed for the running buffers) or in
//     evaluation mode (given running statistics), with analytic gradients
//     with respect to x, γ and β;
//   - [Linear]: act(x·W + b) in one op (GEMM on gonum's registered BLAS with
//     rows split between goroutines, bias and ReLU fused), whose backward
//     can skip dx for inputs that need no gradient;
//   - [BiasAct]: a fused row-broadcast bias addition with an optional ReLU;
//   - [ColSum]: the column sums of a matrix (used by the gradients above).
//
// Every op works on float32 and float64 matrices, writes its whole output
// (the tape machine reuses buffers), includes all of its parameters in
// WriteHash (so common-subexpression elimination never merges different
// ops), and implements SymDiff for gorgonia.Grad. Parallel kernels split the
// output rows between goroutines, each row written by exactly one goroutine
// in a fixed order, so results are deterministic.
package ops

// Package openblas binds OpenBLAS's cblas_sgemm for internal/gemm's
// openblas build (build tag openblas, cgo, Debian package libopenblas-dev).
//
// It lives apart from internal/gemm because Go does not allow cgo and Go
// assembly in one package. Without the openblas tag (or without cgo) the
// package is empty and the module stays cgo-free. With it, importing the
// package sets OpenBLAS to one thread (callers parallelise in Go: idle
// OpenBLAS threads spin and steal the Go workers' cores) and routes
// Gorgonia's own BLAS calls to OpenBLAS through gonum's netlib bindings.
package openblas

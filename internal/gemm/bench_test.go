package gemm

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// benchShapes are the products of a CIFAR ResNet (16/32/64 channels, 3×3
// convolutions as im2col + GEMM) per image or per batch chunk, its linear
// layers, and a square reference.
var benchShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"fwd_16x1024x144", false, false, 16, 1024, 144},
	{"fwd_32x256x288", false, false, 32, 256, 288},
	{"fwd_64x64x576", false, false, 64, 64, 576},
	{"fwdbatch_16x8192x144", false, false, 16, 8192, 144},
	{"fwdbatch_64x4096x576", false, false, 64, 4096, 576},
	{"dW_NT_16x144x8192", false, true, 16, 144, 8192},
	{"dCol_TN_144x8192x16", true, false, 144, 8192, 16},
	{"linear_256x128x64", false, false, 256, 128, 64},
	{"linear_256x64x64", false, false, 256, 64, 64},
	{"square_1024", false, false, 1024, 1024, 1024},
}

// BenchmarkSgemm reports GFLOP/s (2·m·n·k per call) for each shape:
//   - every native kernel set this CPU supports, on one goroutine, calling
//     the native GEMM directly ("go", which is gonum, is left out with
//     -short when an assembly kernel exists);
//   - Sgemm as built, named after its backend, when that is OpenBLAS;
//   - SgemmParallel with 2 workers ("par2", the default backend);
//   - gonum's blas32.Gemm for comparison.
func BenchmarkSgemm(b *testing.B) {
	for _, s := range benchShapes {
		rng := rand.New(rand.NewPCG(1, 1))
		ar, ac := s.m, s.k
		if s.transA {
			ar, ac = s.k, s.m
		}
		br, bc := s.k, s.n
		if s.transB {
			br, bc = s.n, s.k
		}
		a := fill(rng, ar, ac, ac, 0)
		bm := fill(rng, br, bc, bc, 0)
		c := make([]float32, s.m*s.n)
		flop := 2 * float64(s.m) * float64(s.n) * float64(s.k)
		report := func(b *testing.B) {
			b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		for l := levelGo; l <= bestLevel; l++ {
			if l == levelGo && bestLevel > levelGo && testing.Short() {
				continue
			}
			b.Run(s.name+"/"+kernelSets[l].name, func(b *testing.B) {
				defer func() { level = bestLevel }()
				level = l
				for b.Loop() {
					sgemmNative(s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, c, s.n)
				}
				report(b)
			})
		}
		if Backend() == "openblas" {
			b.Run(s.name+"/openblas", func(b *testing.B) {
				for b.Loop() {
					Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, c, s.n)
				}
				report(b)
			})
		}
		b.Run(s.name+"/"+Backend()+"-par2", func(b *testing.B) {
			for b.Loop() {
				SgemmParallel(2, s.transA, s.transB, s.m, s.n, s.k, 1, a, ac, bm, bc, 0, c, s.n)
			}
			report(b)
		})
		b.Run(s.name+"/gonum", func(b *testing.B) {
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.transA {
				ta = blas.Trans
			}
			if s.transB {
				tb = blas.Trans
			}
			A := blas32.General{Rows: ar, Cols: ac, Stride: ac, Data: a}
			B := blas32.General{Rows: br, Cols: bc, Stride: bc, Data: bm}
			C := blas32.General{Rows: s.m, Cols: s.n, Stride: s.n, Data: c}
			for b.Loop() {
				blas32.Gemm(ta, tb, 1, A, B, 0, C)
			}
			report(b)
		})
	}
}

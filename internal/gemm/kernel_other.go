//go:build !amd64 || purego

package gemm

// Without the assembly micro-kernels (other architectures, or the purego
// build tag) Sgemm is gonum's pure-Go BLAS.
var (
	bestLevel  = levelGo
	kernelSets = []kernelSet{
		levelGo: {name: "go", mr: mr6, nr: nr16},
	}
)

func copyPanelAsm(w int, dst, src []float32, lds, p0, kb, j0 int) bool { return false }

func gatherPanelAsm(w int, dst, src []float32, lds, p0, kb, j0 int) int { return 0 }

const haveDot = false

func dotKernel(k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	panic("gemm: dotKernel without AVX-512")
}

const haveIndirect = false

func kernIndirect(k int, a, b []float32, offs []int32, c []float32, ldc, rows int, beta float32) {
	panic("gemm: kernIndirect without AVX-512")
}

func dotIndirect(k int, a []float32, lda int, b []float32, boffs, seg []int32, c []float32, ldc int, beta float32) {
	panic("gemm: dotIndirect without AVX-512")
}

var haveAxpyKernel = false

func axpyRows64(m, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, masks *[4]uint16, relu bool) {
	panic("gemm: axpyRows64 without AVX-512")
}

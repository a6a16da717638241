//go:build !amd64 || purego

package eval

// Without the assembly kernels (other architectures, or the purego build
// tag) the SMO loops are the scalar ones of smo_kernels.go.
const haveSMOKernels = false

func gradUpdateVec(yG []float64, fl []uint8, Ki, Kj []float32, dai, daj float64) (int, float64, int) {
	panic("unreachable")
}

func wss2Vec(yG []float64, fl []uint8, Ki []float32, Gmax float64) (int, float64, float64, int) {
	panic("unreachable")
}

const haveExpKernel = false

func expScaledVec(dst, src []float64, scale float64) int { return 0 }

func gatherVec(dst, src []float32, idx []int32) int { return 0 }

func addScaledGatherVec(dst []float64, src []float32, idx []int32, c float64) int { return 0 }

func addScaledVec(dst []float64, src []float32, c float64) int { return 0 }

func kernelRowVec(dst []float32, drow []float64, idx []int, scale float64) int { return 0 }

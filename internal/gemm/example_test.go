package gemm_test

import (
	"fmt"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
)

// A convolution as im2col + GEMM: the 2×3 weight matrix W (2 output
// channels, 3 = C_in·kh·kw taps) times the 3×4 column matrix (4 output
// pixels) gives the 2×4 output, Y = W·col.
func ExampleSgemm() {
	w := []float32{
		1, 0, -1,
		0.5, 0.5, 0.5,
	}
	col := []float32{
		1, 2, 3, 4,
		0, 1, 0, 1,
		2, 2, 2, 2,
	}
	y := make([]float32, 2*4)
	gemm.Sgemm(false, false, 2, 4, 3, 1, w, 3, col, 4, 0, y, 4)
	fmt.Println(y[:4])
	fmt.Println(y[4:])

	// The weight gradient dW = dY·colᵀ reads col transposed in place and
	// accumulates into dW with beta = 1.
	dy := []float32{1, 0, 0, 1, 0, 1, 1, 0}
	dw := make([]float32, 2*3)
	gemm.Sgemm(false, true, 2, 3, 4, 1, dy, 4, col, 4, 1, dw, 3)
	fmt.Println(dw)
	// Output:
	// [-1 0 1 2]
	// [1.5 2.5 2.5 3.5]
	// [5 1 4 5 1 4]
}

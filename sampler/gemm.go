package sampler

// Dense float32 products C = A·Bᵀ for the graph builders (proximity.go).
//
// The rows of A (a block of nodes) and of B (candidate nodes) are both
// embedding rows of length d. B is first packed into panels of 16 columns
// (panel p holds, for k = 0..d-1, the 16 values B[16p+j][k] contiguously), and
// a 6×16 register-tiled micro-kernel computes each tile of C. On amd64 with
// AVX2+FMA the micro-kernel is Go assembly (gemm_amd64.s, ~100 GFLOP/s per
// core). Elsewhere, or with the purego build tag, scoreBlock (proximity.go)
// uses gonum's BLAS instead (kern6x16Go, the plain Go version of the
// micro-kernel, documents and tests the contract). No cgo is involved.

const (
	tileRows = 6  // rows of A per micro-kernel call
	tileCols = 16 // columns of C per micro-kernel call (one packed panel)
)

// useAsmKernel selects the assembly micro-kernel when the CPU supports it.
// Tests switch it off to exercise the Go kernel.
var useAsmKernel = haveAVX2

// roundUp rounds x up to a multiple of m.
func roundUp(x, m int) int { return (x + m - 1) / m * m }

// kern6x16Go computes C[0:6][0:16] = A[0:6][0:k] · P[0:k][0:16]: A row-major
// with row stride lda, P one packed panel (k rows of 16 floats), C row-major
// with row stride ldc. C is overwritten.
func kern6x16Go(k int, a []float32, lda int, p []float32, c []float32, ldc int) {
	var acc [tileRows][tileCols]float32
	for l := 0; l < k; l++ {
		pr := p[l*tileCols : l*tileCols+tileCols : l*tileCols+tileCols]
		for r := 0; r < tileRows; r++ {
			av := a[r*lda+l]
			row := &acc[r]
			for j, pv := range pr {
				row[j] += av * pv
			}
		}
	}
	for r := 0; r < tileRows; r++ {
		copy(c[r*ldc:r*ldc+tileCols], acc[r][:])
	}
}

// packPanels writes the rows rows[0..n) of the row-major matrix src (row
// length d) into dst as ceil(n/16) panels of d×16 values, padding missing
// columns with zeros. rows == nil means rows 0..n-1. dst must have length at
// least roundUp(n,16)·d.
func packPanels(dst []float32, src []float32, d int, rows []int32, n int) {
	var zero []float32
	var cols [tileCols][]float32
	np := roundUp(n, tileCols) / tileCols
	for p := 0; p < np; p++ {
		for j := range cols {
			col := p*tileCols + j
			switch {
			case col >= n:
				if zero == nil {
					zero = make([]float32, d)
				}
				cols[j] = zero
			case rows == nil:
				cols[j] = src[col*d : col*d+d]
			default:
				r := int(rows[col])
				cols[j] = src[r*d : r*d+d]
			}
		}
		panel := dst[p*tileCols*d : (p+1)*tileCols*d]
		// Locals of length exactly d let the compiler drop the bounds checks.
		c0, c1, c2, c3 := cols[0][:d], cols[1][:d], cols[2][:d], cols[3][:d]
		c4, c5, c6, c7 := cols[4][:d], cols[5][:d], cols[6][:d], cols[7][:d]
		c8, c9, c10, c11 := cols[8][:d], cols[9][:d], cols[10][:d], cols[11][:d]
		c12, c13, c14, c15 := cols[12][:d], cols[13][:d], cols[14][:d], cols[15][:d]
		for l := range c0 {
			out := (*[tileCols]float32)(panel[l*tileCols:])
			out[0], out[1], out[2], out[3] = c0[l], c1[l], c2[l], c3[l]
			out[4], out[5], out[6], out[7] = c4[l], c5[l], c6[l], c7[l]
			out[8], out[9], out[10], out[11] = c8[l], c9[l], c10[l], c11[l]
			out[12], out[13], out[14], out[15] = c12[l], c13[l], c14[l], c15[l]
		}
	}
}

// gemmPacked computes C = A·Pᵀ where A has mPad rows (a multiple of 6, row
// stride d), P holds nPad/16 packed panels (see packPanels) and C has mPad
// rows with stride ldc ≥ nPad. The panel loop is outermost so that one panel
// (16·d floats) stays in L1 while the rows of A stream past it.
func gemmPacked(mPad, nPad, d int, a, p, c []float32, ldc int) {
	kern := kern6x16Go
	if useAsmKernel {
		kern = kern6x16Asm
	}
	for pc := 0; pc < nPad; pc += tileCols {
		panel := p[pc*d : (pc+tileCols)*d]
		for r := 0; r < mPad; r += tileRows {
			kern(d, a[r*d:(r+tileRows)*d], d, panel, c[r*ldc+pc:], ldc)
		}
	}
}

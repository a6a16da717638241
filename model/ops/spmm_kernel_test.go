package ops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRowKernelsMatchScalar checks the AVX-512 rows of SpMM and WSpMM bit
// for bit against the scalar loops they replace, for widths around the
// kernels' 16- and 128-column blocks, empty rows and repeated columns.
func TestRowKernelsMatchScalar(t *testing.T) {
	if !haveKernels {
		t.Skip("no AVX-512 row kernels on this CPU")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []int{1, 3, 15, 16, 17, 31, 64, 100, 127, 128, 129, 143, 256, 300, 512} {
		const rows, cols = 37, 23
		rowPtr := make([]int32, rows+1)
		var col []int32
		var val []float32
		for r := 0; r < rows; r++ {
			n := rng.IntN(9) // 0..8 entries, some rows empty
			for k := 0; k < n; k++ {
				col = append(col, int32(rng.IntN(cols)))
				val = append(val, float32(rng.NormFloat64()))
			}
			rowPtr[r+1] = int32(len(col))
		}
		x := make([]float32, cols*f)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 3)
		}
		for _, weighted := range []bool{false, true} {
			want := make([]float32, rows*f)
			for r := 0; r < rows; r++ {
				dst := want[r*f : r*f+f]
				for k := rowPtr[r]; k < rowPtr[r+1]; k++ {
					src := x[int(col[k])*f : int(col[k])*f+f]
					for j := range dst {
						if weighted {
							p := val[k] * src[j]
							dst[j] += p
						} else {
							dst[j] += src[j]
						}
					}
				}
			}
			got := make([]float32, rows*f)
			for i := range got {
				got[i] = float32(math.NaN()) // every entry must be written
			}
			for r := 0; r < rows; r++ {
				k0, n := rowPtr[r], int(rowPtr[r+1]-rowPtr[r])
				colp, valp := &col[0], &val[0]
				if int(k0) < len(col) {
					colp, valp = &col[k0], &val[k0]
				}
				if weighted {
					wspmmRow32(&got[r*f], &x[0], colp, valp, n, f)
				} else {
					spmmRow32(&got[r*f], &x[0], colp, nil, n, f)
				}
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("f=%d weighted=%v: out[%d] (row %d) = %v, scalar %v", f, weighted, i, i/f, got[i], want[i])
				}
			}
		}
	}
}

// TestRowKernelSafe: a matrix whose indices leave x or out takes the scalar
// loops (which panic on the bad index) instead of the raw-pointer kernels.
func TestRowKernelSafe(t *testing.T) {
	rp, col := []int32{0, 1, 2}, []int32{0, 1}
	tests := []struct {
		name                  string
		rows, cols, xLen, out int
		rowPtr, col           []int32
		f                     int
		want                  bool
	}{
		{"valid", 2, 2, 8, 8, rp, col, 4, true},
		{"short x", 2, 2, 7, 8, rp, col, 4, false},
		{"short out", 2, 2, 8, 7, rp, col, 4, false},
		{"column out of range", 2, 2, 8, 8, rp, []int32{0, 2}, 4, false},
		{"negative column", 2, 2, 8, 8, rp, []int32{-1, 0}, 4, false},
		{"rowPtr past col", 2, 2, 8, 8, []int32{0, 1, 3}, col, 4, false},
		{"decreasing rowPtr", 2, 2, 8, 8, []int32{0, 2, 1}, col, 4, false},
		{"zero width", 2, 2, 0, 0, rp, col, 0, false},
	}
	for _, tt := range tests {
		if got := sizesFit(tt.rows, tt.cols, tt.xLen, tt.out, tt.f) && checkPattern(tt.rows, tt.cols, tt.rowPtr, tt.col) == nil; got != tt.want {
			t.Errorf("%s: kernels allowed = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// BenchmarkWSpMM: one MVGRL diffusion product of a COLLAB-sized batch
// (9,500 nodes, 64 entries a row, 128 features), with the row kernels and
// with the scalar loops.
func BenchmarkWSpMM(b *testing.B) {
	const rows, perRow, f = 9500, 64, 128
	rng := rand.New(rand.NewPCG(3, 4))
	rowPtr := make([]int32, rows+1)
	col := make([]int32, 0, rows*perRow)
	val := make([]float64, 0, rows*perRow)
	for r := 0; r < rows; r++ {
		base := r / 74 * 74 // graphs of 74 nodes: the columns of a row are near it
		for k := 0; k < perRow; k++ {
			col = append(col, int32(min(base+rng.IntN(74), rows-1)))
			val = append(val, rng.Float64())
		}
		rowPtr[r+1] = int32(len(col))
	}
	m, err := NewWeightedCSR(rows, rows, rowPtr, col, val)
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float32, rows*f)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	out := make([]float32, rows*f)
	for _, kernels := range []bool{true, false} {
		name := "scalar"
		if kernels {
			name = "kernels"
			if !haveKernels {
				continue
			}
		}
		b.Run(name, func(b *testing.B) {
			defer setKernels(haveKernels)
			setKernels(kernels)
			b.SetBytes(int64(m.NNZ() * f * 4))
			for b.Loop() {
				WSpMMFloat32(m, x, f, out)
			}
		})
	}
}

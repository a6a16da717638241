package ops

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randBlock returns a random square block of n rows with up to perRow
// entries a row (columns increasing, some rows empty), values of either
// sign.
func randBlock(rng *rand.Rand, n, perRow int) WeightedBlock {
	b := WeightedBlock{N: n, RowPtr: make([]int32, 1, n+1)}
	for range n {
		cols := rng.Perm(n)[:rng.IntN(min(perRow, n)+1)]
		slices.Sort(cols)
		for _, c := range cols {
			b.Col = append(b.Col, int32(c))
			b.Val = append(b.Val, rng.NormFloat64())
		}
		b.RowPtr = append(b.RowPtr, int32(len(b.Col)))
	}
	return b
}

// TestBlockDiagWeighted checks the assembled matrix, its transpose and
// their float32 values against the general path (NewWeightedCSR on the
// arrays built by a plain loop, then T and the lazy float32 values) bit
// for bit, and its dense form against a float64 loop over the blocks; the
// products with the prepared transpose then give the lazy path's bits.
func TestBlockDiagWeighted(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 2))
	for _, sizes := range [][]int{{1}, {3, 0, 5}, {7, 1, 1, 12, 4}, {0}, {30, 2, 17}} {
		var blocks []WeightedBlock
		for _, n := range sizes {
			blocks = append(blocks, randBlock(rng, n, 4))
		}
		got, err := BlockDiagWeighted(blocks)
		if err != nil {
			t.Fatal(err)
		}
		// The reference: the arrays by a plain loop, the lazy path's T.
		rowPtr, col, val := []int32{0}, []int32{}, []float64{}
		base := 0
		for _, b := range blocks {
			for r := range b.N {
				for k := b.RowPtr[r]; k < b.RowPtr[r+1]; k++ {
					col = append(col, int32(base)+b.Col[k])
					val = append(val, b.Val[k])
				}
				rowPtr = append(rowPtr, int32(len(col)))
			}
			base += b.N
		}
		want, err := NewWeightedCSR(base, base, rowPtr, col, val)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			name      string
			got, want *WeightedCSR
		}{{"matrix", got, want}, {"transpose", got.T(), want.T()}} {
			g, w := p.got, p.want
			if g.Rows != w.Rows || g.Cols != w.Cols || !slices.Equal(g.RowPtr, w.RowPtr) || !slices.Equal(g.Col, w.Col) {
				t.Fatalf("blocks %v: %s pattern %d×%d %v %v, want %d×%d %v %v", sizes, p.name, g.Rows, g.Cols, g.RowPtr, g.Col, w.Rows, w.Cols, w.RowPtr, w.Col)
			}
			for k := range w.Val {
				if math.Float64bits(g.Val[k]) != math.Float64bits(w.Val[k]) || math.Float32bits(g.val32()[k]) != math.Float32bits(w.val32()[k]) {
					t.Fatalf("blocks %v: %s value %d: %v (%v), want %v (%v)", sizes, p.name, k, g.Val[k], g.val32()[k], w.Val[k], w.val32()[k])
				}
			}
			if g.Hash() != w.Hash() {
				t.Errorf("blocks %v: %s hash %x, want %x", sizes, p.name, g.Hash(), w.Hash())
			}
			if !g.inRange() {
				t.Errorf("blocks %v: %s not marked in range", sizes, p.name)
			}
		}
		if got.T().T() != got {
			t.Errorf("blocks %v: Mᵀᵀ is not M", sizes)
		}
		// The dense form against the blocks, by a float64 loop.
		d, dt := denseOfW(got), denseOfW(got.T())
		base = 0
		for _, b := range blocks {
			for r := range b.N {
				for c := range b.N {
					var v float64
					for k := b.RowPtr[r]; k < b.RowPtr[r+1]; k++ {
						if int(b.Col[k]) == c {
							v += b.Val[k]
						}
					}
					if d[base+r][base+c] != v || dt[base+c][base+r] != v {
						t.Fatalf("blocks %v: (%d, %d) = %v, transpose %v, block %v", sizes, base+r, base+c, d[base+r][base+c], dt[base+c][base+r], v)
					}
				}
			}
			base += b.N
		}
		// Products: the prepared matrices give the lazy path's bits.
		const f = 5
		x := make([]float32, base*f)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		for _, p := range [][2]*WeightedCSR{{got, want}, {got.T(), want.T()}} {
			y1, y2 := make([]float32, base*f), make([]float32, base*f)
			WSpMMFloat32(p[0], x, f, y1)
			WSpMMFloat32(p[1], x, f, y2)
			if i := sameBits32(y1, y2); i >= 0 {
				t.Fatalf("blocks %v: product %d: %v, lazy %v", sizes, i, y1[i], y2[i])
			}
		}
	}
}

func TestBlockDiagWeightedRejects(t *testing.T) {
	ok := WeightedBlock{N: 2, RowPtr: []int32{0, 1, 2}, Col: []int32{1, 0}, Val: []float64{1, 2}}
	for _, c := range []struct {
		name string
		bad  WeightedBlock
		want string
	}{
		{"row pointers", WeightedBlock{N: 2, RowPtr: []int32{0, 1}, Col: []int32{0}, Val: []float64{1}}, "block 1: 2 rows, 2 row pointers"},
		{"values", WeightedBlock{N: 1, RowPtr: []int32{0, 1}, Col: []int32{0}}, "0 values"},
		{"decreasing", WeightedBlock{N: 2, RowPtr: []int32{0, 3, 2}, Col: []int32{0, 1}, Val: []float64{1, 1}}, "decreasing or past"},
		{"column", WeightedBlock{N: 2, RowPtr: []int32{0, 1, 1}, Col: []int32{2}, Val: []float64{1}}, "block 1: Col[0] = 2 out of range [0, 2)"},
		{"NaN", WeightedBlock{N: 1, RowPtr: []int32{0, 1}, Col: []int32{0}, Val: []float64{math.NaN()}}, "NaN"},
		{"Inf", WeightedBlock{N: 1, RowPtr: []int32{0, 1}, Col: []int32{0}, Val: []float64{math.Inf(1)}}, "Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := BlockDiagWeighted([]WeightedBlock{ok, c.bad}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gorgonia.org/tensor"
)

// TestRowAdamDenseEqualsAdam checks that RowAdam without Lazy is Adam to
// the bit, on gradients that are zero in some rows.
func TestRowAdamDenseEqualsAdam(t *testing.T) {
	const rows, dim = 6, 3
	rng := rand.New(rand.NewPCG(3, 4))
	init := make([]float32, rows*dim)
	for i := range init {
		init[i] = float32(rng.NormFloat64())
	}
	p := &Param{Name: "table", Value: tensor.New(tensor.WithShape(rows, dim), tensor.WithBacking(slices.Clone(init))), Trainable: true}
	ref := newAdam(0.05, []*Param{p})
	table := slices.Clone(init)
	ra, err := NewRowAdam(0.05, rows, dim, false, "table")
	if err != nil {
		t.Fatal(err)
	}
	for step := range 7 {
		g := make([]float32, rows*dim)
		for r := range rows {
			if (r+step)%3 == 0 {
				continue // an untouched row
			}
			for j := range dim {
				g[r*dim+j] = float32(rng.NormFloat64())
			}
		}
		if err := ref.Step([][]float32{g}); err != nil {
			t.Fatal(err)
		}
		if err := ra.Step(table, g, nil); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(table, p.Value.Float32s()) {
		t.Errorf("dense RowAdam %v\nAdam %v", table, p.Value.Float32s())
	}
	if ra.Steps() != 7 {
		t.Errorf("%d steps, want 7", ra.Steps())
	}
}

// TestRowAdamLazyReference checks the lazy variant against a float64 loop
// of its definition: only listed rows are read, decayed and moved, with the
// global step count in the bias corrections.
func TestRowAdamLazyReference(t *testing.T) {
	const rows, dim, lr = 5, 2, 0.1
	rng := rand.New(rand.NewPCG(8, 1))
	table := make([]float32, rows*dim)
	ref := make([]float64, rows*dim)
	for i := range table {
		table[i] = float32(rng.NormFloat64())
		ref[i] = float64(table[i])
	}
	m, v := make([]float64, rows*dim), make([]float64, rows*dim)
	ra, err := NewRowAdam(lr, rows, dim, true, "emb")
	if err != nil {
		t.Fatal(err)
	}
	lists := [][]int32{{0, 2}, {2}, {1, 3, 4}, {}, {0, 4}, {2, 3}}
	for step, touched := range lists {
		g := make([]float32, rows*dim)
		for i := range g {
			// Values outside the listed rows must be ignored.
			g[i] = float32(rng.NormFloat64())
		}
		if err := ra.Step(table, g, touched); err != nil {
			t.Fatal(err)
		}
		tt := float64(step + 1)
		for _, r := range touched {
			for j := range dim {
				k := int(r)*dim + j
				gr := float64(g[k])
				m[k] = 0.9*m[k] + 0.1*gr
				v[k] = 0.999*v[k] + 0.001*gr*gr
				ref[k] -= lr / (1 - math.Pow(0.9, tt)) * m[k] / (math.Sqrt(v[k])/math.Sqrt(1-math.Pow(0.999, tt)) + 1e-8)
			}
		}
		for k, want := range ref {
			if got := float64(table[k]); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
				t.Fatalf("step %d: table[%d] = %v, want %v", step+1, k, got, want)
			}
		}
	}
	st := ra.State()
	if len(st) != 3 || st[0].Name != "emb.adam_m" || st[0].Trainable || st[2].Value.Float32s()[0] != float32(len(lists)) {
		t.Errorf("state params %v", st)
	}
	// The moments of a row touched once and then left alone stay as they
	// were after its last update.
	if got, want := float64(st[0].Value.Float32s()[1*dim]), m[1*dim]; math.Abs(got-want) > 1e-6 {
		t.Errorf("row 1 first moment %v, want %v (not decayed while untouched)", got, want)
	}
}

func TestRowAdamRejects(t *testing.T) {
	if _, err := NewRowAdam(0.1, 0, 3, true, "x"); err == nil {
		t.Error("empty table: no error")
	}
	ra, err := NewRowAdam(0.1, 2, 2, true, "x")
	if err != nil {
		t.Fatal(err)
	}
	table := []float32{1, 2, 3, 4}
	for _, tc := range []struct {
		name    string
		tab, g  []float32
		touched []int32
	}{
		{"short gradient", table, []float32{1}, []int32{0}},
		{"row out of range", table, []float32{1, 1, 1, 1}, []int32{2}},
		{"negative row", table, []float32{1, 1, 1, 1}, []int32{-1}},
	} {
		if err := ra.Step(tc.tab, tc.g, tc.touched); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if !slices.Equal(table, []float32{1, 2, 3, 4}) || ra.Steps() != 0 {
		t.Errorf("a rejected step changed the table %v or the step count %d", table, ra.Steps())
	}
}

package wordvec

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/batchsampler-go/batchsampler/data"
)

func TestSIFWeights(t *testing.T) {
	// 10 tokens in all: <unk> 1, a 6, b 2, c 1.
	v, err := data.NewVocabFromWords([]string{data.UnkToken, "a", "b", "c"}, []int64{1, 6, 2, 1}, data.Tokenizer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a    float64
		want []float64
	}{
		{0.1, []float64{0, 0.1 / 0.7, 0.1 / 0.3, 0.1 / 0.2}},
		{1e-3, []float64{0, 1e-3 / (1e-3 + 0.6), 1e-3 / (1e-3 + 0.2), 1e-3 / (1e-3 + 0.1)}},
	} {
		w, err := SIFWeights(v, tc.a)
		if err != nil {
			t.Fatal(err)
		}
		for id, want := range tc.want {
			if math.Abs(float64(w[id])-want) > 1e-7 {
				t.Errorf("a=%v: weight of %q = %v, want %v", tc.a, v.Word(int32(id)), w[id], want)
			}
		}
	}
	for _, a := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := SIFWeights(v, a); err == nil {
			t.Errorf("a=%v: no error", a)
		}
	}
}

func TestIDFWeights(t *testing.T) {
	// 4 sentences; id 1 in 3 of them (twice in one), id 2 in 1, id 3 in none.
	corpus := [][]int32{{1, 2, 1}, {1}, {0, 1}, {}}
	w, err := IDFWeights(corpus, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, math.Log(5.0/4) + 1, math.Log(5.0/2) + 1, math.Log(5.0/1) + 1}
	for id := range want {
		if math.Abs(float64(w[id])-want[id]) > 1e-6 {
			t.Errorf("idf[%d] = %v, want %v", id, w[id], want[id])
		}
	}
	if _, err := IDFWeights([][]int32{{0}, {4}}, 4); err == nil {
		t.Error("out-of-range id: no error")
	}
}

func TestCommonDirections(t *testing.T) {
	// Rows = c_i·u + small noise, with u a fixed unit vector: the first
	// direction is ±u; the first two span the same plane as an SVD's.
	const n, d = 5000, 7 // more rows than one block of the accumulation
	rng := rand.New(rand.NewPCG(5, 6))
	u := []float64{0.5, -0.5, 0.5, 0.5, 0, 0, 0}
	x := make([]float32, n*d)
	x64 := make([]float64, n*d)
	for i := range n {
		c := 2 + rng.NormFloat64()
		for j := range d {
			v := c*u[j] + 0.1*rng.NormFloat64()
			x[i*d+j], x64[i*d+j] = float32(v), float64(float32(v))
		}
	}
	dirs, err := CommonDirections(x, n, d, 2)
	if err != nil {
		t.Fatal(err)
	}
	var dot float64
	for j := range d {
		dot += float64(dirs[j]) * u[j]
	}
	if math.Abs(math.Abs(dot)-1) > 1e-3 {
		t.Errorf("first direction %v has |cos| %v with the planted direction, want ≈ 1", dirs[:d], math.Abs(dot))
	}
	// Against gonum's SVD of the whole matrix (an independent route).
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, d, x64), mat.SVDThin) {
		t.Fatal("svd failed")
	}
	var vt mat.Dense
	svd.VTo(&vt)
	for c := range 2 {
		var dot, norm float64
		for j := range d {
			dot += float64(dirs[c*d+j]) * vt.At(j, c)
			norm += float64(dirs[c*d+j]) * float64(dirs[c*d+j])
		}
		if math.Abs(norm-1) > 1e-5 || math.Abs(math.Abs(dot)-1) > 1e-4 {
			t.Errorf("direction %d: norm² %v, |cos| with the SVD's %v; want 1 and 1", c, norm, math.Abs(dot))
		}
		big := 0
		for j := range d {
			if math.Abs(float64(dirs[c*d+j])) > math.Abs(float64(dirs[c*d+big])) {
				big = j
			}
		}
		if dirs[c*d+big] < 0 {
			t.Errorf("direction %d: largest entry %v is negative", c, dirs[c*d+big])
		}
	}
	if none, err := CommonDirections(x, n, d, 0); err != nil || none != nil {
		t.Errorf("k=0: %v, %v; want nil, nil", none, err)
	}
	for _, tc := range []struct{ n, d, k int }{{n, d, d + 1}, {n, d, -1}, {n + 1, d, 1}, {0, d, 1}} {
		if _, err := CommonDirections(x, tc.n, tc.d, tc.k); err == nil {
			t.Errorf("n=%d d=%d k=%d: no error", tc.n, tc.d, tc.k)
		}
	}
}

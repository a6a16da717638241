package eval

import (
	"math/rand/v2"
	"testing"
)

// clusteredData draws n points in d dimensions from nClass classes, each a
// mixture of four unit-variance Gaussian clusters whose centres are drawn
// with standard deviation spread, so that classes overlap moderately.
func clusteredData(seed uint64, n, d, nClass int, spread float64) ([]float32, []int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const perClass = 4
	centers := make([][]float64, nClass*perClass)
	for i := range centers {
		centers[i] = make([]float64, d)
		for j := range centers[i] {
			centers[i][j] = spread * rng.NormFloat64()
		}
	}
	x := make([]float32, n*d)
	y := make([]int, n)
	for i := 0; i < n; i++ {
		c := rng.IntN(nClass)
		y[i] = c
		ctr := centers[c*perClass+rng.IntN(perClass)]
		for j := 0; j < d; j++ {
			x[i*d+j] = float32(ctr[j] + rng.NormFloat64())
		}
	}
	return x, y
}

// BenchmarkSVMProtocolNCI1Size runs the full protocol (10 outer folds, 5
// inner folds, 7 values of C: 360 SVM fits) on 4110 × 96 clustered data with
// two classes, the size of NCI1's GIN embeddings.
func BenchmarkSVMProtocolNCI1Size(b *testing.B) {
	const n, d = 4110, 96
	x, y := clusteredData(1, n, d, 2, 0.2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := SVMCrossValidate(x, n, d, y, SVMOptions{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Mean, "acc")
		if i == 0 {
			b.Logf("accuracy %.4f ± %.4f, chosen C %v, not converged %d", res.Mean, res.Std, res.ChosenC, res.NotConverged)
		}
	}
}

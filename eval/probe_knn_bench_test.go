package eval

import (
	"fmt"
	"testing"
)

// benchSizes are the shapes of the probe and kNN benchmarks: an STL-10-like
// 5,085 × 64 and CIFAR-scale 50,000 × 512 training sets, 10 classes.
var probeBenchSizes = []struct{ n, nTest, d int }{
	{5085, 1000, 64},
	{50000, 10000, 512},
}

// BenchmarkTrainProbe fits a probe with the default options on clustered
// data (10 classes, four Gaussian clusters each, spread 0.3) and reports
// the L-BFGS iterations, objective evaluations and test accuracy.
func BenchmarkTrainProbe(b *testing.B) {
	for _, sz := range probeBenchSizes {
		b.Run(fmt.Sprintf("%dx%d", sz.n, sz.d), func(b *testing.B) {
			if testing.Short() && sz.n > 10000 {
				b.Skip("large probe benchmark skipped under -short")
			}
			x, y := clusteredData(31, sz.n+sz.nTest, sz.d, 10, 0.3)
			xTr, yTr := x[:sz.n*sz.d], y[:sz.n]
			xTe, yTe := x[sz.n*sz.d:], y[sz.n:]
			b.ResetTimer()
			for range b.N {
				p, err := TrainProbe(xTr, sz.n, sz.d, yTr, 10, ProbeOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				acc, err := p.Accuracy(xTe, sz.nTest, yTe)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(p.Iterations), "iters")
				b.ReportMetric(float64(p.Evaluations), "evals")
				b.ReportMetric(acc, "acc")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkProbeObjective times one evaluation of the objective and its
// gradient (4·n·d·C flops in float64).
func BenchmarkProbeObjective(b *testing.B) {
	for _, sz := range probeBenchSizes {
		b.Run(fmt.Sprintf("%dx%d", sz.n, sz.d), func(b *testing.B) {
			if testing.Short() && sz.n > 10000 {
				b.Skip("large benchmark skipped under -short")
			}
			x, y := clusteredData(32, sz.n, sz.d, 10, 0.3)
			xs, _, _ := standardize(x, sz.n, sz.d, false)
			obj := newProbeObjective(xs, y, sz.n, sz.d, 10, DefaultProbeL2, defaultWorkers(0))
			theta := make([]float64, obj.dim())
			for i := range theta {
				theta[i] = 0.01 * float64(i%7-3)
			}
			grad := make([]float64, obj.dim())
			b.ResetTimer()
			for range b.N {
				obj.eval(theta, grad)
			}
			b.ReportMetric(4*float64(sz.n*sz.d*10)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkKNN runs the weighted kNN monitor (k=200, T=0.1) with 50,000 ×
// 512 training and 10,000 test rows, and a smaller 5,000 × 128 × 1,000.
func BenchmarkKNN(b *testing.B) {
	for _, sz := range []struct{ nTrain, nTest, d int }{
		{5000, 1000, 128},
		{50000, 10000, 512},
	} {
		b.Run(fmt.Sprintf("%dx%dx%d", sz.nTrain, sz.d, sz.nTest), func(b *testing.B) {
			if testing.Short() && sz.nTrain > 10000 {
				b.Skip("large kNN benchmark skipped under -short")
			}
			x, y := clusteredData(33, sz.nTrain+sz.nTest, sz.d, 10, 0.3)
			train, yTrain := x[:sz.nTrain*sz.d], y[:sz.nTrain]
			test, yTest := x[sz.nTrain*sz.d:], y[sz.nTrain:]
			b.ResetTimer()
			for range b.N {
				acc, err := KNNAccuracy(train, yTrain, test, yTest, sz.d, 10, KNNOptions{})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(acc, "acc")
			}
			flops := 2 * float64(sz.nTrain) * float64(sz.nTest) * float64(sz.d)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

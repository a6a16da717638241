package sampler

import "testing"

// The global samplers at the acceptance size, N = 50,000, d = 128, B = 256
// (beside BenchmarkProximityGraph50k and BenchmarkRWRBatch256, BatchSampler's
// refresh and batch): Refresh alone, then Next, whose rounds (an epoch of
// batches for gcbs, kmeans and antikmeans; k of them for spectral and osgd)
// are amortised over the batches they yield. Defaults of Spec: gcbs k = 10,
// spectral k = 4, osgd k = 4 and q = 2 (τ = 0.5), kmeans C = ⌊N/B⌋ = 195,
// antikmeans C = B = 256. Each reports its CPU time beside the wall time
// (the machine is shared).
//
//	go test ./sampler -run '^$' -bench 'Global' -benchtime 3x

var emb50k Embeddings

func getEmb50k() Embeddings {
	if emb50k.Data == nil {
		emb50k = randomEmbeddings(50000, 128, 1)
	}
	return emb50k
}

func newGlobal50k(b *testing.B, kind string) Sampler {
	s, err := globalMaker(kind)(50000, 256, 1)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func BenchmarkGlobalRefresh50k(b *testing.B) {
	e := getEmb50k()
	for _, kind := range GlobalKinds {
		b.Run(kind, func(b *testing.B) {
			s := newGlobal50k(b, kind)
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if err := s.(Refresher).Refresh(e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((processCPU()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

func BenchmarkGlobalBatch50k(b *testing.B) {
	e := getEmb50k()
	for _, kind := range GlobalKinds {
		b.Run(kind, func(b *testing.B) {
			s := newGlobal50k(b, kind)
			if err := s.(Refresher).Refresh(e); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				if len(s.Next()) != 256 {
					b.Fatal("short batch")
				}
			}
			b.ReportMetric((processCPU()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
		})
	}
}

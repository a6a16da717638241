package train

import (
	"github.com/batchsampler-go/batchsampler/sampler"
)

// newEmbeddingSampler builds the samplers that look at embeddings.
func newEmbeddingSampler(sc SamplerConfig, n, b int, seed uint64) (sampler.Sampler, error) {
	if sc.Kind == "knn" {
		return sampler.NewKNN(n, b, sc.RefreshEvery, seed)
	}
	kind := "linear"
	if sc.Alpha.Constant {
		kind = "constant"
	}
	return sampler.NewBatchSampler(sampler.Config{
		BatchSize: b, M: sc.M, K: sc.K, Walk: sc.Walk, Graph: sc.Graph,
		Alpha:        sampler.Schedule{Start: sc.Alpha.Start, End: sc.Alpha.End, Kind: kind},
		RefreshEvery: sc.RefreshEvery, MaxWalkSteps: sc.MaxWalkSteps,
	}, n, seed)
}

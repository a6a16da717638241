package sampler

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// MixtureConfig describes a labelled Gaussian mixture: C classes in D
// dimensions, class centres drawn from N(0, Between²·I), points from
// N(centre, Within²·I); instance i has label i mod C.
type MixtureConfig struct {
	N, C, D int     // points, classes, dimension
	Between float64 // standard deviation of the class centres
	Within  float64 // standard deviation of the points around their centre
}

// GaussianMixture draws the point set of cfg (a synthetic stand-in for
// embeddings with known classes, for the sampler comparisons).
func GaussianMixture(cfg MixtureConfig, seed uint64) (Embeddings, []int, error) {
	if cfg.N <= 0 || cfg.C <= 0 || cfg.D <= 0 {
		return Embeddings{}, nil, fmt.Errorf("sampler: mixture: need N, C, D ≥ 1, got N=%d C=%d D=%d", cfg.N, cfg.C, cfg.D)
	}
	if !(cfg.Between >= 0) || !(cfg.Within >= 0) {
		return Embeddings{}, nil, fmt.Errorf("sampler: mixture: spreads must be ≥ 0, got between=%v within=%v", cfg.Between, cfg.Within)
	}
	r := rand.New(rand.NewPCG(seed, 0x6d6978))
	centres := make([]float64, cfg.C*cfg.D)
	for i := range centres {
		centres[i] = cfg.Between * r.NormFloat64()
	}
	e := Embeddings{N: cfg.N, D: cfg.D, Data: make([]float32, cfg.N*cfg.D)}
	labels := make([]int, cfg.N)
	for i := 0; i < cfg.N; i++ {
		c := i % cfg.C
		labels[i] = c
		for j := 0; j < cfg.D; j++ {
			e.Data[i*cfg.D+j] = float32(centres[c*cfg.D+j] + cfg.Within*r.NormFloat64())
		}
	}
	return e, labels, nil
}

// BatchStats summarise the batches a sampler drew.
type BatchStats struct {
	Batches    int     // batches measured
	FNRatio    float64 // mean FalseNegativeRatio
	FNStdErr   float64 // its standard error over batches
	MeanCosine float64 // mean of MeanCosine
}

// MeasureBatches draws the given number of batches from s and averages their
// false-negative ratio (with labels) and mean in-batch cosine (with e).
func MeasureBatches(s Sampler, batches int, labels []int, e Embeddings) BatchStats {
	var st BatchStats
	var sum, sum2, cos float64
	for i := 0; i < batches; i++ {
		b := s.Next()
		fn := FalseNegativeRatio(b, labels)
		sum += fn
		sum2 += fn * fn
		cos += MeanCosine(b, e)
	}
	st.Batches = batches
	if batches > 0 {
		n := float64(batches)
		st.FNRatio = sum / n
		st.MeanCosine = cos / n
		if batches > 1 {
			st.FNStdErr = math.Sqrt(max(sum2/n-st.FNRatio*st.FNRatio, 0) / (n - 1))
		}
	}
	return st
}

// CompareConfig is the grid of CompareSamplers.
type CompareConfig struct {
	B, K    int       // batch size and neighbours kept
	Ms      []int     // candidate-set sizes M (values ≥ N mean N)
	Alphas  []float64 // restart probabilities α
	Batches int       // batches measured per sampler
	Seed    uint64    // seed of every sampler
	Config  Config    // further BatchSampler settings (BatchSize, M, K, Alpha are overridden)
}

// CompareRow is one sampler's line of the comparison.
type CompareRow struct {
	Sampler  string     // "Uniform", "BatchSampler" or "kNN"
	M        int        // 0 for Uniform and kNN
	Alpha    float64    // NaN for Uniform and kNN
	Stats    BatchStats // measured over CompareConfig.Batches batches
	Coverage float64    // share of the dataset covered by the first epoch
}

// CompareSamplers measures Uniform, BatchSampler over Ms × Alphas and the kNN
// Sampler on fixed embeddings e with labels: each graph sampler is
// refreshed once with e and then draws cfg.Batches batches.
func CompareSamplers(e Embeddings, labels []int, cfg CompareConfig) ([]CompareRow, error) {
	if len(labels) != e.N {
		return nil, fmt.Errorf("sampler: compare: %d labels for %d instances", len(labels), e.N)
	}
	if cfg.Batches <= 0 {
		return nil, fmt.Errorf("sampler: compare: Batches must be positive, got %d", cfg.Batches)
	}
	coverage := func(s Sampler) float64 {
		seen := make([]bool, s.N())
		c := 0
		for i := 0; i < s.BatchesPerEpoch(); i++ {
			for _, v := range s.Next() {
				if !seen[v] {
					seen[v] = true
					c++
				}
			}
		}
		return float64(c) / float64(s.N())
	}
	var rows []CompareRow
	measure := func(name string, m int, alpha float64, mk func() (Sampler, error)) error {
		s, err := mk()
		if err != nil {
			return fmt.Errorf("sampler: compare: %s: %w", name, err)
		}
		cov := coverage(s)
		if s, err = mk(); err != nil {
			return fmt.Errorf("sampler: compare: %s: %w", name, err)
		}
		rows = append(rows, CompareRow{Sampler: name, M: m, Alpha: alpha, Stats: MeasureBatches(s, cfg.Batches, labels, e), Coverage: cov})
		return nil
	}
	if err := measure("Uniform", 0, math.NaN(), func() (Sampler, error) { return NewUniform(e.N, cfg.B, cfg.Seed) }); err != nil {
		return nil, err
	}
	for _, m := range cfg.Ms {
		for _, a := range cfg.Alphas {
			c := cfg.Config
			c.BatchSize, c.M, c.K = cfg.B, min(m, e.N), cfg.K
			c.Alpha = Schedule{Start: a, Kind: ScheduleConstant}
			if err := measure("BatchSampler", min(m, e.N), a, func() (Sampler, error) {
				s, err := NewBatchSampler(c, e.N, cfg.Seed)
				if err != nil {
					return nil, err
				}
				return s, s.Refresh(e)
			}); err != nil {
				return nil, err
			}
		}
	}
	if err := measure("kNN", 0, math.NaN(), func() (Sampler, error) {
		s, err := NewKNN(e.N, cfg.B, 0, cfg.Seed)
		if err != nil {
			return nil, err
		}
		return s, s.Refresh(e)
	}); err != nil {
		return nil, err
	}
	return rows, nil
}

// MarkdownTable renders comparison rows as a Markdown table.
func MarkdownTable(rows []CompareRow) string {
	var b strings.Builder
	b.WriteString("| sampler | M | α | false-negative ratio | mean in-batch cosine | epoch coverage |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, r := range rows {
		m, a := "–", "–"
		if r.M > 0 {
			m = fmt.Sprint(r.M)
		}
		if !math.IsNaN(r.Alpha) {
			a = fmt.Sprint(r.Alpha)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.4f ± %.4f | %.4f | %.3f |\n", r.Sampler, m, a, r.Stats.FNRatio, r.Stats.FNStdErr, r.Stats.MeanCosine, r.Coverage)
	}
	return b.String()
}

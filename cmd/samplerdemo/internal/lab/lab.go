package lab

import (
	"fmt"
	"math"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// Settings choose the sampler the page looks at and the threshold of its
// hard-negative diagnostic.
type Settings struct {
	// Sampler is a sampler.Kinds value: uniform, knn or batchsampler.
	Sampler string `json:"sampler"`
	// Walk (sampler.Walks) and Graph (sampler.GraphKinds) of BatchSampler.
	Walk  string `json:"walk"`
	Graph string `json:"graph"`
	// M candidates and K neighbours per node (BatchSampler), batch size B,
	// restart probability α (constant), and the samplers' seed.
	M     int     `json:"m"`
	K     int     `json:"k"`
	B     int     `json:"b"`
	Alpha float64 `json:"alpha"`
	Seed  uint64  `json:"seed"`
	// Threshold is the cosine from which a different-class pair counts as
	// a hard true negative (sampler.HardNegativeRatio).
	Threshold float64 `json:"threshold"`
}

// Spec returns the sampler.Spec of the settings: α constant, the other
// keys at their defaults.
func (s Settings) Spec() sampler.Spec {
	sp := sampler.Spec{Kind: s.Sampler}
	if s.Sampler == sampler.KindBatchSampler {
		sp.M, sp.K, sp.Walk, sp.Graph = s.M, s.K, s.Walk, s.Graph
		sp.Alpha = sampler.AlphaSchedule{Start: s.Alpha, End: s.Alpha, Constant: true}
	}
	return sp
}

// NewSampler builds the sampler of the settings over the embeddings e and
// refreshes it with them (the page's data are the embeddings): the same
// sampler, batch for batch, as any Go program that builds s.Spec() with
// the same N, B and seed and refreshes it with e.
func (s Settings) NewSampler(e sampler.Embeddings) (sampler.Sampler, error) {
	if s.B < 2 || s.B > e.N {
		return nil, fmt.Errorf("b = %d: want a batch size between 2 and N = %d", s.B, e.N)
	}
	if !(s.Threshold >= -1 && s.Threshold <= 1) {
		return nil, fmt.Errorf("threshold = %v: want a cosine in [−1, 1]", s.Threshold)
	}
	smp, err := s.Spec().New(e.N, s.B, s.Seed)
	if err != nil {
		return nil, err
	}
	if rf, ok := smp.(sampler.Refresher); ok {
		if err := rf.Refresh(e); err != nil {
			return nil, err
		}
	}
	return smp, nil
}

// Step kinds of a traced walk, as the page receives them.
const (
	StepMove    = 0 // along an edge from the current node (RWR, RW) or the node expanded (BFS, DFS)
	StepRestart = 1 // back to the restart node u, then along one of its edges
	StepJump    = 2 // fallback: a new start node, no edge
)

// Metrics are a batch's diagnostics, from package sampler.
type Metrics struct {
	FN      float64   `json:"fn"`      // FalseNegativeRatio
	Hard    float64   `json:"hard"`    // HardNegativeRatio at the threshold
	MeanCos float64   `json:"meanCos"` // MeanCosine
	Hist    []float64 `json:"hist"`    // CosineHistogram, HistBins bins over [−1, 1]
}

// HistBins is the number of bins of the cosine histograms.
const HistBins = 20

func metricsOf(batch []int, labels []int, e sampler.Embeddings, threshold float64) Metrics {
	return Metrics{
		FN:      sampler.FalseNegativeRatio(batch, labels),
		Hard:    sampler.HardNegativeRatio(batch, labels, e, threshold),
		MeanCos: sampler.MeanCosine(batch, e),
		Hist:    sampler.CosineHistogram(batch, e, HistBins),
	}
}

// BatchView is one batch as the page draws it.
type BatchView struct {
	Settings Settings `json:"settings"`
	Index    int      `json:"index"` // 0-based number of the batch since the sampler was built
	Batch    []int    `json:"batch"` // the instances, in the order the sampler gave them
	// Steps is the walk that built the batch (BatchSampler), one
	// [from, to, kind, new] per step (kind: StepMove, StepRestart,
	// StepJump; new: 1 when to joined the batch).
	Steps [][4]int `json:"steps"`
	// Rows are the graph's out-neighbours of every node the walk left
	// from or reached, with their cosines to it (BatchSampler).
	Rows  map[int][]int                `json:"rows"`
	Cos   map[int][]float64            `json:"cos"`
	Graph *sampler.NeighbourStatistics `json:"graph,omitempty"`
	// Effective is what the sampler runs with (M and K clamped to N−1).
	EffectiveM int     `json:"effM"`
	EffectiveK int     `json:"effK"`
	Metrics    Metrics `json:"metrics"`
	// Jumps and Restarts count the walk's fallback jumps and restarts.
	Jumps    int `json:"jumps"`
	Restarts int `json:"restarts"`
}

// Lab is the state of the page: the point set and the sampler looked at.
type Lab struct {
	e      sampler.Embeddings
	labels []int
	// the sampler of the last Batch call and how many batches it gave
	cur      Settings
	smp      sampler.Sampler
	index    int
	steps    [][4]int
	hasState bool
}

// New returns a Lab over embeddings e with labels.
func New(e sampler.Embeddings, labels []int) (*Lab, error) {
	if e.N < 2 || len(e.Data) != e.N*e.D || len(labels) != e.N {
		return nil, fmt.Errorf("lab: need N ≥ 2 rows of N·D values and N labels, got N=%d D=%d values=%d labels=%d", e.N, e.D, len(e.Data), len(labels))
	}
	return &Lab{e: e, labels: labels}, nil
}

// Embeddings and Labels return the lab's data.
func (l *Lab) Embeddings() sampler.Embeddings { return l.e }
func (l *Lab) Labels() []int                  { return l.labels }

// Batch returns the next batch of the sampler of s: with the settings of
// the previous call and next set, the sampler's next batch; otherwise the
// first batch of a sampler built afresh from s.
func (l *Lab) Batch(s Settings, next bool) (BatchView, error) {
	if !next || !l.hasState || s != l.cur {
		smp, err := s.NewSampler(l.e)
		if err != nil {
			return BatchView{}, err
		}
		if bs, ok := smp.(*sampler.BatchSampler); ok {
			bs.SetWalkTrace(func(st sampler.WalkStep) {
				kind := StepMove
				switch {
				case st.Jump:
					kind = StepJump
				case st.Restart:
					kind = StepRestart
				}
				nw := 0
				if st.New {
					nw = 1
				}
				l.steps = append(l.steps, [4]int{st.From, st.To, kind, nw})
			})
		}
		l.cur, l.smp, l.index, l.hasState = s, smp, -1, true
	}
	l.steps = l.steps[:0]
	batch := l.smp.Next()
	l.index++
	v := BatchView{Settings: s, Index: l.index, Batch: batch, Steps: append([][4]int{}, l.steps...), Metrics: metricsOf(batch, l.labels, l.e, s.Threshold)}
	if bs, ok := l.smp.(*sampler.BatchSampler); ok {
		g := bs.Graph()
		v.EffectiveM, v.EffectiveK = bs.Config().M, bs.Config().K
		v.Rows, v.Cos = map[int][]int{}, map[int][]float64{}
		add := func(u int) {
			if _, ok := v.Rows[u]; ok {
				return
			}
			nb := g.Neighbours(u)
			row := make([]int, len(nb))
			for i, x := range nb {
				row[i] = int(x)
			}
			v.Rows[u] = row
			v.Cos[u] = cosines(l.e, u, row)
		}
		for _, u := range batch {
			add(u)
		}
		for _, st := range v.Steps {
			add(st[0])
			add(st[1])
			switch st[2] {
			case StepJump:
				v.Jumps++
			case StepRestart:
				v.Restarts++
			}
		}
		if st, err := sampler.NeighbourStats(g, l.e, l.labels); err == nil {
			v.Graph = &st
		}
	}
	return v, nil
}

// cosines returns the cosine of row u of e with each of the rows vs.
func cosines(e sampler.Embeddings, u int, vs []int) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		pair := sampler.PairCosines([]int{u, v}, e)
		if len(pair) == 1 {
			out[i] = pair[0]
		}
	}
	return out
}

// Measure is the average of a sampler's batch diagnostics over Batches
// batches of a sampler built afresh (the first batches of the seed).
type Measure struct {
	Settings Settings `json:"settings"`
	Batches  int      `json:"batches"`
	Metrics  Metrics  `json:"metrics"`
	// FNErr and HardErr are the standard errors of the two means.
	FNErr   float64 `json:"fnErr"`
	HardErr float64 `json:"hardErr"`
}

// MaxMeasureBatches bounds Measure's batches.
const MaxMeasureBatches = 2000

// Measure averages the diagnostics of the first n batches of the sampler
// of s.
func (l *Lab) Measure(s Settings, n int) (Measure, error) {
	if n < 1 || n > MaxMeasureBatches {
		return Measure{}, fmt.Errorf("batches = %d: want between 1 and %d", n, MaxMeasureBatches)
	}
	smp, err := s.NewSampler(l.e)
	if err != nil {
		return Measure{}, err
	}
	m := Measure{Settings: s, Batches: n, Metrics: Metrics{Hist: make([]float64, HistBins)}}
	var fn2, hard2 float64
	for range n {
		b := smp.Next()
		x := metricsOf(b, l.labels, l.e, s.Threshold)
		m.Metrics.FN += x.FN
		m.Metrics.Hard += x.Hard
		m.Metrics.MeanCos += x.MeanCos
		fn2 += x.FN * x.FN
		hard2 += x.Hard * x.Hard
		for i, h := range x.Hist {
			m.Metrics.Hist[i] += h
		}
	}
	f := float64(n)
	m.Metrics.FN /= f
	m.Metrics.Hard /= f
	m.Metrics.MeanCos /= f
	for i := range m.Metrics.Hist {
		m.Metrics.Hist[i] /= f
	}
	if n > 1 {
		m.FNErr = math.Sqrt(max(fn2/f-m.Metrics.FN*m.Metrics.FN, 0) / (f - 1))
		m.HardErr = math.Sqrt(max(hard2/f-m.Metrics.Hard*m.Metrics.Hard, 0) / (f - 1))
	}
	return m, nil
}

package lab

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// TrainSpec configures train mode: one MLP per sampler, trained with
// InfoNCE on two views of every batch instance, from the same seed.
//
// The encoder's input is a point of the data followed by Nuisance
// dimensions of Gaussian noise (standard deviation NuisanceScale) drawn
// once per point, which hide the point's neighbourhood from a kNN probe of
// the raw input. Each view keeps the point (plus noise of standard
// deviation Noise) and draws the nuisance afresh, so the positive pair
// tells the encoder what to ignore; what to tell apart comes from the
// negatives, that is, from the sampler.
type TrainSpec struct {
	Hidden int     `json:"hidden"` // hidden units (tanh)
	Out    int     `json:"out"`    // embedding dimension (unit length)
	Tau    float64 `json:"tau"`    // InfoNCE temperature τ
	LR     float64 `json:"lr"`     // Adam's learning rate
	// Noise is the standard deviation of the Gaussian noise added to a
	// point to make each of its two views.
	Noise float64 `json:"noise"`
	// Nuisance is the number of noise dimensions appended to every point
	// and NuisanceScale their standard deviation.
	Nuisance      int     `json:"nuisance"`
	NuisanceScale float64 `json:"nuisanceScale"`
	// RefreshEvery is t: kNN Sampler and BatchSampler are refreshed with
	// the encoder's embeddings of all N points every t steps (and before
	// step 0), by a sampler.Driver as package train does.
	RefreshEvery int `json:"refreshEvery"`
	// ProbeEvery: the linear probe and the embedding snapshot are taken
	// every ProbeEvery steps (and at step 0).
	ProbeEvery int    `json:"probeEvery"`
	Seed       uint64 `json:"seed"` // the encoder's initial weights and the views' noise
}

// DefaultTrain is train mode's default.
func DefaultTrain() TrainSpec {
	return TrainSpec{Hidden: 32, Out: 8, Tau: 0.2, LR: 0.01, Noise: 0.03, Nuisance: 8, NuisanceScale: 1, RefreshEvery: 10, ProbeEvery: 10, Seed: 1}
}

// Validate checks the spec and names the offending field.
func (t TrainSpec) Validate() error {
	switch {
	case t.Hidden < 1 || t.Hidden > 256:
		return fmt.Errorf("train.hidden = %d: want 1 to 256 units", t.Hidden)
	case t.Out < 2 || t.Out > 64:
		return fmt.Errorf("train.out = %d: want an embedding dimension of 2 to 64", t.Out)
	case !(t.Tau > 0 && t.Tau <= 10):
		return fmt.Errorf("train.tau = %v: want a temperature in (0, 10]", t.Tau)
	case !(t.LR > 0 && t.LR <= 1):
		return fmt.Errorf("train.lr = %v: want a learning rate in (0, 1]", t.LR)
	case !(t.Noise >= 0 && t.Noise <= 1):
		return fmt.Errorf("train.noise = %v: want a standard deviation in [0, 1]", t.Noise)
	case t.Nuisance < 0 || t.Nuisance > 64:
		return fmt.Errorf("train.nuisance = %d: want 0 to 64 noise dimensions", t.Nuisance)
	case !(t.NuisanceScale >= 0 && t.NuisanceScale <= 10):
		return fmt.Errorf("train.nuisanceScale = %v: want a standard deviation in [0, 10]", t.NuisanceScale)
	case t.RefreshEvery < 0:
		return fmt.Errorf("train.refreshEvery = %d: want ≥ 0", t.RefreshEvery)
	case t.ProbeEvery < 1:
		return fmt.Errorf("train.probeEvery = %d: want ≥ 1", t.ProbeEvery)
	}
	return nil
}

// probeK is the k of the kNN probe.
const probeK = 10

// TrainPoint is what one step of one sampler's run records.
type TrainPoint struct {
	Step int     `json:"step"`
	Loss float64 `json:"loss"`
	FN   float64 `json:"fn"`   // false-negative ratio of the step's batch
	Hard float64 `json:"hard"` // hard-negative ratio of the batch, in the data's cosines
}

// Snapshot is a run's embedding at a step: its kNN-probe accuracy and
// the 2-D PCA of the N embeddings (N×2), each axis signed to agree with
// the previous snapshot's so that the picture moves instead of flipping.
type Snapshot struct {
	Step  int       `json:"step"`
	Probe float64   `json:"probe"`
	XY    []float64 `json:"xy"`
}

// TrainRun is one sampler's training.
type TrainRun struct {
	Name   string `json:"name"`
	smp    sampler.Sampler
	driver *sampler.Driver
	mlp    *MLP
	adam   *Adam
	grads  [][]float64
	noise  *rand.Rand
	step   int
	prev   []float64 // the previous snapshot's XY
}

// Trainer trains one MLP per sampler side by side.
type Trainer struct {
	spec     TrainSpec
	settings Settings
	x        []float64 // the N inputs, N×d: the point, then the nuisance
	d        int       // D + Nuisance
	e        sampler.Embeddings
	labels   []int
	classes  int
	Runs     []*TrainRun
	// RawProbe is the kNN probe's accuracy on the raw inputs (points and
	// nuisance), the baseline a representation has to beat, and
	// PointsProbe its accuracy on the points alone, what an encoder that
	// ignores the nuisance perfectly would start from.
	RawProbe, PointsProbe float64
}

// TrainKinds are the samplers train mode compares, in order.
var TrainKinds = []string{sampler.KindUniform, sampler.KindKNN, sampler.KindBatchSampler}

// NewTrainer prepares one run per TrainKinds over the data e with labels:
// the samplers of s (s.Sampler is replaced by each kind), each with an MLP
// from spec.Seed.
func NewTrainer(e sampler.Embeddings, labels []int, s Settings, spec TrainSpec) (*Trainer, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	classes := 0
	for _, l := range labels {
		classes = max(classes, l+1)
	}
	d := e.D + spec.Nuisance
	t := &Trainer{spec: spec, settings: s, d: d, e: e, labels: labels, classes: classes, x: make([]float64, e.N*d)}
	pts := make([]float64, len(e.Data))
	nz := rand.New(rand.NewPCG(spec.Seed, 0x6e756973)) // "nuis"
	for i := range e.N {
		for k := range e.D {
			pts[i*e.D+k] = float64(e.Data[i*e.D+k])
			t.x[i*d+k] = pts[i*e.D+k]
		}
		for k := e.D; k < d; k++ {
			t.x[i*d+k] = spec.NuisanceScale * nz.NormFloat64()
		}
	}
	var err error
	if t.RawProbe, err = KNNProbe(t.x, e.N, d, labels, probeK); err != nil {
		return nil, err
	}
	if t.PointsProbe, err = KNNProbe(pts, e.N, e.D, labels, probeK); err != nil {
		return nil, err
	}
	for _, kind := range TrainKinds {
		ks := s
		ks.Sampler = kind
		sp := ks.Spec()
		sp.RefreshEvery = spec.RefreshEvery // kNN and BatchSampler: refreshed every t steps
		smp, err := sp.New(e.N, s.B, s.Seed)
		if err != nil {
			return nil, fmt.Errorf("train %s: %w", kind, err)
		}
		m, err := NewMLP(d, spec.Hidden, spec.Out, spec.Seed)
		if err != nil {
			return nil, err
		}
		r := &TrainRun{Name: kind, smp: smp, mlp: m, noise: rand.New(rand.NewPCG(spec.Seed, 0x766965777)), adam: NewAdam(spec.LR, m.Params())}
		for _, p := range m.Params() {
			r.grads = append(r.grads, make([]float64, len(p)))
		}
		embed := func(string) (sampler.Embeddings, error) {
			out := r.mlp.Embed(t.x, e.N)
			emb := sampler.Embeddings{N: e.N, D: spec.Out, Data: make([]float32, len(out))}
			for i, v := range out {
				emb.Data[i] = float32(v)
			}
			return emb, nil
		}
		if r.driver, err = sampler.NewDriver(smp, sampler.DriverOptions{Embed: embed, Labels: labels}); err != nil {
			return nil, err
		}
		t.Runs = append(t.Runs, r)
	}
	return t, nil
}

// Snapshot returns run r's snapshot at its current step.
func (t *Trainer) Snapshot(r *TrainRun) (Snapshot, error) {
	emb := r.mlp.Embed(t.x, t.e.N)
	acc, err := KNNProbe(emb, t.e.N, t.spec.Out, t.labels, probeK)
	if err != nil {
		return Snapshot{}, err
	}
	e32 := sampler.Embeddings{N: t.e.N, D: t.spec.Out, Data: make([]float32, len(emb))}
	for i, v := range emb {
		e32.Data[i] = float32(v)
	}
	p, err := FitPCA(e32, 2)
	if err != nil {
		return Snapshot{}, err
	}
	xy := p.Project(e32)
	if r.prev != nil {
		for c := range 2 {
			var dot float64
			for i := range t.e.N {
				dot += xy[2*i+c] * r.prev[2*i+c]
			}
			if dot < 0 {
				for i := range t.e.N {
					xy[2*i+c] = -xy[2*i+c]
				}
			}
		}
	}
	r.prev = xy
	return Snapshot{Step: r.step, Probe: acc, XY: xy}, nil
}

// StepRun trains run r for one step and returns what it recorded.
func (t *Trainer) StepRun(r *TrainRun, total int) (TrainPoint, error) {
	if _, err := r.driver.BeforeStep(r.step, total); err != nil {
		return TrainPoint{}, fmt.Errorf("train %s: %w", r.Name, err)
	}
	batch := r.driver.Next()
	b := len(batch)
	x1 := make([]float64, b*t.d)
	x2 := make([]float64, b*t.d)
	D := t.e.D
	for i, v := range batch {
		for _, x := range [][]float64{x1, x2} {
			for k := range D {
				x[i*t.d+k] = t.x[v*t.d+k] + t.spec.Noise*r.noise.NormFloat64()
			}
			for k := D; k < t.d; k++ {
				x[i*t.d+k] = t.spec.NuisanceScale * r.noise.NormFloat64()
			}
		}
	}
	for _, g := range r.grads {
		clear(g)
	}
	loss := r.mlp.LossGrad(x1, x2, b, t.spec.Tau, r.grads)
	r.adam.Step(r.mlp.Params(), r.grads)
	p := TrainPoint{Step: r.step, Loss: loss, FN: sampler.FalseNegativeRatio(batch, t.labels),
		Hard: sampler.HardNegativeRatio(batch, t.labels, t.e, t.settings.Threshold)}
	r.step++
	return p, nil
}

// TrainUpdate is what Advance returns per run: the points of the steps it
// took and the snapshots due at them (and after the last).
type TrainUpdate struct {
	Name      string       `json:"name"`
	Points    []TrainPoint `json:"points"`
	Snapshots []Snapshot   `json:"snapshots"`
}

// Advance trains every run for n more steps (of total, the planned
// length) and returns their updates.
func (t *Trainer) Advance(n, total int) ([]TrainUpdate, error) {
	var out []TrainUpdate
	for _, r := range t.Runs {
		u := TrainUpdate{Name: r.Name, Points: []TrainPoint{}, Snapshots: []Snapshot{}} // [] rather than null in JSON
		for range n {
			if r.step%t.spec.ProbeEvery == 0 {
				s, err := t.Snapshot(r)
				if err != nil {
					return nil, err
				}
				u.Snapshots = append(u.Snapshots, s)
			}
			p, err := t.StepRun(r, total)
			if err != nil {
				return nil, err
			}
			u.Points = append(u.Points, p)
		}
		if r.step%t.spec.ProbeEvery == 0 && r.step >= total {
			s, err := t.Snapshot(r)
			if err != nil {
				return nil, err
			}
			u.Snapshots = append(u.Snapshots, s)
		}
		out = append(out, u)
	}
	return out, nil
}

package lab

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/palette"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// DataView is the point set as the page draws it.
type DataView struct {
	Source  string `json:"source"` // "generated" or "run" (loaded .npy files)
	Name    string `json:"name"`
	N       int    `json:"n"`
	D       int    `json:"d"` // the dimension the samplers work in
	Classes int    `json:"classes"`
	// View is the number of coordinates per point in XY: 2 (a circle, or a
	// run's 2-D PCA) or 3 (the sphere).
	View    int       `json:"view"`
	XY      []float64 `json:"xy"`
	Labels  []int     `json:"labels"`
	Palette []string  `json:"palette"` // "#rrggbb" per class (package palette)
	// Explained is, for a run, the share of the variance along each of the
	// two PCA axes drawn.
	Explained []float64 `json:"explained,omitempty"`
	Spec      *DataSpec `json:"spec,omitempty"`
	// Threshold is a hard-negative threshold that suits the point set: the
	// median over sub-clusters of the cosine between a sub-cluster's centre
	// and the nearest other centre, rounded down to 0.01 (0 for a run).
	Threshold float64 `json:"threshold"`
	Sizes     []int   `json:"sizes"` // points per class
}

// API is the page's state behind the JSON calls of Call: the data, the
// Lab over it and train mode's Trainer. The WebAssembly main (and a native
// test) create one and forward the page's calls to it.
type API struct {
	lab     *Lab
	view    DataView
	trainer *Trainer
	total   int // train mode's planned steps
}

// BatchRequest asks for a batch: the next of the current sampler, or the
// first of a sampler built afresh (Lab.Batch).
type BatchRequest struct {
	Settings Settings `json:"settings"`
	Next     bool     `json:"next"`
}

// MeasureRequest asks for Lab.Measure.
type MeasureRequest struct {
	Settings Settings `json:"settings"`
	Batches  int      `json:"batches"`
}

// TrainRequest starts train mode: Steps steps per sampler planned.
type TrainRequest struct {
	Settings Settings  `json:"settings"`
	Train    TrainSpec `json:"train"`
	Steps    int       `json:"steps"`
}

// TrainStart is the answer to "trainInit".
type TrainStart struct {
	Kinds       []string `json:"kinds"`
	RawProbe    float64  `json:"rawProbe"`
	PointsProbe float64  `json:"pointsProbe"`
	Steps       int      `json:"steps"`
}

// StepRequest advances train mode by Steps steps per sampler.
type StepRequest struct {
	Steps int `json:"steps"`
}

// MaxTrainSteps bounds train mode's length.
const MaxTrainSteps = 5000

// Call runs one of the page's calls with its JSON argument and returns the
// JSON answer:
//
//	data      DataSpec        → DataView (generates the point set)
//	batch     BatchRequest    → BatchView
//	measure   MeasureRequest  → Measure
//	trainInit TrainRequest    → TrainStart
//	trainStep StepRequest     → []TrainUpdate
//	defaults  (none)          → {data, train}
func (a *API) Call(method string, arg []byte) ([]byte, error) {
	var out any
	var err error
	switch method {
	case "defaults":
		out = map[string]any{"data": DefaultData(), "train": DefaultTrain(), "kinds": sampler.Kinds, "walks": sampler.Walks, "graphs": sampler.GraphKinds, "histBins": HistBins}
	case "data":
		var s DataSpec
		if err = decode(arg, &s); err == nil {
			out, err = a.generate(s)
		}
	case "batch":
		var r BatchRequest
		if err = decode(arg, &r); err == nil {
			if err = a.ready(); err == nil {
				out, err = a.lab.Batch(r.Settings, r.Next)
			}
		}
	case "measure":
		var r MeasureRequest
		if err = decode(arg, &r); err == nil {
			if err = a.ready(); err == nil {
				out, err = a.lab.Measure(r.Settings, r.Batches)
			}
		}
	case "trainInit":
		var r TrainRequest
		if err = decode(arg, &r); err == nil {
			out, err = a.trainInit(r)
		}
	case "trainStep":
		var r StepRequest
		if err = decode(arg, &r); err == nil {
			out, err = a.trainStep(r)
		}
	default:
		return nil, fmt.Errorf("%s: unknown call (want data, batch, measure, trainInit, trainStep or defaults)", method)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("%s: encode the answer: %w", method, err)
	}
	return b, nil
}

func decode(arg []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(arg)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("argument %s: %w", clip(string(arg), 200), err)
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (a *API) ready() error {
	if a.lab == nil {
		return fmt.Errorf("no data yet: call data (or load a run) first")
	}
	return nil
}

// generate makes the point set of s the page's data.
func (a *API) generate(s DataSpec) (DataView, error) {
	e, labels, centres, err := Clusters(s)
	if err != nil {
		return DataView{}, err
	}
	l, err := New(e, labels)
	if err != nil {
		return DataView{}, err
	}
	v := DataView{Source: "generated", Name: fmt.Sprintf("%d points, %d classes × %d sub-clusters on the %s", s.N, s.Classes, s.Sub, map[int]string{2: "circle", 3: "sphere"}[s.Dim]),
		N: e.N, D: e.D, Classes: s.Classes, View: e.D, Labels: labels, Palette: palette.Hex(s.Classes), Spec: &s}
	v.XY = make([]float64, len(e.Data))
	for i, x := range e.Data {
		v.XY[i] = float64(x)
	}
	v.Sizes = sizes(labels, s.Classes)
	v.Threshold = neighbourCosine(centres)
	a.lab, a.view, a.trainer = l, v, nil
	return v, nil
}

// neighbourCosine is DataView.Threshold of sub-cluster centres.
func neighbourCosine(centres [][]float64) float64 {
	var near []float64
	for j, c := range centres {
		best := -1.0
		for i, o := range centres {
			if i != j {
				var dot float64
				for k := range c {
					dot += c[k] * o[k]
				}
				best = max(best, dot)
			}
		}
		near = append(near, best)
	}
	slices.Sort(near)
	return math.Floor(100*near[len(near)/2]) / 100
}

func sizes(labels []int, classes int) []int {
	out := make([]int, classes)
	for _, l := range labels {
		out[l]++
	}
	return out
}

// LoadRun makes a run's embeddings (ReadRun) the page's data, drawn
// through their 2-D PCA; the samplers work in the full dimension.
func (a *API) LoadRun(emb, labels []byte, embName, labelsName string) ([]byte, error) {
	e, lab, err := ReadRun(emb, labels, embName, labelsName)
	if err != nil {
		return nil, err
	}
	for i, x := range e.Data {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%s: value %d (row %d) is %v: want finite embeddings", embName, i, i/e.D, x)
		}
	}
	l, err := New(e, lab)
	if err != nil {
		return nil, err
	}
	classes := 0
	for _, c := range lab {
		classes = max(classes, c+1)
	}
	v := DataView{Source: "run", Name: fmt.Sprintf("%s: %d×%d, %d classes", embName, e.N, e.D, classes), N: e.N, D: e.D, Classes: classes, View: 2,
		Labels: lab, Palette: palette.Hex(classes), Sizes: sizes(lab, classes)}
	if e.D == 1 {
		v.XY = make([]float64, 2*e.N)
		for i := range e.N {
			v.XY[2*i] = float64(e.Data[i])
		}
		v.Explained = []float64{1, 0}
	} else {
		p, err := FitPCA(e, 2)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", embName, err)
		}
		v.XY = p.Project(e)
		for _, x := range p.Variance {
			v.Explained = append(v.Explained, x/max(p.Total, 1e-300))
		}
	}
	a.lab, a.view, a.trainer = l, v, nil
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the run's view: %w", err)
	}
	return out, nil
}

func (a *API) trainInit(r TrainRequest) (TrainStart, error) {
	if err := a.ready(); err != nil {
		return TrainStart{}, err
	}
	if a.view.Source != "generated" {
		return TrainStart{}, fmt.Errorf("train mode trains on the generated point set (its inputs are the points); generate one first")
	}
	if r.Steps < 1 || r.Steps > MaxTrainSteps {
		return TrainStart{}, fmt.Errorf("steps = %d: want between 1 and %d", r.Steps, MaxTrainSteps)
	}
	if r.Settings.B < 2 || r.Settings.B > a.lab.e.N {
		return TrainStart{}, fmt.Errorf("b = %d: want a batch size between 2 and N = %d", r.Settings.B, a.lab.e.N)
	}
	t, err := NewTrainer(a.lab.e, a.lab.labels, r.Settings, r.Train)
	if err != nil {
		return TrainStart{}, err
	}
	a.trainer, a.total = t, r.Steps
	return TrainStart{Kinds: TrainKinds, RawProbe: t.RawProbe, PointsProbe: t.PointsProbe, Steps: r.Steps}, nil
}

func (a *API) trainStep(r StepRequest) ([]TrainUpdate, error) {
	if a.trainer == nil {
		return nil, fmt.Errorf("train mode has not started: call trainInit first")
	}
	left := a.total - a.trainer.Runs[0].step
	if r.Steps < 1 || r.Steps > left {
		return nil, fmt.Errorf("steps = %d: want between 1 and the %d steps left of %d", r.Steps, left, a.total)
	}
	return a.trainer.Advance(r.Steps, a.total)
}

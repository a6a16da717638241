package train

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

type metricLine struct {
	Event   string    `json:"event"`
	Run     string    `json:"run"`
	Sampler string    `json:"sampler"`
	Step    int       `json:"step"`
	Epoch   int       `json:"epoch"`
	Loss    *float64  `json:"loss"`
	FNMean  *float64  `json:"fn_ratio_mean"`
	Hist    []float64 `json:"hist"`
}

// writePlots draws DIR/plots/loss.png (epoch-mean training loss of every run)
// and DIR/plots/fn_ratio.png (the batches' false-negative ratio per epoch,
// averaged over seeds, one line per sampler) from DIR/metrics.jsonl.
func writePlots(dir string) error {
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return err
	}
	defer f.Close()
	type acc struct{ sum, n float64 }
	loss := map[string]map[int]*acc{}  // run → epoch → loss
	fn := map[string]map[int]*acc{}    // sampler → epoch → fn ratio
	hists := map[string][]metricLine{} // sampler → cos_hist events
	runSampler := map[string]string{}
	var runs, samplers []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m metricLine
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Sampler != "" && runSampler[m.Run] == "" {
			runSampler[m.Run] = m.Sampler
		}
		switch {
		case m.Event == "" && m.Loss != nil:
			if loss[m.Run] == nil {
				loss[m.Run] = map[int]*acc{}
				runs = append(runs, m.Run)
			}
			a := loss[m.Run][m.Epoch]
			if a == nil {
				a = &acc{}
				loss[m.Run][m.Epoch] = a
			}
			a.sum += *m.Loss
			a.n++
		case m.Event == "cos_hist" && len(m.Hist) > 0:
			hists[m.Sampler] = append(hists[m.Sampler], m)
		case m.Event == "epoch_end" && m.FNMean != nil:
			s := runSampler[m.Run]
			if fn[s] == nil {
				fn[s] = map[int]*acc{}
				samplers = append(samplers, s)
			}
			a := fn[s][m.Epoch]
			if a == nil {
				a = &acc{}
				fn[s][m.Epoch] = a
			}
			a.sum += *m.FNMean
			a.n++
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return err
	}
	draw := func(name, title, ylabel string, keys []string, series map[string]map[int]*acc) error {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "epoch"
		p.Y.Label.Text = ylabel
		p.Legend.Top = true
		for i, k := range keys {
			epochs := make([]int, 0, len(series[k]))
			for e := range series[k] {
				epochs = append(epochs, e)
			}
			slices.Sort(epochs)
			pts := make(plotter.XYs, len(epochs))
			for j, e := range epochs {
				a := series[k][e]
				pts[j] = plotter.XY{X: float64(e), Y: a.sum / a.n}
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(k, l)
		}
		p.Add(plotter.NewGrid())
		if len(keys) == 0 {
			p.Title.Text += " (no data)"
			p.Title.TextStyle.Color = color.Gray{Y: 100}
		}
		if err := p.Save(16*vg.Centimeter, 10*vg.Centimeter, filepath.Join(dir, "plots", name)); err != nil {
			return fmt.Errorf("save %s: %w", name, err)
		}
		return nil
	}
	if err := draw("loss.png", "Training loss (epoch mean)", "loss", runs, loss); err != nil {
		return err
	}
	if err := draw("fn_ratio.png", "False-negative ratio of the batches (mean over seeds)", "share of same-label pairs", samplers, fn); err != nil {
		return err
	}
	return drawHistograms(filepath.Join(dir, "plots", "similarity_hist.png"), samplers, hists)
}

// drawHistograms plots, per sampler, the mean in-batch cosine similarity
// histogram over the last quarter of training (all seeds).
func drawHistograms(path string, samplers []string, hists map[string][]metricLine) error {
	p := plot.New()
	p.Title.Text = "In-batch cosine similarity, last quarter of training"
	p.X.Label.Text = "cosine similarity of a pair in the batch (projections)"
	p.Y.Label.Text = "share of pairs"
	p.Legend.Top = true
	p.Legend.Left = true
	for i, s := range samplers {
		hs := hists[s]
		if len(hs) == 0 {
			continue
		}
		maxStep := 0
		for _, h := range hs {
			maxStep = max(maxStep, h.Step)
		}
		bins := len(hs[0].Hist)
		mean := make([]float64, bins)
		n := 0.0
		for _, h := range hs {
			if h.Step*4 < maxStep*3 || len(h.Hist) != bins {
				continue
			}
			for j, v := range h.Hist {
				mean[j] += v
			}
			n++
		}
		pts := make(plotter.XYs, bins)
		for j := range mean {
			pts[j] = plotter.XY{X: -1 + (float64(j)+0.5)*2/float64(bins), Y: mean[j] / n}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s, l)
	}
	p.Add(plotter.NewGrid())
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}

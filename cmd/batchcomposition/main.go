// Command batchcomposition summarises the runs of docs/batch-composition.md
// ("Which batch composition helps?"): for every experiment (a run
// directory of cmd/train with Uniform first and other samplers after it)
// and sampler, the score over seeds and its paired difference with Uniform
// (results.json), and what the sampler's batches were like over training,
// from metrics.jsonl: the mean false-negative ratio (same-label pairs), the
// mean in-batch cosine of the projections (the mean negative cosine), the
// coverage of the epochs, and the sampler's cost (seconds per refresh, Next
// seconds per batch: the sampler_time records). It writes DIR/summary.json, DIR/table.md and one
// figure per modality, DIR/composition-MODALITY.png: each sampler's
// difference with Uniform (± the standard error of the paired
// differences) against its false-negative ratio (left, where the data has
// labels) and its mean negative cosine (right).
//
//	go run ./cmd/batchcomposition -runs runs/batch-composition -out results/batch-composition
//
// An experiment without results.json yet is summarised from the runs that
// have finished (marked partial); one without any is listed as missing.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/train"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "batchcomposition:", err)
		os.Exit(1)
	}
}

// Row is one sampler of one experiment.
type Row struct {
	Experiment string  `json:"experiment"`
	Dataset    string  `json:"dataset"`
	Modality   string  `json:"modality"`
	Sampler    string  `json:"sampler"`
	Metric     string  `json:"metric"`
	Seeds      int     `json:"seeds"`
	Mean       float64 `json:"mean"`
	Std        float64 `json:"std"`
	// Diff, P: the paired difference with Uniform over the same seeds and
	// its two-sided p (absent for Uniform).
	Diff *float64 `json:"diff_vs_uniform,omitempty"`
	P    *float64 `json:"p,omitempty"`
	// DiffSE is the standard error of the paired differences (|Diff/t|;
	// absent when t is not finite), the figures' error bars.
	DiffSE *float64 `json:"diff_se,omitempty"`
	// FNRatio is the mean false-negative ratio of the logged steps over all
	// runs (absent without labels); BatchCos the mean in-batch cosine of
	// the projections (mean negative cosine); Coverage the mean coverage of
	// the finished epochs (absent for Uniform, which covers every epoch).
	FNRatio  *float64 `json:"fn_ratio,omitempty"`
	BatchCos float64  `json:"batch_cos"`
	Coverage *float64 `json:"coverage,omitempty"`
	// RefreshSeconds is the mean build time of a refresh (absent for
	// Uniform), NextMillis the sampler's Next time per batch, TrainSeconds
	// the mean training time of a run, Refreshes the refreshes per run.
	RefreshSeconds *float64 `json:"refresh_seconds,omitempty"`
	Refreshes      float64  `json:"refreshes_per_run"`
	NextMillis     float64  `json:"next_ms_per_batch"`
	TrainSeconds   float64  `json:"train_seconds"`
}

func run(args []string) error {
	fs := flag.NewFlagSet("batchcomposition", flag.ContinueOnError)
	runs := fs.String("runs", "runs/batch-composition", "`DIR` holding one experiment directory per setting")
	out := fs.String("out", "results/batch-composition", "output `DIR`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	entries, err := os.ReadDir(*runs)
	if err != nil {
		return err
	}
	var rows []Row
	var missing []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(*runs, e.Name())
		rs, err := summarise(dir, e.Name())
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, e.Name())
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		rows = append(rows, rs...)
	}
	if len(rows) == 0 {
		return fmt.Errorf("no finished experiment under %s", *runs)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Rows    []Row    `json:"rows"`
		Missing []string `json:"missing,omitempty"`
	}{rows, missing}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "table.md"), []byte(markdown(rows, missing)), 0o644); err != nil {
		return err
	}
	for _, m := range []string{"graph", "image", "text"} {
		var sel []Row
		for _, r := range rows {
			if r.Modality == m {
				sel = append(sel, r)
			}
		}
		// A figure needs a sampler to compare with Uniform.
		if !slices.ContainsFunc(sel, func(r Row) bool { return r.Diff != nil }) {
			continue
		}
		p := filepath.Join(*out, "composition-"+m+".png")
		if err := figure(sel, m, p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		fmt.Fprintln(os.Stderr, "wrote", p)
	}
	fmt.Fprintln(os.Stderr, "wrote", filepath.Join(*out, "summary.json"), "and table.md")
	return nil
}

// runStats accumulates one sampler's metrics over its runs.
type runStats struct {
	fnSum, cosSum float64
	fnN, cosN     int
	covSum        float64
	covN          int
	buildSum      float64
	builds        int
	nextSum       float64
	epochs        int
}

// readMetrics adds one run's metrics.jsonl to st.
func readMetrics(path string, st *runStats) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return err
		}
		switch m["event"] {
		case nil:
			if v, ok := m["fn_ratio"].(float64); ok {
				st.fnSum += v
				st.fnN++
			}
			if v, ok := m["batch_cos"].(float64); ok {
				st.cosSum += v
				st.cosN++
			}
		case "epoch_end", "sampler_time":
			if v, ok := m["coverage"].(float64); ok {
				st.covSum += v
				st.covN++
			}
			// next_seconds: a sampler_time record's; in epoch_end in the
			// first runs of docs/batch-composition.md.
			if v, ok := m["next_seconds"].(float64); ok {
				st.nextSum += v
				st.epochs++
			}
		case "refresh":
			if v, ok := m["build_seconds"].(float64); ok {
				st.buildSum += v
				st.builds++
			}
		}
	}
	return sc.Err()
}

// partialResults builds the results of an experiment that has not
// finished from the runs that have (runs/*/result.json), in the config's
// sampler order, paired with the first sampler over the seeds both have.
func partialResults(dir string) (*train.Results, int, error) {
	cfg, err := train.LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return nil, 0, err
	}
	res := &train.Results{Name: cfg.Name}
	ds := cfg.Data.Name
	if ds == "" {
		ds = cfg.Data.Source
	}
	for _, sp := range cfg.SamplerList() {
		e := train.ResultEntry{Dataset: ds, Modality: cfg.Modality, Sampler: sp.DisplayName()}
		var tr float64
		for _, seed := range cfg.Seeds {
			id := fmt.Sprintf("%s-seed%d", sp.DisplayName(), seed)
			b, err := os.ReadFile(filepath.Join(dir, "runs", id, "result.json"))
			if err != nil {
				continue
			}
			var r train.RunResult
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", id, err)
			}
			res.Runs = append(res.Runs, r)
			e.Metric = r.Metric
			e.Seeds = append(e.Seeds, r.Seed)
			e.PerSeed = append(e.PerSeed, r.Value)
			tr += r.TrainSeconds
		}
		if len(e.PerSeed) == 0 {
			continue
		}
		e.Mean, e.Std = eval.MeanStd(e.PerSeed)
		e.TrainSeconds = tr / float64(len(e.PerSeed))
		if len(res.Results) > 0 {
			e.Comparison = train.PairBySeed(e, res.Results[0])
		}
		res.Results = append(res.Results, e)
	}
	if len(res.Runs) == 0 {
		return nil, 0, os.ErrNotExist
	}
	return res, len(cfg.SamplerList()) * len(cfg.Seeds), nil
}

// summarise reads one experiment directory: its results.json, or the runs
// finished so far.
func summarise(dir, name string) ([]Row, error) {
	var res *train.Results
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	switch {
	case err == nil:
		res = &train.Results{}
		if err := json.Unmarshal(b, res); err != nil {
			return nil, err
		}
	case errors.Is(err, os.ErrNotExist):
		var total int
		if res, total, err = partialResults(dir); err != nil {
			return nil, err
		}
		name += fmt.Sprintf(" (partial: %d of %d runs finished)", len(res.Runs), total)
	default:
		return nil, err
	}
	bySampler := map[string]*runStats{}
	for _, r := range res.Runs {
		st := bySampler[r.Sampler]
		if st == nil {
			st = &runStats{}
			bySampler[r.Sampler] = st
		}
		// Each run's own metrics.jsonl (the experiment's interleaves the
		// refresh events, which name no run, with parallel runs').
		if err := readMetrics(filepath.Join(dir, "runs", r.ID, "metrics.jsonl"), st); err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID, err)
		}
	}
	// Steps per run, for Next's time per batch.
	steps := map[string]float64{}
	nruns := map[string]float64{}
	for _, r := range res.Runs {
		steps[r.Sampler] += float64(r.Steps)
		nruns[r.Sampler]++
	}
	var out []Row
	for _, e := range res.Results {
		r := Row{Experiment: name, Dataset: e.Dataset, Modality: e.Modality, Sampler: e.Sampler, Metric: e.Metric,
			Seeds: len(e.PerSeed), Mean: e.Mean, Std: e.Std, TrainSeconds: e.TrainSeconds}
		if c := e.Comparison; c != nil {
			d, p := c.MeanDiff, c.P
			r.Diff, r.P = &d, &p
			if c.T != 0 && !math.IsInf(c.T, 0) && !math.IsNaN(c.T) {
				se := math.Abs(c.MeanDiff / c.T)
				r.DiffSE = &se
			}
		}
		if st := bySampler[e.Sampler]; st != nil {
			if st.fnN > 0 {
				v := st.fnSum / float64(st.fnN)
				r.FNRatio = &v
			}
			if st.cosN > 0 {
				r.BatchCos = st.cosSum / float64(st.cosN)
			}
			if st.covN > 0 {
				v := st.covSum / float64(st.covN)
				r.Coverage = &v
			}
			if st.builds > 0 {
				v := st.buildSum / float64(st.builds)
				r.RefreshSeconds = &v
				r.Refreshes = float64(st.builds) / nruns[e.Sampler]
			}
			// next_seconds is logged per epoch since this commit's runs.
			if steps[e.Sampler] > 0 && st.epochs > 0 {
				r.NextMillis = 1000 * st.nextSum / steps[e.Sampler]
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func fmtOpt(v *float64, f string) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf(f, *v)
}

// markdown renders the rows as one table per experiment.
func markdown(rows []Row, missing []string) string {
	var b strings.Builder
	exps := []string{}
	for _, r := range rows {
		if !slices.Contains(exps, r.Experiment) {
			exps = append(exps, r.Experiment)
		}
	}
	for _, x := range exps {
		var first Row
		for _, r := range rows {
			if r.Experiment == x {
				first = r
				break
			}
		}
		fmt.Fprintf(&b, "### %s (%s, %s)\n\n", x, first.Dataset, first.Metric)
		b.WriteString("| sampler | seeds | score | vs Uniform (p) | false-neg. ratio | mean neg. cosine | coverage | refresh s | Next ms/batch | train s/run |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range rows {
			if r.Experiment != x {
				continue
			}
			diff := "–"
			if r.Diff != nil {
				diff = fmt.Sprintf("%+.2f (%s)", *r.Diff, ptext(*r.P))
				if *r.P < 0.05 {
					diff = "**" + diff + "**"
				}
			}
			fmt.Fprintf(&b, "| %s | %d | %.2f ± %.2f | %s | %s | %.3f | %s | %s | %.2f | %.0f |\n", r.Sampler, r.Seeds, r.Mean, r.Std, diff,
				fmtOpt(r.FNRatio, "%.3f"), r.BatchCos, fmtOpt(r.Coverage, "%.3f"), fmtOpt(r.RefreshSeconds, "%.2f"), r.NextMillis, r.TrainSeconds)
		}
		b.WriteString("\n")
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "Not finished: %s.\n", strings.Join(missing, ", "))
	}
	return b.String()
}

func ptext(p float64) string {
	switch {
	case math.IsNaN(p):
		return "–"
	case p < 1e-4:
		return "< 0.0001"
	case p < 0.05:
		return fmt.Sprintf("%.2g", p)
	}
	return fmt.Sprintf("%.2f", p)
}

// samplerColor gives every sampler a fixed colour (Okabe–Ito).
var samplerColor = map[string]color.RGBA{
	"uniform":    {0, 0, 0, 255},
	"gcbs":       {230, 159, 0, 255},
	"spectral":   {86, 180, 233, 255},
	"osgd":       {0, 158, 115, 255},
	"kmeans":     {213, 94, 0, 255},
	"antikmeans": {0, 114, 178, 255},
}

// fewerSeeds reports whether the sampler has, on some dataset, fewer
// seeds than Uniform there: a run still to finish.
func fewerSeeds(rows []Row, sampler string) bool {
	for _, r := range rows {
		if r.Sampler != sampler {
			continue
		}
		for _, u := range rows {
			if u.Sampler == "uniform" && u.Dataset == r.Dataset && r.Seeds < u.Seeds {
				return true
			}
		}
	}
	return false
}

// shapes mark the datasets of a modality.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}}

// figure draws the modality's rows: difference with Uniform against the
// false-negative ratio (left, when the rows have one) and against the mean
// negative cosine (right).
func figure(rows []Row, modality, path string) error {
	var datasets []string
	for _, r := range rows {
		if !slices.Contains(datasets, r.Dataset) {
			datasets = append(datasets, r.Dataset)
		}
	}
	sort.Strings(datasets)
	hasFN := slices.ContainsFunc(rows, func(r Row) bool { return r.FNRatio != nil })
	panel := func(x func(Row) (float64, bool), xlabel string) (*plot.Plot, error) {
		var xs, ys []float64
		p := plot.New()
		p.X.Label.Text = xlabel
		p.Y.Label.Text = "difference with Uniform (" + rows[0].Metric + ")"
		p.Add(plotter.NewGrid())
		zero := plotter.NewFunction(func(float64) float64 { return 0 })
		zero.Color = color.Gray{Y: 150}
		zero.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(zero)
		for di, d := range datasets {
			for _, r := range rows {
				if r.Dataset != d {
					continue
				}
				xv, ok := x(r)
				// A sampler without a paired difference yet (one seed) is
				// left out, not drawn at 0.
				if !ok || (r.Diff == nil && r.Sampler != "uniform") {
					continue
				}
				y := 0.0
				if r.Diff != nil {
					y = *r.Diff
				}
				sc, err := plotter.NewScatter(plotter.XYs{{X: xv, Y: y}})
				if err != nil {
					return nil, err
				}
				sc.GlyphStyle.Shape = shapes[di%len(shapes)]
				sc.GlyphStyle.Color = samplerColor[r.Sampler]
				sc.GlyphStyle.Radius = vg.Points(4.5)
				p.Add(sc)
				xs = append(xs, xv)
				ys = append(ys, y)
				if r.DiffSE != nil {
					eb, err := plotter.NewYErrorBars(struct {
						plotter.XYs
						plotter.YErrors
					}{plotter.XYs{{X: xv, Y: y}}, plotter.YErrors{{Low: *r.DiffSE, High: *r.DiffSE}}})
					if err != nil {
						return nil, err
					}
					eb.LineStyle.Color = samplerColor[r.Sampler]
					p.Add(eb)
					ys = append(ys, y-*r.DiffSE, y+*r.DiffSE)
				}
			}
		}
		pad(&p.X, xs, 0.08)
		pad(&p.Y, append(ys, 0), 0.1)
		return p, nil
	}
	var plots []*plot.Plot
	if hasFN {
		p, err := panel(func(r Row) (float64, bool) {
			if r.FNRatio == nil {
				return 0, false
			}
			return *r.FNRatio, true
		}, "false-negative ratio of the batches (same-label pairs)")
		if err != nil {
			return err
		}
		plots = append(plots, p)
	}
	p, err := panel(func(r Row) (float64, bool) { return r.BatchCos, true }, "mean negative cosine (in-batch, projections)")
	if err != nil {
		return err
	}
	plots = append(plots, p)
	title := map[string]string{"graph": "GraphCL on TU graphs", "image": "SimCLR on the CIFAR-10 subset", "text": "SimCSE on STS-B"}[modality]
	for _, p := range plots {
		p.Title.Text = title + "\nbars: ±1 standard error of the paired difference over seeds"
	}
	// The plots side by side, the legend (samplers' colours, datasets'
	// shapes) in a strip on the right.
	const strip = 170
	w := vg.Length(len(plots))*420 + strip
	h := vg.Length(380)
	img := vgimg.New(w, h)
	dc := draw.New(img)
	plotsC := draw.Crop(dc, 0, -strip, 0, 0)
	legendC := draw.Crop(dc, w-strip+vg.Points(8), 0, 0, -vg.Points(40))
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(12), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, plotsC)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	var seen []string
	for _, r := range rows {
		if slices.Contains(seen, r.Sampler) || (r.Diff == nil && r.Sampler != "uniform") {
			continue
		}
		seen = append(seen, r.Sampler)
		sc, _ := plotter.NewScatter(plotter.XYs{{}})
		sc.GlyphStyle = draw.GlyphStyle{Shape: draw.CircleGlyph{}, Color: samplerColor[r.Sampler], Radius: vg.Points(4.5)}
		label := r.Sampler
		if fewerSeeds(rows, r.Sampler) {
			label += " (fewer seeds)"
		}
		l.Add(label, sc)
	}
	if len(datasets) > 1 {
		for di, d := range datasets {
			sc, _ := plotter.NewScatter(plotter.XYs{{}})
			sc.GlyphStyle = draw.GlyphStyle{Shape: shapes[di%len(shapes)], Color: color.Gray{Y: 90}, Radius: vg.Points(4.5)}
			l.Add(d, sc)
		}
	}
	l.Draw(legendC)
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// pad sets the axis range to the values' range widened by frac on each
// side (at least ±0.01 around a single value).
func pad(a *plot.Axis, v []float64, frac float64) {
	if len(v) == 0 {
		return
	}
	lo, hi := slices.Min(v), slices.Max(v)
	d := (hi - lo) * frac
	if d == 0 {
		d = math.Max(0.01, math.Abs(lo)*0.05)
	}
	a.Min, a.Max = lo-d, hi+d
}

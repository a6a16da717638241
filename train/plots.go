package train

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

type metricLine struct {
	Event   string    `json:"event"`
	Run     string    `json:"run"`
	Sampler string    `json:"sampler"`
	Step    int       `json:"step"`
	Epoch   int       `json:"epoch"`
	Loss    *float64  `json:"loss"`
	FN      *float64  `json:"fn_ratio"`
	FNMean  *float64  `json:"fn_ratio_mean"`
	Hist    []float64 `json:"hist"`
}

// Size of every PNG under DIR/plots: figW × figH at figDPI, i.e.
// figPixels() pixels. The legend takes a strip on the right of the figure,
// outside the axes.
const (
	figW   vg.Length = 640 // points
	figH   vg.Length = 360
	figDPI           = 96
)

// figPixels is the pixel size of the PNGs writePlots writes.
func figPixels() (w, h int) {
	wf, hf := float64(figW)/72*figDPI, float64(figH)/72*figDPI
	return int(wf + 0.5), int(hf + 0.5)
}

// samplerPalette holds the sampler colours: the Okabe–Ito palette without
// its yellow (too light on white), then Paul Tol's wine and olive and a dark
// brown, all distinguishable with the common colour-vision deficiencies.
// Entries 0-2 are reserved for the well-known samplers (fixedColour).
var samplerPalette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue: uniform
	{0xE6, 0x9F, 0x00, 0xFF}, // orange: knn
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green: batchsampler
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
	{0x88, 0x22, 0x55, 0xFF}, // wine
	{0x99, 0x99, 0x33, 0xFF}, // olive
	{0x8C, 0x51, 0x0A, 0xFF}, // brown
}

// fixedColour is the palette index of the well-known sampler names.
var fixedColour = map[string]int{"uniform": 0, "knn": 1, "batchsampler": 2}

// samplerColours gives every sampler display name its colour, the same in
// every plot of a run directory and across run directories: the
// well-known names have fixed colours; any other name takes the colour its
// FNV-1a hash points to among the non-reserved entries, or, when an earlier
// name (in sorted order) took it, the next free one. The result does not
// depend on the order of names; with more names than colours, colours repeat.
func samplerColours(names []string) map[string]color.NRGBA {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := make(map[string]color.NRGBA, len(sorted))
	used := make([]bool, len(samplerPalette))
	var rest []string
	for _, n := range sorted {
		if i, ok := fixedColour[n]; ok {
			out[n] = samplerPalette[i]
			used[i] = true
		} else {
			rest = append(rest, n)
		}
	}
	free := len(samplerPalette) - len(fixedColour)
	for _, n := range rest {
		h := fnv.New32a()
		h.Write([]byte(n))
		start := len(fixedColour) + int(h.Sum32()%uint32(free))
		i := start
		// Probe the other hashed colours first, then the reserved ones.
		for k := 0; k < len(samplerPalette); k++ {
			j := len(fixedColour) + (start-len(fixedColour)+k)%free
			if k >= free {
				j = k - free
			}
			if !used[j] {
				i = j
				break
			}
		}
		out[n] = samplerPalette[i]
		used[i] = true
	}
	return out
}

// faded is c drawn lighter (translucent), for the lines of single seeds.
func faded(c color.NRGBA) color.NRGBA {
	c.A = 0x66
	return c
}

type acc struct{ sum, n float64 }

func (a *acc) add(v float64) { a.sum += v; a.n++ }

// series is a run's value per x (epoch or step).
type series map[int]*acc

func (s series) add(x int, v float64) {
	a := s[x]
	if a == nil {
		a = &acc{}
		s[x] = a
	}
	a.add(v)
}

// plotData is what the plots show, read from DIR/metrics.jsonl.
type plotData struct {
	samplers  []string            // display names, in order of first appearance
	runs      map[string][]string // sampler → its runs (seeds), in order
	lossEpoch map[string]series   // run → epoch → mean training loss
	lossStep  map[string]series   // run → logged step → training loss
	fnEpoch   map[string]series   // run → epoch → false-negative ratio (epoch mean)
	fnStep    map[string]series   // run → logged step → false-negative ratio
	hists     map[string][]metricLine
	// fnChance is the false-negative ratio's chance level (results.json's
	// fn_ratio_chance; nil when unknown).
	fnChance *float64
}

// readRunPlotData reads what the plots of run directory dir show: its
// metrics.jsonl, and the chance level of the false-negative ratio from its
// results.json when there is one.
func readRunPlotData(dir string) (*plotData, error) {
	d, err := readPlotData(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return nil, err
	}
	var r Results
	if readJSON(filepath.Join(dir, "results.json"), &r) == nil {
		d.fnChance = r.FNRatioChance
	}
	return d, nil
}

func readPlotData(path string) (*plotData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &plotData{runs: map[string][]string{}, lossEpoch: map[string]series{}, lossStep: map[string]series{},
		fnEpoch: map[string]series{}, fnStep: map[string]series{}, hists: map[string][]metricLine{}}
	runSampler := map[string]string{}
	addTo := func(m map[string]series, run string, x int, v float64) {
		if m[run] == nil {
			m[run] = series{}
		}
		m[run].add(x, v)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m metricLine
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Sampler != "" && runSampler[m.Run] == "" {
			runSampler[m.Run] = m.Sampler
			if d.runs[m.Sampler] == nil {
				d.samplers = append(d.samplers, m.Sampler)
			}
			d.runs[m.Sampler] = append(d.runs[m.Sampler], m.Run)
		}
		switch {
		case m.Event == "" && m.Sampler != "":
			if m.Loss != nil {
				addTo(d.lossEpoch, m.Run, m.Epoch, *m.Loss)
				addTo(d.lossStep, m.Run, m.Step, *m.Loss)
			}
			if m.FN != nil {
				addTo(d.fnStep, m.Run, m.Step, *m.FN)
			}
		case m.Event == "cos_hist" && len(m.Hist) > 0:
			d.hists[m.Sampler] = append(d.hists[m.Sampler], m)
		case m.Event == "epoch_end" && m.FNMean != nil && runSampler[m.Run] != "":
			addTo(d.fnEpoch, m.Run, m.Epoch, *m.FNMean)
		}
	}
	return d, sc.Err()
}

// epochs is the number of distinct epochs in the runs' series.
func epochs(runs map[string]series) int {
	seen := map[int]bool{}
	for _, s := range runs {
		for e := range s {
			seen[e] = true
		}
	}
	return len(seen)
}

// figure is a plot with its legend kept apart, so that the legend can be
// drawn outside the axes (plot.Legend only draws inside them).
type figure struct {
	p      *plot.Plot
	legend plot.Legend
	labels []string  // the legend's entries, in order
	refs   []float64 // the y of the horizontal reference lines
}

// chanceColour draws the chance level of the false-negative ratio: a
// near-black that none of the samplers has, dashed and drawn over them
// (Uniform's line lies on it).
var chanceColour = color.NRGBA{0x22, 0x22, 0x22, 0xFF}

// addReference draws a dashed horizontal line at y across the plot, with
// its legend entry, and keeps y within the y axis.
func (f *figure) addReference(label string, y float64) {
	l := plotter.NewFunction(func(float64) float64 { return y })
	l.Color, l.Width = chanceColour, vg.Points(1.5)
	l.Dashes = []vg.Length{vg.Points(5), vg.Points(4)}
	f.p.Add(l)
	f.p.Y.Max = max(f.p.Y.Max, y)
	f.refs = append(f.refs, y)
	f.add(label, l)
}

func newFigure(title, xlabel, ylabel string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Padding, p.Y.Padding = vg.Points(2), vg.Points(2)
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)
	p.X.Tick.Marker = plot.TickerFunc(niceTicks)
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	l.ThumbnailWidth = vg.Points(24)
	return &figure{p: p, legend: l}
}

func (f *figure) add(label string, thumbs ...plot.Thumbnailer) {
	f.legend.Add(label, thumbs...)
	f.labels = append(f.labels, label)
}

// legendWidth is the width the legend needs.
func (f *figure) legendWidth() vg.Length {
	if len(f.labels) == 0 {
		return 0
	}
	return f.legend.Rectangle(draw.Canvas{}).Size().X
}

// Legend strip: legendGap between the plot and the legend, legendMargin on
// the right of the legend; at most maxStripFrac of the figure's width.
const (
	legendGap    vg.Length = 10 // points
	legendMargin vg.Length = 8
	maxStripFrac           = 0.35
)

// stripWidth is the width of the legend strip of figures whose widest
// legend is w wide.
func stripWidth(w vg.Length) vg.Length {
	if w == 0 {
		return legendMargin
	}
	return min(legendGap+w+legendMargin, vg.Length(maxStripFrac)*figW)
}

// layout splits the figure's canvas c into the plot's canvas (left) and the
// legend's (the strip of width strip on the right, from the top of the
// plot's data area down).
func (f *figure) layout(c draw.Canvas, strip vg.Length) (plotC, legendC draw.Canvas) {
	plotC = draw.Crop(c, 0, -strip, 0, 0)
	data := f.p.DataCanvas(plotC)
	legendC = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: plotC.Max.X + legendGap, Y: data.Min.Y},
		Max: vg.Point{X: c.Max.X - legendMargin, Y: data.Max.Y},
	}}
	return plotC, legendC
}

func (f *figure) save(path string, strip vg.Length) error {
	img := vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(figDPI))
	dc := draw.New(img)
	plotC, legendC := f.layout(dc, strip)
	f.p.Draw(plotC)
	f.legend.Draw(legendC)
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return fmt.Errorf("save %s: %w", filepath.Base(path), err)
	}
	return out.Close()
}

// fitLabel shortens s with an ellipsis until the legend entry fits in w.
func fitLabel(l plot.Legend, s string, w vg.Length) string {
	room := w - l.ThumbnailWidth
	if l.TextStyle.Rectangle(" "+s).Max.X <= room {
		return s
	}
	r := []rune(s)
	for len(r) > 1 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; l.TextStyle.Rectangle(" "+t).Max.X <= room {
			return t
		}
	}
	return string(r)
}

// maxLegendWidth is the widest legend the strip holds.
var maxLegendWidth = vg.Length(maxStripFrac)*figW - legendGap - legendMargin

// intTicks marks whole numbers (epochs, steps): every one when few, else
// every 2, 5, 10, 20, 50, … with unlabelled minor ticks in between.
func intTicks(lo, hi float64) []plot.Tick {
	a, b := math.Ceil(lo), math.Floor(hi)
	if b < a {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := 1.0
	for m := 0; (b-a)/step > 10; m++ {
		step = []float64{2, 5, 10}[m%3] * math.Pow(10, float64(m/3))
	}
	minor := step / 5
	if step <= 2 || minor != math.Trunc(minor) {
		minor = step / 2
	}
	if minor != math.Trunc(minor) {
		minor = step
	}
	var ticks []plot.Tick
	for x := math.Ceil(a/minor) * minor; x <= b; x += minor {
		t := plot.Tick{Value: x}
		if math.Mod(x, step) == 0 {
			t.Label = strconv.FormatFloat(x, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// niceTicks labels about six round values (steps of 1, 2, 2.5 or 5 times a
// power of ten), with four unlabelled minor ticks between two labels.
func niceTicks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := span / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	m := 10.0
	for _, c := range []float64{1, 2, 2.5, 5} {
		if c*mag >= raw {
			m = c
			break
		}
	}
	step := m * mag
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	if m == 2.5 {
		dec++
	}
	minor := step / 5
	var ticks []plot.Tick
	for i := math.Ceil(lo/minor - 1e-9); i*minor <= hi+minor*1e-9; i++ {
		t := plot.Tick{Value: i * minor}
		if t.Value == 0 {
			t.Value = 0 // not -0
		}
		if math.Mod(i, 5) == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', dec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// seriesFigure plots, per sampler, the mean over its runs (seeds) as a thick
// line and every run as a thin, lighter line of the same colour; the legend
// lists the samplers once, then the two line styles.
func seriesFigure(title, xlabel, ylabel string, d *plotData, runs map[string]series, colours map[string]color.NRGBA) (*figure, error) {
	f := newFigure(title, xlabel, ylabel)
	f.p.X.Tick.Marker = plot.TickerFunc(intTicks)
	points := func(s series) plotter.XYs {
		xs := make([]int, 0, len(s))
		for x := range s {
			xs = append(xs, x)
		}
		slices.Sort(xs)
		pts := make(plotter.XYs, len(xs))
		for i, x := range xs {
			pts[i] = plotter.XY{X: float64(x), Y: s[x].sum / s[x].n}
		}
		return pts
	}
	// addLine adds a line (and a dot where it has a single point).
	addLine := func(pts plotter.XYs, c color.Color, w vg.Length) (*plotter.Line, error) {
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c, w
		f.p.Add(l)
		if len(pts) == 1 {
			s, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, err
			}
			s.Color, s.Shape, s.Radius = c, draw.CircleGlyph{}, w*1.5
			f.p.Add(s)
		}
		return l, nil
	}
	const thick, thin = 2.5, 0.9
	var means []struct {
		name string
		pts  plotter.XYs
	}
	multi := false
	for _, smp := range d.samplers { // thin lines first, under the means
		mean := series{}
		n := 0
		for _, run := range d.runs[smp] {
			s := runs[run]
			if len(s) == 0 {
				continue
			}
			n++
			for x, a := range s {
				mean.add(x, a.sum/a.n)
			}
			if len(d.runs[smp]) > 1 {
				if _, err := addLine(points(s), faded(colours[smp]), vg.Points(thin)); err != nil {
					return nil, err
				}
			}
		}
		if n == 0 {
			continue
		}
		multi = multi || n > 1
		means = append(means, struct {
			name string
			pts  plotter.XYs
		}{smp, points(mean)})
	}
	for _, m := range means {
		l, err := addLine(m.pts, colours[m.name], vg.Points(thick))
		if err != nil {
			return nil, err
		}
		f.add(fitLabel(f.legend, m.name, maxLegendWidth), l)
	}
	if multi {
		grey := color.NRGBA{0x55, 0x55, 0x55, 0xFF}
		f.add("") // a blank row between the samplers and the line styles
		f.add("mean over seeds", &plotter.Line{XYs: nil, LineStyle: draw.LineStyle{Color: grey, Width: vg.Points(thick)}})
		f.add("one seed", &plotter.Line{XYs: nil, LineStyle: draw.LineStyle{Color: faded(grey), Width: vg.Points(thin)}})
	}
	if len(means) == 0 {
		f.p.Title.Text += " (no data)"
		f.p.Title.TextStyle.Color = color.Gray{Y: 100}
	}
	return f, nil
}

// writePlots draws, from DIR/metrics.jsonl, DIR/plots/loss.png (mean training
// loss per epoch), DIR/plots/fn_ratio.png (the batches' false-negative ratio
// per epoch) and DIR/plots/similarity_hist.png (in-batch cosine similarities
// at the end of training). Every sampler has one colour in all three
// (samplerColours); loss and false-negative ratio show the mean over seeds
// as a thick line and each seed as a thin one; legends sit to the right of
// the axes. With fewer than three epochs, loss and false-negative ratio are
// drawn per logged step instead.
// WritePlots draws DIR/plots/*.png from DIR/metrics.jsonl (Run does it at
// the end of every experiment; cmd/train -plots DIR redraws a finished one).
// A run directory without a logged training step (train.epochs: 0) has
// nothing to draw: WritePlots then writes no file and returns an error
// wrapping ErrNothingToPlot.
func WritePlots(dir string) error { return writePlots(dir) }

// ErrNothingToPlot says that a run directory's metrics hold no training
// step, hence no curve or histogram.
var ErrNothingToPlot = errors.New("no training step logged: nothing to plot")

func writePlots(dir string) error {
	d, err := readRunPlotData(dir)
	if err != nil {
		return err
	}
	if len(d.lossStep) == 0 && len(d.lossEpoch) == 0 && len(d.hists) == 0 {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "metrics.jsonl"), ErrNothingToPlot)
	}
	figs, err := buildFigures(d)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return err
	}
	var w vg.Length // one legend strip for all three: their axes line up
	for _, f := range figs {
		w = max(w, f.legendWidth())
	}
	for _, name := range plotNames {
		if err := figs[name].save(filepath.Join(dir, "plots", name), stripWidth(w)); err != nil {
			return err
		}
	}
	return nil
}

// plotNames are the files writePlots writes under DIR/plots.
var plotNames = []string{"loss.png", "fn_ratio.png", "similarity_hist.png"}

// buildFigures builds the figures of plotNames from the metrics.
func buildFigures(d *plotData) (map[string]*figure, error) {
	colours := samplerColours(d.samplers)
	lossRuns, fnRuns, x := d.lossEpoch, d.fnEpoch, "epoch"
	lossTitle, fnTitle := "Training loss per epoch", "False-negative ratio of the batches per epoch"
	lossY := "mean training loss over the epoch"
	if epochs(d.lossEpoch) < 3 {
		lossRuns, fnRuns, x = d.lossStep, d.fnStep, "training step"
		lossTitle, fnTitle = "Training loss per logged step", "False-negative ratio of the batches per logged step"
		lossY = "training loss of the batch"
	}
	// Second lines: how to read them.
	lossTitle += "\nnot comparable across samplers: harder batches give a higher loss"
	fnTitle += "\nlower = fewer false negatives (same-class pairs) in a batch"
	loss, err := seriesFigure(lossTitle, x, lossY, d, lossRuns, colours)
	if err != nil {
		return nil, err
	}
	fn, err := seriesFigure(fnTitle, x, "false-negative ratio (same-label pairs)", d, fnRuns, colours)
	if err != nil {
		return nil, err
	}
	// From 0, so that the samplers' distances from 0 and from each other
	// are seen in proportion, with the chance level (what batches drawn at
	// random hold, Uniform's expected value) as a reference.
	if len(fn.labels) > 0 {
		fn.p.Y.Min = 0
		if c := d.fnChance; c != nil {
			fn.add("")
			fn.addReference(fmt.Sprintf("chance level: %.3f", *c), *c)
		}
	}
	hist, err := histFigure(d, colours)
	if err != nil {
		return nil, err
	}
	return map[string]*figure{"loss.png": loss, "fn_ratio.png": fn, "similarity_hist.png": hist}, nil
}

// histFigure plots, per sampler, the mean in-batch cosine similarity
// histogram over the last quarter of training (all seeds).
func histFigure(d *plotData, colours map[string]color.NRGBA) (*figure, error) {
	f := newFigure("In-batch cosine similarity, last quarter of training (all seeds)",
		"cosine similarity of a pair in the batch (projections)", "share of pairs")
	for _, s := range d.samplers {
		hs := d.hists[s]
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
			return nil, err
		}
		l.Color = colours[s]
		l.Width = vg.Points(2.5)
		f.p.Add(l)
		f.add(fitLabel(f.legend, s, maxLegendWidth), l)
	}
	f.p.X.Min, f.p.X.Max = -1, 1
	f.p.Y.Min = 0
	if len(f.labels) == 0 {
		f.p.Title.Text += " (no data)"
		f.p.Title.TextStyle.Color = color.Gray{Y: 100}
	}
	return f, nil
}

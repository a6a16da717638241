package table

import (
	"bufio"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/eval"
)

// CurvePoint is the probe accuracy of a row at one epoch: the mean over
// the seeds evaluated there, and each seed's value.
type CurvePoint struct {
	Epoch   int       `json:"epoch"`
	Mean    float64   `json:"mean"`
	PerSeed []float64 `json:"per_seed"`
}

// Curve is a row's accuracy over training: the evaluations every
// train.eval_every epochs (metrics.jsonl) and the final one (results.json).
type Curve struct {
	Block   string       `json:"block"`
	Sampler string       `json:"sampler"`
	Points  []CurvePoint `json:"points"`
}

// readCurves reads the accuracy curves of a finished cell from its run
// directory: one per sampler row with at least one evaluation before the
// last epoch. A cell whose metrics.jsonl is gone (a recorded copy) has none.
func readCurves(dir string, st cellrun.Status) []Curve {
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	type key struct {
		sampler string
		epoch   int
	}
	vals := map[key][]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"event":"eval"`) {
			continue
		}
		var ev struct {
			Run   string  `json:"run"`
			Epoch int     `json:"epoch"`
			Value float64 `json:"value"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		smp, _, ok := strings.Cut(ev.Run, "-seed")
		if !ok {
			continue
		}
		vals[key{smp, ev.Epoch}] = append(vals[key{smp, ev.Epoch}], ev.Value)
	}
	var out []Curve
	for _, r := range st.Results.Results {
		c := Curve{Block: st.Block, Sampler: r.Sampler}
		var epochs []int
		for k := range vals {
			if k.sampler == r.Sampler {
				epochs = append(epochs, k.epoch)
			}
		}
		slices.Sort(epochs)
		for _, e := range epochs {
			v := vals[key{r.Sampler, e}]
			m, _ := eval.MeanStd(v)
			c.Points = append(c.Points, CurvePoint{Epoch: e, Mean: m, PerSeed: v})
		}
		if len(c.Points) == 0 {
			continue
		}
		c.Points = append(c.Points, CurvePoint{Epoch: st.Config.Train.Epochs, Mean: r.Mean, PerSeed: r.PerSeed})
		out = append(out, c)
	}
	return out
}

// curveColour is a sampler's colour in the curve figures, as in every
// run's plots (Okabe–Ito blue, orange, bluish green).
var curveColour = map[string]color.NRGBA{
	"uniform":      {0x00, 0x72, 0xB2, 0xFF},
	"knn":          {0xE6, 0x9F, 0x00, 0xFF},
	"batchsampler": {0x00, 0x9E, 0x73, 0xFF},
}

// curveFigure is the file name of a dataset's curve figure, relative to
// the table's directory.
func curveFigure(dataset string) string {
	return filepath.ToSlash(filepath.Join("figures", dataset+"-probe-curve.png"))
}

// WriteFigures draws, for every dataset with curves, one panel per block:
// the linear-probe accuracy of each sampler row over the epochs (mean over
// seeds; each seed faded), the untrained encoder as a dashed floor, into
// dir/figures/DATASET-probe-curve.png.
func (t *ImageTable) WriteFigures(dir string) error {
	for _, d := range t.Datasets {
		var blocks []string
		for _, c := range t.Curves[d] {
			if !slices.Contains(blocks, c.Block) {
				blocks = append(blocks, c.Block)
			}
		}
		if len(blocks) == 0 {
			continue
		}
		var floor *float64
		if e := t.entry(BlockUntrained, "uniform", d); e != nil {
			floor = &e.Mean
		}
		path := filepath.Join(dir, filepath.FromSlash(curveFigure(d)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := drawCurves(path, d, blocks, t.Curves[d], floor); err != nil {
			return fmt.Errorf("figure %s: %w", path, err)
		}
	}
	return nil
}

// drawCurves draws one panel per block side by side, with a shared y range
// and the legend in the first panel.
func drawCurves(path, dataset string, blocks []string, curves []Curve, floor *float64) error {
	lo, hi := 100.0, 0.0
	for _, c := range curves {
		for _, p := range c.Points {
			for _, v := range p.PerSeed {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if floor != nil {
		lo = min(lo, *floor)
	}
	pad := max(0.5, (hi-lo)*0.06)
	lo, hi = lo-pad, hi+pad
	var panels []*plot.Plot
	// One legend for all panels, in a strip to their right: inside a panel
	// it would cover curves or the untrained encoder's line.
	leg := plot.NewLegend()
	leg.TextStyle.Font.Size = vg.Points(10)
	leg.Top, leg.Left = true, true
	for i, blk := range blocks {
		p := plot.New()
		p.Title.Text = imageBlockTitle[blk]
		p.Title.TextStyle.Font.Size = vg.Points(12)
		p.X.Label.Text = "epoch"
		if i == 0 {
			p.Y.Label.Text = "linear-probe accuracy (%)"
		}
		p.Y.Min, p.Y.Max = lo, hi
		p.Add(plotter.NewGrid())
		maxEpoch := 1
		for _, c := range curves {
			if c.Block != blk {
				continue
			}
			col, ok := curveColour[c.Sampler]
			if !ok {
				col = color.NRGBA{0x55, 0x55, 0x55, 0xFF}
			}
			seeds := 0
			for _, pt := range c.Points {
				seeds = max(seeds, len(pt.PerSeed))
				maxEpoch = max(maxEpoch, pt.Epoch)
			}
			for s := range seeds {
				var xy plotter.XYs
				for _, pt := range c.Points {
					if s < len(pt.PerSeed) {
						xy = append(xy, plotter.XY{X: float64(pt.Epoch), Y: pt.PerSeed[s]})
					}
				}
				l, err := plotter.NewLine(xy)
				if err != nil {
					return err
				}
				faded := col
				faded.A = 0x55
				l.Color, l.Width = faded, vg.Points(0.8)
				p.Add(l)
			}
			var xy plotter.XYs
			for _, pt := range c.Points {
				xy = append(xy, plotter.XY{X: float64(pt.Epoch), Y: pt.Mean})
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return err
			}
			l.Color, l.Width = col, vg.Points(2)
			pts.Color, pts.Shape = col, draw.CircleGlyph{}
			p.Add(l, pts)
			if i == 0 {
				leg.Add(samplerLegend[c.Sampler], l, pts)
			}
		}
		p.X.Min, p.X.Max = 0, float64(maxEpoch)
		if floor != nil {
			f, err := plotter.NewLine(plotter.XYs{{X: 0, Y: *floor}, {X: float64(maxEpoch), Y: *floor}})
			if err != nil {
				return err
			}
			f.Color, f.Dashes, f.Width = color.NRGBA{0x44, 0x44, 0x44, 0xFF}, []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(1)
			p.Add(f)
			if i == 0 {
				leg.Add("untrained encoder", f)
			}
		}
		panels = append(panels, p)
	}
	const panelW, h, legendW = 3.6 * vg.Inch, 3.4 * vg.Inch, 1.7 * vg.Inch
	w := panelW*vg.Length(len(panels)) + legendW
	img := vgimg.NewWith(vgimg.UseWH(w, h+0.35*vg.Inch), vgimg.UseDPI(96))
	dc := draw.New(img)
	font := plot.DefaultFont
	font.Size = vg.Points(13)
	dc.FillText(draw.TextStyle{Color: color.Black, Font: font, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter},
		vg.Point{X: w / 2, Y: h + 0.17*vg.Inch}, dataset+" (faded: each seed)")
	body := draw.Crop(dc, 0, -legendW, 0, -0.35*vg.Inch)
	leg.Draw(draw.Crop(dc, w-legendW+vg.Points(4), 0, 0, -0.6*vg.Inch))
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Points(6), PadTop: vg.Points(4), PadBottom: vg.Points(2), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	grid := [][]*plot.Plot{panels}
	canvases := plot.Align(grid, tiles, body)
	for j, p := range panels {
		p.Draw(canvases[0][j])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// samplerLegend names a sampler row in a legend.
var samplerLegend = map[string]string{"uniform": "Uniform", "knn": "kNN Sampler", "batchsampler": "BatchSampler"}

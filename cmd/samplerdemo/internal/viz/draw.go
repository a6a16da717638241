package viz

import (
	"bufio"
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/palette"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// dpi is the resolution of the PNG files.
const dpi = 110

var (
	colGrey     = color.NRGBA{0xbb, 0xbb, 0xbb, 0xff}
	colEdge     = color.NRGBA{0x40, 0x40, 0x40, 0x1c}
	colHighEdge = color.NRGBA{0x10, 0x10, 0x10, 0xb0}
	colPath     = color.NRGBA{0xb0, 0x10, 0x60, 0x90}
	colJump     = color.NRGBA{0x30, 0x30, 0x30, 0xc0}
	colRing     = color.NRGBA{0x90, 0x90, 0x90, 0xff}
)

// edgeColour is the colour of one of n translucent graph edges: colEdge
// for up to 4,800 edges (600 nodes × K = 8), fainter as n grows, so that a
// dense graph (K = 47: 28,200 edges) does not turn into a dark blob.
func edgeColour(n int) color.NRGBA {
	c := colEdge
	if n > 4800 {
		c.A = uint8(max(4, int(c.A)*4800/n))
	}
	return c
}

// classColour returns the colour of class c of C (package palette: the
// Okabe–Ito colours, neighbouring classes most different).
func classColour(c, classes int) color.NRGBA { return palette.Class(c, classes) }

// outlinedCircle is a filled circle with a thin dark outline, so that
// neighbouring batch members stay distinguishable.
type outlinedCircle struct{}

func (outlinedCircle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	p := make(vg.Path, 0, 3)
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)})
	c.Stroke(p)
}

// thickRing is the outline of a circle, drawn thicker than draw.RingGlyph.
type thickRing struct{}

func (thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	p := make(vg.Path, 0, 3)
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)})
	c.Stroke(p)
}

// star is a five-pointed star (filled with the glyph colour, white outline
// inside a black one), the marker of a start node or anchor.
type star struct{}

func (star) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	p := make(vg.Path, 0, 11)
	for i := range 10 {
		r := sty.Radius
		if i%2 == 1 {
			r *= 0.45
		}
		a := math.Pi/2 + float64(i)*math.Pi/5
		q := vg.Point{X: pt.X + r*vg.Length(math.Cos(a)), Y: pt.Y + r*vg.Length(math.Sin(a))}
		if i == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	c.SetColor(sty.Color)
	c.Fill(p)
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(2.2)})
	c.Stroke(p)
	c.SetLineStyle(draw.LineStyle{Color: color.White, Width: vg.Points(0.8)})
	c.Stroke(p)
}

// segment is a line between two points of the point set.
type segment struct{ from, to int }

// segments draws lines between points of e (in data coordinates), with an
// optional arrowhead of the given length at the end and the end pulled back
// by gap (so that arrows stop at the marker's edge).
type segments struct {
	e     sampler.Embeddings
	segs  []segment
	style draw.LineStyle
	arrow vg.Length
	gap   vg.Length
}

// Plot implements plot.Plotter.
func (s *segments) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, sg := range s.segs {
		a := vg.Point{X: trX(float64(s.e.Data[2*sg.from])), Y: trY(float64(s.e.Data[2*sg.from+1]))}
		b := vg.Point{X: trX(float64(s.e.Data[2*sg.to])), Y: trY(float64(s.e.Data[2*sg.to+1]))}
		d := b.Sub(a)
		l := vg.Length(math.Hypot(float64(d.X), float64(d.Y)))
		if l <= s.gap+s.arrow {
			c.StrokeLine2(s.style, a.X, a.Y, b.X, b.Y)
			continue
		}
		u := d.Scale(1 / l)
		tip := b.Sub(u.Scale(s.gap))
		if s.arrow == 0 {
			c.StrokeLine2(s.style, a.X, a.Y, tip.X, tip.Y)
			continue
		}
		base := tip.Sub(u.Scale(s.arrow))
		c.StrokeLine2(s.style, a.X, a.Y, base.X, base.Y)
		n := vg.Point{X: -u.Y, Y: u.X}.Scale(s.arrow * 0.4)
		c.FillPolygon(s.style.Color, []vg.Point{tip, base.Add(n), base.Sub(n)})
	}
}

// Thumbnail implements plot.Thumbnailer (the legend's icon).
func (s *segments) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	sty := s.style
	if a, ok := sty.Color.(color.NRGBA); ok && a.A < 0x80 {
		a.A = 0x80 // a faint colour would vanish in the legend
		sty.Color = a
	}
	c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
}

// unitCircle draws the circle of radius 1 as a faint reference.
type unitCircle struct{}

func (unitCircle) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var pts []vg.Point
	for i := 0; i <= 180; i++ {
		a := 2 * math.Pi * float64(i) / 180
		pts = append(pts, vg.Point{X: trX(math.Cos(a)), Y: trY(math.Sin(a))})
	}
	c.StrokeLines(draw.LineStyle{Color: colRing, Width: vg.Points(0.6), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}, pts)
}

// xys returns the points of e with the given indices.
func xys(e sampler.Embeddings, idx []int) plotter.XYs {
	out := make(plotter.XYs, len(idx))
	for i, v := range idx {
		out[i] = plotter.XY{X: float64(e.Data[2*v]), Y: float64(e.Data[2*v+1])}
	}
	return out
}

// scatter returns a scatter plotter of the given points and glyph.
func scatter(e sampler.Embeddings, idx []int, col color.Color, radius vg.Length, shape draw.GlyphDrawer) *plotter.Scatter {
	s, _ := plotter.NewScatter(xys(e, idx)) // cannot fail: finite coordinates
	s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: radius, Shape: shape}
	return s
}

// newRingPlot returns a plot of the square [−lim, lim]² with a title, no
// grid, and the unit circle drawn faintly.
func newRingPlot(title string, lim float64) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Title.Padding = vg.Points(6)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -lim, lim, -lim, lim
	p.X.Label.Text, p.Y.Label.Text = "embedding dimension 1", "embedding dimension 2"
	p.X.Label.TextStyle.Font.Size = vg.Points(9)
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.X.Tick.Label.Font.Size = vg.Points(8)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.Padding = vg.Points(1.5)
	p.Legend.ThumbnailWidth = vg.Points(16)
	p.Add(unitCircle{})
	return p
}

// figure is a grid of plots saved as one PNG, with an optional heading.
type figure struct {
	plots   [][]*plot.Plot // rows of plots
	w, h    vg.Length      // size of one tile
	heading string
}

// save writes the figure as a PNG file.
func (f figure) save(path string) error {
	rows := len(f.plots)
	cols := len(f.plots[0])
	top := vg.Length(0)
	if f.heading != "" {
		top = vg.Points(10 + 19*float64(strings.Count(f.heading, "\n")+1))
	}
	W, H := f.w*vg.Length(cols), f.h*vg.Length(rows)+top
	img := vgimg.NewWith(vgimg.UseWH(W, H), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: top + vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(10), PadX: vg.Points(18), PadY: vg.Points(14)}
	canvases := plot.Align(f.plots, tiles, dc)
	for i, row := range f.plots {
		for j, p := range row {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if f.heading != "" {
		sty := text.Style{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YTop}
		sty.Font.Size = vg.Points(15)
		dc.FillText(sty, vg.Point{X: W / 2, Y: H - vg.Points(8)}, f.heading)
	}
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("viz: %w", err)
	}
	w := bufio.NewWriter(file)
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		file.Close()
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		file.Close()
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("viz: write %s: %w", path, err)
	}
	return nil
}

// angleMark draws the rays from the origin to two points, the arc of the
// angle θ between them and the text "cos θ = …": the similarity the
// samplers use.
type angleMark struct {
	ax, ay, bx, by float64 // the two points
}

func (m angleMark) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
	o := vg.Point{X: trX(0), Y: trY(0)}
	c.StrokeLine2(sty, o.X, o.Y, trX(m.ax), trY(m.ay))
	c.StrokeLine2(sty, o.X, o.Y, trX(m.bx), trY(m.by))
	a0, a1 := math.Atan2(m.ay, m.ax), math.Atan2(m.by, m.bx)
	if a1 < a0 {
		a0, a1 = a1, a0
	}
	if a1-a0 > math.Pi {
		a0, a1 = a1, a0+2*math.Pi
	}
	const r = 0.28
	var arc []vg.Point
	for i := 0; i <= 40; i++ {
		a := a0 + (a1-a0)*float64(i)/40
		arc = append(arc, vg.Point{X: trX(r * math.Cos(a)), Y: trY(r * math.Sin(a))})
	}
	c.StrokeLines(sty, arc)
	mid := (a0 + a1) / 2
	cosT := (m.ax*m.bx + m.ay*m.by) / (math.Hypot(m.ax, m.ay) * math.Hypot(m.bx, m.by))
	ts := text.Style{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
	ts.Font.Size = vg.Points(13)
	c.FillText(ts, vg.Point{X: trX(0.4 * math.Cos(mid)), Y: trY(0.4 * math.Sin(mid))}, "θ")
	ts.Font.Size = vg.Points(10)
	c.FillText(ts, vg.Point{X: trX(0), Y: trY(-0.3)}, fmt.Sprintf("similarity of the two\nmarked points = cos θ = %.2f", cosT))
}

package viz

import (
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// Names of the samplers in SummaryRow.Sampler.
const (
	NameUniform      = "Uniform"
	NameKNN          = "kNN Sampler"
	NameBatchSampler = "BatchSampler"
)

// Files written by Run, in this order.
const (
	FilePoints       = "points.png"
	FileGraph        = "proximity_graph.png"
	FileGraphM       = "proximity_graph_M.png"
	FileBatchUniform = "batch_uniform.png"
	FileBatchKNN     = "batch_knn.png"
	FileBatchSampler = "batch_batchsampler.png"
	FileBatchesAlpha = "batches_alpha.png"
	FileSummary      = "summary.md"
)

// Drawing and stream constants.
const (
	streamWalks        = 0x77616c6b // "walk": the traced walks of batches_alpha.png
	streamFreq         = 0x66726571 // "freq": the walks behind its frequencies
	tileW, tileH       = 5.6, 6.0   // inches per picture
	alphaTileW         = 4.1        // inches per picture of batches_alpha.png
	alphaTileH         = 4.5
	ringLim            = 1.6      // the plots show [−ringLim, ringLim]²
	highlightedNodes   = 3        // nodes whose out-edges proximity_graph*.png draw as arrows
	pointR, batchR     = 1.8, 4.2 // marker radii (points)
	startR, fallbackR  = 10.0, 6.5
	arrowLen, arrowGap = 6.0, 2.5
)

// SummaryRow is one line of summary.md: a sampler measured over
// Config.Batches batches.
type SummaryRow struct {
	Sampler string
	M, K    int     // 0 for Uniform and the kNN Sampler
	Alpha   float64 // NaN for Uniform and the kNN Sampler
	Stats   sampler.BatchStats
	Picture string // the file that shows one batch of this sampler ("" for none)
}

// GraphRow describes one of the graphs drawn in proximity_graph_M.png.
type GraphRow struct {
	Name  string
	M, K  int
	Stats sampler.NeighbourStatistics
}

// Result is what Run measured and wrote.
type Result struct {
	Dir    string       // the output directory
	Files  []string     // the files written (base names), FilePoints first, FileSummary last
	Rows   []SummaryRow // the summary table
	Graphs []GraphRow   // M = K (near uniform), M from the config, M = N−1 (kNN graph)
	// UniformExpected is the expected false-negative ratio of a uniformly
	// drawn batch, Σ_c n_c(n_c−1) / (N(N−1)) for n_c points of class c.
	UniformExpected float64
	Start           int         // the start node u of the walks in batches_alpha.png
	Walks           []AlphaWalk // those walks, one per Config.Sampler.Alphas
}

// AlphaWalk is one column of batches_alpha.png: walks with restart
// probability Alpha from Result.Start on BatchSampler's proximity graph.
type AlphaWalk struct {
	Alpha float64
	Walk  Trace // one walk, with its path (TraceRWR)
	// Walks is the number of further walks (sampler.Walk, Config.Batches of
	// them) behind Freq and Stats.
	Walks int
	Freq  []float64 // per node, the share of those walks whose batch holds it
	// Stats averages FalseNegativeRatio and MeanCosine over those walks.
	Stats sampler.BatchStats
}

// alphaWalks traces one walk from start with restart probability alpha and
// measures cfg.Batches more (stream i of the walk streams).
func alphaWalks(g *sampler.Graph, start int, alpha float64, cfg Config, i uint64, labels []int, e sampler.Embeddings) (AlphaWalk, error) {
	opt := sampler.WalkOptions{Kind: sampler.WalkRWR, B: cfg.BatchSize, Alpha: alpha}
	t, err := TraceRWR(g, start, opt, rand.NewPCG(cfg.Seed, streamWalks+i))
	if err != nil {
		return AlphaWalk{}, err
	}
	aw := AlphaWalk{Alpha: alpha, Walk: t, Walks: cfg.Batches, Freq: make([]float64, g.N)}
	src := rand.NewPCG(cfg.Seed, streamFreq+i)
	var fn, fn2, cos float64
	for range cfg.Batches {
		b, err := sampler.Walk(g, start, opt, src)
		if err != nil {
			return AlphaWalk{}, fmt.Errorf("viz: %w", err)
		}
		for _, v := range b {
			aw.Freq[v]++
		}
		f := sampler.FalseNegativeRatio(b, labels)
		fn += f
		fn2 += f * f
		cos += sampler.MeanCosine(b, e)
	}
	n := float64(cfg.Batches)
	for v := range aw.Freq {
		aw.Freq[v] /= n
	}
	aw.Stats = sampler.BatchStats{Batches: cfg.Batches, FNRatio: fn / n, MeanCosine: cos / n}
	if cfg.Batches > 1 {
		aw.Stats.FNStdErr = math.Sqrt(max(fn2/n-aw.Stats.FNRatio*aw.Stats.FNRatio, 0) / (n - 1))
	}
	return aw, nil
}

// samplerSpec builds a fresh, refreshed sampler; calling it twice gives
// two samplers that hand out the same batches.
type samplerSpec struct {
	row  SummaryRow
	make func() (sampler.Sampler, error)
}

// Run generates the point set of cfg, draws the teaching pictures and the
// summary into dir (created if needed), and returns what it measured. The
// output depends only on cfg.
func Run(cfg Config, dir string) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, fmt.Errorf("viz: config: %w", err)
	}
	if dir == "" {
		return Result{}, fmt.Errorf("viz: empty output directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("viz: %w", err)
	}
	e, labels, err := CirclePoints(cfg.Points)
	if err != nil {
		return Result{}, err
	}
	n, b, k, m := cfg.Points.N, cfg.BatchSize, cfg.Sampler.K, cfg.Sampler.M
	res := Result{Dir: dir, UniformExpected: expectedUniformFN(labels, cfg.Points.Classes)}
	save := func(name string, f figure) error {
		if err := f.save(filepath.Join(dir, name)); err != nil {
			return err
		}
		res.Files = append(res.Files, name)
		return nil
	}

	// The samplers, each created twice from the same seed: once for the
	// pictured first batch, once for the statistics (sampler.MeasureBatches).
	bsSpec := func(m int, alpha float64, pic string) samplerSpec {
		return samplerSpec{
			row: SummaryRow{Sampler: NameBatchSampler, M: m, K: k, Alpha: alpha, Picture: pic},
			make: func() (sampler.Sampler, error) {
				s, err := sampler.NewBatchSampler(sampler.Config{
					BatchSize: b, M: m, K: k, Workers: 1,
					Alpha: sampler.Schedule{Start: alpha, Kind: sampler.ScheduleConstant},
				}, n, cfg.Seed)
				if err != nil {
					return nil, err
				}
				return s, s.Refresh(e)
			},
		}
	}
	specs := []samplerSpec{{
		row:  SummaryRow{Sampler: NameUniform, Alpha: math.NaN(), Picture: FileBatchUniform},
		make: func() (sampler.Sampler, error) { return sampler.NewUniform(n, b, cfg.Seed) },
	}, bsSpec(k, cfg.Sampler.Alpha, "")}
	alphas := slices.Clone(cfg.Sampler.Alphas)
	if !slices.Contains(alphas, cfg.Sampler.Alpha) {
		alphas = append(alphas, cfg.Sampler.Alpha)
	}
	slices.Sort(alphas)
	for _, a := range alphas {
		pic := ""
		if a == cfg.Sampler.Alpha {
			pic = FileBatchSampler
		} else if slices.Contains(cfg.Sampler.Alphas, a) {
			pic = FileBatchesAlpha
		}
		specs = append(specs, bsSpec(m, a, pic))
	}
	if m != n-1 {
		specs = append(specs, bsSpec(n-1, cfg.Sampler.Alpha, ""))
	}
	specs = append(specs, samplerSpec{
		row: SummaryRow{Sampler: NameKNN, Alpha: math.NaN(), Picture: FileBatchKNN},
		make: func() (sampler.Sampler, error) {
			s, err := sampler.NewKNN(n, b, 0, cfg.Seed)
			if err != nil {
				return nil, err
			}
			return s, s.Refresh(e)
		},
	})
	first := map[string][]int{} // picture → its batch
	var bs *sampler.BatchSampler
	for _, sp := range specs {
		s, err := sp.make()
		if err != nil {
			return Result{}, fmt.Errorf("viz: %s: %w", sp.row.Sampler, err)
		}
		if sp.row.Picture != "" && sp.row.Picture != FileBatchesAlpha {
			first[sp.row.Picture] = s.Next()
			if sp.row.Picture == FileBatchSampler {
				bs = s.(*sampler.BatchSampler)
			}
			if s, err = sp.make(); err != nil {
				return Result{}, fmt.Errorf("viz: %s: %w", sp.row.Sampler, err)
			}
		}
		sp.row.Stats = sampler.MeasureBatches(s, cfg.Batches, labels, e)
		res.Rows = append(res.Rows, sp.row)
	}

	// The three graphs of proximity_graph_M.png.
	gK, err := sampler.BuildProximityGraph(e, sampler.GraphOptions{M: k, K: k, Workers: 1, Seed: cfg.Seed})
	if err != nil {
		return Result{}, fmt.Errorf("viz: graph M=K: %w", err)
	}
	gN, err := sampler.BuildKNNGraph(e, k, 1)
	if err != nil {
		return Result{}, fmt.Errorf("viz: kNN graph: %w", err)
	}
	graphs := []*sampler.Graph{gK, bs.Graph(), gN}
	for i, g := range graphs {
		st, err := sampler.NeighbourStats(g, e, labels)
		if err != nil {
			return Result{}, fmt.Errorf("viz: graph statistics: %w", err)
		}
		name := [...]string{"near-uniform graph", "proximity graph", "kNN graph"}[i]
		res.Graphs = append(res.Graphs, GraphRow{Name: name, M: [...]int{k, m, n - 1}[i], K: k, Stats: st})
	}

	// The walks of batches_alpha.png: same graph, same start, per α one
	// traced walk and cfg.Batches walks of sampler.Walk for the frequencies.
	start := first[FileBatchSampler][0]
	res.Start = start
	for i, a := range cfg.Sampler.Alphas {
		aw, err := alphaWalks(bs.Graph(), start, a, cfg, uint64(i), labels, e)
		if err != nil {
			return Result{}, err
		}
		res.Walks = append(res.Walks, aw)
	}

	// The pictures.
	d := drawer{cfg: cfg, e: e, labels: labels}
	steps := []struct {
		name string
		fig  func() figure
	}{
		{FilePoints, d.points},
		{FileGraph, func() figure { return d.graphFigure([]*sampler.Graph{graphs[1]}, res.Graphs[1:2]) }},
		{FileGraphM, func() figure { return d.graphFigure(graphs, res.Graphs) }},
		{FileBatchUniform, func() figure {
			return d.batchFigure(NameUniform+": one batch", first[FileBatchUniform], false, "", nil)
		}},
		{FileBatchKNN, func() figure {
			return d.batchFigure(NameKNN+": one batch (anchor + its B−1 nearest neighbours)", first[FileBatchKNN], true, "anchor (random uncovered node)", nil)
		}},
		{FileBatchSampler, func() figure {
			return d.batchFigure(fmt.Sprintf("%s (RWR, α = %v, M = %d, K = %d): one batch", NameBatchSampler, cfg.Sampler.Alpha, m, k),
				first[FileBatchSampler], true, "start node of the walk", bs.Graph())
		}},
		{FileBatchesAlpha, func() figure { return d.alphaFigure(res.Walks, start) }},
	}
	for _, s := range steps {
		if err := save(s.name, s.fig()); err != nil {
			return Result{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, FileSummary), []byte(res.markdown(cfg)), 0o644); err != nil {
		return Result{}, fmt.Errorf("viz: %w", err)
	}
	res.Files = append(res.Files, FileSummary)
	return res, nil
}

// expectedUniformFN is the expected share of same-class pairs in a batch
// drawn uniformly without replacement: Σ_c n_c(n_c−1) / (N(N−1)).
func expectedUniformFN(labels []int, classes int) float64 {
	cnt := make([]float64, classes)
	for _, l := range labels {
		cnt[l]++
	}
	n := float64(len(labels))
	s := 0.0
	for _, c := range cnt {
		s += c * (c - 1)
	}
	return s / (n * (n - 1))
}

// drawer draws the pictures of one point set.
type drawer struct {
	cfg    Config
	e      sampler.Embeddings
	labels []int
}

func (d drawer) all() []int {
	idx := make([]int, d.e.N)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// byClass splits idx by label.
func (d drawer) byClass(idx []int) [][]int {
	out := make([][]int, d.cfg.Points.Classes)
	for _, v := range idx {
		out[d.labels[v]] = append(out[d.labels[v]], v)
	}
	return out
}

func (d drawer) colour(v int) color.NRGBA { return classColour(d.labels[v], d.cfg.Points.Classes) }

// addCloud adds every point in light grey.
func (d drawer) addCloud(p *plot.Plot) {
	s := scatter(d.e, d.all(), colGrey, vg.Points(pointR), draw.CircleGlyph{})
	p.Add(s)
	p.Legend.Add("other points", s)
}

// addBatch adds the batch members coloured by class and a legend entry.
func (d drawer) addBatch(p *plot.Plot, batch []int) {
	for c, idx := range d.byClass(batch) {
		if len(idx) > 0 {
			p.Add(scatter(d.e, idx, classColour(c, d.cfg.Points.Classes), vg.Points(batchR), outlinedCircle{}))
		}
	}
	p.Legend.Add("batch member (colour = class)", classDots{classes: d.cfg.Points.Classes})
}

// addStars marks nodes with stars filled with their class colour.
func (d drawer) addStars(p *plot.Plot, nodes []int, radius float64, legend string) {
	var th plot.Thumbnailer
	for _, v := range nodes {
		s := scatter(d.e, []int{v}, d.colour(v), vg.Points(radius), star{})
		p.Add(s)
		if th == nil {
			th = scatter(d.e, []int{v}, color.White, vg.Points(0.6*radius), star{})
		}
	}
	if legend != "" && th != nil {
		p.Legend.Add(legend, th)
	}
}

// classDots is a legend icon: a few class-coloured dots.
type classDots struct{ classes int }

func (c classDots) Thumbnail(dc *draw.Canvas) {
	n := min(c.classes, 3)
	y := dc.Center().Y
	w := dc.Max.X - dc.Min.X
	for i := range n {
		x := dc.Min.X + w*vg.Length(2*i+1)/vg.Length(2*n)
		sty := draw.GlyphStyle{Color: classColour(i*max(c.classes/n, 1), c.classes), Radius: vg.Points(2.7)}
		outlinedCircle{}.DrawGlyph(dc, sty, vg.Point{X: x, Y: y})
	}
}

func (d drawer) points() figure {
	pc := d.cfg.Points
	p := newRingPlot(fmt.Sprintf("The demo data: %d points, %d classes on a ring\n(angular spread σ = %.2g rad; radius jittered ±%.2g only to spread the dots)\nsimilarity = cosine of the angle between two points",
		pc.N, pc.Classes, pc.Spread, pc.RadiusJitter), ringLim)
	for c, idx := range d.byClass(d.all()) {
		s := scatter(d.e, idx, classColour(c, pc.Classes), vg.Points(2.6), draw.CircleGlyph{})
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("class %d", c), s)
	}
	if pc.Classes >= 2 {
		a, b := d.typical(0), d.typical(1)
		p.Add(angleMark{ax: float64(d.e.Data[2*a]), ay: float64(d.e.Data[2*a+1]), bx: float64(d.e.Data[2*b]), by: float64(d.e.Data[2*b+1])})
		d.addStars(p, []int{a, b}, 7, "")
	}
	return figure{plots: [][]*plot.Plot{{p}}, w: vg.Inch * tileW, h: vg.Inch * tileH}
}

// highlighted returns up to highlightedNodes nodes, the typical members of
// evenly spaced classes.
func (d drawer) highlighted() []int {
	c := d.cfg.Points.Classes
	h := min(highlightedNodes, c)
	var out []int
	for i := range h {
		out = append(out, d.typical(i*c/h))
	}
	return out
}

// typical returns the member of class cl closest in angle to the class's
// centre.
func (d drawer) typical(cl int) int {
	ca := ClassAngle(cl, d.cfg.Points.Classes)
	best, bestCos := -1, math.Inf(-1)
	for v := range d.e.N {
		if d.labels[v] != cl {
			continue
		}
		a := math.Atan2(float64(d.e.Data[2*v+1]), float64(d.e.Data[2*v]))
		if cs := math.Cos(a - ca); cs > bestCos {
			best, bestCos = v, cs
		}
	}
	return best
}

// graphFigure draws graphs side by side: every edge thin and translucent,
// the out-edges of a few nodes as arrows.
func (d drawer) graphFigure(gs []*sampler.Graph, rows []GraphRow) figure {
	hl := d.highlighted()
	var plots []*plot.Plot
	for i, g := range gs {
		r := rows[i]
		kind := "proximity graph (Algorithm 2): BatchSampler walks on it"
		switch r.M {
		case r.K:
			kind = "near-uniform graph (M = K: random neighbours)"
		case d.e.N - 1:
			kind = "kNN graph (M = N−1: all candidates)"
		}
		p := newRingPlot(fmt.Sprintf("%s\nM = %d candidates, K = %d neighbours per node\n%.0f%% of edges join the same class · mean edge cosine %.3f",
			kind, r.M, r.K, 100*r.Stats.LabelAgreement, r.Stats.MeanCosine), ringLim)
		all := &segments{e: d.e, style: draw.LineStyle{Color: edgeColour(g.N * g.K), Width: vg.Points(0.5)}}
		for v := range g.N {
			for _, u := range g.Neighbours(v) {
				all.segs = append(all.segs, segment{v, int(u)})
			}
		}
		p.Add(all)
		for c, idx := range d.byClass(d.all()) {
			p.Add(scatter(d.e, idx, classColour(c, d.cfg.Points.Classes), vg.Points(2.2), draw.CircleGlyph{}))
		}
		hi := &segments{e: d.e, style: draw.LineStyle{Color: colHighEdge, Width: vg.Points(0.8)}, arrow: vg.Points(arrowLen), gap: vg.Points(arrowGap)}
		var nbrs []int
		for _, v := range hl {
			for _, u := range g.Neighbours(v) {
				hi.segs = append(hi.segs, segment{v, int(u)})
				nbrs = append(nbrs, int(u))
			}
		}
		rings := scatter(d.e, nbrs, color.Black, vg.Points(3.6), thickRing{})
		p.Add(rings, hi)
		p.Legend.Add(fmt.Sprintf("all %d directed edges", g.N*g.K), all)
		d.addStars(p, hl, 6.5, fmt.Sprintf("%d example nodes", len(hl)))
		p.Legend.Add("their K out-neighbours (arrows)", rings)
		plots = append(plots, p)
	}
	heading := ""
	if len(gs) > 1 {
		heading = "The effect of M: each node keeps its K most similar nodes among M random candidates"
	}
	return figure{plots: [][]*plot.Plot{plots}, w: vg.Inch * tileW, h: vg.Inch * tileH, heading: heading}
}

// batchFigure draws one batch over the grey point cloud. With g, the edges
// of g between batch members are drawn too.
func (d drawer) batchFigure(title string, batch []int, marked bool, startLegend string, g *sampler.Graph) figure {
	p := newRingPlot(fmt.Sprintf("%s (B = %d)\nfalse-negative ratio (same-class pairs) %.3f · mean cosine %.3f",
		title, len(batch), sampler.FalseNegativeRatio(batch, d.labels), sampler.MeanCosine(batch, d.e)), ringLim)
	d.addCloud(p)
	if g != nil {
		in := make(map[int]bool, len(batch))
		for _, v := range batch {
			in[v] = true
		}
		s := &segments{e: d.e, style: draw.LineStyle{Color: colPath, Width: vg.Points(0.9)}, arrow: vg.Points(4), gap: vg.Points(batchR)}
		for _, v := range batch {
			for _, u := range g.Neighbours(v) {
				if in[int(u)] {
					s.segs = append(s.segs, segment{v, int(u)})
				}
			}
		}
		p.Add(s)
		p.Legend.Add("edge of the graph inside the batch", s)
	}
	d.addBatch(p, batch)
	if marked {
		d.addStars(p, batch[:1], startR, startLegend)
	}
	return figure{plots: [][]*plot.Plot{{p}}, w: vg.Inch * tileW, h: vg.Inch * tileH}
}

// freqBins are the classes of inclusion frequency in batches_alpha.png:
// a node whose frequency is at least lo gets the colour and size.
var freqBins = []struct {
	lo     float64
	col    color.NRGBA
	r      float64
	legend string
}{
	// A light grey dot for "never", then four steps of the viridis ramp
	// (colour-blind-safe, monotone in lightness), growing in size.
	{0, color.NRGBA{0xd4, 0xd4, 0xd4, 0xff}, 1.5, "never"},
	{1e-9, color.NRGBA{0xb5, 0xde, 0x2b, 0xff}, 2.6, "in < 10% of the batches"},
	{0.1, color.NRGBA{0x21, 0x91, 0x8c, 0xff}, 3.2, "in 10–40%"},
	{0.4, color.NRGBA{0x3b, 0x52, 0x8b, 0xff}, 3.8, "in 40–80%"},
	{0.8, color.NRGBA{0x44, 0x01, 0x54, 0xff}, 4.4, "in ≥ 80%"},
}

// alphaFigure draws, per α, one traced walk with its path (top row) and how
// often each node is in the batch over many walks from the same start
// (bottom row). Each row has its legend in its first column only; the
// heading says what α does, which depends on whether u's K out-neighbours
// can fill a batch (K ≥ B−1) or the walk must fall back to new start nodes.
func (d drawer) alphaFigure(walks []AlphaWalk, start int) figure {
	k, b := d.cfg.Sampler.K, d.cfg.BatchSize
	top := make([]*plot.Plot, len(walks))
	bottom := make([]*plot.Plot, len(walks))
	anyJump := false
	for _, aw := range walks {
		anyJump = anyJump || aw.Walk.Jumps() > 0
	}
	for i, aw := range walks {
		t := aw.Walk
		note := ""
		if aw.Alpha == 1 && b > k+1 {
			note = fmt.Sprintf("\nα = 1 reaches only u's K = %d neighbours:\nthe other %d nodes come from fallback starts", k, b-k-1)
		}
		p := newRingPlot(fmt.Sprintf("α = %v, one walk: false-negative ratio %.3f\n%d steps, %d restarts, %d fallback jumps%s",
			aw.Alpha, sampler.FalseNegativeRatio(t.Batch, d.labels), len(t.Steps), t.Restarts(), t.Jumps(), note), ringLim)
		compact(p)
		d.addCloud(p)
		path := &segments{e: d.e, style: draw.LineStyle{Color: colPath, Width: vg.Points(1)}}
		jumps := &segments{e: d.e, style: draw.LineStyle{Color: colJump, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}}
		seen := map[segment]bool{}
		for _, s := range t.Steps {
			sg := segment{s.From, s.To}
			if s.Kind == Jump {
				jumps.segs = append(jumps.segs, sg)
			} else if !seen[sg] { // each edge once: overdrawn translucent lines turn opaque
				seen[sg] = true
				path.segs = append(path.segs, sg)
			}
		}
		p.Add(path, jumps)
		p.Legend.Add("edge the walk took", path)
		if anyJump {
			p.Legend.Add("fallback jump to a new start", jumps)
		}
		d.addBatch(p, t.Batch)
		if anyJump {
			p.Legend.Add("fallback start (the new u)", scatter(d.e, nil, color.White, vg.Points(0.6*fallbackR), star{}))
		}
		d.addStars(p, t.Starts[1:], fallbackR, "")
		d.addStars(p, t.Starts[:1], startR, "start node u (the same for every α)")
		top[i] = p

		q := newRingPlot(fmt.Sprintf("α = %v, %d walks from u: mean false-negative\nratio %.3f · %d nodes ever in a batch",
			aw.Alpha, aw.Walks, aw.Stats.FNRatio, countPositive(aw.Freq)), ringLim)
		compact(q)
		bins := make([][]int, len(freqBins))
		for v, f := range aw.Freq {
			j := len(freqBins) - 1
			for f < freqBins[j].lo {
				j--
			}
			bins[j] = append(bins[j], v)
		}
		for j, fb := range freqBins {
			s := scatter(d.e, bins[j], fb.col, vg.Points(fb.r), draw.CircleGlyph{})
			q.Add(s)
			q.Legend.Add(fb.legend, scatter(d.e, nil, fb.col, vg.Points(max(fb.r, 3)), draw.CircleGlyph{}))
		}
		d.addStars(q, []int{start}, startR, "start node u")
		bottom[i] = q
		if i > 0 { // one legend per row, in its first column
			p.Legend = plot.NewLegend()
			q.Legend = plot.NewLegend()
		}
	}
	what := fmt.Sprintf("K = %d ≥ B−1 = %d: low α wanders along the graph (towards Uniform); high α keeps returning to u, and at α = 1\n"+
		"the batch is u and B−1 of its K neighbours (towards the kNN Sampler)", k, b-1)
	if k < b-1 {
		what = fmt.Sprintf("K = %d < B−1 = %d: u has too few neighbours to fill a batch. High α soon exhausts them, the walk then falls back\n"+
			"to new start nodes anywhere on the ring, so α = 1 is the most Uniform-like column (see the web page's fallback note)", k, b-1)
	}
	return figure{plots: [][]*plot.Plot{top, bottom}, w: vg.Inch * alphaTileW, h: vg.Inch * alphaTileH,
		heading: fmt.Sprintf("BatchSampler: random walks with restart from one start node u on one proximity graph (M = %d, K = %d), B = %d\n"+
			"top: one walk and the path it took · bottom: how often each point lands in the batch\n%s", d.cfg.Sampler.M, k, b, what)}
}

// compact fits a ring plot into a tile of the α figure: no axis labels
// (the ring needs none), larger legend text, smaller tick labels, and room
// above the ring for the legend.
func compact(p *plot.Plot) {
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -1.95, 1.95, -1.45, 2.45
	p.X.Label.Text, p.Y.Label.Text = "", ""
	p.Title.TextStyle.Font.Size = vg.Points(11.5)
	p.Legend.TextStyle.Font.Size = vg.Points(10.5)
	p.Legend.ThumbnailWidth = vg.Points(18)
	p.X.Tick.Label.Font.Size = vg.Points(7)
	p.Y.Tick.Label.Font.Size = vg.Points(7)
}

func countPositive(f []float64) int {
	n := 0
	for _, x := range f {
		if x > 0 {
			n++
		}
	}
	return n
}

// markdown renders summary.md.
func (r Result) markdown(cfg Config) string {
	var b strings.Builder
	pc := cfg.Points
	fmt.Fprintf(&b, "# BatchSampler teaching demo\n\n")
	fmt.Fprintf(&b, "%d points in %d classes on a ring (angular spread σ = %v rad, radius jitter ±%v, points seed %d); "+
		"B = %d, M = %d, K = %d, α = %v; sampler seed %d. Each row averages %d batches of a fresh sampler "+
		"(`sampler.MeasureBatches`: `FalseNegativeRatio` and `MeanCosine`). "+
		"Expected false-negative ratio of a uniformly drawn batch: %.4f.\n\n",
		pc.N, pc.Classes, pc.Spread, pc.RadiusJitter, pc.Seed, cfg.BatchSize, cfg.Sampler.M, cfg.Sampler.K, cfg.Sampler.Alpha, cfg.Seed, cfg.Batches, r.UniformExpected)
	b.WriteString("| sampler | M | K | α | false-negative ratio ± s.e. | mean in-batch cosine | picture |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		m, k, a := "–", "–", "–"
		if row.M > 0 {
			m, k = fmt.Sprint(row.M), fmt.Sprint(row.K)
			if row.M == row.K {
				m += " (= K)"
			} else if row.M == pc.N-1 {
				m += " (= N−1)"
			}
		}
		if !math.IsNaN(row.Alpha) {
			a = fmt.Sprint(row.Alpha)
		}
		pic := row.Picture
		if pic != "" {
			pic = "`" + pic + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.4f ± %.4f | %.4f | %s |\n", row.Sampler, m, k, a, row.Stats.FNRatio, row.Stats.FNStdErr, row.Stats.MeanCosine, pic)
	}
	b.WriteString("\nThe graphs (`proximity_graph_M.png`; `sampler.NeighbourStats`):\n\n")
	b.WriteString("| graph | M | K | edges joining the same class | mean cosine along edges | nodes with no in-edge |\n|---|---|---|---|---|---|\n")
	for _, g := range r.Graphs {
		fmt.Fprintf(&b, "| %s | %d | %d | %.4f | %.4f | %.4f |\n", g.Name, g.M, g.K, g.Stats.LabelAgreement, g.Stats.MeanCosine, g.Stats.ZeroInDegree)
	}
	b.WriteString("\n## Files\n\n")
	desc := map[string]string{
		FilePoints:       "the point set coloured by class; similarity is the cosine of the angle between two points",
		FileGraph:        fmt.Sprintf("the proximity graph of Algorithm 2 (M = %d, K = %d) that BatchSampler walks on", cfg.Sampler.M, cfg.Sampler.K),
		FileGraphM:       "the same K with M = K (random neighbours), the configured M, and M = N−1 (the exact kNN graph)",
		FileBatchUniform: "one Uniform batch: spread over all classes",
		FileBatchKNN:     "one kNN Sampler batch: the anchor and its B−1 nearest neighbours, mostly one class",
		FileBatchSampler: "one BatchSampler batch (its first batch; the star is the walk's start node) with the graph's edges between batch members",
		FileBatchesAlpha: fmt.Sprintf("walks from the same start node (node %d) for α ∈ %v, with the path each walk took", r.Start, cfg.Sampler.Alphas),
		FileSummary:      "this file",
	}
	for _, f := range r.Files {
		fmt.Fprintf(&b, "- `%s`: %s\n", f, desc[f])
	}
	if !slices.Contains(r.Files, FileSummary) {
		fmt.Fprintf(&b, "- `%s`: %s\n", FileSummary, desc[FileSummary])
	}
	return b.String()
}

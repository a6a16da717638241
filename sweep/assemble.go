package sweep

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/paper"
	"github.com/batchsampler-go/batchsampler/train"
)

// Result is an assembled sweep (DIR/sweep.json).
type Result struct {
	Name     string   `json:"name"`
	Mode     string   `json:"mode"` // grid, zip or points
	Baseline string   `json:"baseline"`
	Swept    []string `json:"swept"`
	Dataset  string   `json:"dataset,omitempty"`
	Metric   string   `json:"metric,omitempty"`
	Seeds    []uint64 `json:"seeds"`
	Axes     []Axis   `json:"axes,omitempty"`
	// Baselines are the baseline's cells; Points the points', in the
	// sweep's order.
	Baselines []CellResult `json:"baselines"`
	Points    []CellResult `json:"points"`
	// Summary: Sets are the command line's overrides, applied to every
	// cell; a sweep skips nothing.
	cellrun.Summary
}

// CellResult is one cell of the sweep: a point, or a baseline.
type CellResult struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Labels and Index place a point on the axes (Labels: the point's
	// name for points).
	Labels []string `json:"labels,omitempty"`
	Index  []int    `json:"index,omitempty"`
	// BaselineDir is the directory of the baseline cell a point is
	// compared with.
	BaselineDir string `json:"baseline_dir,omitempty"`
	// Sets are the overrides that made the cell from the base config.
	Sets    []string `json:"sets,omitempty"`
	Entries []Entry  `json:"entries,omitempty"`
	// ComputeSeconds sums training and evaluation over the cell's runs.
	ComputeSeconds float64 `json:"compute_seconds"`
	Commit         string  `json:"commit,omitempty"`
	// Err is why the cell has no results ("" when it has).
	Err string `json:"error,omitempty"`
}

// Entry is one sampler of a cell over the seeds.
type Entry struct {
	Sampler string    `json:"sampler"`
	Seeds   []uint64  `json:"seeds"`
	PerSeed []float64 `json:"per_seed"`
	Mean    float64   `json:"mean"`
	Std     float64   `json:"std"`
	// Paired compares a point's sampler with the baseline over the same
	// seeds (train.PairBySeed); nil for the baseline, and when there is no
	// test (fewer than two common seeds, or every difference zero:
	// SameAsBaseline says which).
	Paired *train.Paired `json:"paired_vs_baseline,omitempty"`
	// SameAsBaseline: every common seed scored exactly as the baseline.
	SameAsBaseline bool `json:"same_as_baseline,omitempty"`
	// Paper is the paper's number for the setting (PaperNumber), and
	// PaperTable the setting its table varies (M, α, t or B).
	Paper      *paper.Reported `json:"paper,omitempty"`
	PaperTable string          `json:"paper_table,omitempty"`
	// TrainSeconds and EvalSeconds are means per run.
	TrainSeconds float64 `json:"train_seconds"`
	EvalSeconds  float64 `json:"eval_seconds"`
}

// Assemble builds the result from the cells' statuses, in the order of
// p.Cells (cellrun.Run or cellrun.Read).
func Assemble(p *Plan, sts []cellrun.Status, wall time.Duration) *Result {
	r := &Result{Name: p.Config.Name, Mode: p.Mode, Baseline: p.Baseline, Swept: p.Swept, Dataset: p.Config.Data.Name,
		Seeds: p.Config.Seeds, Axes: p.Axes, Summary: cellrun.NewSummary(nil, p.Sets, wall)}
	byDir := map[string]cellrun.Status{}
	for _, st := range sts {
		byDir[st.Dir] = st
	}
	var baseEntries []*train.ResultEntry
	for _, b := range p.Baselines {
		cr, res := r.cell(byDir, b.Cell, b.Sets)
		cr.Name = b.Block
		var base *train.ResultEntry
		if res != nil {
			for i := range res.Results {
				if res.Results[i].Sampler == p.Baseline {
					base = &res.Results[i]
					cr.Entries = append(cr.Entries, entryOf(*base))
				}
			}
		}
		baseEntries = append(baseEntries, base)
		r.Baselines = append(r.Baselines, cr)
	}
	for _, pt := range p.Points {
		cr, res := r.cell(byDir, pt.Cell.Cell, pt.Cell.Sets)
		cr.Name, cr.Labels, cr.Index = pt.Name, pt.Labels, pt.Index
		cr.BaselineDir = p.Baselines[pt.Baseline].Dir
		if res != nil {
			for _, re := range res.Results {
				e := entryOf(re)
				if base := baseEntries[pt.Baseline]; base != nil {
					e.Paired = train.PairBySeed(re, *base)
					e.SameAsBaseline = e.Paired == nil && sameScores(re, *base)
				}
				for _, s := range pt.Cell.Config.SamplerList() {
					if s.DisplayName() == re.Sampler {
						if rep, which, ok := PaperNumber(&pt.Cell.Config, s); ok {
							e.Paper, e.PaperTable = &rep, which
						}
					}
				}
				cr.Entries = append(cr.Entries, e)
			}
		}
		r.Points = append(r.Points, cr)
	}
	return r
}

// cell reads one cell's status into a CellResult (and its results).
func (r *Result) cell(byDir map[string]cellrun.Status, c cellrun.Cell, sets []string) (CellResult, *train.Results) {
	cr := CellResult{Dir: c.Dir, Sets: sets}
	st, ok := byDir[c.Dir]
	if !ok || st.Results == nil {
		msg := "not run"
		if ok && st.Err != nil {
			msg = st.Err.Error()
		}
		cr.Err = msg
		r.Failed = append(r.Failed, fmt.Sprintf("%s (%s): %s", c.Block, c.Dir, msg))
		return cr, nil
	}
	if pv := st.Results.Provenance; pv != nil {
		cr.Commit = pv.Commit
		if pv.Modified {
			cr.Commit += " (modified)"
		}
	}
	for _, re := range st.Results.Results {
		if r.Metric == "" {
			r.Metric = re.Metric
		}
		cr.ComputeSeconds += float64(len(re.PerSeed)) * (re.TrainSeconds + re.EvalSeconds)
	}
	r.ComputeSeconds += cr.ComputeSeconds
	return cr, st.Results
}

func entryOf(re train.ResultEntry) Entry {
	return Entry{Sampler: re.Sampler, Seeds: re.Seeds, PerSeed: re.PerSeed, Mean: re.Mean, Std: re.Std,
		TrainSeconds: re.TrainSeconds, EvalSeconds: re.EvalSeconds}
}

// sameScores reports whether e scored exactly as base on every common
// seed (at least one).
func sameScores(e, base train.ResultEntry) bool {
	n := 0
	for i, s := range e.Seeds {
		j := slices.Index(base.Seeds, s)
		if j < 0 || i >= len(e.PerSeed) || j >= len(base.PerSeed) {
			continue
		}
		if e.PerSeed[i] != base.PerSeed[j] {
			return false
		}
		n++
	}
	return n > 0
}

// entry finds sampler's entry of a cell (nil when it has none).
func (c *CellResult) entry(sampler string) *Entry {
	for i := range c.Entries {
		if c.Entries[i].Sampler == sampler {
			return &c.Entries[i]
		}
	}
	return nil
}

// layout is the shape of sweep.md's tables: rows × columns of points.
type layout struct {
	corner string
	rows   []string // row titles (2-D), or nil: one row per swept sampler
	cols   []string
	at     map[[2]int]int // (row, col) → point index (2-D); col → point (1-D, row 0)
}

// layout lays the points out as the paper does: a grid of two or more
// axes has the first axis's values as rows and the others' combinations
// as columns; one axis, zip and points have one column per point.
func (r *Result) layout() layout {
	l := layout{at: map[[2]int]int{}}
	if r.Mode == train.SweepGrid && len(r.Axes) >= 2 {
		var rest []string
		for _, a := range r.Axes[1:] {
			rest = append(rest, a.Name)
		}
		l.corner = r.Axes[0].Name + " \\ " + strings.Join(rest, ", ")
		l.rows = r.Axes[0].Labels
		colOf := map[string]int{}
		for i, pt := range r.Points {
			key := strings.Join(pt.Labels[1:], ", ")
			c, ok := colOf[key]
			if !ok {
				c = len(l.cols)
				colOf[key] = c
				l.cols = append(l.cols, key)
			}
			l.at[[2]int{pt.Index[0], c}] = i
		}
		return l
	}
	var names []string
	for _, a := range r.Axes {
		names = append(names, a.Name)
	}
	l.corner = strings.Join(names, ", ")
	if r.Mode == "points" {
		l.corner = "point"
	}
	for i, pt := range r.Points {
		l.cols = append(l.cols, strings.Join(pt.Labels, ", "))
		l.at[[2]int{0, i}] = i
	}
	return l
}

// Markdown renders the sweep in the paper's layout: every cell the swept
// sampler's mean ± std over the seeds, the paper's number in brackets
// where it reports the setting, and the paired difference with the
// baseline and its p; then the compute of every cell.
func (r *Result) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Sweep %s: %s against %s\n\n", r.Name, strings.Join(r.Swept, ", "), r.Baseline)
	what := ""
	if r.Metric != "" {
		what = fmt.Sprintf("%s on %s, ", r.Metric, r.Dataset)
	}
	fmt.Fprintf(&b, "%sseeds %v. Each cell: measured mean ± std over the seeds [the paper's number where it reports the setting, – where not]; "+
		"then the difference with the baseline %s over the same seeds (same initialisation and evaluation folds) and its two-sided p "+
		"(paired t-test; **bold** when p < 0.05; = baseline: identical scores on every seed). – : not run or no result.\n\n", what, r.Seeds, r.Baseline)
	l := r.layout()
	for _, smp := range r.Swept {
		if len(r.Swept) > 1 {
			fmt.Fprintf(&b, "### %s\n\n", smp)
		}
		r.grid(&b, l, smp, func(c *CellResult) string { return cellText(c, smp) })
		b.WriteString("\n")
	}
	r.baselines(&b, l)
	b.WriteString("\n### Compute per cell (training + evaluation, summed over the cell's runs)\n\n")
	r.grid(&b, l, "", func(c *CellResult) string {
		if c.Err != "" {
			return "–"
		}
		return cellrun.Minutes(c.ComputeSeconds)
	})
	var bc []string
	for _, c := range r.Baselines {
		if c.Err == "" {
			bc = append(bc, fmt.Sprintf("%s %s", c.Dir, cellrun.Minutes(c.ComputeSeconds)))
		}
	}
	if len(bc) > 0 {
		fmt.Fprintf(&b, "\nBaseline cells: %s.\n", strings.Join(bc, "; "))
	}
	fmt.Fprintf(&b, "\nTotal compute: %s on %d cores (GOMAXPROCS); this process: %s.\n", cellrun.Minutes(r.ComputeSeconds), r.Provenance.GOMAXPROCS, cellrun.Minutes(r.WallSeconds))
	if len(r.Sets) > 0 {
		fmt.Fprintf(&b, "\nOverrides applied to every cell: `%s`.\n", strings.Join(r.Sets, "` `"))
	}
	if len(r.Failed) > 0 {
		b.WriteString("\nCells without results:\n\n")
		for _, f := range r.Failed {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	var commits []string
	for _, c := range slices.Concat(r.Baselines, r.Points) {
		if c.Commit != "" && !slices.Contains(commits, c.Commit) {
			commits = append(commits, c.Commit)
		}
	}
	if len(commits) > 0 {
		fmt.Fprintf(&b, "\nCells finished by commit(s) %s; ", strings.Join(commits, ", "))
	} else {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "sweep assembled by %s (%s).\n", r.Provenance.Commit, r.Provenance.GoVersion)
	return b.String()
}

// grid writes one table of the layout, text giving each point's cell;
// a 1-D table's row is titled by the sampler (or "cost").
func (r *Result) grid(b *strings.Builder, l layout, title string, text func(*CellResult) string) {
	fmt.Fprintf(b, "| %s |", l.corner)
	for _, c := range l.cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(l.cols)) + "\n")
	rows := l.rows
	if rows == nil {
		if title == "" {
			title = "compute"
		}
		rows = []string{title}
	}
	for ri, row := range rows {
		fmt.Fprintf(b, "| %s |", row)
		for ci := range l.cols {
			i, ok := l.at[[2]int{ri, ci}]
			if !ok {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %s |", text(&r.Points[i]))
		}
		b.WriteString("\n")
	}
}

// baselines writes the baseline's scores: one line, or (several baseline
// cells, one per shared value) a row under a 1-D table's columns.
func (r *Result) baselines(b *strings.Builder, l layout) {
	score := func(c *CellResult) string {
		if e := c.entry(r.Baseline); e != nil {
			return fmt.Sprintf("%.2f±%.2f", e.Mean, e.Std)
		}
		return "–"
	}
	if len(r.Baselines) == 1 {
		fmt.Fprintf(b, "Baseline %s: %s (%s).\n", r.Baseline, score(&r.Baselines[0]), r.Baselines[0].Dir)
		return
	}
	if l.rows == nil {
		byDir := map[string]*CellResult{}
		for i := range r.Baselines {
			byDir[r.Baselines[i].Dir] = &r.Baselines[i]
		}
		fmt.Fprintf(b, "Baseline %s at each column's shared setting:\n\n| %s |", r.Baseline, l.corner)
		for _, c := range l.cols {
			fmt.Fprintf(b, " %s |", c)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(l.cols)) + "\n")
		fmt.Fprintf(b, "| %s |", r.Baseline)
		for _, pt := range r.Points {
			s := "–"
			if c := byDir[pt.BaselineDir]; c != nil {
				s = score(c)
			}
			fmt.Fprintf(b, " %s |", s)
		}
		b.WriteString("\n")
		return
	}
	fmt.Fprintf(b, "Baseline %s:\n\n", r.Baseline)
	for i := range r.Baselines {
		fmt.Fprintf(b, "- %s: %s\n", r.Baselines[i].Name, score(&r.Baselines[i]))
	}
}

// cellText is one point's cell of the accuracy table for a sampler.
func cellText(c *CellResult, sampler string) string {
	e := c.entry(sampler)
	paper := ""
	if e != nil && e.Paper != nil {
		paper = " [" + e.Paper.String() + "]"
	}
	if e == nil {
		return "–"
	}
	s := fmt.Sprintf("%.2f±%.2f%s", e.Mean, e.Std, paper)
	switch p := e.Paired; {
	case p != nil && !math.IsNaN(p.P):
		s += " " + cellrun.PairedText("", p)
	case e.SameAsBaseline:
		s += " = baseline"
	}
	return s
}

// Write writes r to dir as sweep.json and sweep.md.
func (r *Result) Write(dir string) error {
	return cellrun.WriteReport(dir, "sweep", r, r.Markdown())
}

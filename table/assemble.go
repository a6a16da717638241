package table

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

// Entry is one cell of the assembled table: a block and sampler on one
// dataset.
type Entry struct {
	Dataset string    `json:"dataset"`
	Block   string    `json:"block"`
	Sampler string    `json:"sampler"`
	Seeds   []uint64  `json:"seeds"`
	PerSeed []float64 `json:"per_seed"`
	Mean    float64   `json:"mean"`
	Std     float64   `json:"std"`
	// Paper is the paper's number (nil where it reports none).
	Paper *paper.Reported `json:"paper,omitempty"`
	// Paired compares the row with the block's Uniform row over the same
	// seeds (nil for the Uniform row itself).
	Paired *train.Paired `json:"paired_vs_uniform,omitempty"`
	// TrainSeconds and EvalSeconds are means per run; ComputeSeconds sums
	// training and evaluation over the row's runs.
	TrainSeconds   float64  `json:"train_seconds"`
	EvalSeconds    float64  `json:"eval_seconds"`
	ComputeSeconds float64  `json:"compute_seconds"`
	FinalFNRatio   *float64 `json:"final_fn_ratio,omitempty"`
	// Dir is the cell's run directory relative to the table's.
	Dir string `json:"dir"`
	// Commit is the commit that finished the cell.
	Commit string `json:"commit,omitempty"`
}

// GraphTable is the assembled graph table (DIR/table.json).
type GraphTable struct {
	Datasets []string `json:"datasets"`
	Blocks   []string `json:"blocks"`
	Entries  []Entry  `json:"entries"`
	cellrun.Summary
}

// AssembleGraphs builds the table from the cells' statuses (cellrun.Run).
func AssembleGraphs(sts []cellrun.Status, plan *Plan, sets []string, wall time.Duration) *GraphTable {
	t := &GraphTable{Summary: cellrun.NewSummary(plan.Skipped, sets, wall)}
	t.collect(sts, PaperGraph)
	// Columns in the paper's order, then the others as planned.
	slices.SortStableFunc(t.Datasets, func(a, b string) int { return paperIndex(a) - paperIndex(b) })
	return t
}

// collect adds the entries of every finished cell of sts to t, each with
// the paper's number (paper) and its paired comparison with the block's
// Uniform row; a cell without results is listed in t.Failed.
func (t *GraphTable) collect(sts []cellrun.Status, paper func(block, sampler, dataset string) (paper.Reported, bool)) {
	for _, st := range sts {
		if !slices.Contains(t.Datasets, st.Dataset) {
			t.Datasets = append(t.Datasets, st.Dataset)
		}
		if !slices.Contains(t.Blocks, st.Block) {
			t.Blocks = append(t.Blocks, st.Block)
		}
		if st.Err != nil || st.Results == nil {
			msg := "no results"
			if st.Err != nil {
				msg = st.Err.Error()
			}
			t.Failed = append(t.Failed, fmt.Sprintf("%s/%s: %s", st.Dataset, st.Block, msg))
			continue
		}
		commit := ""
		if p := st.Results.Provenance; p != nil {
			commit = p.Commit
			if p.Modified {
				commit += " (modified)"
			}
		}
		var uniform *train.ResultEntry
		for i, r := range st.Results.Results {
			if r.Sampler == "uniform" {
				uniform = &st.Results.Results[i]
			}
		}
		for _, r := range st.Results.Results {
			e := Entry{Dataset: st.Dataset, Block: st.Block, Sampler: r.Sampler, Seeds: r.Seeds, PerSeed: r.PerSeed,
				Mean: r.Mean, Std: r.Std, TrainSeconds: r.TrainSeconds, EvalSeconds: r.EvalSeconds,
				ComputeSeconds: float64(len(r.PerSeed)) * (r.TrainSeconds + r.EvalSeconds),
				FinalFNRatio:   r.FinalFNRatio, Dir: st.Dir, Commit: commit}
			if p, ok := paper(st.Block, r.Sampler, st.Dataset); ok {
				e.Paper = &p
			}
			if r.Comparison != nil && uniform != nil && r.Comparison.Baseline == uniform.Sampler {
				c := *r.Comparison
				e.Paired = &c
			}
			t.ComputeSeconds += e.ComputeSeconds
			t.Entries = append(t.Entries, e)
		}
	}
}

// paperIndex is a dataset's column in the paper (7 for the others).
func paperIndex(d string) int {
	if i := slices.Index(paper.GraphDatasets, d); i >= 0 {
		return i
	}
	return len(paper.GraphDatasets)
}

// entry finds a cell of t.
func (t *GraphTable) entry(block, sampler, dataset string) *Entry {
	for i := range t.Entries {
		e := &t.Entries[i]
		if e.Block == block && e.Sampler == sampler && e.Dataset == dataset {
			return e
		}
	}
	return nil
}

// gridLayout is how a grid of blocks × samplers × datasets is printed:
// the graph table's and the image table's differ in their heading, block
// names, paper numbers and column titles only.
type gridLayout struct {
	heading, intro string
	blockTitle     map[string]string
	paper          func(block, sampler, dataset string) (paper.Reported, bool)
	columnTitle    func(dataset string) string
}

// graphLayout is the graph table's.
var graphLayout = gridLayout{
	heading:     "## Graph table: accuracy (%) under the SVM protocol\n\n",
	intro:       "Each cell: measured mean ± std over seeds [the paper's number]; sampler rows: difference with the method alone over the same seeds (paired t-test, two-sided p; **bold** when p < 0.05). – : not run or no result.\n\n",
	blockTitle:  blockTitle,
	paper:       PaperGraph,
	columnTitle: func(d string) string { return d },
}

// Markdown renders t in the paper's layout: one column per dataset, a
// block of three rows per method (the method alone, w/ kNN Sampler, w/
// BatchSampler); each cell is the measured mean ± std, the paper's number
// in brackets, and for the sampler rows the paired difference with the
// method alone and its two-sided p. Then the cost of every cell, and what
// failed or was skipped.
func (t *GraphTable) Markdown() string {
	var b strings.Builder
	t.markdownGrid(&b, graphLayout)
	t.markdownCost(&b, graphLayout)
	t.markdownTail(&b, "Datasets skipped")
	return b.String()
}

// markdownGrid writes the accuracy table.
func (t *GraphTable) markdownGrid(b *strings.Builder, l gridLayout) {
	b.WriteString(l.heading)
	b.WriteString(l.intro)
	t.header(b, l)
	rows := t.rowSamplers()
	for _, blk := range t.Blocks {
		for _, smp := range rows {
			title := rowTitle(smp)
			if title == "" {
				title = l.blockTitle[blk]
			}
			fmt.Fprintf(b, "| %s |", title)
			for _, d := range t.Datasets {
				fmt.Fprintf(b, " %s |", t.cellText(blk, smp, d, l.paper))
			}
			b.WriteString("\n")
		}
	}
}

// rowSamplers are the rows of every block: the paper's three, then any
// other sampler of the entries (cmd/table -samplers).
func (t *GraphTable) rowSamplers() []string {
	var names []string
	for _, e := range t.Entries {
		names = append(names, e.Sampler)
	}
	return rowSamplers(names)
}

// markdownCost writes the cost of every cell and the total.
func (t *GraphTable) markdownCost(b *strings.Builder, l gridLayout) {
	b.WriteString("\n### Cost per cell (training + evaluation, summed over the cell's runs)\n\n")
	t.header(b, l)
	for _, blk := range t.Blocks {
		fmt.Fprintf(b, "| %s |", l.blockTitle[blk])
		for _, d := range t.Datasets {
			var train, ev float64
			found := false
			for _, smp := range t.rowSamplers() {
				if e := t.entry(blk, smp, d); e != nil {
					found = true
					train += e.TrainSeconds * float64(len(e.PerSeed))
					ev += e.EvalSeconds * float64(len(e.PerSeed))
				}
			}
			if !found {
				b.WriteString(" – |")
				continue
			}
			fmt.Fprintf(b, " %s (train %s, eval %s) |", cellrun.Minutes(train+ev), cellrun.Minutes(train), cellrun.Minutes(ev))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\nTotal compute: %s on %d cores (GOMAXPROCS); this process: %s.\n", cellrun.Minutes(t.ComputeSeconds), t.Provenance.GOMAXPROCS, cellrun.Minutes(t.WallSeconds))
}

// markdownTail writes the overrides, the failed and skipped cells and
// the commits.
func (t *GraphTable) markdownTail(b *strings.Builder, skippedTitle string) {
	if len(t.Sets) > 0 {
		fmt.Fprintf(b, "\nOverrides applied to every cell: `%s`.\n", strings.Join(t.Sets, "` `"))
	}
	if len(t.Failed) > 0 {
		b.WriteString("\nCells without results:\n\n")
		for _, f := range t.Failed {
			fmt.Fprintf(b, "- %s\n", f)
		}
	}
	if len(t.Skipped) > 0 {
		fmt.Fprintf(b, "\n%s:\n\n", skippedTitle)
		for _, s := range t.Skipped {
			fmt.Fprintf(b, "- %s\n", s)
		}
	}
	var commits []string
	for _, e := range t.Entries {
		if e.Commit != "" && !slices.Contains(commits, e.Commit) {
			commits = append(commits, e.Commit)
		}
	}
	fmt.Fprintf(b, "\nCells finished by commit(s) %s; table assembled by %s (%s).\n", strings.Join(commits, ", "), t.Provenance.Commit, t.Provenance.GoVersion)
}

// header writes a table's header: Method and one column per dataset.
func (t *GraphTable) header(b *strings.Builder, l gridLayout) {
	b.WriteString("| Method |")
	for _, d := range t.Datasets {
		fmt.Fprintf(b, " %s |", l.columnTitle(d))
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(t.Datasets)))
	b.WriteString("\n")
}

// cellText is one cell of the accuracy table.
func (t *GraphTable) cellText(blk, smp, d string, paperOf func(block, sampler, dataset string) (paper.Reported, bool)) string {
	e := t.entry(blk, smp, d)
	paper := "–"
	if p, ok := paperOf(blk, smp, d); ok {
		paper = p.String()
	}
	if e == nil {
		return fmt.Sprintf("– [%s]", paper)
	}
	s := fmt.Sprintf("%.2f±%.2f [%s]", e.Mean, e.Std, paper)
	if c := e.Paired; c != nil && !math.IsNaN(c.P) {
		s += " " + cellrun.PairedText("", c)
	}
	return s
}

// Write writes t to dir as table.json and table.md.
func (t *GraphTable) Write(dir string) error {
	return cellrun.WriteReport(dir, "table", t, t.Markdown())
}

package table

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/train"
)

// TextScore is one column of a row of the text table: Spearman × 100 per
// seed, their mean and (population) standard deviation.
type TextScore struct {
	Seeds   []uint64  `json:"seeds"`
	PerSeed []float64 `json:"per_seed"`
	Mean    float64   `json:"mean"`
	Std     float64   `json:"std"`
}

// newTextScore aggregates per-seed values.
func newTextScore(seeds []uint64, vals []float64) *TextScore {
	m, s := eval.MeanStd(vals)
	return &TextScore{Seeds: seeds, PerSeed: vals, Mean: m, Std: s}
}

// text formats s as "61.75±0.27" ("69.04" for a single value).
func (s *TextScore) text() string {
	if len(s.PerSeed) == 1 {
		return fmt.Sprintf("%.2f", s.Mean)
	}
	return fmt.Sprintf("%.2f±%.2f", s.Mean, s.Std)
}

// TextRow is one row of the text table: a block and sampler (or a
// reference row), its seven tasks and their average.
type TextRow struct {
	// Block is one of TextBlocks ("" for a reference row); Sampler is
	// uniform, knn or batchsampler, or for a reference row "untrained" or
	// "tfidf".
	Block   string   `json:"block,omitempty"`
	Sampler string   `json:"sampler"`
	Seeds   []uint64 `json:"seeds,omitempty"`
	// Tasks holds every task scored in at least one of the row's runs; a
	// task scored in some seeds only has fewer Seeds than the row (and is
	// left out of the average).
	Tasks map[string]*TextScore `json:"tasks"`
	// Absent names the tasks of TextTasks scored in none of the row's runs
	// (their data was not under data.text.senteval_dir).
	Absent []string `json:"absent,omitempty"`
	// Avg is, per seed, the mean of the AvgTasks tasks scored in every
	// seed (in TextTasks order, unrounded: train's SentEvalScores.Avg when
	// every seed has the same tasks); AvgPartial is true when that is not
	// all seven. Nil for the TF-IDF row (scored on STS-B only).
	Avg        *TextScore `json:"avg,omitempty"`
	AvgTasks   int        `json:"avg_tasks"`
	AvgPartial bool       `json:"avg_partial"`
	// Paper and PaperRoBERTa are the paper's numbers of the row, by column
	// (TextTasks and TextAvg): BERT-base (its body's table, printed in
	// brackets) and RoBERTa-base (its appendix).
	Paper        map[string]float64 `json:"paper,omitempty"`
	PaperRoBERTa map[string]float64 `json:"paper_roberta,omitempty"`
	// PairedSTSB compares the row's STS-B with the block's Uniform row
	// over the seeds both have (paired t-test); PairedAvg the same for
	// the average when neither row's is partial. Nil for the Uniform and
	// reference rows, or with fewer than two common seeds.
	PairedSTSB *train.Paired `json:"paired_sts_b_vs_alone,omitempty"`
	PairedAvg  *train.Paired `json:"paired_avg_vs_alone,omitempty"`
	// TrainSeconds and EvalSeconds are means per run; ComputeSeconds sums
	// training and evaluation over the row's runs.
	TrainSeconds   float64 `json:"train_seconds,omitempty"`
	EvalSeconds    float64 `json:"eval_seconds,omitempty"`
	ComputeSeconds float64 `json:"compute_seconds,omitempty"`
	// Dir is the cell's run directory relative to the table's; Commit the
	// commit that finished it.
	Dir    string `json:"dir,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// TextTable is the assembled text table (DIR/table.json).
type TextTable struct {
	Tasks  []string  `json:"tasks"`
	Blocks []string  `json:"blocks"`
	Rows   []TextRow `json:"rows"`
	// References are the untrained encoder (senteval_untrained of the
	// runs, per seed) and the TF-IDF cosine baseline (baseline_tfidf_test,
	// STS-B only), from the first cell that has them.
	References []TextRow `json:"references"`
	// Summary: Skipped lists what the plan found missing (the absent
	// SentEval tasks).
	cellrun.Summary
}

// stsMetric is the metric of the sts protocol's runs (STS-B test).
const stsMetric = "sts_test_spearman"

// seedScores are one seed's scores of a row: task → Spearman × 100.
type seedScores struct {
	seed  uint64
	tasks map[string]float64
}

// AssembleText builds the text table from the cells' statuses (cellrun.Run
// or cellrun.Read on PlanText's cells). Each sampler of a cell is a row: STS-B
// is the run's score, the other tasks come from the run's "senteval"
// detail (the dev-selected parameters); a cell whose results are not the
// sts protocol's is listed as failed.
func AssembleText(sts []cellrun.Status, plan *Plan, sets []string, wall time.Duration) *TextTable {
	t := &TextTable{Tasks: slices.Clone(TextTasks), Summary: cellrun.NewSummary(plan.Skipped, sets, wall)}
	var untrained []seedScores
	var tfidf *float64
	for _, st := range sts {
		if !slices.Contains(t.Blocks, st.Block) {
			t.Blocks = append(t.Blocks, st.Block)
		}
		if st.Err != nil || st.Results == nil {
			msg := "no results"
			if st.Err != nil {
				msg = st.Err.Error()
			}
			t.Failed = append(t.Failed, fmt.Sprintf("%s: %s", st.Block, msg))
			continue
		}
		if err := checkSTSResults(st.Results); err != nil {
			t.Failed = append(t.Failed, fmt.Sprintf("%s: %s", st.Block, err))
			continue
		}
		commit := ""
		if p := st.Results.Provenance; p != nil {
			commit = p.Commit
			if p.Modified {
				commit += " (modified)"
			}
		}
		var rows []TextRow
		for _, e := range st.Results.Results {
			var runs []seedScores
			for _, r := range st.Results.Runs {
				if r.Sampler != e.Sampler {
					continue
				}
				runs = append(runs, seedScores{r.Seed, runTasks(r)})
				if !slices.ContainsFunc(untrained, func(s seedScores) bool { return s.seed == r.Seed }) {
					if u, ok := untrainedTasks(r); ok {
						untrained = append(untrained, seedScores{r.Seed, u})
					}
				}
				if d, ok := r.Detail.(map[string]any); ok && tfidf == nil {
					if v, ok := d["baseline_tfidf_test"].(float64); ok {
						tfidf = &v
					}
				}
			}
			row := newTextRow(runs)
			row.Block, row.Sampler, row.Dir, row.Commit = st.Block, e.Sampler, st.Dir, commit
			row.TrainSeconds, row.EvalSeconds = e.TrainSeconds, e.EvalSeconds
			row.ComputeSeconds = float64(len(e.PerSeed)) * (e.TrainSeconds + e.EvalSeconds)
			row.Paper = paperTextRow(BackboneBERT, st.Block, e.Sampler)
			row.PaperRoBERTa = paperTextRow(BackboneRoBERTa, st.Block, e.Sampler)
			t.ComputeSeconds += row.ComputeSeconds
			rows = append(rows, row)
		}
		// The sampler rows against the method alone, paired by seed.
		if i := slices.IndexFunc(rows, func(r TextRow) bool { return r.Sampler == "uniform" }); i >= 0 {
			base := rows[i]
			for j := range rows {
				if j == i {
					continue
				}
				r := &rows[j]
				r.PairedSTSB = pairedBySeed(r.Tasks["STS-B"], base.Tasks["STS-B"], base.Sampler)
				if r.Avg != nil && base.Avg != nil && !r.AvgPartial && !base.AvgPartial {
					r.PairedAvg = pairedBySeed(r.Avg, base.Avg, base.Sampler)
				}
			}
		}
		// Rows in the paper's order (Uniform, kNN, BatchSampler), then any other.
		slices.SortStableFunc(rows, func(a, b TextRow) int { return samplerIndex(a.Sampler) - samplerIndex(b.Sampler) })
		t.Rows = append(t.Rows, rows...)
	}
	if len(untrained) > 0 {
		slices.SortFunc(untrained, func(a, b seedScores) int { return cmp.Compare(a.seed, b.seed) })
		row := newTextRow(untrained)
		row.Sampler = "untrained"
		t.References = append(t.References, row)
	}
	if tfidf != nil {
		t.References = append(t.References, TextRow{Sampler: "tfidf", Tasks: map[string]*TextScore{"STS-B": newTextScore(nil, []float64{*tfidf})}})
	}
	return t
}

// checkSTSResults checks that res are the sts protocol's results.
func checkSTSResults(res *train.Results) error {
	for _, e := range res.Results {
		if e.Metric != stsMetric {
			return fmt.Errorf("results.json: sampler %s has metric %q, expected %s (the sts protocol's)", e.Sampler, e.Metric, stsMetric)
		}
	}
	if len(res.Results) == 0 {
		return fmt.Errorf("results.json: no sampler results")
	}
	return nil
}

// runTasks is a run's scores by task: STS-B is its score (the dev-selected
// parameters' STS-B test), the others its "senteval" detail.
func runTasks(r train.RunResult) map[string]float64 {
	out := map[string]float64{}
	if s, ok := train.SentEvalScoresOf(r.Detail, "senteval"); ok {
		for k, v := range s.Spearman {
			out[k] = v
		}
	}
	out["STS-B"] = r.Value
	return out
}

// untrainedTasks is the untrained encoder's scores of a run: its
// "senteval_untrained" detail, or test_untrained (STS-B) for a run scored
// before the seven tasks were.
func untrainedTasks(r train.RunResult) (map[string]float64, bool) {
	if s, ok := train.SentEvalScoresOf(r.Detail, "senteval_untrained"); ok {
		return s.Spearman, true
	}
	if d, ok := r.Detail.(map[string]any); ok {
		if v, ok := d["test_untrained"].(float64); ok {
			return map[string]float64{"STS-B": v}, true
		}
	}
	return nil, false
}

// newTextRow aggregates a row's runs: every task over the seeds that have
// it, the absent tasks, and the average over the tasks every seed has.
func newTextRow(runs []seedScores) TextRow {
	row := TextRow{Tasks: map[string]*TextScore{}}
	var common []string
	for _, task := range TextTasks {
		var seeds []uint64
		var vals []float64
		for _, r := range runs {
			if v, ok := r.tasks[task]; ok {
				seeds, vals = append(seeds, r.seed), append(vals, v)
			}
		}
		switch {
		case len(vals) == 0:
			row.Absent = append(row.Absent, task)
			continue
		case len(vals) == len(runs):
			common = append(common, task)
		}
		row.Tasks[task] = newTextScore(seeds, vals)
	}
	for _, r := range runs {
		row.Seeds = append(row.Seeds, r.seed)
	}
	if len(common) > 0 {
		avg := make([]float64, len(runs))
		for i, r := range runs {
			var sum float64
			for _, task := range common {
				sum += r.tasks[task]
			}
			avg[i] = sum / float64(len(common))
		}
		row.Avg = newTextScore(slices.Clone(row.Seeds), avg)
		row.AvgTasks = len(common)
		row.AvgPartial = len(common) < len(TextTasks)
	}
	return row
}

// pairedBySeed compares a with base over the seeds both have, in a's
// order (eval.PairedTTest, the paired test of the runs' own comparisons);
// nil with fewer than two common seeds or when the test has no answer
// (every difference zero).
func pairedBySeed(a, base *TextScore, baseName string) *train.Paired {
	if a == nil || base == nil {
		return nil
	}
	var x, y []float64
	for i, s := range a.Seeds {
		if j := slices.Index(base.Seeds, s); j >= 0 {
			x, y = append(x, a.PerSeed[i]), append(y, base.PerSeed[j])
		}
	}
	if len(x) < 2 {
		return nil
	}
	tv, p, err := eval.PairedTTest(x, y)
	if err != nil {
		return nil
	}
	var d float64
	for i := range x {
		d += x[i] - y[i]
	}
	return &train.Paired{Baseline: baseName, MeanDiff: d / float64(len(x)), T: tv, P: p, N: len(x)}
}

// paperTextRow is the paper's row of a block and sampler by column, nil
// where it has none.
func paperTextRow(backbone, block, sampler string) map[string]float64 {
	out := map[string]float64{}
	for _, c := range append(slices.Clone(TextTasks), TextAvg) {
		if r, ok := PaperText(backbone, block, sampler, c); ok {
			out[c] = r.Mean
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// samplerIndex is a sampler's row in a block (3 for any other).
func samplerIndex(s string) int {
	if i := slices.Index(Samplers, s); i >= 0 {
		return i
	}
	return len(Samplers)
}

// textRowTitle is a row's name in the table.
func textRowTitle(r TextRow) string {
	switch {
	case r.Block == "" && r.Sampler == "untrained":
		return "untrained encoder (reference)"
	case r.Block == "" && r.Sampler == "tfidf":
		return "TF-IDF cosine (reference, STS-B only)"
	case r.Block == "":
		return r.Sampler
	}
	if title, ok := samplerTitle[r.Sampler]; ok && title != "" {
		return title
	}
	if r.Sampler == "uniform" {
		return textBlockTitle[r.Block]
	}
	return "w/ " + r.Sampler
}

// Markdown renders t in the paper's layout: the seven tasks and the
// average as columns, a block of three rows per method (the method alone,
// w/ kNN Sampler, w/ BatchSampler), then the reference rows. Each cell is
// the measured mean ± std over seeds with the paper's number (BERT-base) in
// brackets; an absent task reads "absent" and a partial average says how
// many tasks it covers ("62.10±0.20 (1/7)"). The last column is the paired
// difference with the method alone on STS-B, and on the average when all
// seven tasks are there. Then the cost of every cell, and what failed or
// was absent.
func (t *TextTable) Markdown() string {
	var b strings.Builder
	b.WriteString("## Text table: Spearman × 100 on SimCSE's seven STS tasks\n\n")
	b.WriteString("Each cell: measured mean ± std over seeds [the paper's number, BERT-base]; absent: the task's data is not under " +
		"data.text.senteval_dir; Avg.: over the tasks present, with (tasks/7) when that is not all seven. Last column: " +
		"difference with the method alone over the same seeds (paired t-test, two-sided p; **bold** when p < 0.05), on STS-B, " +
		"and on Avg. when all seven tasks are present. – : not run or no result.\n\n")
	b.WriteString("| Method |")
	for _, task := range t.Tasks {
		fmt.Fprintf(&b, " %s |", task)
	}
	fmt.Fprintf(&b, " %s | vs method alone |\n|---|%s\n", TextAvg, strings.Repeat("---|", len(t.Tasks)+2))
	var names []string
	for _, r := range t.Rows {
		names = append(names, r.Sampler)
	}
	rows := rowSamplers(names)
	for _, blk := range t.Blocks {
		for _, smp := range rows {
			r := t.row(blk, smp)
			if r == nil {
				r = &TextRow{Block: blk, Sampler: smp, Paper: paperTextRow(BackboneBERT, blk, smp)}
			}
			t.writeRow(&b, r)
		}
	}
	for i := range t.References {
		t.writeRow(&b, &t.References[i])
	}
	b.WriteString("\n### Cost per cell (training + evaluation, summed over the cell's runs)\n\n")
	b.WriteString("| Method | compute | train | eval | runs |\n|---|---|---|---|---|\n")
	for _, blk := range t.Blocks {
		var tr, ev float64
		n := 0
		for _, smp := range rows {
			if r := t.row(blk, smp); r != nil {
				k := float64(len(r.Seeds))
				tr, ev, n = tr+r.TrainSeconds*k, ev+r.EvalSeconds*k, n+len(r.Seeds)
			}
		}
		if n == 0 {
			fmt.Fprintf(&b, "| %s | – | – | – | 0 |\n", textBlockTitle[blk])
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", textBlockTitle[blk], cellrun.Minutes(tr+ev), cellrun.Minutes(tr), cellrun.Minutes(ev), n)
	}
	fmt.Fprintf(&b, "\nTotal compute: %s on %d cores (GOMAXPROCS); this process: %s.\n", cellrun.Minutes(t.ComputeSeconds), t.Provenance.GOMAXPROCS, cellrun.Minutes(t.WallSeconds))
	if len(t.Sets) > 0 {
		fmt.Fprintf(&b, "\nOverrides applied to every cell: `%s`.\n", strings.Join(t.Sets, "` `"))
	}
	if len(t.Failed) > 0 {
		b.WriteString("\nCells without results:\n\n")
		for _, f := range t.Failed {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if len(t.Skipped) > 0 {
		b.WriteString("\nTasks absent from the data root when the table was planned:\n\n")
		for _, s := range t.Skipped {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	var commits []string
	for _, r := range t.Rows {
		if r.Commit != "" && !slices.Contains(commits, r.Commit) {
			commits = append(commits, r.Commit)
		}
	}
	fmt.Fprintf(&b, "\nCells finished by commit(s) %s; table assembled by %s (%s).\n", strings.Join(commits, ", "), t.Provenance.Commit, t.Provenance.GoVersion)
	return b.String()
}

// row finds a row of t.
func (t *TextTable) row(block, sampler string) *TextRow {
	for i := range t.Rows {
		if r := &t.Rows[i]; r.Block == block && r.Sampler == sampler {
			return r
		}
	}
	return nil
}

// writeRow writes one row of the Markdown table.
func (t *TextTable) writeRow(b *strings.Builder, r *TextRow) {
	ran := r.Seeds != nil || len(r.Tasks) > 0
	paper := func(col string) string {
		if r.Block == "" {
			return ""
		}
		if v, ok := r.Paper[col]; ok {
			return fmt.Sprintf(" [%.2f]", v)
		}
		return " [–]"
	}
	fmt.Fprintf(b, "| %s |", textRowTitle(*r))
	for _, task := range t.Tasks {
		s, ok := r.Tasks[task]
		switch {
		case ok:
			cell := s.text()
			if r.Seeds != nil && len(s.Seeds) < len(r.Seeds) {
				cell += fmt.Sprintf(" (%d of %d seeds)", len(s.Seeds), len(r.Seeds))
			}
			fmt.Fprintf(b, " %s%s |", cell, paper(task))
		case ran && slices.Contains(r.Absent, task):
			fmt.Fprintf(b, " absent%s |", paper(task))
		default:
			fmt.Fprintf(b, " –%s |", paper(task))
		}
	}
	switch {
	case r.Avg == nil:
		fmt.Fprintf(b, " –%s |", paper(TextAvg))
	case r.AvgPartial:
		fmt.Fprintf(b, " %s (%d/%d)%s |", r.Avg.text(), r.AvgTasks, len(TextTasks), paper(TextAvg))
	default:
		fmt.Fprintf(b, " %s%s |", r.Avg.text(), paper(TextAvg))
	}
	var vs []string
	if c := r.PairedSTSB; c != nil {
		vs = append(vs, cellrun.PairedText("STS-B ", c))
	}
	if c := r.PairedAvg; c != nil {
		vs = append(vs, cellrun.PairedText("Avg. ", c))
	}
	fmt.Fprintf(b, " %s |\n", strings.Join(vs, "; "))
}

// Write writes t to dir as table.json and table.md.
func (t *TextTable) Write(dir string) error {
	return cellrun.WriteReport(dir, "table", t, t.Markdown())
}

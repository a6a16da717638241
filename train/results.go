package train

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/batchsampler-go/batchsampler/eval"
	"github.com/batchsampler-go/batchsampler/loss"
)

// Results is the content of DIR/results.json.
type Results struct {
	Name    string        `json:"name,omitempty"`
	Results []ResultEntry `json:"results"`
	Runs    []RunResult   `json:"runs"`
	// Provenance is the commit, Go version and machine of the process that
	// finished the experiment (each process's record is in provenance.json).
	Provenance *Provenance `json:"provenance,omitempty"`
	// Notes say how the runs differ from the config: a BatchSampler whose
	// m or k exceeds the dataset's N − 1 runs with M = N − 1 (and
	// RunResult.SamplerM, SamplerK record what each run ran with).
	Notes []string `json:"notes,omitempty"`
	// FNRatioChance is the chance level of the false-negative ratio: the
	// share of same-class pairs among all pairs of distinct training
	// instances, Σ n_c(n_c − 1) / (N(N − 1)) for class sizes n_c, which a
	// batch drawn at random holds on average whatever its size (Uniform's
	// expected value). Nil without labels.
	FNRatioChance *float64 `json:"fn_ratio_chance,omitempty"`
}

// fnRatioChance is Results.FNRatioChance of labels (nil for fewer than
// two).
func fnRatioChance(labels []int) *float64 {
	n := len(labels)
	if n < 2 {
		return nil
	}
	count := map[int]int{}
	for _, y := range labels {
		count[y]++
	}
	var same float64
	for _, c := range count {
		same += float64(c) * float64(c-1)
	}
	v := same / (float64(n) * float64(n-1))
	return &v
}

// ResultEntry aggregates the runs of one sampler over seeds.
type ResultEntry struct {
	Dataset  string    `json:"dataset"`
	Modality string    `json:"modality"`
	Sampler  string    `json:"sampler"`
	Loss     string    `json:"loss"`
	Metric   string    `json:"metric"`
	Seeds    []uint64  `json:"seeds"`
	PerSeed  []float64 `json:"per_seed"`
	Mean     float64   `json:"mean"`
	// Std is the population standard deviation over seeds (numpy's np.std,
	// as GraphCL reports it).
	Std                float64   `json:"std"`
	TrainSeconds       float64   `json:"train_seconds"` // mean per run
	TrainSecondsPerRun []float64 `json:"train_seconds_per_seed"`
	EvalSeconds        float64   `json:"eval_seconds"`             // mean per run
	SamplerShare       float64   `json:"sampler_share"`            // sampler seconds / train seconds
	FinalFNRatio       *float64  `json:"final_fn_ratio,omitempty"` // mean false-negative ratio of the last epoch (nil without labels)
	Comparison         *Paired   `json:"paired_vs_first,omitempty"`
	// MaxRSS is the largest RunResult.MaxRSS of the sampler's runs (bytes;
	// the process peak RSS at the end of a run, process-wide and
	// monotone), and HeapPeak the largest RunResult.HeapPeak (bytes, the
	// Go heap's sampled high-water mark); 0 (omitted): unknown.
	MaxRSS   uint64 `json:"max_rss,omitempty"`
	HeapPeak uint64 `json:"heap_peak,omitempty"`
}

// Paired is a paired comparison of a sampler with the first sampler of the
// config over the same seeds (same initialisation and evaluation folds).
type Paired struct {
	Baseline string  `json:"baseline"`
	MeanDiff float64 `json:"mean_diff"`
	T        float64 `json:"t"`
	P        float64 `json:"p"`
	N        int     `json:"n"`
}

// MarshalJSON writes T as a number, or as the string "+Inf" or "-Inf" when
// every paired difference is the same non-zero value (JSON has no
// infinity).
func (p Paired) MarshalJSON() ([]byte, error) {
	type plain Paired
	if !math.IsInf(p.T, 0) {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		plain
		T string `json:"t"`
	}{plain(p), strconv.FormatFloat(p.T, 'g', -1, 64)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Paired) UnmarshalJSON(b []byte) error {
	type plain Paired
	var v struct {
		plain
		T json.RawMessage `json:"t"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Paired(v.plain)
	if len(v.T) == 0 {
		return nil
	}
	if v.T[0] == '"' {
		var s string
		if err := json.Unmarshal(v.T, &s); err != nil {
			return err
		}
		t, err := strconv.ParseFloat(s, 64)
		if err != nil || !math.IsInf(t, 0) {
			return fmt.Errorf("paired t %q: expected a number, \"+Inf\" or \"-Inf\"", s)
		}
		p.T = t
		return nil
	}
	return json.Unmarshal(v.T, &p.T)
}

func lossName(c *Config) string {
	if slices.Contains(loss.LocalGlobalKinds, c.Loss.Kind) {
		return c.Loss.Kind // no form: it contrasts nodes with graphs
	}
	return c.Loss.Kind + "/" + c.Loss.Form
}

func summarize(cfg *Config, ds Dataset, runs []RunResult) *Results {
	res := &Results{Name: cfg.Name, Runs: runs}
	for _, sc := range cfg.SamplerList() {
		e := ResultEntry{Dataset: ds.Name(), Modality: cfg.Modality, Sampler: sc.DisplayName(), Loss: lossName(cfg)}
		var trainSum, evalSum, smpSum, fnSum float64
		fnN := 0
		for _, r := range runs {
			if r.Sampler != sc.DisplayName() {
				continue
			}
			e.Metric = r.Metric
			e.Seeds = append(e.Seeds, r.Seed)
			e.PerSeed = append(e.PerSeed, r.Value)
			e.TrainSecondsPerRun = append(e.TrainSecondsPerRun, r.TrainSeconds)
			trainSum += r.TrainSeconds
			evalSum += r.EvalSeconds
			smpSum += r.SamplerSeconds
			e.MaxRSS, e.HeapPeak = max(e.MaxRSS, r.MaxRSS), max(e.HeapPeak, r.HeapPeak)
			if r.FinalFNRatio != nil {
				fnSum += *r.FinalFNRatio
				fnN++
			}
		}
		n := float64(len(e.PerSeed))
		if n == 0 {
			continue
		}
		e.Mean, e.Std = eval.MeanStd(e.PerSeed)
		e.TrainSeconds, e.EvalSeconds = trainSum/n, evalSum/n
		if fnN > 0 {
			fn := fnSum / float64(fnN)
			e.FinalFNRatio = &fn
		}
		if trainSum > 0 {
			e.SamplerShare = smpSum / trainSum
		}
		res.Results = append(res.Results, e)
	}
	if len(res.Results) > 1 {
		base := res.Results[0]
		for i := 1; i < len(res.Results); i++ {
			e := &res.Results[i]
			if len(e.PerSeed) != len(base.PerSeed) {
				continue
			}
			e.Comparison = PairBySeed(*e, base)
		}
	}
	return res
}

// PairBySeed compares e with base over the seeds both have, in e's order
// (a seed gives every sampler of a config the same initialisation and the
// same evaluation folds, so the pairs are matched): the mean of the
// per-seed differences e − base and the two-sided paired t-test
// (eval.PairedTTest). It returns nil when fewer than two seeds are common
// or the test is undefined (every difference zero).
func PairBySeed(e, base ResultEntry) *Paired {
	at := make(map[uint64]int, len(base.Seeds))
	for j, s := range base.Seeds {
		if j < len(base.PerSeed) {
			at[s] = j
		}
	}
	var a, b []float64
	for i, s := range e.Seeds {
		if j, ok := at[s]; ok && i < len(e.PerSeed) {
			a, b = append(a, e.PerSeed[i]), append(b, base.PerSeed[j])
		}
	}
	if len(a) < 2 {
		return nil
	}
	t, p, err := eval.PairedTTest(a, b)
	if err != nil {
		return nil
	}
	d := 0.0
	for j := range a {
		d += a[j] - b[j]
	}
	return &Paired{Baseline: base.Sampler, MeanDiff: d / float64(len(a)), T: t, P: p, N: len(a)}
}

// Markdown renders the results as the paper's tables do (mean±std).
func (r *Results) Markdown() string {
	var b strings.Builder
	if r.Name != "" {
		fmt.Fprintf(&b, "## %s\n\n", r.Name)
	}
	b.WriteString("| Dataset | Sampler | Loss | Metric | Result | Seeds | Train s/run | Eval s/run | Sampler share | Final FN ratio | Peak MB: RSS / heap |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range r.Results {
		fn := "–"
		if e.FinalFNRatio != nil {
			fn = fmt.Sprintf("%.3f", *e.FinalFNRatio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f±%.2f | %d | %.1f | %.1f | %.1f%% | %s | %s / %s |\n",
			e.Dataset, e.Sampler, e.Loss, e.Metric, e.Mean, e.Std, len(e.PerSeed), e.TrainSeconds, e.EvalSeconds, 100*e.SamplerShare, fn,
			megabytes(e.MaxRSS), megabytes(e.HeapPeak))
	}
	if c := r.FNRatioChance; c != nil && slices.ContainsFunc(r.Results, func(e ResultEntry) bool { return e.FinalFNRatio != nil }) {
		fmt.Fprintf(&b, "\nFinal FN ratio: the false-negative ratio (same-class pairs in a batch) over the last epoch; its chance level, what batches drawn at random hold, is %.3f.\n", *c)
	}
	if r.hasMemory() {
		b.WriteString("\nPeak MB: the largest over the sampler's runs of the process's peak RSS at the end of a run (process-wide, " +
			"so it includes the runs before it) and of the Go heap's high-water mark sampled after every step (10^6 bytes; – unknown).\n")
	}
	if r.untrained() {
		b.WriteString("\nNo training step (train.epochs: 0): the scores are those of the untrained encoders.\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nAs run:\n\n")
		for _, n := range r.Notes {
			b.WriteString("- " + n + ".\n")
		}
	}
	var cmp []string
	for _, e := range r.Results {
		if c := e.Comparison; c != nil {
			verdict := "not significant at the 5% level"
			if c.P < 0.05 {
				verdict = "significant at the 5% level"
			}
			cmp = append(cmp, fmt.Sprintf("- %s − %s: %+.2f points over %d paired seeds (paired t = %.2f, two-sided p = %.3f): %s.",
				e.Sampler, c.Baseline, c.MeanDiff, c.N, c.T, c.P, verdict))
		}
	}
	if len(cmp) > 0 {
		b.WriteString("\nPaired comparison (same seeds: same initialisation and the same evaluation folds):\n\n")
		b.WriteString(strings.Join(cmp, "\n"))
		b.WriteString("\n")
	}
	b.WriteString("\nPer seed:\n\n| Sampler | Seed | Result |\n|---|---|---|\n")
	for _, e := range r.Results {
		for i, v := range e.PerSeed {
			fmt.Fprintf(&b, "| %s | %d | %.2f |\n", e.Sampler, e.Seeds[i], v)
		}
	}
	r.sentEvalMarkdown(&b)
	return b.String()
}

// SentEvalScoresOf returns the SentEvalScores under key ("senteval",
// "senteval_final" or "senteval_untrained") of a run's detail, as the run
// made it or as results.json holds it; false when there is none.
func SentEvalScoresOf(detail any, key string) (SentEvalScores, bool) {
	d, ok := detail.(map[string]any)
	if !ok {
		return SentEvalScores{}, false
	}
	switch v := d[key].(type) {
	case nil:
		return SentEvalScores{}, false
	case SentEvalScores:
		return v, true
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return SentEvalScores{}, false
		}
		var s SentEvalScores
		if err := json.Unmarshal(b, &s); err != nil || len(s.Tasks) == 0 {
			return SentEvalScores{}, false
		}
		return s, true
	}
}

// sentEvalMarkdown writes the table of the seven STS tasks: per sampler the
// mean over its runs of every task and of the average, and the untrained
// encoders' mean. It writes nothing when no run has the report.
func (r *Results) sentEvalMarkdown(b *strings.Builder) {
	type row struct {
		label string
		runs  []SentEvalScores
	}
	var rows []row
	var untrained []SentEvalScores
	for _, e := range r.Results {
		rw := row{label: e.Sampler}
		for _, run := range r.Runs {
			if run.Sampler != e.Sampler {
				continue
			}
			if s, ok := SentEvalScoresOf(run.Detail, "senteval"); ok {
				rw.runs = append(rw.runs, s)
			}
			if s, ok := SentEvalScoresOf(run.Detail, "senteval_untrained"); ok {
				untrained = append(untrained, s)
			}
		}
		if len(rw.runs) > 0 {
			rows = append(rows, rw)
		}
	}
	if len(rows) == 0 {
		return
	}
	if len(untrained) > 0 {
		rows = append(rows, row{label: "untrained encoder", runs: untrained})
	}
	tasks := rows[0].runs[0].Tasks
	b.WriteString("\nSimCSE's seven STS tasks (Spearman × 100, mean over the runs; STS12-16 each year's subsets as one set, " +
		"STS-B and SICK-R their test sets; absent: not under data.text.senteval_dir):\n\n| Sampler |")
	for _, t := range tasks {
		fmt.Fprintf(b, " %s |", t)
	}
	b.WriteString(" Avg. |\n|---|" + strings.Repeat("---|", len(tasks)+1) + "\n")
	partial := false
	for _, rw := range rows {
		fmt.Fprintf(b, "| %s |", rw.label)
		for _, t := range tasks {
			var sum float64
			n := 0
			for _, s := range rw.runs {
				if v, ok := s.Spearman[t]; ok {
					sum += v
					n++
				}
			}
			if n == 0 {
				b.WriteString(" absent |")
			} else {
				fmt.Fprintf(b, " %.2f |", sum/float64(n))
			}
		}
		var avg float64
		for _, s := range rw.runs {
			avg += s.Avg
		}
		avg /= float64(len(rw.runs))
		if s := rw.runs[0]; s.AvgPartial {
			partial = true
			fmt.Fprintf(b, " %.2f (%d of %d tasks) |\n", avg, s.AvgTasks, len(s.Tasks))
		} else {
			fmt.Fprintf(b, " %.2f |\n", avg)
		}
	}
	if partial {
		b.WriteString("\nThe average is partial: it is over the tasks present only, not comparable with a seven-task average.\n")
	}
}

// megabytes formats a byte count in MB (10^6 bytes), "–" for 0 (unknown).
func megabytes(b uint64) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", float64(b)/1e6)
}

// hasMemory reports whether some entry of r has a memory figure.
func (r *Results) hasMemory() bool {
	for _, e := range r.Results {
		if e.MaxRSS != 0 || e.HeapPeak != 0 {
			return true
		}
	}
	return false
}

// untrained reports whether no run of r trained a step (train.epochs: 0).
func (r *Results) untrained() bool {
	for _, run := range r.Runs {
		if run.Steps != 0 {
			return false
		}
	}
	return len(r.Runs) > 0
}

func writeResults(dir string, r *Results) error {
	if err := writeJSON(filepath.Join(dir, "results.json"), r); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "results.md"), []byte(r.Markdown()))
}

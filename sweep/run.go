package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/train"
)

// RunOptions say where a sweep runs and who watches.
type RunOptions struct {
	// Dir is the sweep's directory: DIR/baseline[/...], DIR/points/NAME,
	// DIR/sweep.yaml (the base config), DIR/sweep.md and DIR/sweep.json.
	Dir string
	// Rerun moves a cell whose directory holds a run of another config
	// aside (to DIR/CELL.replaced-TIME) and runs it again; without it such
	// a cell stops the sweep before anything runs.
	Rerun bool
	// Log reports each cell's start, skip or failure (nil: quiet).
	Log func(msg string)
	// ObserverFor makes the observer of a cell's runs (nil: none).
	ObserverFor func(cellrun.Cell) train.Observer
	// Parallel is the number of a cell's runs that go at once
	// (train.Options.Parallel). Results do not depend on it.
	Parallel int
}

// Run runs the plan's cells in opt.Dir, one after another (cellrun.Run:
// a finished cell is read, an interrupted one resumes), then writes
// sweep.md and sweep.json. A cell that fails is listed in them and the
// others go on; a cancelled ctx stops the sweep with train.ErrInterrupted
// after writing what is finished (run the same command again to continue).
func Run(ctx context.Context, p *Plan, opt RunOptions) (*Result, error) {
	start := time.Now()
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	cells := p.Cells()
	if err := checkChanged(p, cells, opt); err != nil {
		return nil, err
	}
	if err := writeBase(p, opt.Dir); err != nil {
		return nil, err
	}
	sts, err := cellrun.Run(ctx, cells, cellrun.Options{Dir: opt.Dir, Log: opt.Log, ObserverFor: opt.ObserverFor, Parallel: opt.Parallel})
	if err != nil {
		sts = append(sts, cellrun.Read(cells[len(sts):], opt.Dir)...)
	}
	r := Assemble(p, sts, time.Since(start))
	if werr := r.Write(opt.Dir); werr != nil {
		if err == nil {
			return r, werr
		}
		err = fmt.Errorf("%w (and %v)", err, werr)
	}
	return r, err
}

// RunShard runs task shard of an array job over the sweep's cells (the
// cells k with k mod N = I, cellrun.Shard) in opt.Dir and writes no
// sweep.md: Read (cmd/train -assemble) assembles it once every task is
// done. Many tasks may share opt.Dir: cellrun.Run runs each cell under
// its lock and skips a cell another process holds (Busy); a task that
// crashed leaves its lock free, so resubmitted it takes its cells over
// and resumes them. -rerun (opt.Rerun) moves aside only the shard's own
// changed cells.
func RunShard(ctx context.Context, p *Plan, shard cellrun.Shard, opt RunOptions) ([]cellrun.Status, error) {
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	cells := shard.Select(p.Cells())
	if err := checkChanged(p, cells, opt); err != nil {
		return nil, err
	}
	if err := writeBase(p, opt.Dir); err != nil {
		return nil, err
	}
	return cellrun.Run(ctx, cells, cellrun.Options{Dir: opt.Dir, Log: opt.Log, ObserverFor: opt.ObserverFor, Parallel: opt.Parallel})
}

// Read assembles the cells finished so far in dir without running
// anything.
func Read(p *Plan, dir string) *Result {
	return Assemble(p, cellrun.Read(p.Cells(), dir), 0)
}

// checkChanged finds the cells whose directory holds a run of another
// config: an error listing them, or with opt.Rerun, moves them aside.
func checkChanged(p *Plan, cells []cellrun.Cell, opt RunOptions) error {
	var changed []string
	for _, st := range cellrun.Read(cells, opt.Dir) {
		if errors.Is(st.Err, cellrun.ErrConfigChanged) {
			changed = append(changed, st.Dir)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	if !opt.Rerun {
		return fmt.Errorf("sweep %s: %d cell(s) of %s hold runs of another config than the plan's: %s (the config or -set changed); give -rerun to move them aside and run them again, or another -out: %w",
			p.Config.Name, len(changed), opt.Dir, strings.Join(changed, ", "), cellrun.ErrConfigChanged)
	}
	stamp := time.Now().Format("20060102-150405")
	for _, c := range changed {
		from := filepath.Join(opt.Dir, c)
		to := from + ".replaced-" + stamp
		if err := os.Rename(from, to); err != nil {
			return fmt.Errorf("sweep: move the changed cell aside: %w", err)
		}
		if opt.Log != nil {
			opt.Log(fmt.Sprintf("cell %s holds another config: moved to %s, running it again", c, to))
		}
	}
	return nil
}

// writeBase writes the base config, sweep section included, to
// DIR/sweep.yaml: the record of what the sweep is.
func writeBase(p *Plan, dir string) error {
	var b bytes.Buffer
	cfg := p.Config
	if err := train.WriteConfig(&b, &cfg); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return cellrun.WriteAtomic(filepath.Join(dir, "sweep.yaml"), b.Bytes())
}

// PrintPlan writes the plan's cells as a markdown table, with the state
// of each in dir (finished, partly run, to run, another config) and the
// number of runs; where some cells are finished, the time the others
// should take at the finished cells' compute per run.
func PrintPlan(w io.Writer, p *Plan, dir string) {
	fmt.Fprintf(w, "sweep %s (%s", p.Config.Name, p.Mode)
	for _, a := range p.Axes {
		shared := ""
		if a.Shared {
			shared = ", shared with the baseline"
		}
		fmt.Fprintf(w, "; %s = %s: %s%s", a.Name, a.Key, strings.Join(a.Labels, ", "), shared)
	}
	fmt.Fprintf(w, "), baseline %s, swept %s, seeds %v, in %s\n\n", p.Baseline, strings.Join(p.Swept, ", "), p.Config.Seeds, dir)
	fmt.Fprintln(w, "| # | cell | directory | samplers | overrides | runs | state |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	sts := cellrun.Read(p.Cells(), dir)
	var doneRuns, leftRuns int
	var doneSeconds float64
	sets := map[string][]string{}
	for _, b := range p.Baselines {
		sets[b.Dir] = b.Sets
	}
	for _, pt := range p.Points {
		sets[pt.Cell.Dir] = pt.Cell.Sets
	}
	for i, st := range sts {
		var names []string
		for _, s := range st.Config.SamplerList() {
			names = append(names, s.DisplayName())
		}
		runs := len(names) * len(st.Config.Seeds)
		state := "to run"
		switch {
		case st.Results != nil:
			state = "finished"
			doneRuns += runs
			for _, r := range st.Results.Results {
				doneSeconds += float64(len(r.PerSeed)) * (r.TrainSeconds + r.EvalSeconds)
			}
		case errors.Is(st.Err, cellrun.ErrConfigChanged):
			state = "holds another config (-rerun)"
			leftRuns += runs
		default:
			if _, err := os.Stat(filepath.Join(dir, st.Dir, "config.yaml")); err == nil {
				state = "started (resumes)"
			}
			leftRuns += runs
		}
		ov := strings.Join(sets[st.Dir], " ")
		if ov == "" {
			ov = "–"
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | `%s` | %d | %s |\n", i+1, st.Block, st.Dir, strings.Join(names, ", "), ov, runs, state)
	}
	fmt.Fprintf(w, "\n%d cells, %d runs (sampler × seed): %d finished, %d to run.", len(sts), p.Runs(), doneRuns, leftRuns)
	if doneRuns > 0 && leftRuns > 0 {
		fmt.Fprintf(w, " At the finished cells' %.1f s per run, the rest takes about %s.", doneSeconds/float64(doneRuns), cellrun.Minutes(doneSeconds/float64(doneRuns)*float64(leftRuns)))
	}
	fmt.Fprintln(w)
}

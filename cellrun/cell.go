package cellrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/batchsampler-go/batchsampler/train"
)

// Cell is one experiment of a grid (a cell of a table, a point of a
// sweep): a block (method and loss) on one dataset, its config with its
// sampler rows and seeds, and the directory it runs in.
type Cell struct {
	Dataset string
	Block   string
	Config  train.Config
	// Dir is the cell's run directory, relative to the grid's directory
	// (a table's DATASET/BLOCK).
	Dir string
}

// Status is what running a cell came to.
type Status struct {
	Cell
	// Results are the cell's results.json (nil when it failed).
	Results *train.Results
	// Err is why the cell has no results; the grid goes on without it.
	Err error
	// Ran is true when this process trained or evaluated something of the
	// cell (false: finished earlier).
	Ran bool
	// Wall is the time this process spent on the cell.
	Wall time.Duration
	// Busy is true when another process holds the cell's lock (Err wraps
	// ErrBusy): it runs the cell, this one skipped it.
	Busy bool
}

// Options says where a grid's cells run and who watches.
type Options struct {
	// Dir is the grid's directory; cell c runs in Dir/c.Dir.
	Dir string
	// Observer watches every cell's runs; ObserverFor, when set, makes one
	// per cell instead (e.g. with the cell's name as prefix).
	Observer    train.Observer
	ObserverFor func(Cell) train.Observer
	// Log reports each cell's start, skip or failure (nil: quiet).
	Log func(msg string)
	// Parallel is the number of a cell's runs that go at once
	// (train.Options.Parallel; 0 or 1: one at a time). Results do not
	// depend on it.
	Parallel int
}

// ErrConfigChanged is returned (wrapped) for a cell whose directory holds
// a run of another config than the plan's.
var ErrConfigChanged = errors.New("the cell's directory holds a run of another config")

// Run runs the cells one after another in opt.Dir. A cell finished
// earlier (results.json with provenance, same config) is read, not run
// again; an interrupted one resumes from its checkpoints. A cell that fails
// is reported in its status and the others go on; a cancelled ctx stops the
// grid with train.ErrInterrupted (run the same command again to continue).
//
// Many processes may run cells of one grid directory at once (the tasks
// of an array job, each with its Shard of the cells, on a shared file
// system): each cell is run under its lock (lockCell, DIR/DATASET/
// BLOCK.lock), a cell another process holds is skipped (Busy), and the
// lock of a task that crashed is free again, so a resubmitted task takes
// its cells over and resumes them.
func Run(ctx context.Context, cells []Cell, opt Options) ([]Status, error) {
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			opt.Log(fmt.Sprintf(format, a...))
		}
	}
	var out []Status
	for i, c := range cells {
		st := Status{Cell: c}
		dir := filepath.Join(opt.Dir, c.Dir)
		start := time.Now()
		unlock, err := lockCell(dir)
		if errors.Is(err, ErrBusy) {
			st.Err, st.Busy = err, true
			logf("cell %d/%d %s/%s: skipped, %v", i+1, len(cells), c.Dataset, c.Block, err)
			out = append(out, st)
			continue
		}
		var res *train.Results
		var ran bool
		if err == nil {
			res, ran, err = runCell(ctx, c, dir, opt, func(what string) {
				logf("cell %d/%d %s/%s: %s", i+1, len(cells), c.Dataset, c.Block, what)
			})
			unlock()
		}
		st.Results, st.Ran, st.Wall = res, ran, time.Since(start)
		if err != nil {
			if errors.Is(err, train.ErrInterrupted) || ctx.Err() != nil {
				return out, fmt.Errorf("cell %s/%s: %w", c.Dataset, c.Block, err)
			}
			st.Err = err
			logf("cell %d/%d %s/%s failed: %v", i+1, len(cells), c.Dataset, c.Block, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// runCell runs (or reads) one cell in dir.
func runCell(ctx context.Context, c Cell, dir string, opt Options, log func(string)) (*train.Results, bool, error) {
	resume, err := sameConfig(c, dir)
	if err != nil {
		return nil, false, err
	}
	if resume {
		if res, err := ReadResults(dir); err == nil && res.Provenance != nil {
			log("finished earlier")
			return res, false, nil
		}
		log("resuming")
	} else {
		log("starting")
	}
	obs := opt.Observer
	if opt.ObserverFor != nil {
		obs = opt.ObserverFor(c)
	}
	res, err := train.Run(ctx, c.Config, train.Options{OutDir: dir, Resume: resume, Observer: obs, Parallel: opt.Parallel})
	return res, true, err
}

// Read reads the cells finished so far in dir without running
// anything: a cell without results (or whose directory holds another
// config) gets an Err saying why.
func Read(cells []Cell, dir string) []Status {
	out := make([]Status, 0, len(cells))
	for _, c := range cells {
		st := Status{Cell: c}
		cdir := filepath.Join(dir, c.Dir)
		if _, err := sameConfig(c, cdir); err != nil {
			st.Err = err
		} else if _, err := os.Stat(cdir); errors.Is(err, fs.ErrNotExist) {
			st.Err = fmt.Errorf("not started (no directory %s)", cdir)
		} else if res, err := ReadResults(cdir); err != nil || res.Provenance == nil {
			note := ""
			if p := partialNote(&c.Config, cdir); p != "" {
				note = "; " + p
			}
			st.Err = fmt.Errorf("not finished (%s has no results.json yet%s)", cdir, note)
		} else {
			st.Results = res
		}
		out = append(out, st)
	}
	return out
}

// sameConfig checks that dir holds a run of c's config, or none; held
// says whether it holds one.
func sameConfig(c Cell, dir string) (held bool, err error) {
	var want bytes.Buffer
	if err := train.WriteConfig(&want, &c.Config); err != nil {
		return false, err
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	have, err := os.ReadFile(cfgPath)
	switch {
	case os.IsNotExist(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read %s: %w", cfgPath, err)
	case !bytes.Equal(have, want.Bytes()):
		return true, fmt.Errorf("%s: %w (planned config differs; delete %s to run the cell again with the new config, or choose another table directory)", cfgPath, ErrConfigChanged, dir)
	}
	return true, nil
}

// ReadResults reads a run directory's results.json.
func ReadResults(dir string) (*train.Results, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var r train.Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "results.json"), err)
	}
	return &r, nil
}

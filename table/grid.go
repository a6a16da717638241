package table

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/train"
)

// Cell is one experiment of a table: a block (method and loss) on one
// dataset, with its three sampler rows and its seeds.
type Cell struct {
	Dataset string
	Block   string
	Config  train.Config
	// Dir is the cell's run directory, relative to the table's directory:
	// DATASET/BLOCK.
	Dir string
}

// PlanOptions chooses the cells of a graph table.
type PlanOptions struct {
	// Root is the data root ("" = data.DefaultRoot(), not written into the
	// configs).
	Root string
	// Datasets are TU names; empty: every dataset found under the root
	// (DiscoverGraphs).
	Datasets []string
	// Blocks are the methods (GraphBlocks; empty: all four).
	Blocks []string
	// Sets are overrides applied to every cell's config (key.path=value).
	Sets []string
}

// Plan is the cells of a table and the datasets it leaves out.
type Plan struct {
	Cells []Cell
	// Skipped says, one line per dataset, why a named dataset is not in the
	// table (not found under the root).
	Skipped []string
	// Root is the data root the datasets were looked up in.
	Root string
	// Images says what each dataset of an image table is (PlanImages).
	Images map[string]ImageData
}

// PlanGraphs lays out the graph table: every block on every dataset, with
// each dataset's settings (SettingsFor) and opt.Sets on top. A named
// dataset that is not under the root is skipped with a line saying so; an
// unknown block or a bad override is an error.
func PlanGraphs(opt PlanOptions, defaultRoot string) (*Plan, error) {
	blocks := opt.Blocks
	if len(blocks) == 0 {
		blocks = GraphBlocks
	}
	if err := checkBlocks(blocks); err != nil {
		return nil, err
	}
	root := opt.Root
	if root == "" {
		root = defaultRoot
	}
	p := &Plan{Root: root}
	names := opt.Datasets
	if len(names) == 0 {
		names = DiscoverGraphs(root)
		if len(names) == 0 {
			return nil, fmt.Errorf("no TU dataset under %s (expected tu/NAME/NAME_A.txt or tu_gin_format/NAME/NAME.txt[.gz]; get one with go run ./cmd/download -dataset MUTAG)", root)
		}
	}
	type found struct {
		d GraphData
		n int
	}
	var todo []found
	for _, name := range names {
		d, err := LocateGraphs(root, name)
		if err != nil {
			p.Skipped = append(p.Skipped, err.Error())
			continue
		}
		n, err := CountGraphs(root, d)
		if err != nil {
			return nil, err
		}
		todo = append(todo, found{d, n})
	}
	// Smaller datasets first: the cheap cells of the table come in early.
	slices.SortStableFunc(todo, func(a, b found) int { return a.n - b.n })
	for _, f := range todo {
		d, n, name := f.d, f.n, f.d.Name
		for _, b := range blocks {
			cfg, err := GraphConfig(b, d, n, opt.Root, opt.Sets)
			if err != nil {
				return nil, err
			}
			p.Cells = append(p.Cells, Cell{Dataset: name, Block: b, Config: cfg, Dir: filepath.Join(name, b)})
		}
	}
	if len(p.Cells) == 0 {
		return nil, fmt.Errorf("no dataset to run:\n%s", strings.Join(p.Skipped, "\n"))
	}
	return p, nil
}

// CountGraphs returns the number of graphs of a dataset without reading
// it: the lines of NAME_graph_labels.txt (TU layout) or the first line of
// the GIN file.
func CountGraphs(root string, d GraphData) (int, error) {
	p := filepath.Join(root, filepath.FromSlash(d.Path))
	if d.Source == "tu" {
		p = filepath.Join(p, d.Name+"_graph_labels.txt")
	}
	f, err := os.Open(p)
	if err != nil {
		return 0, fmt.Errorf("count graphs of %s: %w", d.Name, err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return 0, fmt.Errorf("count graphs of %s: %s: %w", d.Name, p, err)
		}
		defer z.Close()
		r = z
	}
	sc := bufio.NewScanner(r)
	if d.Source == "gin" {
		if !sc.Scan() {
			return 0, fmt.Errorf("count graphs of %s: %s: empty file (%v): expected the number of graphs on the first line", d.Name, p, sc.Err())
		}
		n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("count graphs of %s: %s line 1: %q: expected the number of graphs", d.Name, p, sc.Text())
		}
		return n, nil
	}
	n := 0
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("count graphs of %s: %s: %w", d.Name, p, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("count graphs of %s: %s: no graph label: expected one line per graph", d.Name, p)
	}
	return n, nil
}

// CellStatus is what running a cell came to.
type CellStatus struct {
	Cell
	// Results are the cell's results.json (nil when it failed).
	Results *train.Results
	// Err is why the cell has no results; the table goes on without it.
	Err error
	// Ran is true when this process trained or evaluated something of the
	// cell (false: finished earlier).
	Ran bool
	// Wall is the time this process spent on the cell.
	Wall time.Duration
	// Busy is true when another process holds the cell's lock (Err wraps
	// ErrCellBusy): it runs the cell, this one skipped it.
	Busy bool
}

// RunOptions says where a table runs and who watches.
type RunOptions struct {
	// Dir is the table's directory; cell c runs in Dir/c.Dir.
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

// RunCells runs the cells one after another in opt.Dir. A cell finished
// earlier (results.json with provenance, same config) is read, not run
// again; an interrupted one resumes from its checkpoints. A cell that fails
// is reported in its status and the others go on; a cancelled ctx stops the
// table with train.ErrInterrupted (run the same command again to continue).
//
// Many processes may run cells of one table directory at once (the tasks
// of an array job, each with its Shard of the cells, on a shared file
// system): each cell is run under its lock (lockCell, DIR/DATASET/
// BLOCK.lock), a cell another process holds is skipped (Busy), and the
// lock of a task that crashed is free again, so a resubmitted task takes
// its cells over and resumes them.
func RunCells(ctx context.Context, cells []Cell, opt RunOptions) ([]CellStatus, error) {
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			opt.Log(fmt.Sprintf(format, a...))
		}
	}
	var out []CellStatus
	for i, c := range cells {
		st := CellStatus{Cell: c}
		dir := filepath.Join(opt.Dir, c.Dir)
		start := time.Now()
		unlock, err := lockCell(dir)
		if errors.Is(err, ErrCellBusy) {
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
func runCell(ctx context.Context, c Cell, dir string, opt RunOptions, log func(string)) (*train.Results, bool, error) {
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

// ReadCells reads the cells finished so far in dir without running
// anything: a cell without results (or whose directory holds another
// config) gets an Err saying why.
func ReadCells(cells []Cell, dir string) []CellStatus {
	out := make([]CellStatus, 0, len(cells))
	for _, c := range cells {
		st := CellStatus{Cell: c}
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

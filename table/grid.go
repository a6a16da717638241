package table

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/batchsampler-go/batchsampler/cellrun"
)

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
	Cells []cellrun.Cell
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
			p.Cells = append(p.Cells, cellrun.Cell{Dataset: name, Block: b, Config: cfg, Dir: filepath.Join(name, b)})
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

// Command table runs the paper's graph table: GraphCL, DCL, HCL and MVGRL,
// each alone (Uniform), with the kNN Sampler and with BatchSampler, 5 seeds,
// on every TU dataset under the data root, with the appendix's settings for
// each dataset, and writes DIR/table.md and DIR/table.json in the paper's
// layout with the paper's numbers beside the measured ones.
//
//	go run ./cmd/table                                  # every dataset found, all four methods, in runs/table-graphs
//	go run ./cmd/table -datasets MUTAG,PROTEINS -methods graphcl,mvgrl -out runs/t
//	go run ./cmd/table -set 'seeds=[0,1]' -set train.epochs=2   # overrides for every cell
//	go run ./cmd/table -plan                            # list the cells and their settings, run nothing
//	go run ./cmd/table -parallel 2                      # two runs of a cell at once: the same results, about 30% less time on 2 cores
//	go run ./cmd/table -configs DIR                     # write every cell's config as DIR/DATASET-METHOD.yaml (for cmd/train)
//	go run ./cmd/table -assemble                        # rebuild table.md from the cells finished so far
//	go run ./cmd/table -compare results/table-graphs/table.json   # do this table's runs give the recorded results, bit for bit?
//	go run ./cmd/table -modality text                   # the paper's text table (SimCSE, DCL, HCL on the STS tasks), in runs/table-text
//	go run ./cmd/table -modality image -plan            # the image table's cells: SimCLR, DCL, HCL, MoCo v3 on every image dataset found
//	go run ./cmd/table -shard 2/8 -out /shared/t        # task 2 of an array job of 8: cells 2, 10, 18, ...; then, once all are done:
//	go run ./cmd/table -assemble -out /shared/t         # table.md and table.json from every task's cells
//	go run ./cmd/table -samplers gcbs,osgd -out runs/t  # two global batch samplers as more rows (docs/batch-composition.md)
//
// Each cell (dataset × method) is an ordinary run directory, DIR/DATASET/
// METHOD. Running the same command again continues an interrupted table:
// finished cells are read, an interrupted one resumes from its checkpoints.
// A dataset that is named but absent is skipped with a line saying so; a
// cell that fails is listed in the table and the others go on.
//
// Array jobs (docs/scale-out.md): -shard i/n runs only the cells k with
// k mod n = i and writes no table; many such processes may share one
// output directory (each cell runs under a lock, DIR/DATASET/METHOD.lock,
// and a cell another process holds is skipped; the lock of a task that
// crashed is free, so a resubmitted task takes its cells over and resumes
// them). A shard whose cell failed exits with status 1. -assemble then
// writes the table.
//
// With -modality text it runs the paper's text table instead: SimCSE,
// SimCSE + DCL and SimCSE + HCL (configs/simcse-stsb*.yaml as shipped),
// each with Uniform, the kNN Sampler and BatchSampler, 3 seeds, scored on
// SimCSE's seven STS tasks (those under the data root; the others read
// "absent"): 27 runs, about 25 minutes of compute on 2 idle cores.
//
// With -modality image it runs the paper's image table: SimCLR, SimCLR's
// objective with the DCL and HCL losses, and MoCo v3, each with Uniform,
// the kNN Sampler and BatchSampler, 3 seeds, and the untrained encoder as
// a reference row, on every image dataset under the data root (CIFAR-10 or
// CIFAR-100 binary files, STL-10, image folders such as ImageNet-100 or your
// own) and Debian's Fashion-MNIST, each with its 2-core settings
// (table.ImageSettingsFor; -plan prints them beside the paper's), scored by
// a linear probe.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/cmd/internal/cli"
	"github.com/batchsampler-go/batchsampler/cmd/internal/progress"
	"github.com/batchsampler-go/batchsampler/sampler"
	"github.com/batchsampler-go/batchsampler/table"
	"github.com/batchsampler-go/batchsampler/train"
)

func main() { cli.Exit("table", run(os.Args[1:])) }

func run(args []string) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	modality := fs.String("modality", "graph", "the `table`: graph (GraphCL, DCL, HCL, MVGRL on the TU datasets), text ("+textHelp+") or image ("+imageHelp+")")
	out := fs.String("out", "", "the table's `DIR` (one run directory per cell, table.md, table.json; default runs/table-graphs, runs/table-text or runs/table-vision)")
	root := fs.String("root", "", "data root (default $BATCHSAMPLER_DATA, ../shared/data or the user cache; see cmd/download)")
	datasets := fs.String("datasets", "", "comma-separated dataset `NAMES` (default: every one under the data root): graph: TU names; image: directories under the data root or absolute paths (fashion-mnist: also Debian's "+table.DebianFashionMNIST+")")
	methods := fs.String("methods", "", "comma-separated `methods` (default all): graph: "+strings.Join(table.GraphBlocks, ", ")+"; text: "+strings.Join(table.TextBlocks, ", ")+"; image: "+strings.Join(table.ImageBlocks, ", "))
	planOnly := fs.Bool("plan", false, "list the cells and their settings and exit")
	configs := fs.String("configs", "", "write every cell's config to `DIR`/DATASET-METHOD.yaml and exit")
	assemble := fs.Bool("assemble", false, "run nothing: assemble table.md and table.json from the cells finished so far")
	compare := fs.String("compare", "", "run nothing: compare DIR/table.json with the recorded graph table `FILE` (a table.json) run by run, the accuracy of every seed and the final false-negative ratio of each row with the same seeds, to the last bit; exit status 1 when one differs or none is in common")
	shardFlag := fs.String("shard", "", "run only task `i/n` of an array job's share of the cells (k mod n = i; e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT) and write no table: -assemble writes it once every task is done")
	extra := fs.String("samplers", "", "comma-separated global batch `samplers` added to every cell as rows after the paper's three ("+strings.Join(sampler.GlobalKinds, ", ")+"), each with its defaults and the cell's refresh interval t")
	parallel := fs.Int("parallel", 1, "train and evaluate `N` runs of a cell at once (results do not depend on it; on 2 cores, 2 uses the core a GIN step leaves idle; memory grows with it)")
	var sets cli.Strings
	fs.Var(&sets, "set", "override a value of every cell's config: key.path=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	defer cli.TuneGC()()
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: expected flags only", fs.Args())
	}
	if *parallel < 1 {
		return fmt.Errorf("-parallel %d: want at least 1 (runs at once)", *parallel)
	}
	if *out == "" {
		*out = filepath.Join("runs", defaultOut[*modality])
	}
	if *compare != "" {
		if *modality != "graph" {
			return fmt.Errorf("-compare: compares graph tables only (not -modality %s)", *modality)
		}
		return compareTables(os.Stdout, *compare, filepath.Join(*out, "table.json"))
	}
	var shard cellrun.Shard
	if *shardFlag != "" {
		s, err := cellrun.ParseShard(*shardFlag)
		if err != nil {
			return err
		}
		shard = s
		if *assemble {
			return fmt.Errorf("-shard %s with -assemble: assemble once, without -shard, when every task is done", shard)
		}
	}
	opt := table.PlanOptions{Root: *root, Sets: sets, Datasets: splitList(*datasets), Blocks: splitList(*methods)}
	plan, err := planFor(*modality, opt)
	if err != nil {
		return err
	}
	if *extra != "" {
		if err := table.AddSamplers(plan, splitList(*extra)); err != nil {
			return err
		}
	}
	if !shard.All() {
		return runShard(*modality, plan, shard, *out, *parallel, *planOnly, *configs)
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(os.Stderr, "skipping %s\n", s)
	}
	switch {
	case *planOnly && *modality == "text":
		printTextPlan(plan)
		return nil
	case *planOnly && *modality == "image":
		printImagePlan(os.Stdout, plan)
		return nil
	case *planOnly:
		printPlan(plan)
		return nil
	case *configs != "":
		return writeConfigs(plan, *configs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	logf := func(msg string) { fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), msg) }
	start := time.Now()
	ropt := cellrun.Options{Dir: *out, Log: logf, Parallel: *parallel,
		ObserverFor: func(c cellrun.Cell) train.Observer { return progress.Observer(tty, c.Dataset+"/"+c.Block+" ") }}
	var sts []cellrun.Status
	if *assemble {
		sts = cellrun.Read(plan.Cells, *out)
	} else {
		sts, err = cellrun.Run(ctx, plan.Cells, ropt)
		if err != nil {
			// Write what is finished, then say how to continue.
			t := assembleTable(*modality, *out, append(sts, cellrun.Read(plan.Cells[len(sts):], *out)...), plan, sets, time.Since(start))
			if werr := t.Write(*out); werr != nil {
				fmt.Fprintln(os.Stderr, "table:", werr)
			}
			if errors.Is(err, train.ErrInterrupted) {
				return fmt.Errorf("%w: continue with the same command", err)
			}
			return err
		}
	}
	t := assembleTable(*modality, *out, sts, plan, sets, time.Since(start))
	if err := t.Write(*out); err != nil {
		return err
	}
	fmt.Println(t.Markdown())
	fmt.Fprintf(os.Stderr, "table: %s\n", filepath.Join(*out, "table.md"))
	return nil
}

// compareTables prints how the graph table at path compares with the
// record, and fails when a run differs.
func compareTables(w io.Writer, record, path string) error {
	rec, err := table.ReadGraphTable(record)
	if err != nil {
		return fmt.Errorf("-compare: %w", err)
	}
	got, err := table.ReadGraphTable(path)
	if err != nil {
		return fmt.Errorf("-compare: %w", err)
	}
	c := table.CompareGraphTables(rec, got)
	fmt.Fprintf(w, "%s against %s: %s", path, record, c)
	if c.Runs == 0 {
		return fmt.Errorf("%s: no run in common with %s (no dataset, method, sampler and seed in both)", path, record)
	}
	if !c.Identical() {
		return fmt.Errorf("%s: %d differences from %s", path, len(c.Diffs), record)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// printPlan lists the cells with their settings.
func printPlan(p *table.Plan) {
	fmt.Printf("data root: %s\n", p.Root)
	fmt.Println("| Dataset | Method | settings | B | epochs | t | M | K | seeds |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, c := range p.Cells {
		_, paper := table.SettingsFor(c.Dataset)
		src := "paper's appendix"
		if !paper {
			src = "default (not in the paper)"
		}
		bs := c.Config.SamplerList()
		m, k, t := 0, 0, 0
		for _, sp := range bs {
			if sp.Kind == "batchsampler" {
				m, k, t = sp.M, sp.K, sp.RefreshEvery
			}
		}
		fmt.Printf("| %s | %s | %s | %d | %d | %d | %d | %d | %d |\n", c.Dataset, c.Block, src,
			c.Config.Train.BatchSize, c.Config.Train.Epochs, t, m, k, len(c.Config.Seeds))
	}
}

// writeConfigs writes every cell's config for cmd/train.
func writeConfigs(p *table.Plan, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range p.Cells {
		path := filepath.Join(dir, c.Dataset+"-"+c.Block+".yaml")
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		err = train.WriteConfig(f, &c.Config)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", path)
	}
	return nil
}

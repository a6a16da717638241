// Command train runs a contrastive-learning experiment described by a YAML
// config and writes its run directory.
//
//	go run ./cmd/train                                  # embedded demo on generated graphs
//	go run ./cmd/train -config configs/graphcl-mutag.yaml -set seeds=[0,1] -out runs/mutag
//	go run ./cmd/train -resume runs/mutag               # continue an interrupted run
//	go run ./cmd/train -evaluate runs/mutag [-set eval.folds=5]  # score the trained runs again
//	go run ./cmd/train -embed runs/mutag/runs/uniform-seed0 -o mutag.npy [-set data.*=...] [-split train] [-repr encoder]
//
// -evaluate DIR restores every run of DIR from its checkpoint and scores it
// with DIR/config.yaml's protocol (or with -set eval.* overrides); it prints
// the results table and writes config.yaml, results.json and results.md to
// DIR/evaluations/<time>/ (or -out), never touching DIR's own files.
//
// -embed DIR/runs/<id> loads the run's encoder and writes the embeddings of
// a dataset — the run's, or another of the same modality given by -set
// data.* overrides (data.root, data.name, data.path, ...) — as an N×d
// float32 NumPy array to -o FILE.npy, and the labels, when the split has
// any, to FILE_labels.npy (int64).
//
// A config with a sweep: section (package sweep) is a sweep: one cell per
// point plus the baseline's, each an ordinary run directory under -out
// (default runs/<name>, so that the same command continues an interrupted
// sweep), then -out/sweep.md and sweep.json:
//
//	go run ./cmd/train -config configs/sweep-t-imdb-b.yaml -plan   # the cells, their runs and state; nothing runs
//	go run ./cmd/train -config configs/sweep-t-imdb-b.yaml [-set seeds=[0,1]] [-out DIR]
//	go run ./cmd/train -config configs/sweep-t-imdb-b.yaml -assemble  # sweep.md from the cells finished so far
//	go run ./cmd/train -resume DIR                      # DIR/sweep.yaml: the same sweep again
//
// -rerun runs again the cells whose directory holds another config (moved
// aside to CELL.replaced-TIME); without it they stop the sweep. -root DIR
// is -set data.root=DIR. -shard i/n runs task i of an array job of n over
// the sweep's cells (k mod n = i) and writes no sweep.md; the tasks may
// share -out (each cell runs under a lock; docs/scale-out.md), and
// -assemble writes sweep.md once they are done.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/batchsampler-go/batchsampler/cellrun"
	"github.com/batchsampler-go/batchsampler/cmd/internal/cli"
	"github.com/batchsampler-go/batchsampler/cmd/internal/progress"
	"github.com/batchsampler-go/batchsampler/sweep"
	"github.com/batchsampler-go/batchsampler/train"
)

//go:embed default.yaml
var defaultConfig []byte

// stderr is where the command's own lines go (a variable for tests).
var stderr io.Writer = os.Stderr

func main() { cli.Exit("train", run(os.Args[1:])) }

// options are the command's flags.
type options struct {
	config, out, resume, plots, evaluate, embed string
	split, repr, npyOut                         string
	cpuProfile, memProfile, root, exportTU      string
	shard                                       string
	printConfig, plan, rerun, assemble          bool
	parallel                                    int
	sets                                        cli.Strings
	args                                        []string // the arguments after the flags
	// given lists the flags on the command line, in lexical order; a mode
	// flag given an empty value is left out (it selects no mode).
	given []string
}

// newFlagSet returns the command's flags, stored into o.
func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.StringVar(&o.config, "config", "", "YAML config (default: the embedded demo on generated graphs)")
	fs.StringVar(&o.out, "out", "", "run directory (default runs/<name>-<time>)")
	fs.StringVar(&o.resume, "resume", "", "continue the run in this directory")
	fs.BoolVar(&o.printConfig, "print-config", false, "print the resolved config and exit")
	fs.StringVar(&o.plots, "plots", "", "redraw DIR/plots/*.png from DIR/metrics.jsonl of a finished run directory and exit")
	fs.StringVar(&o.evaluate, "evaluate", "", "score the trained runs of run directory `DIR` again from their checkpoints (-set eval.* to change the protocol); writes DIR/evaluations/<time>/ or -out")
	fs.StringVar(&o.embed, "embed", "", "write the embeddings of the encoder trained by run `DIR/runs/<id>` to -o (-set data.* to embed another dataset)")
	fs.StringVar(&o.split, "split", "train", "with -embed: the `split` to embed (train; test for images; sts-dev.1, ... for text)")
	fs.StringVar(&o.repr, "repr", "encoder", "with -embed: the `representation`: encoder, projection (bag for text)")
	fs.StringVar(&o.npyOut, "o", "", "with -embed: the output `FILE.npy` (N×d float32; labels to FILE_labels.npy)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole command to `FILE` (go tool pprof)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile (live and allocated memory) at the end of the command to `FILE`")
	fs.StringVar(&o.root, "root", "", "data root: the same as -set data.root=`DIR`")
	fs.BoolVar(&o.plan, "plan", false, "sweep: list the cells, their runs and what is finished in -out, and exit")
	fs.StringVar(&o.exportTU, "export-tu", "", "write the config's graph dataset (as a run loads it: tu, gin or synthetic) in the TU format to `DIR`/NAME/ and exit")
	fs.BoolVar(&o.rerun, "rerun", false, "sweep: run again the cells whose directory holds another config (moved aside)")
	fs.BoolVar(&o.assemble, "assemble", false, "sweep: run nothing; write sweep.md and sweep.json from the cells finished so far")
	fs.StringVar(&o.shard, "shard", "", "sweep: run only task `i/n` of an array job (the cells k with k mod n = i, e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT) and write no sweep.md (-assemble writes it once every task is done)")
	fs.IntVar(&o.parallel, "parallel", 1, "train and evaluate `N` runs at once (results do not depend on it; on 2 cores, 2 uses the core a GIN step leaves idle; memory grows with it)")
	fs.Var(&o.sets, "set", "override a config value: key.path=value (repeatable; value in YAML syntax)")
	return fs
}

// parseFlags parses the command line; -h gives nil options and no error
// (the usage was printed).
func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := newFlagSet(o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil // -h: the usage was printed; not an error
		}
		return nil, err
	}
	o.args = fs.Args()
	fs.Visit(func(f *flag.Flag) {
		if m := modeOf(f.Name); m != nil && f.Value.String() == "" {
			return
		}
		o.given = append(o.given, f.Name)
	})
	return o, nil
}

// run runs the command on the arguments args (without the program name).
func run(args []string) (err error) {
	o, err := parseFlags(args)
	if o == nil {
		return err
	}
	defer cli.TuneGC()()
	stopProfiles, err := startProfiles(o.cpuProfile, o.memProfile)
	if err != nil {
		return err
	}
	defer func() {
		if perr := stopProfiles(); perr != nil && err == nil {
			err = perr
		}
	}()
	if len(o.args) > 0 {
		return fmt.Errorf("unexpected arguments %q: expected flags only", o.args)
	}
	if o.parallel < 1 {
		return fmt.Errorf("-parallel %d: want at least 1 (runs at once)", o.parallel)
	}
	if o.root != "" {
		o.sets = append(cli.Strings{"data.root=" + o.root}, o.sets...)
	}
	m := selectMode(o.given)
	if err := m.check(o.given); err != nil {
		return err
	}
	return m.run(o)
}

// A mode is one of the things the command does: the flag that selects it,
// the other flags that go with it and the function that does it.
type mode struct {
	flag  string   // the flag selecting the mode; "" for a training run
	name  string   // the mode in error messages
	usage string   // the mode and its argument in error messages
	flags []string // the flags that go with it, besides commonFlags
	run   func(o *options) error
}

// commonFlags go with every mode.
var commonFlags = []string{"cpuprofile", "memprofile"}

// modes are the command's modes, the first given on the command line
// taking precedence in the error messages; the last, a training run (or a
// sweep) of -config or of the embedded default, is selected by no flag.
var modes = []mode{
	{flag: "evaluate", name: "-evaluate", usage: "-evaluate DIR", flags: []string{"set", "root", "out"},
		run: func(o *options) error { return runEvaluate(o.evaluate, o.sets, o.out) }},
	{flag: "embed", name: "-embed", usage: "-embed DIR/runs/<id>", flags: []string{"o", "split", "repr", "set", "root"},
		run: func(o *options) error { return runEmbed(o.embed, o.sets, o.split, o.repr, o.npyOut) }},
	{flag: "plots", name: "-plots", usage: "-plots DIR", run: runPlots},
	{flag: "export-tu", name: "-export-tu", usage: "-export-tu DIR", flags: []string{"config", "set", "root"}, run: runExportTU},
	{flag: "resume", name: "-resume", usage: "-resume DIR (which takes the config saved in DIR)",
		flags: []string{"print-config", "parallel", "plan", "rerun", "assemble", "shard"}, run: runResume},
	{name: "a training run", usage: "a training run (-config FILE or the embedded default)",
		flags: []string{"config", "set", "root", "out", "print-config", "parallel", "plan", "rerun", "assemble", "shard"}, run: runConfig},
}

// modeOf returns the mode the flag name selects, or nil.
func modeOf(name string) *mode {
	for i := range modes {
		if modes[i].flag != "" && modes[i].flag == name {
			return &modes[i]
		}
	}
	return nil
}

// selectMode returns the mode of the given flags: the first of modes whose
// flag is given, or a training run.
func selectMode(given []string) *mode {
	for i := range modes {
		if slices.Contains(given, modes[i].flag) {
			return &modes[i]
		}
	}
	return &modes[len(modes)-1]
}

// check returns an error naming the first of the given flags that does not
// go with m, what goes with m and where that flag goes.
func (m *mode) check(given []string) error {
	for _, f := range given {
		if f == m.flag || slices.Contains(m.flags, f) || slices.Contains(commonFlags, f) {
			continue
		}
		msg := fmt.Sprintf("%s goes with %s, not -%s", m.usage, flagList(m.flags, "no other flag"), f)
		if modeOf(f) != nil {
			return fmt.Errorf("%s: they are two modes, give one or the other, not both", msg)
		}
		var others []string
		for _, o := range modes {
			if slices.Contains(o.flags, f) {
				others = append(others, o.name)
			}
		}
		return fmt.Errorf("%s; -%s goes with %s", msg, f, orList(others))
	}
	return nil
}

// flagList is "-a, -b or -c" for the flags a, b, c, or none when there are
// none.
func flagList(flags []string, none string) string {
	if len(flags) == 0 {
		return none
	}
	dashed := make([]string, len(flags))
	for i, f := range flags {
		dashed[i] = "-" + f
	}
	return orList(dashed)
}

// orList is "a, b or c".
func orList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// runPlots redraws the plots of the run directory -plots names.
func runPlots(o *options) error {
	if err := train.WritePlots(o.plots); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "plots: %s\n", filepath.Join(o.plots, "plots"))
	return nil
}

// runExportTU writes the graph dataset of -config (or of the embedded
// default) in the TU format under -export-tu.
func runExportTU(o *options) error {
	cfg, err := loadConfig(o.config, o.sets)
	if err != nil {
		return err
	}
	d, err := train.ExportTU(cfg, o.exportTU)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "TU dataset: %s\n", d)
	return nil
}

// loadConfig reads the config at path with the overrides sets, or the
// embedded default when path is "".
func loadConfig(path string, sets []string) (train.Config, error) {
	if path != "" {
		return train.LoadConfig(path, sets)
	}
	cfg, err := train.ParseConfig(defaultConfig, sets)
	if err != nil {
		return cfg, fmt.Errorf("embedded default config: %w", err)
	}
	return cfg, nil
}

// sweepOptions returns the flags that apply to a sweep only.
func (o *options) sweepOptions() (sweepFlags, error) {
	sw := sweepFlags{plan: o.plan, rerun: o.rerun, assemble: o.assemble, parallel: o.parallel}
	if o.shard != "" {
		var err error
		if sw.shard, err = cellrun.ParseShard(o.shard); err != nil {
			return sw, err
		}
		if sw.assemble {
			return sw, fmt.Errorf("-shard %s with -assemble: assemble once, without -shard, when every task is done", sw.shard)
		}
	}
	return sw, nil
}

// runResume continues the run or the sweep in the directory -resume names,
// or prints its config.
func runResume(o *options) error {
	sw, err := o.sweepOptions()
	if err != nil {
		return err
	}
	dir := o.resume
	if isSweepDir(dir) {
		path := filepath.Join(dir, "sweep.yaml")
		if o.printConfig {
			cfg, err := train.LoadConfig(path, nil)
			if err != nil {
				return err
			}
			return train.WriteConfig(os.Stdout, &cfg)
		}
		return runSweep(path, nil, dir, sw)
	}
	cfg, err := train.LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	if err != nil {
		return err
	}
	return runOne(o, cfg, dir, sw)
}

// runConfig runs the config of -config (a run, or a sweep when it has a
// sweep: section) or the embedded default, or prints it.
func runConfig(o *options) error {
	sw, err := o.sweepOptions()
	if err != nil {
		return err
	}
	cfg, err := loadConfig(o.config, o.sets)
	if err != nil {
		return err
	}
	if o.config != "" && cfg.Sweep != nil {
		if o.printConfig {
			return train.WriteConfig(os.Stdout, &cfg)
		}
		dir := o.out
		if dir == "" {
			dir = filepath.Join("runs", cfg.Name)
		}
		return runSweep(o.config, o.sets, dir, sw)
	}
	return runOne(o, cfg, o.out, sw)
}

// runOne trains and evaluates the runs of cfg into dir (default
// runs/<name>-<time>), continuing them with -resume, or prints cfg with
// -print-config. The sweep flags sw are refused: cfg has no sweep.
func runOne(o *options, cfg train.Config, dir string, sw sweepFlags) error {
	if sw.plan || sw.rerun || sw.assemble || !sw.shard.All() {
		return errors.New("-plan, -rerun, -assemble and -shard go with a config that has a sweep: section (-shard of a table: cmd/table -shard)")
	}
	if o.printConfig {
		return train.WriteConfig(os.Stdout, &cfg)
	}
	if dir == "" {
		name := cfg.Name
		if name == "" {
			name = "run"
		}
		dir = filepath.Join("runs", name+"-"+time.Now().Format("20060102-150405"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hooks := progress.Observer(term.IsTerminal(int(os.Stderr.Fd())), "")
	res, err := train.Run(ctx, cfg, train.Options{OutDir: dir, Resume: o.resume != "", Observer: hooks, Parallel: o.parallel,
		DirReady: func(dir string) { fmt.Fprintf(stderr, "run directory: %s\n", dir) }})
	if errors.Is(err, train.ErrInterrupted) {
		return fmt.Errorf("%w: continue with: go run ./cmd/train -resume %s", err, dir)
	}
	if err != nil {
		return err
	}
	fmt.Println(res.Markdown())
	fmt.Fprintf(stderr, "results: %s\n", filepath.Join(dir, "results.md"))
	return nil
}

// runEvaluate scores the trained runs of dir again (train.Evaluate) and
// writes the evaluation to out (default dir/evaluations/<time>).
func runEvaluate(dir string, sets []string, out string) error {
	if out == "" {
		out = filepath.Join(dir, "evaluations", time.Now().Format("20060102-150405"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	obs := progress.Observer(term.IsTerminal(int(os.Stderr.Fd())), "")
	res, err := train.Evaluate(ctx, dir, sets, train.Options{OutDir: out, Observer: obs})
	if err != nil {
		return err
	}
	fmt.Println(res.Markdown())
	fmt.Fprintf(stderr, "evaluation: %s\n", filepath.Join(out, "results.md"))
	return nil
}

// runEmbed writes the embeddings of a run's encoder (train.Embed) to out.
func runEmbed(run string, sets []string, split, repr, out string) error {
	if out == "" {
		return errors.New("-embed needs -o FILE.npy, the file to write")
	}
	if !strings.HasSuffix(out, ".npy") {
		return fmt.Errorf("-o %s: expected a .npy file name", out)
	}
	e, err := train.Embed(run, train.EmbedOptions{Sets: sets, Split: split, Repr: repr})
	if err != nil {
		return err
	}
	written, err := e.WriteNPY(out)
	if err != nil {
		return err
	}
	labels := "; no labels"
	if len(written) > 1 {
		labels = "; labels: " + written[1]
	}
	fmt.Fprintf(stderr, "wrote %s: %d×%d float32, the %s embeddings of %s (split %s) by run %s at step %d%s\n",
		written[0], e.N, e.D, repr, e.Dataset, split, e.Run, e.Step, labels)
	return nil
}

// startProfiles starts a CPU profile into cpuFile and arranges a heap
// profile into memFile (either may be ""); stop ends them and reports a
// failure to write either file.
func startProfiles(cpuFile, memFile string) (stop func() error, err error) {
	var cpu *os.File
	if cpuFile != "" {
		if cpu, err = os.Create(cpuFile); err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("-cpuprofile %s: %w", cpuFile, err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				errs = append(errs, fmt.Errorf("-cpuprofile %s: %w", cpuFile, err))
			}
		}
		if memFile != "" {
			runtime.GC() // the live heap as of the end, allocations since the start
			if err := writeProfile(memFile, pprof.Lookup("allocs").WriteTo); err != nil {
				errs = append(errs, fmt.Errorf("-memprofile: %w", err))
			}
		}
		return errors.Join(errs...)
	}, nil
}

// writeProfile creates path and fills it with write.
func writeProfile(path string, write func(w io.Writer, debug int) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// sweepFlags are the flags that apply to a sweep only.
type sweepFlags struct {
	plan, rerun, assemble bool
	parallel              int
	shard                 cellrun.Shard
}

// isSweepDir reports whether dir is a sweep's directory (sweep.yaml, and
// no config.yaml of a run).
func isSweepDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "sweep.yaml"))
	return err == nil
}

// runSweep expands the sweep config at path (package sweep) and prints its
// plan, assembles what is finished in dir, or runs it there.
func runSweep(path string, sets []string, dir string, f sweepFlags) error {
	plan, err := sweep.Load(path, sets)
	if err != nil {
		return err
	}
	switch {
	case f.plan:
		sweep.PrintPlan(os.Stdout, plan, dir)
		return nil
	case f.assemble:
		if _, err := os.Stat(dir); err != nil {
			return fmt.Errorf("-assemble: %w (run the sweep first, or give its -out)", err)
		}
		r := sweep.Read(plan, dir)
		if err := r.Write(dir); err != nil {
			return err
		}
		fmt.Println(r.Markdown())
		fmt.Fprintf(stderr, "sweep: %s\n", filepath.Join(dir, "sweep.md"))
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	fmt.Fprintf(stderr, "sweep directory: %s (%d cells, %d runs)\n", dir, len(plan.Cells()), plan.Runs())
	ropt := sweep.RunOptions{Dir: dir, Rerun: f.rerun, Parallel: f.parallel,
		Log:         func(msg string) { fmt.Fprintf(stderr, "%s %s\n", time.Now().Format("15:04:05"), msg) },
		ObserverFor: func(c cellrun.Cell) train.Observer { return progress.Observer(tty, c.Block+" ") },
	}
	if !f.shard.All() {
		sts, err := sweep.RunShard(ctx, plan, f.shard, ropt)
		return shardSummary(f.shard, sts, err, dir)
	}
	r, err := sweep.Run(ctx, plan, ropt)
	if errors.Is(err, train.ErrInterrupted) {
		return fmt.Errorf("%w: continue with the same command (or go run ./cmd/train -resume %s)", err, dir)
	}
	if err != nil {
		return err
	}
	fmt.Println(r.Markdown())
	fmt.Fprintf(stderr, "sweep: %s\n", filepath.Join(dir, "sweep.md"))
	return nil
}

// shardSummary says what a sweep's shard did: an error when a cell of
// its own failed (not one another task holds), so the scheduler marks the
// task failed.
func shardSummary(shard cellrun.Shard, sts []cellrun.Status, err error, dir string) error {
	if errors.Is(err, train.ErrInterrupted) {
		return fmt.Errorf("shard %s: %w: continue by running the task again", shard, err)
	}
	if err != nil {
		return fmt.Errorf("shard %s: %w", shard, err)
	}
	var busy, failed []string
	for _, st := range sts {
		switch {
		case st.Busy:
			busy = append(busy, st.Dir)
		case st.Err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", st.Dir, st.Err))
		}
	}
	fmt.Fprintf(os.Stderr, "shard %s: %d cells, %d failed, %d run by another task %v; once every task is done: go run ./cmd/train -resume %s -assemble\n",
		shard, len(sts), len(failed), len(busy), busy, dir)
	if len(failed) > 0 {
		return fmt.Errorf("shard %s: %d cell(s) failed:\n%s", shard, len(failed), strings.Join(failed, "\n"))
	}
	return nil
}

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
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/batchsampler-go/batchsampler/train"
)

//go:embed default.yaml
var defaultConfig []byte

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		if errors.Is(err, train.ErrInterrupted) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "YAML config (default: the embedded demo on generated graphs)")
	out := fs.String("out", "", "run directory (default runs/<name>-<time>)")
	resume := fs.String("resume", "", "continue the run in this directory")
	printCfg := fs.Bool("print-config", false, "print the resolved config and exit")
	plots := fs.String("plots", "", "redraw DIR/plots/*.png from DIR/metrics.jsonl of a finished run directory and exit")
	evaluate := fs.String("evaluate", "", "score the trained runs of run directory `DIR` again from their checkpoints (-set eval.* to change the protocol); writes DIR/evaluations/<time>/ or -out")
	embed := fs.String("embed", "", "write the embeddings of the encoder trained by run `DIR/runs/<id>` to -o (-set data.* to embed another dataset)")
	split := fs.String("split", "train", "with -embed: the `split` to embed (train; test for images; sts-dev.1, ... for text)")
	repr := fs.String("repr", "encoder", "with -embed: the `representation`: encoder, projection (bag for text)")
	npyOut := fs.String("o", "", "with -embed: the output `FILE.npy` (N×d float32; labels to FILE_labels.npy)")
	var sets setFlags
	fs.Var(&sets, "set", "override a config value: key.path=value (repeatable; value in YAML syntax)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage was printed; not an error
		}
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: expected flags only", fs.Args())
	}
	for _, name := range []string{"split", "repr", "o"} {
		if given[name] && *embed == "" {
			return fmt.Errorf("-%s goes with -embed", name)
		}
	}
	if *evaluate != "" || *embed != "" {
		for _, name := range []string{"config", "resume", "plots", "print-config"} {
			if given[name] {
				return fmt.Errorf("-%s does not go with -evaluate or -embed: they read the run directory's config.yaml", name)
			}
		}
		if *evaluate != "" && *embed != "" {
			return errors.New("give -evaluate or -embed, not both")
		}
	}
	if *evaluate != "" {
		return runEvaluate(*evaluate, sets, *out)
	}
	if *embed != "" {
		if given["out"] {
			return errors.New("-embed writes to -o FILE.npy, not -out")
		}
		return runEmbed(*embed, sets, *split, *repr, *npyOut)
	}
	if *plots != "" {
		if err := train.WritePlots(*plots); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "plots: %s\n", filepath.Join(*plots, "plots"))
		return nil
	}
	var (
		cfg train.Config
		err error
		dir = *out
	)
	switch {
	case *resume != "":
		if *cfgPath != "" || len(sets) > 0 {
			return errors.New("-resume takes the config saved in the run directory; do not combine it with -config or -set")
		}
		dir = *resume
		cfg, err = train.LoadConfig(filepath.Join(dir, "config.yaml"), nil)
	case *cfgPath != "":
		cfg, err = train.LoadConfig(*cfgPath, sets)
	default:
		cfg, err = train.ParseConfig(defaultConfig, sets)
		if err != nil {
			err = fmt.Errorf("embedded default config: %w", err)
		}
	}
	if err != nil {
		return err
	}
	if *printCfg {
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
	hooks := progressHooks(term.IsTerminal(int(os.Stderr.Fd())))
	fmt.Fprintf(os.Stderr, "run directory: %s\n", dir)
	res, err := train.Run(ctx, cfg, train.Options{OutDir: dir, Resume: *resume != "", Observer: hooks})
	if errors.Is(err, train.ErrInterrupted) {
		return fmt.Errorf("%w: continue with: go run ./cmd/train -resume %s", err, dir)
	}
	if err != nil {
		return err
	}
	fmt.Println(res.Markdown())
	fmt.Fprintf(os.Stderr, "results: %s\n", filepath.Join(dir, "results.md"))
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
	obs := progressHooks(term.IsTerminal(int(os.Stderr.Fd())))
	res, err := train.Evaluate(ctx, dir, sets, train.Options{OutDir: out, Observer: obs})
	if err != nil {
		return err
	}
	fmt.Println(res.Markdown())
	fmt.Fprintf(os.Stderr, "evaluation: %s\n", filepath.Join(out, "results.md"))
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
	fmt.Fprintf(os.Stderr, "wrote %s: %d×%d float32, the %s embeddings of %s (split %s) by run %s at step %d%s\n",
		written[0], e.N, e.D, repr, e.Dataset, split, e.Run, e.Step, labels)
	return nil
}

// progressHooks shows a progress bar on a terminal and plain log lines
// otherwise: one per epoch, and during an evaluation one per tenth done, at
// most one per evalLogEvery.
func progressHooks(tty bool) train.Observer {
	logf := func(msg string) { fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), msg) }
	var (
		bar      *progressbar.ProgressBar // training steps
		evalBar  *progressbar.ProgressBar // the current phase of an evaluation (terminal)
		perEpoch int
		// The current evaluation phase: its total, last count, last tenth
		// logged and when.
		evalTotal, evalDone, evalTenth int
		evalLogged                     time.Duration
	)
	// newBar makes a bar; predict shows the bar's own estimate of the time
	// left.
	newBar := func(total int, desc string, predict bool) *progressbar.ProgressBar {
		return progressbar.NewOptions(total,
			progressbar.OptionSetWriter(os.Stderr),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(predict),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())
	}
	// endEval removes the evaluation's bar (the training bar redraws on its
	// next step).
	endEval := func() {
		if evalBar != nil {
			evalBar.Clear()
			evalBar = nil
		}
		evalTotal, evalDone, evalTenth, evalLogged = 0, 0, 0, 0
	}
	h := train.Observer{Log: func(msg string) {
		if evalBar != nil {
			evalBar.Clear()
		}
		if bar != nil {
			bar.Clear()
		}
		logf(msg)
	}}
	h.RunStart = func(run string, start, total int) {
		endEval()
		if total == 0 { // train.epochs: 0, nothing to show
			bar = nil
			return
		}
		if tty {
			bar = newBar(total, run, true)
			_ = bar.Set(start)
		} else if start < total {
			logf(fmt.Sprintf("%s: steps %d..%d", run, start+1, total))
		}
		perEpoch = 0
	}
	h.Step = func(s train.StepInfo) {
		endEval()
		where := fmt.Sprintf("run %d/%d %s", s.RunIndex, s.Runs, s.Run)
		clock := fmt.Sprintf("%s so far, ~%s left", s.SoFar.Round(time.Second), s.Left.Round(time.Second))
		if bar != nil {
			bar.Describe(fmt.Sprintf("%s epoch %d loss %.4f (%s)", where, s.Epoch, s.Loss, clock))
			_ = bar.Set(s.Step)
			return
		}
		if perEpoch == 0 && s.Epoch > 1 {
			perEpoch = s.Step - 1
		}
		if s.Step == s.TotalSteps || (perEpoch > 0 && s.Step%perEpoch == 0) || s.Step == 1 {
			logf(fmt.Sprintf("%s: step %d/%d epoch %d loss %.4f (%.1fs; experiment %s)", where, s.Step, s.TotalSteps, s.Epoch, s.Loss, s.Elapsed.Seconds(), clock))
		}
	}
	h.Eval = func(run string, done, total int, elapsed time.Duration) {
		if total <= 0 {
			return
		}
		if total != evalTotal || done < evalDone { // a new phase
			endEval()
			evalTotal = total
		}
		evalDone = done
		left := ""
		if done > 0 && done < total {
			left = fmt.Sprintf(", ~%s left", evalTimeLeft(done, total, elapsed))
		}
		if tty {
			if evalBar == nil {
				if bar != nil {
					bar.Clear()
				}
				// The bar's own estimate would start at the first unit's end:
				// the description shows the run's estimate instead.
				evalBar = newBar(total, run+" evaluating", false)
			}
			_ = evalBar.Set(done)
			evalBar.Describe(run + " evaluating" + left)
			return
		}
		if tenth := done * 10 / total; tenth > evalTenth && done < total && elapsed-evalLogged >= evalLogEvery {
			evalTenth, evalLogged = tenth, elapsed
			logf(fmt.Sprintf("%s: evaluating, %d%% (%d/%d)%s", run, done*100/total, done, total, left))
		}
	}
	h.RunEnd = func(string) {
		endEval()
		if bar != nil {
			bar.Finish()
			bar = nil
		}
	}
	return h
}

// evalLogEvery is the least time between two plain log lines of an
// evaluation's progress (a short evaluation logs none).
const evalLogEvery = 5 * time.Second

// evalTimeLeft extrapolates the time left of an evaluation from the time
// its first done units took, rounded for display (1m20s, 45s, 3.2s).
func evalTimeLeft(done, total int, elapsed time.Duration) time.Duration {
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	if left >= 10*time.Second {
		return left.Round(time.Second)
	}
	return left.Round(100 * time.Millisecond)
}

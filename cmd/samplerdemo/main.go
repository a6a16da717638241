// Command samplerdemo draws the teaching pictures of BatchSampler: a labelled
// 2-D point set on a ring, the proximity graph for three values of M, one
// batch of Uniform, the kNN Sampler and BatchSampler, BatchSampler's walks
// for several restart probabilities α, and a summary.md with the measured
// false-negative ratios. See package internal/viz.
//
//	go run ./cmd/samplerdemo [-config configs/demo-sampler.yaml] [-out DIR]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/viz"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "samplerdemo:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("samplerdemo", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "YAML configuration (empty: the built-in default, the same as configs/demo-sampler.yaml)")
	out := fs.String("out", "", "output directory (default: the config's out, runs/demo-sampler)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage was printed; not an error
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg := viz.DefaultConfig()
	if *cfgPath != "" {
		var err error
		if cfg, err = viz.LoadConfig(*cfgPath); err != nil {
			return err
		}
	}
	if *out != "" {
		cfg.Out = *out
	}
	res, err := viz.Run(cfg, cfg.Out)
	if err != nil {
		return err
	}
	for _, f := range res.Files {
		fmt.Fprintln(stdout, filepath.Join(res.Dir, f))
	}
	return nil
}

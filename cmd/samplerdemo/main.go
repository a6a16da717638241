// Command samplerdemo teaches what BatchSampler does, in two ways.
//
// The interactive page (see docs/teaching-demo.md): the project's sampler
// compiled to WebAssembly, with controls for the sampler, M, K, B, α, the
// walk and the seed, the walk stepped one node at a time, the batch's
// false-negative and hard-negative ratios, a scatter of every setting tried,
// cosine histograms and a train mode. -serve builds it and serves it;
// -export writes it as a folder that works from any static host or file://.
// Both build the WebAssembly with the Go toolchain from the checkout they
// run in (package cmd/samplerdemo/internal/site says why).
//
//	go run ./cmd/samplerdemo -serve localhost:8080
//	go run ./cmd/samplerdemo -export DIR
//
// The PNG pictures for print (package cmd/samplerdemo/internal/viz): a
// labelled point set on a ring, the proximity graph for three values of M,
// one batch of Uniform, the kNN Sampler and BatchSampler, BatchSampler's
// walks for several α, and a summary.md with the measured false-negative
// ratios.
//
//	go run ./cmd/samplerdemo [-config configs/demo-sampler.yaml] [-out DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/site"
	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/viz"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "samplerdemo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("samplerdemo", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "PNG mode: YAML configuration (empty: the built-in default, the same as configs/demo-sampler.yaml)")
	out := fs.String("out", "", "PNG mode: output directory (default: the config's out, runs/demo-sampler)")
	serve := fs.String("serve", "", "serve the interactive page at `ADDR` (host:port, e.g. localhost:8080; port 0 picks one) until interrupted")
	export := fs.String("export", "", "write the interactive page into `DIR`, a folder that works from any static host or file://")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage was printed; not an error
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *serve != "" || *export != "" {
		if *cfgPath != "" || *out != "" {
			return errors.New("-config and -out are for the PNG pictures; the page (-serve, -export) takes neither")
		}
		return page(ctx, *serve, *export, stdout)
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

// page exports the page into dir (a temporary folder when dir is "") and,
// with addr, serves that folder until ctx ends.
func page(ctx context.Context, addr, dir string, stdout io.Writer) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	mod, err := site.ModuleDir(cwd)
	if err != nil {
		return err
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "samplerdemo-page-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	info, err := site.Export(ctx, mod, dir)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(dir)
	fmt.Fprintf(stdout, "wrote the page into %s (WebAssembly %.1f MB, built with %s in %.1f s)\n", abs, float64(info.WasmBytes)/1e6, info.GoVersion, info.BuildSecs)
	if addr == "" {
		fmt.Fprintf(stdout, "open file://%s/index.html, or put the folder on any static web server\n", filepath.ToSlash(abs))
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("-serve %s: %w", addr, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "serving the teaching page at http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("-serve %s: %w", addr, err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}

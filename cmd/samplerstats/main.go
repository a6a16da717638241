// Command samplerstats compares the false-negative ratio and in-batch
// similarity of Uniform, BatchSampler (over a grid of M and α) and the kNN
// Sampler on a labelled Gaussian mixture, and prints a Markdown table.
//
// The paper's claim to check: Uniform ≈ 1/C < BatchSampler < kNN, with
// BatchSampler's false-negative ratio rising with M and with α.
//
//	go run ./cmd/samplerstats -n 10000 -c 10 -d 32 -b 128 -k 20
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/batchsampler-go/batchsampler/sampler"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "samplerstats:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("samplerstats", flag.ContinueOnError)
	n := fs.Int("n", 10000, "number of points N")
	c := fs.Int("c", 10, "number of classes C")
	d := fs.Int("d", 32, "dimension d")
	between := fs.Float64("between", 1, "standard deviation of the class centres")
	within := fs.Float64("within", 1.5, "standard deviation of the points around their centre")
	b := fs.Int("b", 128, "batch size B")
	k := fs.Int("k", 20, "neighbours kept K")
	ms := fs.String("m", "K,100,500,1000,N", "candidate-set sizes M (K and N allowed)")
	alphas := fs.String("alpha", "0,0.2,0.5,1", "restart probabilities α")
	batches := fs.Int("batches", 400, "batches measured per sampler")
	walk := fs.String("walk", "rwr", "walk: rwr, rw, bfs or dfs")
	sharing := fs.String("sharing", "block", "candidate sharing: block or node")
	seed := fs.Uint64("seed", 1, "seed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil // -h: the usage was printed; not an error
		}
		return err
	}
	if err := checkFlags(flags{n: *n, c: *c, d: *d, b: *b, k: *k, batches: *batches, between: *between, within: *within, walk: *walk, sharing: *sharing}); err != nil {
		return err
	}
	cfg := sampler.CompareConfig{B: *b, K: *k, Batches: *batches, Seed: *seed,
		Config: sampler.Config{Walk: *walk, CandidateSharing: *sharing}}
	for _, f := range strings.Split(*ms, ",") {
		switch f = strings.TrimSpace(f); f {
		case "K":
			cfg.Ms = append(cfg.Ms, *k)
		case "N":
			cfg.Ms = append(cfg.Ms, *n)
		default:
			m, err := strconv.Atoi(f)
			if err != nil {
				return fmt.Errorf("-m: %q is not an integer, K or N", f)
			}
			if m < *k {
				return fmt.Errorf("-m: M = %d is below -k %d: the K neighbours kept are chosen among the M candidates drawn (M ≥ K; K and N are allowed as values)", m, *k)
			}
			cfg.Ms = append(cfg.Ms, m)
		}
	}
	for _, f := range strings.Split(*alphas, ",") {
		a, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("-alpha: %q is not a number", f)
		}
		if !(a >= 0 && a <= 1) {
			return fmt.Errorf("-alpha: %v is not a restart probability in [0, 1]", a)
		}
		cfg.Alphas = append(cfg.Alphas, a)
	}
	e, labels, err := sampler.GaussianMixture(sampler.MixtureConfig{N: *n, C: *c, D: *d, Between: *between, Within: *within}, *seed)
	if err != nil {
		return err
	}
	t0 := time.Now()
	rows, err := sampler.CompareSamplers(e, labels, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("Gaussian mixture N=%d C=%d d=%d (centres σ=%v, points σ=%v); B=%d K=%d walk=%s sharing=%s; %d batches per sampler; seed %d; 1/C = %.4f\n\n",
		*n, *c, *d, *between, *within, *b, *k, *walk, *sharing, *batches, *seed, 1/float64(*c))
	fmt.Print(sampler.MarkdownTable(rows))
	fmt.Printf("\n(%.1fs)\n", time.Since(t0).Seconds())
	return nil
}

// flags are the numeric and named flags checkFlags checks.
type flags struct {
	n, c, d, b, k, batches int
	between, within        float64
	walk, sharing          string
}

// checkFlags refuses a flag value the comparison cannot run with, naming
// the flag as typed.
func checkFlags(f flags) error {
	switch {
	case f.n < 2:
		return fmt.Errorf("-n %d: want at least 2 points", f.n)
	case f.c < 1:
		return fmt.Errorf("-c %d: want at least 1 class", f.c)
	case f.d < 1:
		return fmt.Errorf("-d %d: want a dimension of at least 1", f.d)
	case f.b < 2 || f.b > f.n:
		return fmt.Errorf("-b %d: want a batch size from 2 (a contrastive loss needs a negative in every batch) to -n %d", f.b, f.n)
	case f.k < 1:
		return fmt.Errorf("-k %d: want a positive number of neighbours kept per node", f.k)
	case f.batches < 1:
		return fmt.Errorf("-batches %d: want at least 1 batch measured per sampler", f.batches)
	case !(f.between >= 0):
		return fmt.Errorf("-between %v: want a standard deviation ≥ 0", f.between)
	case !(f.within >= 0):
		return fmt.Errorf("-within %v: want a standard deviation ≥ 0", f.within)
	case !slices.Contains(sampler.Walks, f.walk):
		return fmt.Errorf("-walk %q: want one of %s", f.walk, strings.Join(sampler.Walks, ", "))
	case f.sharing != sampler.ShareBlock && f.sharing != sampler.ShareNode:
		return fmt.Errorf("-sharing %q: want %s or %s", f.sharing, sampler.ShareBlock, sampler.ShareNode)
	}
	return nil
}

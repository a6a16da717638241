package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// jobConfig is what fixes a job's batches: the sampler Spec, B, the seed and
// the number of training steps T (the α schedule runs over T).
type jobConfig struct {
	Spec sampler.Spec
	// B is the batch size.
	B int
	// Seed is the sampler's seed.
	Seed uint64
	// TotalSteps is T; with Epochs > 0 instead, T = Epochs × batches per
	// epoch once N is known. Both 0: no end (a constant α only).
	TotalSteps int
	Epochs     int
}

// samplerFlags registers the flags that make a jobConfig.
type samplerFlags struct {
	fs       *flag.FlagSet
	specFile *string
	kind     *string
	m, k     *int
	walk     *string
	graph    *string
	alpha    *string
	refresh  *int
	maxWalk  *int
	draw     *int
	keep     *int
	tau      *float64
	clusters *int
	b        *int
	seed     *uint64
	total    *int
	epochs   *int
}

// defaultAlpha is the paper's schedule, 0.2 → 0.05 over training.
const defaultAlpha = "0.2:0.05"

func addSamplerFlags(fs *flag.FlagSet) *samplerFlags {
	return &samplerFlags{
		fs:       fs,
		specFile: fs.String("spec", "", "YAML `file` with a sampler entry (kind, m, k, walk, graph, alpha, refresh_every, max_walk_steps, draw, keep, temperature, clusters), the schema of the training configs; the flags below override it"),
		kind:     fs.String("kind", sampler.KindBatchSampler, "sampler: batchsampler, knn, uniform, or a global batch sampler: "+strings.Join(sampler.GlobalKinds, ", ")),
		m:        fs.Int("m", sampler.DefaultM, "M, candidates drawn per node"),
		k:        fs.Int("k", sampler.DefaultK, "K, neighbours kept per node"),
		walk:     fs.String("walk", sampler.WalkRWR, "walk: rwr, rw, bfs or dfs"),
		graph:    fs.String("graph-kind", sampler.GraphProximity, "graph: proximity (Algorithm 2) or knn (exact)"),
		alpha:    fs.String("alpha", defaultAlpha, "restart probability α: a number (constant) or start:end (linear over the T steps)"),
		refresh:  fs.Int("refresh-every", 0, "t, steps between graph rebuilds (0: only before step 0)"),
		maxWalk:  fs.Int("max-walk-steps", 0, "cap on the steps of one walk (0: 100·B)"),
		draw:     fs.Int("draw", 0, "kinds spectral and osgd: k, the batches a round draws (0: 4, at most ⌊N/B⌋)"),
		keep:     fs.Int("q", 0, "kind osgd: q, the batches of highest loss kept of the k drawn (spec key keep; 0: ⌈k/2⌉)"),
		tau:      fs.Float64("temperature", 0, "kinds spectral and osgd: τ of the affinity and of the loss score (required with them)"),
		clusters: fs.Int("clusters", 0, "kinds kmeans (0: ⌊N/B⌋) and antikmeans (0: B): C, the k-means clusters"),
		b:        fs.Int("b", 256, "B, the global batch size (all ranks together)"),
		seed:     fs.Uint64("seed", 1, "sampler seed"),
		total:    fs.Int("total-steps", 0, "T, training steps (the α schedule runs over them)"),
		epochs:   fs.Int("epochs", 0, "training epochs: T = epochs × batches per epoch (instead of -total-steps)"),
	}
}

// parseAlpha reads "0.2" (constant) or "0.2:0.05" (linear).
func parseAlpha(s string) (sampler.AlphaSchedule, error) {
	a, b, linear := strings.Cut(s, ":")
	start, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
	if err != nil {
		return sampler.AlphaSchedule{}, fmt.Errorf("-alpha %q: want a number or start:end", s)
	}
	if !linear {
		return sampler.AlphaSchedule{Start: start, End: start, Constant: true}, nil
	}
	end, err := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err != nil {
		return sampler.AlphaSchedule{}, fmt.Errorf("-alpha %q: want a number or start:end", s)
	}
	return sampler.AlphaSchedule{Start: start, End: end}, nil
}

func alphaString(a sampler.AlphaSchedule) string {
	if a.Constant {
		return strconv.FormatFloat(a.Start, 'g', -1, 64)
	}
	return strconv.FormatFloat(a.Start, 'g', -1, 64) + ":" + strconv.FormatFloat(a.End, 'g', -1, 64)
}

// set returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// config builds the jobConfig: the -spec file if any, with the flags given
// on the command line (all flags without -spec) over it, then checks it.
func (f *samplerFlags) config() (jobConfig, error) {
	set := setFlags(f.fs)
	var spec sampler.Spec
	key := "sampler"
	if *f.specFile != "" {
		b, err := os.ReadFile(*f.specFile)
		if err != nil {
			return jobConfig{}, fmt.Errorf("-spec: %w", err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&spec); err != nil {
			return jobConfig{}, fmt.Errorf("-spec %s: %w", *f.specFile, err)
		}
		key = *f.specFile
	}
	use := func(name string) bool { return *f.specFile == "" || set[name] }
	if use("kind") {
		spec.Kind = *f.kind
	}
	// A global batch sampler reads none of BatchSampler's keys (k is GCBS's
	// neighbours): their flags count only when given.
	if slices.Contains(sampler.GlobalKinds, spec.Kind) {
		use = func(name string) bool {
			switch name {
			case "m", "k", "walk", "graph-kind", "alpha", "max-walk-steps":
				return set[name]
			}
			return *f.specFile == "" || set[name]
		}
	}
	setIf(use("m"), &spec.M, *f.m)
	setIf(use("k"), &spec.K, *f.k)
	setIf(use("walk"), &spec.Walk, *f.walk)
	setIf(use("graph-kind"), &spec.Graph, *f.graph)
	if use("alpha") {
		a, err := parseAlpha(*f.alpha)
		if err != nil {
			return jobConfig{}, err
		}
		spec.Alpha = a
	}
	setIf(use("refresh-every"), &spec.RefreshEvery, *f.refresh)
	setIf(use("max-walk-steps"), &spec.MaxWalkSteps, *f.maxWalk)
	setIf(use("draw"), &spec.Draw, *f.draw)
	setIf(use("q"), &spec.Keep, *f.keep)
	setIf(use("temperature"), &spec.Temperature, *f.tau)
	setIf(use("clusters"), &spec.Clusters, *f.clusters)
	cfg := jobConfig{Spec: spec, B: *f.b, Seed: *f.seed, TotalSteps: *f.total, Epochs: *f.epochs}
	err := cfg.check(key)
	if err != nil && *f.specFile == "" {
		err = errors.New(flagNames(err.Error(), !set["alpha"]))
	}
	return cfg, err
}

// setIf sets *dst to v when use is true (a flag that counts).
func setIf[T any](use bool, dst *T, v T) {
	if use {
		*dst = v
	}
}

// specFlags maps the keys of a sampler entry to the flags that set them,
// longest key first (alpha.start before alpha).
var specFlags = []struct{ key, flag string }{
	{"alpha.start", "-alpha (start)"}, {"alpha.end", "-alpha (end)"},
	{"max_walk_steps", "-max-walk-steps"}, {"refresh_every", "-refresh-every"},
	{"graph", "-graph-kind"}, {"alpha", "-alpha"}, {"kind", "-kind"}, {"walk", "-walk"},
	{"m", "-m"}, {"k", "-k"},
}

// flagNames rewrites a message about the sampler entry the flags made
// (keys "sampler.m", "sampler.walk", ...) in the flags' names, and says
// when -alpha was left at its default.
func flagNames(msg string, defaultAlpha bool) string {
	for _, sf := range specFlags {
		key := "sampler." + sf.key
		if sf.key == "alpha" && defaultAlpha {
			msg = strings.ReplaceAll(msg, key+" "+defaultAlphaFlag, "-alpha "+defaultAlphaFlag+" (the default)")
		}
		msg = strings.ReplaceAll(msg, key, sf.flag)
	}
	return msg
}

// defaultAlphaFlag is how messages quote the default -alpha.
const defaultAlphaFlag = defaultAlpha

// check validates the configuration; key names the spec in errors.
func (c jobConfig) check(key string) error {
	s := c.Spec
	if err := s.Validate(key); err != nil {
		return err
	}
	if s.Kind != sampler.KindUniform && s.Embedding == sampler.EmbedCached {
		return fmt.Errorf("%s.embedding: cached is not served: the service sees no training-time projections; upload fresh embeddings instead", key)
	}
	if (s.Kind == sampler.KindSpectral || s.Kind == sampler.KindOSGD) && s.Temperature == 0 {
		return fmt.Errorf("%s.temperature: kind %s needs τ > 0 (-temperature; the training loss's temperature)", key, s.Kind)
	}
	if c.B < 2 {
		return fmt.Errorf("-b: the batch size must be at least 2, got %d", c.B)
	}
	if c.TotalSteps < 0 || c.Epochs < 0 {
		return fmt.Errorf("-total-steps and -epochs must be ≥ 0, got %d and %d", c.TotalSteps, c.Epochs)
	}
	if c.TotalSteps > 0 && c.Epochs > 0 {
		return errors.New("give -total-steps or -epochs, not both")
	}
	if s.Kind == sampler.KindBatchSampler && !s.Alpha.Constant && s.Alpha.Start != s.Alpha.End && c.TotalSteps == 0 && c.Epochs == 0 {
		return fmt.Errorf("%s.alpha %s decays α linearly over the T training steps, and T is not given: give -total-steps T or -epochs E (or a constant α, e.g. -alpha 0.2)", key, alphaString(s.Alpha))
	}
	return nil
}

// describe lists the configuration's fields for comparisons and /v1/info.
func (c jobConfig) describe() []field {
	s := c.Spec
	return []field{
		{"kind", "kind", s.Kind},
		{"m", "m", strconv.Itoa(s.M)},
		{"k", "k", strconv.Itoa(s.K)},
		{"walk", "walk", s.Walk},
		{"graph-kind", "graph", s.Graph},
		{"alpha", "alpha", alphaString(s.Alpha)},
		{"refresh-every", "refresh_every", strconv.Itoa(s.RefreshEvery)},
		{"max-walk-steps", "max_walk_steps", strconv.Itoa(s.MaxWalkSteps)},
		{"draw", "draw", strconv.Itoa(s.Draw)},
		{"q", "keep", strconv.Itoa(s.Keep)},
		{"temperature", "temperature", strconv.FormatFloat(s.Temperature, 'g', -1, 64)},
		{"clusters", "clusters", strconv.Itoa(s.Clusters)},
		{"b", "batch_size", strconv.Itoa(c.B)},
		{"seed", "seed", strconv.FormatUint(c.Seed, 10)},
		{"total-steps", "total_steps", strconv.Itoa(c.TotalSteps)},
		{"epochs", "epochs", strconv.Itoa(c.Epochs)},
	}
}

type field struct{ flag, key, value string }

// mismatch compares the configuration given on the command line (only the
// flags in set, or all of it with a -spec file) with a saved one and names
// the first difference.
func mismatch(given, saved jobConfig, set map[string]bool, where string) error {
	g, s := given.describe(), saved.describe()
	for i := range g {
		specField := i < 12 // kind … clusters come from a -spec file too
		if (set[g[i].flag] || (specField && set["spec"])) && g[i].value != s[i].value {
			return fmt.Errorf("-%s %s differs from %s's %s = %s (the configuration is fixed when a job starts; start a new state file to change it)", g[i].flag, g[i].value, where, s[i].key, s[i].value)
		}
	}
	return nil
}

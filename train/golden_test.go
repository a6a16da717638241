package train

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/gemm"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite train/testdata/golden/BACKEND/*.json (BACKEND: this machine's GEMM kernel) from the code as it stands")

// goldenShortening turns a shipped config into a run that takes seconds:
// its first seed, one epoch, every step logged, a capped dataset where the
// config has a key for it, and a small evaluation grid. Keys that a
// modality does not have are not set.
func goldenShortening(cfg Config) []string {
	sets := []string{
		fmt.Sprintf("seeds=[%d]", cfg.Seeds[0]),
		"train.epochs=1", "train.log_every=1", "train.eval_every=0",
	}
	if cfg.Data.Source != "synthetic" {
		if root := testenv.DataDir(); root != "" {
			sets = append(sets, "data.root="+root)
		}
	}
	switch cfg.Modality {
	case "graph":
		sets = append(sets, "eval.folds=3", "eval.inner_folds=2", "eval.cs=[0.1,10]")
	case "image":
		sets = append(sets, "data.image.max_train=600", "data.image.max_test=300", "train.batch_size=128")
		if cfg.Data.Source == "synthetic" {
			sets = append(sets, "data.image.images=600", "data.image.test_images=300")
		}
		// The full CIFAR-10 is not among the shared data: its config's network
		// is checked on the shared CIFAR-10 subset instead.
		if cfg.Data.Source == "cifar10" && testenv.DataDir() != "" {
			if _, err := os.Stat(filepath.Join(testenv.DataDir(), cfg.Data.Path)); err != nil {
				sets = append(sets, "data.path=cifar10")
			}
		}
	case "text":
		sets = append(sets, "data.text.max_sentences=2500", "data.text.vectors_cache=", "eval.select_every=15")
	}
	return sets
}

// goldenEpochs returns the number of epochs after which every sampler of
// cfg has refreshed at least once after step 0, capped by a per-modality
// budget of steps.
func goldenEpochs(t *testing.T, cfg *Config) int {
	t.Helper()
	ds, err := dataSpecs[cfg.Modality].Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bpe := (ds.NumInstances() + cfg.Train.BatchSize - 1) / cfg.Train.BatchSize
	maxT := 0
	for _, s := range cfg.SamplerList() {
		maxT = max(maxT, s.RefreshEvery)
	}
	budget := map[string]int{"graph": 80, "image": 25, "text": 40}[cfg.Modality]
	if maxT+1 > budget {
		return 1 // no refresh within the budget: one epoch is enough
	}
	return max(1, (maxT+1+bpe-1)/bpe)
}

// goldenRun is what a golden file records of one run: the loss, the batch's
// false-negative ratio and mean in-batch cosine of every step, and the
// final scores.
type goldenRun struct {
	ID       string    `json:"id"`
	Losses   []float64 `json:"losses"`
	FNRatios []float64 `json:"fn_ratios,omitempty"`
	BatchCos []float64 `json:"batch_cos"`
	Metric   string    `json:"metric"`
	Value    float64   `json:"value"`
	FoldStd  float64   `json:"fold_std"`
	Evals    []float64 `json:"dev_evals,omitempty"`
}

// goldenFile is one shipped config's golden record.
type goldenFile struct {
	Config  string      `json:"config"`
	Sets    []string    `json:"sets"`
	Backend string      `json:"gemm_backend"`
	Runs    []goldenRun `json:"runs"`
}

func shippedConfigs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "demo-sampler.yaml" })
	return append(files, filepath.Join("..", "cmd", "train", "default.yaml"))
}

// goldenTooSlow names the shipped configs whose shortened run takes minutes
// and that have no golden record, with the reason; TestShippedConfigsParse
// still checks them. Their method and data path are covered by the records
// of smaller configs (mvgrl-imdb-b, graphcl-collab).
var goldenTooSlow = map[string]string{
	"mvgrl-collab": "one epoch of MVGRL on COLLAB is 40 steps of 3-5 s, after 20-30 s of views",
}

// TestGoldenShippedConfigs runs a shortened version of every shipped config
// and compares every step's loss, false-negative ratio and in-batch cosine
// and every final score with the record in testdata/golden/BACKEND,
// exactly: a refactor must not change what a config computes. BACKEND is
// the GEMM kernel of this machine (gemm.Backend(): avx512, avx2 or go),
// which decides the order of float32 sums, so each has records of its own.
// Regenerate the records (only for an intended change, in its own commit)
// with
//
//	go test ./train -run TestGoldenShippedConfigs -update-golden
//
// and the same under GODEBUG=cpu.avx512f=off (avx2 on an AVX-512 machine)
// and with -tags purego (go) (see goldenBackends and goldenSkip).
func TestGoldenShippedConfigs(t *testing.T) {
	for _, f := range shippedConfigs(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if filepath.Base(filepath.Dir(f)) == "train" {
			name = "cmd-train-default"
		}
		t.Run(name, func(t *testing.T) {
			if why, ok := goldenTooSlow[name]; ok {
				t.Skipf("no golden record: %s", why)
			}
			if !slices.Contains(goldenBackends, gemm.Backend()) {
				t.Skipf("no golden records for the %s GEMM kernel (recorded: %s)", gemm.Backend(), strings.Join(goldenBackends, ", "))
			}
			if why, ok := goldenSkip[gemm.Backend()][name]; ok {
				t.Skipf("no golden record on the %s GEMM kernel: %s", gemm.Backend(), why)
			}
			full, err := LoadConfig(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if full.Sweep != nil {
				t.Skip("a sweep is one experiment per point (package sweep expands it: TestShippedSweepsExpand); its base settings are those of the records of graphcl-imdb-b, graphcl-collab, simclr-cifar10-subset and simcse-stsb")
			}
			sets := goldenShortening(full)
			cfg, err := LoadConfig(f, sets)
			if err != nil {
				t.Fatal(err)
			}
			if msg := missingData(&cfg); msg == "" {
				// Enough epochs for a refresh of the sampler's graph during
				// training, within a budget of steps.
				if e := goldenEpochs(t, &cfg); e > 1 {
					sets = append(sets, fmt.Sprintf("train.epochs=%d", e))
					if cfg, err = LoadConfig(f, sets); err != nil {
						t.Fatal(err)
					}
				}
			}
			gpath := goldenPath(name)
			var want goldenFile
			if msg := missingData(&cfg); msg != "" {
				t.Skip(msg) // before the record: a config on data this machine lacks has none
			}
			if !*updateGolden {
				b, err := os.ReadFile(gpath)
				if err != nil {
					t.Fatalf("no golden record (%v); create it with -update-golden", err)
				}
				if err := json.Unmarshal(b, &want); err != nil {
					t.Fatalf("%s: %v", gpath, err)
				}
				if want.Backend != gemm.Backend() {
					t.Fatalf("%s was made with the %s GEMM kernel, and this machine uses %s (float32 sums differ): the record is misfiled", gpath, want.Backend, gemm.Backend())
				}
			}
			dir := t.TempDir()
			res, err := Run(context.Background(), cfg, Options{OutDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			got := goldenFile{Config: filepath.ToSlash(f), Sets: sets, Backend: gemm.Backend(), Runs: goldenRuns(t, dir, res)}
			if *updateGolden {
				b, err := json.MarshalIndent(got, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Dir(gpath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(gpath, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			compareGolden(t, want, got)
		})
	}
}

// goldenBackends are the GEMM kernels (gemm.Backend()) with golden
// records; a machine with another kernel (the openblas build) skips the
// test. arm64's kernel is "go", and has the records of -tags purego.
// avx512 is the reference: it has a record of every shipped config that
// has a golden check (not a sweep, not in goldenTooSlow, its data in the
// shared data). Every other kernel has a record of each config avx512 has
// a record of, save those goldenSkip names for it: a record missing on
// any kernel fails (TestGoldenRecordFiles, on any machine, and
// TestGoldenShippedConfigs on that kernel). On an AVX-512 machine the
// other two run with
//
//	GODEBUG=cpu.avx512f=off go test ./train -run 'TestGoldenShippedConfigs/^NAME$'   # avx2
//	go test -tags purego ./train -run 'TestGoldenShippedConfigs/^NAME$'              # go
//
// (add -update-golden to record a config new to a kernel). make
// golden-kernels (CI) runs the quick ones, make golden-kernels-all all.
var goldenBackends = []string{"avx512", "avx2", "go"}

// goldenSkip names, per kernel, the configs that have an avx512 record and
// none on that kernel, with the reason: what was measured of the run (CPU
// seconds, user + system, of the test binary running that config alone, on
// the 2-core AMD EPYC host at the load average given; docs/benchmarks.md
// has the whole table). To record one, delete its line here, run the
// command of goldenBackends with -update-golden, then again without it.
var goldenSkip = map[string]map[string]string{
	"avx2": {},
	"go":   {},
}

// TestGoldenRecordFiles checks the record files of every kernel, on any
// machine: each is in the folder of the kernel that made it, each names a
// shipped config, and each kernel has a record of every config the avx512
// reference has one of, save those goldenSkip names (a record left out,
// one of another config or a stale skip fails).
func TestGoldenRecordFiles(t *testing.T) {
	shipped := map[string]bool{}
	for _, f := range shippedConfigs(t) {
		shipped[strings.TrimSuffix(filepath.Base(f), ".yaml")] = true
	}
	shipped["cmd-train-default"] = true
	records := map[string][]string{}
	for _, backend := range goldenBackends {
		files, err := filepath.Glob(filepath.Join("testdata", "golden", backend, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			records[backend] = append(records[backend], name)
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var g goldenFile
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if g.Backend != backend {
				t.Errorf("%s was made with the %s GEMM kernel: it belongs in testdata/golden/%s", f, g.Backend, g.Backend)
			}
			if !shipped[name] {
				t.Errorf("%s: no shipped config %s", f, name)
			}
			if len(g.Runs) == 0 || len(g.Runs[0].Losses) == 0 {
				t.Errorf("%s records no step", f)
			}
		}
		if len(records[backend]) == 0 {
			t.Errorf("testdata/golden/%s holds no record", backend)
		}
	}
	ref := goldenBackends[0]
	for backend, skip := range goldenSkip {
		if !slices.Contains(goldenBackends[1:], backend) {
			t.Errorf("goldenSkip names %s, which is not a kernel with records of some configs only (%s)", backend, strings.Join(goldenBackends[1:], ", "))
		}
		for name := range skip {
			if !slices.Contains(records[ref], name) {
				t.Errorf("goldenSkip[%s] names %s, which has no %s record", backend, name, ref)
			}
		}
	}
	for _, backend := range goldenBackends[1:] {
		want := slices.DeleteFunc(slices.Clone(records[ref]), func(name string) bool {
			_, skip := goldenSkip[backend][name]
			return skip
		})
		if !slices.Equal(records[backend], want) {
			t.Errorf("testdata/golden/%s holds %v, want the records of %v (those of %s, save goldenSkip[%s])", backend, records[backend], want, ref, backend)
		}
	}
}

// goldenPath is the golden record of the shipped config name on this
// machine's GEMM kernel.
func goldenPath(name string) string {
	return filepath.Join("testdata", "golden", gemm.Backend(), name+".json")
}

// missingData returns a skip message when the config reads files that are
// not in the data root.
func missingData(cfg *Config) string {
	var paths []string
	switch {
	case cfg.Modality == "text":
		for _, c := range cfg.Data.Text.Corpus {
			paths = append(paths, filepath.Join(cfg.Data.DataRoot(), c))
		}
		paths = append(paths, filepath.Join(cfg.Data.DataRoot(), cfg.Data.Text.STSDir))
	case cfg.Data.Source != "synthetic":
		paths = append(paths, cfg.Data.ResolvedPath())
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("%s is absent (set $BATCHSAMPLER_DATA to the shared data directory to run this golden check)", p)
		}
	}
	return ""
}

func goldenRuns(t *testing.T, dir string, res *Results) []goldenRun {
	t.Helper()
	byID := map[string]*goldenRun{}
	var out []*goldenRun
	for _, r := range res.Runs {
		g := &goldenRun{ID: r.ID, Metric: r.Metric, Value: r.Value, FoldStd: r.FoldStd}
		byID[r.ID] = g
		out = append(out, g)
	}
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		g := byID[fmt.Sprint(m["run"])]
		if g == nil {
			continue
		}
		switch m["event"] {
		case nil:
			g.Losses = append(g.Losses, m["loss"].(float64))
			if fn, ok := m["fn_ratio"].(float64); ok {
				g.FNRatios = append(g.FNRatios, fn)
			}
			g.BatchCos = append(g.BatchCos, m["batch_cos"].(float64))
		case "dev_eval":
			g.Evals = append(g.Evals, m["dev"].(float64))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	runs := make([]goldenRun, len(out))
	for i, g := range out {
		runs[i] = *g
	}
	return runs
}

func compareGolden(t *testing.T, want, got goldenFile) {
	t.Helper()
	if len(want.Runs) != len(got.Runs) {
		t.Fatalf("%d runs, golden record has %d", len(got.Runs), len(want.Runs))
	}
	for i, w := range want.Runs {
		g := got.Runs[i]
		if g.ID != w.ID {
			t.Errorf("run %d is %s, golden %s", i, g.ID, w.ID)
			continue
		}
		for _, s := range []struct {
			what      string
			got, want []float64
		}{{"loss", g.Losses, w.Losses}, {"fn_ratio", g.FNRatios, w.FNRatios}, {"batch_cos", g.BatchCos, w.BatchCos}, {"dev eval", g.Evals, w.Evals}} {
			if len(s.got) != len(s.want) {
				t.Errorf("%s: %d %s values, golden %d", w.ID, len(s.got), s.what, len(s.want))
				continue
			}
			for k := range s.want {
				if math.Float64bits(s.got[k]) != math.Float64bits(s.want[k]) {
					t.Errorf("%s: %s at step %d is %v, golden %v", w.ID, s.what, k+1, s.got[k], s.want[k])
					break
				}
			}
		}
		if g.Metric != w.Metric || g.Value != w.Value || g.FoldStd != w.FoldStd {
			t.Errorf("%s: final %s %v ± %v, golden %s %v ± %v", w.ID, g.Metric, g.Value, g.FoldStd, w.Metric, w.Value, w.FoldStd)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/train"
)

// tinyGraphConfig is a graph experiment small enough for a unit test; the
// dataset comes from the -set overrides the download command prints.
const tinyGraphConfig = `
name: download-e2e
modality: graph
data: {source: tu, name: TINY, path: tu/TINY}
model: {kind: gin, hidden: 8, layers: 2}
loss: {kind: infonce, form: graphcl, temperature: 0.2}
train: {epochs: 1, batch_size: 4, lr: 0.01, checkpoint: false}
eval: {kind: svm, folds: 2, inner_folds: 2, cs: [1]}
seeds: [0]
`

// printedTrainCommand returns the config and the -set values of the train
// command that download printed last.
func printedTrainCommand(t *testing.T, out string) (config string, sets []string) {
	t.Helper()
	_, cmd, ok := strings.Cut(out, "; train with: ")
	if !ok {
		t.Fatalf("no train command in the output:\n%s", out)
	}
	f := strings.Fields(strings.TrimSpace(cmd))
	if len(f) < 5 || strings.Join(f[:4], " ") != "go run ./cmd/train -config" {
		t.Fatalf("train command %q", cmd)
	}
	config = f[4]
	for i := 5; i < len(f); i += 2 {
		if f[i] != "-set" || i+1 == len(f) {
			t.Fatalf("train command %q: expected -set KEY=VALUE pairs after the config", cmd)
		}
		sets = append(sets, f[i+1])
	}
	return config, sets
}

// TestDownloadThenTrain downloads a TU dataset from a local server into a
// data root, then trains on it with the data.root and data.path the
// command printed: once with -root, once into the default root.
func TestDownloadThenTrain(t *testing.T) {
	const name = "TINY"
	zipped := testenv.TinyTUZip(t, name)
	srv := serve(t, "/"+name+".zip", zipped)
	defer func(f func(string) string) { tuDatasetURL = f }(tuDatasetURL)
	tuDatasetURL = func(n string) string { return srv.URL + "/" + n + ".zip" }

	trainOn := func(t *testing.T, sets []string) {
		t.Helper()
		cfg, err := train.ParseConfig([]byte(tinyGraphConfig), sets)
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		res, err := train.Run(context.Background(), cfg, train.Options{OutDir: out})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Runs) != 1 || res.Runs[0].Steps != 3 || math.IsNaN(res.Runs[0].Value) || res.Runs[0].Value <= 0 {
			t.Fatalf("results %+v", res.Runs)
		}
		if len(res.Results) != 1 || res.Results[0].Dataset != name {
			t.Fatalf("results %+v", res.Results)
		}
		if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
			t.Fatal(err)
		}
	}
	// dataSets keeps the data.* overrides of the printed command (its
	// config and run name are those of MUTAG's full experiment).
	dataSets := func(sets []string) []string {
		var d []string
		for _, s := range sets {
			if strings.HasPrefix(s, "data.") {
				d = append(d, s)
			}
		}
		return d
	}

	t.Run("-root", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "data")
		var out bytes.Buffer
		if err := run(context.Background(), []string{"-dataset", name, "-root", root, "-sha256", sha256Hex(zipped)}, &out, &out); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		config, sets := printedTrainCommand(t, out.String())
		if config != "configs/graphcl-mutag.yaml" {
			t.Errorf("config %s", config)
		}
		sets = dataSets(sets)
		want := []string{"data.name=" + name, "data.path=tu/" + name, "data.root=" + root}
		if strings.Join(sets, " ") != strings.Join(want, " ") {
			t.Fatalf("printed -set %q, want %q", sets, want)
		}
		trainOn(t, sets)
	})

	t.Run("default root", func(t *testing.T) {
		// No $BATCHSAMPLER_DATA and no ../shared/data: the default root is
		// the user cache directory, for download and train alike.
		tmp := t.TempDir()
		t.Setenv(data.RootEnv, "")
		t.Setenv("HOME", filepath.Join(tmp, "home"))
		t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
		t.Setenv("LocalAppData", filepath.Join(tmp, "appdata"))
		wd := filepath.Join(tmp, "work", "checkout")
		if err := os.MkdirAll(wd, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(wd)
		userRoot, err := data.UserRoot()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := data.DefaultRootSource(); got != userRoot || !strings.HasPrefix(userRoot, tmp) {
			t.Fatalf("default root %s, want the user root %s under %s", got, userRoot, tmp)
		}
		var out bytes.Buffer
		if err := run(context.Background(), []string{"-dataset", name, "-sha256", sha256Hex(zipped)}, &out, &out); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), name+" is in "+filepath.Join(userRoot, "tu", name)+";") {
			t.Fatalf("output\n%s", out.String())
		}
		_, sets := printedTrainCommand(t, out.String())
		sets = dataSets(sets)
		want := []string{"data.name=" + name, "data.path=tu/" + name}
		if strings.Join(sets, " ") != strings.Join(want, " ") {
			t.Fatalf("printed -set %q, want %q (no data.root: the default)", sets, want)
		}
		trainOn(t, sets)
	})
}

// The train command printed for every dataset download knows loads with the
// shipped config and reads the directory download wrote.
func TestTrainCommandsFindTheDownload(t *testing.T) {
	root := t.TempDir()
	names := []string{"PROTEINS"}
	for n := range data.KnownTUChecksums {
		names = append(names, n)
	}
	names = append(names, data.CIFARNames...)
	names = append(names, "stl-10")
	for _, name := range names {
		config, sets := trainArgs(name)
		cfg, err := train.LoadConfig(filepath.Join("..", "..", filepath.FromSlash(config)), append(sets, "data.root="+root))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := filepath.Join(root, "tu", name)
		if rel, err := data.CIFARPath(name); err == nil {
			want = filepath.Join(root, rel)
		} else if name == "stl-10" {
			want = filepath.Join(root, data.STL10Path)
		} else if cfg.Data.Source != "tu" || cfg.Data.Name != name {
			t.Errorf("%s: data %+v", name, cfg.Data)
		}
		if got := cfg.Data.ResolvedPath(); got != want {
			t.Errorf("%s: train reads %s, download writes %s", name, got, want)
		}
	}
}

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio"
	"codeberg.org/sbinet/npyio/npy"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/internal/testenv"
	"github.com/batchsampler-go/batchsampler/train"
)

// buildDownload builds cmd/download into dir (a main package cannot be
// imported by another's tests) and returns the binary's path.
func buildDownload(t *testing.T, dir string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goTool); err != nil {
			t.Skip("no go command to build cmd/download with")
		}
	}
	bin := filepath.Join(dir, "download")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/batchsampler-go/batchsampler/cmd/download")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cmd/download: %v\n%s", err, out)
	}
	return bin
}

// TestQuickStart follows the README's MUTAG quick start on a fresh clone
// with no ../shared, where MUTAG must first be downloaded (the optional
// step it names): download MUTAG (from a local server) into the data root,
// train with the printed command, evaluate the trained runs again, and
// write one run's embeddings to a .npy file. Only the sizes are cut down
// with -set, to fit the 12 graphs of the served zip and a unit test's time.
func TestQuickStart(t *testing.T) {
	tmp := t.TempDir()
	// The data root of a fresh clone, without ../shared/data: here
	// $BATCHSAMPLER_DATA, which download and train resolve alike.
	root := filepath.Join(tmp, "data")
	t.Setenv(data.RootEnv, root)
	zipped := testenv.TinyTUZip(t, "MUTAG")
	sum := sha256.Sum256(zipped)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/MUTAG.zip" {
			http.NotFound(w, r)
			return
		}
		w.Write(zipped)
	}))
	defer srv.Close()

	// 1. go run ./cmd/download -dataset MUTAG
	dl := exec.Command(buildDownload(t, tmp), "-dataset", "MUTAG", "-url", srv.URL+"/MUTAG.zip", "-sha256", hex.EncodeToString(sum[:]))
	printed, err := dl.CombinedOutput()
	if err != nil {
		t.Fatalf("download: %v\n%s", err, printed)
	}
	if _, err := os.Stat(filepath.Join(root, "tu", "MUTAG", "MUTAG_A.txt")); err != nil {
		t.Fatalf("download did not write the data root: %v\n%s", err, printed)
	}
	_, command, ok := strings.Cut(string(printed), "train with: ")
	if !ok {
		t.Fatalf("download printed no train command:\n%s", printed)
	}
	args := strings.Fields(command)
	if len(args) < 5 || strings.Join(args[:4], " ") != "go run ./cmd/train -config" {
		t.Fatalf("printed train command %q", command)
	}
	args = args[3:]
	args[1] = filepath.Join("..", "..", args[1]) // the config, relative to the repository's root

	// 2. go run ./cmd/train -config configs/graphcl-mutag.yaml -out runs/mutag
	out := filepath.Join(tmp, "runs", "mutag")
	args = append(args, "-out", out,
		"-set", "seeds=[0]", "-set", "train.epochs=2", "-set", "train.batch_size=4",
		"-set", "samplers[1].m=6", "-set", "samplers[1].k=3", "-set", "samplers[1].refresh_every=2",
		"-set", "eval.folds=2", "-set", "eval.inner_folds=2", "-set", "eval.cs=[1]")
	if err := run(args); err != nil {
		t.Fatalf("train %q: %v", args, err)
	}
	var trained train.Results
	readJSON(t, filepath.Join(out, "results.json"), &trained)
	if len(trained.Runs) != 2 || trained.Results[0].Dataset != "MUTAG" {
		t.Fatalf("trained %+v", trained)
	}

	// 3. go run ./cmd/train -evaluate runs/mutag
	if err := run([]string{"-evaluate", out}); err != nil {
		t.Fatal(err)
	}
	evals, _ := filepath.Glob(filepath.Join(out, "evaluations", "*", "results.json"))
	if len(evals) != 1 {
		t.Fatalf("evaluations: %v", evals)
	}
	var evaluated train.Results
	readJSON(t, evals[0], &evaluated)
	for i, rr := range trained.Runs {
		if e := evaluated.Runs[i]; e.ID != rr.ID || e.Value != rr.Value || e.FoldStd != rr.FoldStd {
			t.Errorf("evaluated %s %v ± %v, trained %s %v ± %v", e.ID, e.Value, e.FoldStd, rr.ID, rr.Value, rr.FoldStd)
		}
	}

	// 4. go run ./cmd/train -embed runs/mutag/runs/uniform-seed0 -o mutag.npy
	npyPath := filepath.Join(tmp, "mutag.npy")
	if err := run([]string{"-embed", filepath.Join(out, "runs", "uniform-seed0"), "-o", npyPath}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(npyPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := npy.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var emb []float32
	if err := r.Read(&emb); err != nil {
		t.Fatal(err)
	}
	// GIN, 3 layers of 32: 96 dimensions per graph.
	if shape := r.Header.Descr.Shape; !slices.Equal(shape, []int{12, 96}) || len(emb) != 12*96 {
		t.Errorf("embeddings of shape %v (%d values), want 12×96", shape, len(emb))
	}
	lf, err := os.Open(filepath.Join(tmp, "mutag_labels.npy"))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	var labels []int64
	if err := npyio.Read(lf, &labels); err != nil {
		t.Fatal(err)
	}
	if len(labels) != 12 || labels[0] != 0 || labels[1] != 1 {
		t.Errorf("labels %v", labels)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestEvaluateEmbedFlags: the flags of -evaluate and -embed are checked
// before any work, and the errors say what goes with what.
func TestEvaluateEmbedFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-split", "test"}, "-split goes with -embed"},
		{[]string{"-o", "x.npy"}, "-o goes with -embed"},
		{[]string{"-evaluate", dir, "-config", "x.yaml"}, "-evaluate DIR goes with -set, -root or -out, not -config"},
		{[]string{"-embed", dir, "-resume", dir}, "not -resume: they are two modes"},
		{[]string{"-evaluate", dir, "-embed", dir}, "not both"},
		{[]string{"-embed", dir}, "-embed needs -o FILE.npy"},
		{[]string{"-embed", dir, "-o", "x.txt"}, "expected a .npy file name"},
		{[]string{"-embed", dir, "-out", dir, "-o", "x.npy"}, "not -out"},
		{[]string{"-embed", dir, "-o", "x.npy"}, "not a run directory"},
		{[]string{"-evaluate", dir}, "not a run directory"},
		{[]string{"-evaluate", dir, "-set", "train.lr=1"}, "eval.*"},
		{[]string{"-embed", dir, "-o", "x.npy", "-set", "model.hidden=2"}, "data.*"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		err := run(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

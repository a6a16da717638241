package train

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// TestPairedInfiniteT: when every paired difference is the same non-zero
// value the t statistic is infinite; results.json still writes (JSON has
// no infinity: "+Inf") and reads back, and the Markdown says so.
func TestPairedInfiniteT(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Seeds = []uint64{0, 1, 2}
	cfg.Samplers = []sampler.Spec{{Kind: "uniform"}, {Kind: "knn", RefreshEvery: 5}}
	runs := []RunResult{
		{Sampler: "uniform", Seed: 0, Value: 80}, {Sampler: "uniform", Seed: 1, Value: 82}, {Sampler: "uniform", Seed: 2, Value: 81},
		{Sampler: "knn", Seed: 0, Value: 81.5}, {Sampler: "knn", Seed: 1, Value: 83.5}, {Sampler: "knn", Seed: 2, Value: 82.5},
	}
	res := summarize(&cfg, graphDataset{set: &data.GraphSet{Name: "toy"}}, runs)
	c := res.Results[1].Comparison
	if c == nil || !math.IsInf(c.T, 1) || c.P != 0 || c.MeanDiff != 1.5 {
		t.Fatalf("comparison %+v", c)
	}
	dir := t.TempDir()
	if err := writeResults(dir, res); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil || !strings.Contains(string(b), `"t": "+Inf"`) {
		t.Fatalf("results.json: %v\n%s", err, b)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if bc := back.Results[1].Comparison; bc == nil || !math.IsInf(bc.T, 1) || bc.MeanDiff != 1.5 || bc.N != 3 {
		t.Errorf("read back %+v", bc)
	}
	// A finite t is a plain number.
	b, _ = json.Marshal(Paired{Baseline: "uniform", T: -2.5, P: 0.1, N: 5})
	if string(b) != `{"baseline":"uniform","mean_diff":0,"t":-2.5,"p":0.1,"n":5}` {
		t.Errorf("finite t: %s", b)
	}
	var p Paired
	if err := json.Unmarshal([]byte(`{"t":"many"}`), &p); err == nil {
		t.Error(`t "many" accepted`)
	}
	if md := res.Markdown(); !strings.Contains(md, "paired t = +Inf") {
		t.Errorf("markdown:\n%s", md)
	}
}

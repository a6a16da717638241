package eval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSVMCrossValidateRecordedGIN pins SVMCrossValidate bit for bit on a
// realistic input: testdata/mutag_gin.csv holds the 188 × 96 embeddings of
// MUTAG by a GraphCL-trained GIN (configs/graphcl-mutag.yaml, seed 0,
// uniform sampler, export_embeddings), and testdata/mutag_gin_svm.json the
// full CVResult of GraphCL's protocol with Seed 0 (JSON keeps float64
// exactly): the guard of any optimisation of the SMO solver. Any change of a chosen C, an accuracy, an inner mean or a γ fails it; the
// fold column of the CSV is the recorded FoldIDs.
func TestSVMCrossValidateRecordedGIN(t *testing.T) {
	fx := loadEmbed(t, "mutag_gin")
	b, err := os.ReadFile(filepath.Join("testdata", "mutag_gin_svm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want CVResult
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("mutag_gin_svm.json: %v", err)
	}
	for _, opt := range []SVMOptions{
		{Seed: 0},
		{Seed: 0, Workers: 1},
		{FoldIDs: fx.folds, Workers: 3},
		{Seed: 0, MaxPrecomputeBytes: 1}, // distances computed on demand
	} {
		got, err := SVMCrossValidate(fx.x, fx.n, fx.d, fx.y, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("options %+v: result differs from the recorded one:\n got %+v\nwant %+v", opt, got, want)
		}
	}
}

package train

import (
	"context"
	"encoding/json"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The chance level of the false-negative ratio, the share of same-class
// pairs among all pairs of distinct instances (what a batch drawn at
// random holds on average, whatever its size), is recorded in results.json
// and results.md; checked against a count of the pairs.
func TestFNRatioChanceLevel(t *testing.T) {
	dir := t.TempDir()
	cfg := mustParse(t, tinySynthetic, "seeds=[0]", "train.epochs=1")
	res, err := Run(context.Background(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := dataSpecs[cfg.Modality].Load(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	y := ds.Labels()
	same, all := 0, 0
	for i := range y {
		for j := i + 1; j < len(y); j++ {
			all++
			if y[i] == y[j] {
				same++
			}
		}
	}
	want := float64(same) / float64(all)
	if res.FNRatioChance == nil || math.Abs(*res.FNRatioChance-want) > 1e-12 {
		t.Fatalf("chance level %v, want %v (%d of %d pairs)", res.FNRatioChance, want, same, all)
	}
	var rj Results
	if err := readJSON(filepath.Join(dir, "results.json"), &rj); err != nil || rj.FNRatioChance == nil || *rj.FNRatioChance != *res.FNRatioChance {
		t.Errorf("results.json: fn_ratio_chance %v (%v)", rj.FNRatioChance, err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "results.md"))
	if !strings.Contains(string(md), "chance level") {
		t.Errorf("results.md does not give the chance level:\n%s", md)
	}
}

// fn_ratio.png starts its y axis at 0, draws the chance level (results.md
// says what it is) as a labelled reference line and says that lower means fewer false
// negatives; loss.png says that the samplers' losses are not comparable.
func TestPlotFNRatioFromZeroWithChance(t *testing.T) {
	dir := t.TempDir()
	samplers := []string{"uniform", "knn", "batchsampler"}
	writeSyntheticMetrics(t, dir, samplers, 2, 5, 6)
	chance := 0.3
	b, _ := json.Marshal(Results{FNRatioChance: &chance})
	if err := os.WriteFile(filepath.Join(dir, "results.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writePlots(dir); err != nil {
		t.Fatal(err)
	}
	d, err := readRunPlotData(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs, err := buildFigures(d)
	if err != nil {
		t.Fatal(err)
	}
	fn := figs["fn_ratio.png"]
	if fn.p.Y.Min != 0 {
		t.Errorf("fn_ratio.png: y axis from %v, want 0", fn.p.Y.Min)
	}
	if !slices.Equal(fn.refs, []float64{chance}) {
		t.Errorf("fn_ratio.png: reference lines %v, want the chance level %v", fn.refs, chance)
	}
	if !slices.ContainsFunc(fn.labels, func(l string) bool { return strings.HasPrefix(l, "chance level") && strings.Contains(l, "0.300") }) {
		t.Errorf("fn_ratio.png: legend %q has no chance level", fn.labels)
	}
	if !strings.Contains(fn.p.Title.Text, "lower") || !strings.Contains(fn.p.Title.Text, "fewer false negatives") {
		t.Errorf("fn_ratio.png: title %q does not say that lower is fewer false negatives", fn.p.Title.Text)
	}
	if l := figs["loss.png"].p.Title.Text; !strings.Contains(l, "not comparable") {
		t.Errorf("loss.png: title %q does not say the losses are not comparable", l)
	}
	// The dashed line crosses the data area (left of the legend strip).
	img := decodePNG(t, filepath.Join(dir, "plots", "fn_ratio.png"))
	w := img.Bounds().Dx()
	left := img.(interface {
		SubImage(image.Rectangle) image.Image
	}).SubImage(image.Rect(w/10, 0, w/2, img.Bounds().Dy()))
	if n := countColour(left, chanceColour); n < 100 {
		t.Errorf("fn_ratio.png: %d pixels of the chance line's colour across the data", n)
	}
	// Without a recorded chance level (a run directory of an older
	// version) the axis still starts at 0.
	os.Remove(filepath.Join(dir, "results.json"))
	if d, err = readRunPlotData(dir); err != nil {
		t.Fatal(err)
	}
	if figs, err = buildFigures(d); err != nil {
		t.Fatal(err)
	}
	if f := figs["fn_ratio.png"]; f.p.Y.Min != 0 || len(f.refs) != 0 {
		t.Errorf("without results.json: y from %v, references %v", f.p.Y.Min, f.refs)
	}
}

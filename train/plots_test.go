package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The sampler colours: the well-known names have fixed colours, up to ten
// names all get different ones, and a name's colour depends neither on the
// order the names come in nor (without a hash collision) on the other names.
func TestPlotSamplerColours(t *testing.T) {
	ten := []string{"uniform", "knn", "batchsampler", "bs-rwr", "bs-ppr", "hard-neg", "debiased", "kmeans", "cluster-b", "mix"}
	for _, tc := range []struct {
		name  string
		names []string
	}{
		{"demo", []string{"uniform", "knn", "batchsampler"}},
		{"one", []string{"batchsampler"}},
		{"labels", []string{"bs α=0.2", "bs α=0.05", "uniform"}},
		{"ten", ten},
		{"ten without the well-known", append(slices.Clone(ten[3:]), "x1", "x2", "x3")},
		{"duplicates", []string{"knn", "knn", "a", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := samplerColours(tc.names)
			seen := map[color.NRGBA]string{}
			for _, n := range tc.names {
				c, ok := got[n]
				if !ok {
					t.Fatalf("no colour for %q", n)
				}
				if o, dup := seen[c]; dup && o != n {
					t.Errorf("%q and %q share colour %v", o, n, c)
				}
				seen[c] = n
				if i, fixed := fixedColour[n]; fixed && c != samplerPalette[i] {
					t.Errorf("%q: colour %v, want its fixed %v", n, c, samplerPalette[i])
				}
				if !slices.Contains(samplerPalette, c) {
					t.Errorf("%q: colour %v not in the palette", n, c)
				}
			}
			rev := slices.Clone(tc.names)
			slices.Reverse(rev)
			for i := range 5 { // any order: reversed and rotated
				order := append(slices.Clone(rev[i%len(rev):]), rev[:i%len(rev)]...)
				if again := samplerColours(order); !mapsEqual(again, got) {
					t.Errorf("order %v: colours %v, want %v", order, again, got)
				}
			}
		})
	}
	// The same name keeps its colour when other samplers join (no collision
	// here: the fixed names never take a hashed colour).
	alone := samplerColours([]string{"bs-rwr"})["bs-rwr"]
	if with := samplerColours([]string{"uniform", "knn", "batchsampler", "bs-rwr"})["bs-rwr"]; with != alone {
		t.Errorf("bs-rwr: %v alone, %v beside the well-known samplers", alone, with)
	}
	if got := samplerColours([]string{"batchsampler"})["batchsampler"]; got != samplerColours([]string{"knn", "batchsampler"})["batchsampler"] {
		t.Errorf("batchsampler changes colour with the other samplers")
	}
}

func mapsEqual(a, b map[string]color.NRGBA) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// writeSyntheticMetrics writes DIR/metrics.jsonl as a run of the given
// samplers × seeds writes it: step lines, cos_hist, epoch_end (which carry
// no sampler), refresh and final events.
func writeSyntheticMetrics(t *testing.T, dir string, samplers []string, seeds, epochs, stepsPerEpoch int) {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for si, smp := range samplers {
		for seed := range seeds {
			run := fmt.Sprintf("%s-seed%d", smp, seed)
			for step := 1; step <= epochs*stepsPerEpoch; step++ {
				epoch := (step-1)/stepsPerEpoch + 1
				x := float64(step) / float64(epochs*stepsPerEpoch)
				if (step-1)%stepsPerEpoch == 0 {
					h := make([]float64, 20)
					for j := range h {
						d := float64(j-10+si) / 4
						h[j] = math.Exp(-d * d)
					}
					enc.Encode(map[string]any{"event": "cos_hist", "run": run, "sampler": smp, "step": step, "epoch": epoch, "hist": h})
				}
				enc.Encode(map[string]any{"run": run, "sampler": smp, "seed": seed, "step": step, "epoch": epoch,
					"loss":     2.5 - float64(si)*0.3 - x + 0.05*float64(seed) + 0.03*math.Sin(float64(step*(seed+1))),
					"fn_ratio": 0.3 + 0.1*float64(si) + 0.02*math.Cos(float64(step+seed))})
				if step%stepsPerEpoch == 0 {
					enc.Encode(map[string]any{"event": "epoch_end", "run": run, "step": step, "epoch": epoch, "fn_ratio_mean": 0.3 + 0.1*float64(si) + 0.01*float64(seed) - 0.05*x})
				}
				if step == stepsPerEpoch {
					enc.Encode(map[string]any{"event": "refresh", "step": step, "embed_seconds": 0.1})
				}
			}
			enc.Encode(map[string]any{"event": "final", "run": run, "sampler": smp})
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		t.Fatalf("%s: empty (%v)", path, err)
	}
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// countColour is the number of pixels of img exactly of colour c (the inside
// of a thick line).
func countColour(img image.Image, c color.NRGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == c.R && uint8(g>>8) == c.G && uint8(bl>>8) == c.B {
				n++
			}
		}
	}
	return n
}

// writePlots writes the three PNGs, decodable and of the figure size; every
// sampler is drawn in its own colour in each of them; the legends of loss
// and false-negative ratio list the samplers once (not the runs).
func TestPlotWritePlots(t *testing.T) {
	demo := []string{"uniform", "knn", "batchsampler"}
	for _, tc := range []struct {
		name          string
		samplers      []string
		seeds, epochs int
		xlabel        string
	}{
		{"3 samplers x 3 seeds", demo, 3, 8, "epoch"},
		{"one epoch: per step", demo, 2, 1, "training step"},
		{"one seed", []string{"knn", "my sampler"}, 1, 5, "epoch"},
		{"no metrics", nil, 0, 0, "training step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSyntheticMetrics(t, dir, tc.samplers, tc.seeds, tc.epochs, 6)
			err := writePlots(dir)
			if tc.samplers == nil { // nothing trained: no figure, and the error says so
				if !errors.Is(err, ErrNothingToPlot) {
					t.Errorf("writePlots: %v, want ErrNothingToPlot", err)
				}
				if _, err := os.Stat(filepath.Join(dir, "plots")); !os.IsNotExist(err) {
					t.Errorf("plots directory: %v, want none", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			colours := samplerColours(tc.samplers)
			wantW, wantH := figPixels()
			for _, name := range plotNames {
				img := decodePNG(t, filepath.Join(dir, "plots", name))
				if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
					t.Errorf("%s: %d×%d pixels, want %d×%d", name, b.Dx(), b.Dy(), wantW, wantH)
				}
				for _, s := range tc.samplers {
					if n := countColour(img, colours[s]); n < 100 {
						t.Errorf("%s: %d pixels of %s's colour %v, want a thick line of it", name, n, s, colours[s])
					}
				}
			}
			d, err := readPlotData(filepath.Join(dir, "metrics.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			figs, err := buildFigures(d)
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(tc.samplers)
			if tc.seeds > 1 {
				want = append(want, "", "mean over seeds", "one seed")
			}
			for _, name := range []string{"loss.png", "fn_ratio.png"} {
				f := figs[name]
				if !slices.Equal(f.labels, want) {
					t.Errorf("%s: legend %q, want %q", name, f.labels, want)
				}
				if f.p.X.Label.Text != tc.xlabel {
					t.Errorf("%s: x axis %q, want %q", name, f.p.X.Label.Text, tc.xlabel)
				}
			}
			if got := figs["similarity_hist.png"].labels; !slices.Equal(got, tc.samplers) {
				t.Errorf("similarity_hist.png: legend %q, want %q", got, tc.samplers)
			}
		})
	}
}

// Every legend is drawn outside the data area: drawn alone at its place in
// the figure, none of its pixels falls into the plot's data area or off the
// image, and it sits to the right of the data. A long sampler name is
// shortened rather than drawn off the image.
func TestPlotLegendOutsideData(t *testing.T) {
	dir := t.TempDir()
	long := "batchsampler with a very long label: rwr, alpha 0.2 to 0.05, refresh every 10"
	writeSyntheticMetrics(t, dir, []string{"uniform", "knn", "batchsampler", "a", "b", "c", "d", "e", "f", long}, 3, 4, 3)
	d, err := readPlotData(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	figs, err := buildFigures(d)
	if err != nil {
		t.Fatal(err)
	}
	var w vg.Length
	for _, f := range figs {
		w = max(w, f.legendWidth())
	}
	strip := stripWidth(w)
	if strip > vg.Length(maxStripFrac)*figW {
		t.Errorf("legend strip %v wider than %v of the figure", strip, maxStripFrac)
	}
	for _, name := range plotNames {
		f := figs[name]
		if len(f.labels) < 10 {
			t.Fatalf("%s: legend %q", name, f.labels)
		}
		img := vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(figDPI))
		dc := draw.New(img)
		plotC, legendC := f.layout(dc, strip)
		data := f.p.DataCanvas(plotC).Rectangle
		f.legend.Draw(legendC)
		// data area in pixels (vg's y axis points up)
		px := func(l vg.Length) int { return int(math.Round(float64(l) / 72 * figDPI)) }
		x0, x1 := px(data.Min.X), px(data.Max.X)
		y0, y1 := img.Image().Bounds().Dy()-px(data.Max.Y), img.Image().Bounds().Dy()-px(data.Min.Y)
		if x1-x0 < 300 || y1-y0 < 200 {
			t.Errorf("%s: data area %d×%d pixels: too small", name, x1-x0, y1-y0)
		}
		ink, inside := 0, 0
		b := img.Image().Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.Image().At(x, y).RGBA()
				if r>>8 > 250 && g>>8 > 250 && bl>>8 > 250 {
					continue
				}
				ink++
				if x <= x1 { // inside the data area or left of it
					inside++
				}
				if x >= b.Max.X-1 { // touches the right edge: cut off
					t.Errorf("%s: legend reaches the image's right edge", name)
					x, y = b.Max.X, b.Max.Y
				}
			}
		}
		if ink < 500 {
			t.Errorf("%s: legend drew only %d pixels", name, ink)
		}
		if inside > 0 {
			t.Errorf("%s: %d legend pixels inside or left of the data area", name, inside)
		}
		if got, want := f.p.Legend.Rectangle(dc).Size().X, vg.Length(0); got != want {
			t.Errorf("%s: the plot's own legend (drawn inside the axes) has entries", name)
		}
	}
}

// The tick markers: whole numbers only for epochs and steps, round labels.
func TestPlotTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ticker func(lo, hi float64) []plot.Tick
		lo, hi float64
		want   string
	}{
		{"epochs 1-10", intTicks, 1, 10, "1 2 3 4 5 6 7 8 9 10"},
		{"epochs 1-40", intTicks, 1, 40, "5 10 15 20 25 30 35 40"},
		{"steps 1-600", intTicks, 1, 600, "100 200 300 400 500 600"},
		{"epochs 0.5-3.5", intTicks, 0.5, 3.5, "1 2 3"},
		{"cosine", niceTicks, -1, 1, "-1.0 -0.5 0.0 0.5 1.0"},
		{"loss", niceTicks, 1.52, 2.55, "1.6 1.8 2.0 2.2 2.4"},
		{"share", niceTicks, 0, 0.174, "0.00 0.05 0.10 0.15"},
		{"steps of 2.5", niceTicks, 0, 0.14, "0.000 0.025 0.050 0.075 0.100 0.125"},
		{"flat", niceTicks, 0.3331, 0.3339, "0.3332 0.3334 0.3336 0.3338"},
	} {
		var got []string
		for _, tk := range tc.ticker(tc.lo, tc.hi) {
			if tk.Value < tc.lo || tk.Value > tc.hi {
				t.Errorf("%s: tick %v outside [%v, %v]", tc.name, tk.Value, tc.lo, tc.hi)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: labels %q, want %q", tc.name, g, tc.want)
		}
	}
}

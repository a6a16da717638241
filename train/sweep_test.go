package train

import (
	"bytes"
	"strings"
	"testing"
)

const sweepBase = tinySynthetic + `samplers:
  - {kind: uniform}
  - {kind: batchsampler, m: 40, k: 10, alpha: {start: 0.2, end: 0.05}, refresh_every: 3}
`

// The sweep section is decoded as strictly as every other section, and
// its shape is checked against the samplers; errors name the key and line.
func TestSweepSectionValidation(t *testing.T) {
	tests := []struct {
		name, sweep string
		want        string // "" = valid
	}{
		{"grid", "sweep:\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", values: [20, 40]}\n", ""},
		{"points", "sweep:\n  baseline: uniform\n  points:\n    - name: covering\n      set:\n        samplers[1].epoch: covering\n", ""},
		{"unknown key", "sweep:\n  baseline: uniform\n  axis:\n    - {key: \"samplers[1].m\", values: [20]}\n", "sweep.axis (line 17): unknown key; allowed keys under sweep: axes, baseline, mode, points"},
		{"unknown axis key", "sweep:\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", vals: [20]}\n", "sweep.axes[0].vals (line 18): unknown key; allowed keys under sweep.axes[0]: key, labels, name, shared, values"},
		{"unknown point key", "sweep:\n  baseline: uniform\n  points:\n    - {name: a, sets: {x: 1}}\n", "sweep.points[0].sets (line 18): unknown key"},
		{"bad mode", "sweep:\n  mode: random\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", values: [20]}\n", `sweep.mode (line 16): "random" is not allowed; allowed values: grid, zip`},
		{"no baseline", "sweep:\n  axes:\n    - {key: \"samplers[1].m\", values: [20]}\n", "sweep.baseline: name the sampler every point is compared with, one of uniform, batchsampler"},
		{"unknown baseline", "sweep:\n  baseline: knn\n  axes:\n    - {key: \"samplers[1].m\", values: [20]}\n", `sweep.baseline (line 16): "knn" is not a sampler of samplers:`},
		{"zip unequal", "sweep:\n  mode: zip\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", values: [20, 40]}\n    - {key: \"samplers[1].k\", values: [5]}\n", "sweep.axes[1].values (line 20): mode zip pairs the axes' values element-wise, but this axis (samplers[1].k) has 1 values and sweep.axes[0] (samplers[1].m) has 2"},
		{"labels", "sweep:\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", values: [20, 40], labels: [a]}\n", "sweep.axes[0].labels (line 18): 1 labels for 2 values"},
		{"axes and points", "sweep:\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", values: [20]}\n  points:\n    - {name: a, shared: {train.epochs: 1}}\n", "sweep.axes, sweep.points: give one of them, not both"},
		{"same axis name", "sweep:\n  baseline: uniform\n  axes:\n    - {key: \"samplers[1].m\", values: [20]}\n    - {key: model.m, values: [20]}\n", `sweep.axes[1] (line 19): axis name "m" is also that of sweep.axes[0]`},
		{"empty", "sweep:\n  baseline: uniform\n", "sweep (line 15): give axes (keys and their values) or points"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(sweepBase+tt.sweep), nil)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Sweep == nil || c.Sweep.Size() == 0 {
					t.Errorf("sweep not decoded: %+v", c.Sweep)
				}
				var b bytes.Buffer
				if err := WriteConfig(&b, &c); err != nil {
					t.Fatal(err)
				}
				again, err := ParseConfig(b.Bytes(), nil)
				if err != nil || again.Sweep.Size() != c.Sweep.Size() {
					t.Errorf("written config does not read back: %v\n%s", err, b.String())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
}

// PairBySeed pairs by seed whatever the order, over the common seeds only,
// with eval.PairedTTest's numbers.
func TestPairBySeed(t *testing.T) {
	e := ResultEntry{Sampler: "bs", Seeds: []uint64{0, 1, 2, 3}, PerSeed: []float64{71, 72, 74, 99}}
	base := ResultEntry{Sampler: "uniform", Seeds: []uint64{2, 0, 1}, PerSeed: []float64{72, 70, 71}}
	p := PairBySeed(e, base)
	if p == nil || p.N != 3 || p.Baseline != "uniform" || p.MeanDiff != (1+1+2)/3.0 {
		t.Fatalf("PairBySeed = %+v", p)
	}
	// The same pairs in order: 71-70, 72-71, 74-72.
	same := PairBySeed(ResultEntry{Seeds: []uint64{0, 1, 2}, PerSeed: []float64{71, 72, 74}}, ResultEntry{Sampler: "uniform", Seeds: []uint64{0, 1, 2}, PerSeed: []float64{70, 71, 72}})
	if same == nil || same.T != p.T || same.P != p.P {
		t.Errorf("by seed %+v, in order %+v", p, same)
	}
	for _, tt := range []struct {
		name string
		e    ResultEntry
	}{
		{"one common seed", ResultEntry{Seeds: []uint64{1, 9}, PerSeed: []float64{1, 2}}},
		{"all equal", ResultEntry{Seeds: []uint64{0, 1}, PerSeed: []float64{70, 71}}},
	} {
		if p := PairBySeed(tt.e, base); p != nil {
			t.Errorf("%s: %+v, want nil", tt.name, p)
		}
	}
}

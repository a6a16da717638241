package viz

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseConfigRejects(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"unknown top-level key", "batch_size: 32\nbatchsize: 32\n", []string{"batchsize", "line 2", "unknown key", "batch_size"}},
		{"unknown nested key", "sampler:\n  m: 60\n  restart: 0.3\n", []string{"sampler.restart", "line 3", "unknown key", "alpha"}},
		{"unknown key in flow mapping", "points: {n: 600, colour: red}\n", []string{"points.colour", "unknown key", "radius_jitter"}},
		{"integer expected", "batch_size: many\n", []string{"batch_size", "integer", "many"}},
		{"number expected", "sampler: {alpha: high}\n", []string{"sampler.alpha", "number", "high"}},
		{"list expected", "sampler: {alphas: 0.2}\n", []string{"sampler.alphas", "list"}},
		{"list element", "sampler: {alphas: [0.2, x]}\n", []string{"sampler.alphas[1]", "number"}},
		{"negative seed", "seed: -1\n", []string{"seed", "non-negative integer"}},
		{"mapping expected", "points: 600\n", []string{"points", "mapping"}},
		{"not YAML", "points: {n: 600\n", []string{"not valid YAML"}},
		{"n too small", "points: {n: 1}\nbatch_size: 1\n", []string{"points.n = 1"}},
		{"classes", "points: {classes: 0}\n", []string{"points.classes = 0"}},
		{"spread", "points: {spread: -0.1}\n", []string{"points.spread = -0.1"}},
		{"spread inf", "points: {spread: .inf}\n", []string{"points.spread = +Inf"}},
		{"radius jitter", "points: {radius_jitter: 1}\n", []string{"points.radius_jitter = 1"}},
		{"batch size", "batch_size: 601\n", []string{"batch_size = 601", "points.n = 600"}},
		{"k", "sampler: {k: 0}\n", []string{"sampler.k = 0"}},
		{"m below k", "sampler: {m: 4, k: 8}\n", []string{"sampler.m = 4", "sampler.k = 8"}},
		{"m above n", "sampler: {m: 600}\n", []string{"sampler.m = 600", "599"}},
		{"alpha", "sampler: {alpha: 1.5}\n", []string{"sampler.alpha = 1.5", "[0, 1]"}},
		{"alphas empty", "sampler: {alphas: []}\n", []string{"sampler.alphas has 0 values"}},
		{"alphas value", "sampler: {alphas: [0.2, -1]}\n", []string{"sampler.alphas[1] = -1"}},
		{"alphas too many", "sampler: {alphas: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}\n", []string{"sampler.alphas has 7 values"}},
		{"batches", "batches: 0\n", []string{"batches = 0"}},
		{"line of a bad value", "points: {n: 300}\nsampler:\n  k: 0\n", []string{"sampler.k = 0 (line 3): want between 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(strings.NewReader(tc.yaml))
			if err == nil {
				t.Fatalf("accepted %q", tc.yaml)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestParseConfigDefaultsAndOverrides(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		edit       func(*Config)
	}{
		{"empty document", "", func(*Config) {}},
		{"comment only", "# nothing\n", func(*Config) {}},
		{"one nested key", "sampler: {k: 5}\n", func(c *Config) { c.Sampler.K = 5 }},
		{"list replaced, not merged", "sampler: {alphas: [0.5]}\n", func(c *Config) { c.Sampler.Alphas = []float64{0.5} }},
		{"several", "points: {n: 300, seed: 9}\nbatch_size: 16\nout: elsewhere\n", func(c *Config) {
			c.Points.N, c.Points.Seed, c.BatchSize, c.Out = 300, 9, 16, "elsewhere"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig(strings.NewReader(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultConfig()
			tc.edit(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestLoadConfigFiles(t *testing.T) {
	// The shipped configuration is the built-in default.
	c, err := LoadConfig("../../../../configs/demo-sampler.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf("configs/demo-sampler.yaml = %+v, DefaultConfig() = %+v", c, DefaultConfig())
	}
	if c, err = LoadConfig("testdata/small.yaml"); err != nil {
		t.Fatal(err)
	}
	if c.Points.N != 240 || c.Points.RadiusJitter != DefaultConfig().Points.RadiusJitter || c.Sampler.Alpha != 0.3 || c.Seed != 7 {
		t.Errorf("testdata/small.yaml decoded as %+v", c)
	}
	for _, tc := range []struct{ path, want string }{
		{"testdata/unknown_nested.yaml", "testdata/unknown_nested.yaml: sampler.restart (line 5): unknown key"},
		{"testdata/bad_value.yaml", "testdata/bad_value.yaml: sampler.m = 4"},
		{"testdata/missing.yaml", "testdata/missing.yaml"},
	} {
		if _, err := LoadConfig(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadConfig(%s) = %v, want an error containing %q", tc.path, err, tc.want)
		}
	}
}

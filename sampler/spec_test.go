package sampler

import (
	"math"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestSpecYAMLRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      Spec
		alphaYAML string // how alpha is written back
	}{
		{"constant alpha", "{kind: batchsampler, label: RW, m: 500, k: 100, walk: rw, graph: proximity, alpha: 0.3, refresh_every: 25, embedding: cached, max_walk_steps: 7}",
			Spec{Kind: "batchsampler", Label: "RW", M: 500, K: 100, Walk: "rw", Graph: "proximity", Alpha: AlphaSchedule{Start: 0.3, End: 0.3, Constant: true}, RefreshEvery: 25, Embedding: "cached", MaxWalkSteps: 7},
			"alpha: 0.3"},
		{"linear alpha", "{kind: batchsampler, m: 1000, k: 100, alpha: {start: 0.2, end: 0.05}, refresh_every: 50}",
			Spec{Kind: "batchsampler", M: 1000, K: 100, Alpha: AlphaSchedule{Start: 0.2, End: 0.05}, RefreshEvery: 50},
			"alpha:\n    end: 0.05\n    start: 0.2"},
		{"integer alpha", "{kind: batchsampler, m: 10, k: 5, alpha: 0}",
			Spec{Kind: "batchsampler", M: 10, K: 5, Alpha: AlphaSchedule{Constant: true}},
			"alpha: 0\n"},
		{"no alpha", "{kind: knn, refresh_every: 3, embedding: encoder}",
			Spec{Kind: "knn", RefreshEvery: 3, Embedding: "encoder"},
			"alpha:\n    end: 0\n    start: 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Spec
			if err := yaml.Unmarshal([]byte(tc.src), &s); err != nil {
				t.Fatal(err)
			}
			if s != tc.want {
				t.Fatalf("decoded %+v, want %+v", s, tc.want)
			}
			out, err := yaml.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), tc.alphaYAML) {
				t.Errorf("encoded alpha is not %q:\n%s", tc.alphaYAML, out)
			}
			var back Spec
			if err := yaml.Unmarshal(out, &back); err != nil {
				t.Fatal(err)
			}
			if back != s {
				t.Errorf("round trip gave %+v, want %+v\n%s", back, s, out)
			}
		})
	}
	var s Spec
	if err := yaml.Unmarshal([]byte("{kind: batchsampler, alpha: fast}"), &s); err == nil || !strings.Contains(err.Error(), "alpha must be a number or {start, end}") {
		t.Errorf("alpha: fast: err = %v", err)
	}
}

func TestSpecYAMLKeys(t *testing.T) {
	// The schema of train.SamplerConfig, in order.
	out, err := yaml.Marshal(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var n yaml.Node
	if err := yaml.Unmarshal(out, &n); err != nil {
		t.Fatal(err)
	}
	m := n.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	want := []string{"kind", "label", "m", "k", "walk", "graph", "alpha", "refresh_every", "embedding", "max_walk_steps"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
}

func TestSpecValidate(t *testing.T) {
	good := Spec{Kind: "batchsampler", M: 500, K: 100, Walk: "rwr", Graph: "proximity", Alpha: AlphaSchedule{Start: 0.2, End: 0.05}, RefreshEvery: 25}
	with := func(f func(*Spec)) Spec {
		s := good
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		s    Spec
		key  string
		want string // "" = valid; else the exact message
	}{
		{"batchsampler", good, "sampler", ""},
		{"defaults", with(func(s *Spec) { s.Walk, s.Graph, s.Embedding = "", "", "" }), "sampler", ""},
		{"every walk", with(func(s *Spec) { s.Walk = "dfs" }), "sampler", ""},
		{"knn graph, encoder", with(func(s *Spec) { s.Graph, s.Embedding = "knn", "encoder" }), "sampler", ""},
		{"alpha bounds", with(func(s *Spec) { s.Alpha = AlphaSchedule{Start: 1, End: 0} }), "sampler", ""},
		{"refresh once", with(func(s *Spec) { s.RefreshEvery = 0 }), "sampler", ""},
		{"uniform ignores the rest", Spec{Kind: "uniform", Walk: "zigzag", M: -1, RefreshEvery: -5, Embedding: "x"}, "sampler", ""},
		{"knn ignores walk, graph, m, k, alpha", Spec{Kind: "knn", Walk: "zigzag", Graph: "x", K: -1, Alpha: AlphaSchedule{Start: 7}, Embedding: "cached"}, "sampler", ""},

		{"kind", with(func(s *Spec) { s.Kind = "fancy" }), "samplers[0]",
			`samplers[0].kind: "fancy" is not allowed; allowed values: uniform, knn, batchsampler, gcbs, spectral, osgd, kmeans, antikmeans`},
		{"empty kind", Spec{}, "sampler",
			`sampler.kind: "" is not allowed; allowed values: uniform, knn, batchsampler, gcbs, spectral, osgd, kmeans, antikmeans`},
		{"embedding", with(func(s *Spec) { s.Embedding = "fresh" }), "samplers[1]",
			`samplers[1].embedding: "fresh" is not allowed; allowed values: projection (default), encoder, cached, cached_views`},
		{"knn embedding", Spec{Kind: "knn", Embedding: "fresh"}, "sampler",
			`sampler.embedding: "fresh" is not allowed; allowed values: projection (default), encoder, cached, cached_views`},
		{"refresh_every", with(func(s *Spec) { s.RefreshEvery = -1 }), "samplers[2]",
			`samplers[2].refresh_every: must be >= 0, got -1`},
		{"knn refresh_every", Spec{Kind: "knn", RefreshEvery: -3}, "sampler",
			`sampler.refresh_every: must be >= 0, got -3`},
		{"walk", with(func(s *Spec) { s.Walk = "zigzag" }), "samplers[1]",
			`samplers[1].walk: "zigzag" is not allowed; allowed values: rwr (default), rw, bfs, dfs`},
		{"graph", with(func(s *Spec) { s.Graph = "full" }), "sampler",
			`sampler.graph: "full" is not allowed; allowed values: proximity (default), knn`},
		{"k", with(func(s *Spec) { s.K = 0 }), "samplers[1]",
			`samplers[1].k: must be a positive integer, got 0`},
		{"m", with(func(s *Spec) { s.M = 50 }), "samplers[1]",
			`samplers[1].m: must be >= samplers[1].k = 100, got 50`},
		{"alpha.start", with(func(s *Spec) { s.Alpha = AlphaSchedule{Start: 1.5, End: 1.5, Constant: true} }), "samplers[0]",
			`samplers[0].alpha.start: must be in [0, 1], got 1.5`},
		{"alpha.end", with(func(s *Spec) { s.Alpha.End = -0.1 }), "sampler",
			`sampler.alpha.end: must be in [0, 1], got -0.1`},
		{"alpha NaN", with(func(s *Spec) { s.Alpha.Start = math.NaN() }), "sampler",
			`sampler.alpha.start: must be in [0, 1], got NaN`},

		// candidates: the published code's draw, with replacement.
		{"candidates default", with(func(s *Spec) { s.Candidates = "without_replacement" }), "sampler", ""},
		{"candidates with_replacement", with(func(s *Spec) { s.Candidates = "with_replacement" }), "sampler", ""},
		{"with_replacement, m > N", with(func(s *Spec) { s.Candidates, s.M = "with_replacement", 6000 }), "sampler", ""},
		{"with_replacement, k = m", with(func(s *Spec) { s.Candidates, s.M, s.K = "with_replacement", 3000, 3000 }), "sampler", ""},
		{"candidates value", with(func(s *Spec) { s.Candidates = "replacement" }), "samplers[1]",
			`samplers[1].candidates: "replacement" is not allowed; allowed values: without_replacement (default), with_replacement`},
		{"candidates case", with(func(s *Spec) { s.Candidates = "With_Replacement" }), "sampler",
			`sampler.candidates: "With_Replacement" is not allowed; allowed values: without_replacement (default), with_replacement`},
		{"with_replacement, m < k", with(func(s *Spec) { s.Candidates, s.M = "with_replacement", 50 }), "samplers[1]",
			`samplers[1].m: must be >= samplers[1].k = 100, got 50`},
		{"with_replacement, m ≥ 2^31", with(func(s *Spec) { s.Candidates, s.M = "with_replacement", 1<<31 }), "samplers[1]",
			`samplers[1].m: must be < 2^31 with candidates: with_replacement, got 2147483648`},
		{"with_replacement, graph knn", with(func(s *Spec) { s.Candidates, s.Graph = "with_replacement", "knn" }), "samplers[1]",
			`samplers[1].candidates: with_replacement draws the candidates of graph proximity; graph knn draws none (remove candidates or set graph: proximity)`},
		{"candidates on knn", Spec{Kind: "knn", Candidates: "with_replacement"}, "samplers[0]",
			`samplers[0].candidates: only kind batchsampler has this key, got kind knn`},
		{"candidates on uniform", Spec{Kind: "uniform", Candidates: "without_replacement"}, "sampler",
			`sampler.candidates: only kind batchsampler has this key, got kind uniform`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate(tc.key)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("valid spec rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want %q", tc.want)
			case tc.want != "" && err.Error() != tc.want:
				t.Errorf("error\n  %s\nwant\n  %s", err, tc.want)
			}
		})
	}
}

// The allowed values come from the lists beside the implementations, which
// the constructors accept too.
func TestSpecListsMatchImplementations(t *testing.T) {
	for _, w := range Walks {
		if _, err := validWalk(w); err != nil {
			t.Errorf("walk %q: %v", w, err)
		}
	}
	if w, _ := validWalk(""); w != WalkRWR || Walks[0] != WalkRWR {
		t.Errorf("default walk %q, Walks[0] %q", w, Walks[0])
	}
	if _, err := validWalk("zigzag"); err == nil || err.Error() != `walk "zigzag" is not one of "rwr", "rw", "bfs", "dfs"` {
		t.Errorf("validWalk(zigzag) = %v", err)
	}
	for _, g := range GraphKinds {
		if _, err := NewBatchSampler(Config{BatchSize: 4, Graph: g}, 20, 1); err != nil {
			t.Errorf("graph %q: %v", g, err)
		}
	}
	if _, err := NewBatchSampler(Config{BatchSize: 4, Graph: "full"}, 20, 1); err == nil || !strings.Contains(err.Error(), `want "proximity" or "knn"`) {
		t.Errorf("graph full: %v", err)
	}
	c, _ := NewBatchSampler(Config{BatchSize: 4}, 20, 1)
	if c.Config().Graph != GraphKinds[0] || GraphKinds[0] != GraphProximity {
		t.Errorf("default graph %q", c.Config().Graph)
	}
	for _, k := range Kinds {
		s := Spec{Kind: k, M: 10, K: 5}
		if k == KindSpectral || k == KindOSGD {
			s.Temperature = 0.5 // no default: train sets it to loss.temperature
		}
		if _, err := s.New(20, 4, 1); err != nil {
			t.Errorf("kind %q: %v", k, err)
		}
	}
}

func TestSpecDisplayName(t *testing.T) {
	if n := (Spec{Kind: "knn"}).DisplayName(); n != "knn" {
		t.Errorf("DisplayName = %q", n)
	}
	if n := (Spec{Kind: "batchsampler", Label: "RWR"}).DisplayName(); n != "RWR" {
		t.Errorf("DisplayName = %q", n)
	}
}

// New builds the samplers train built with its own constructor calls:
// identical batches, refreshes included.
func TestSpecNewMatchesConstructors(t *testing.T) {
	const n, b, seed = 300, 16, 77
	emb := randomEmbeddings(n, 8, 5)
	emb2 := randomEmbeddings(n, 8, 6)
	for _, tc := range []struct {
		name   string
		spec   Spec
		direct func() (Sampler, error)
	}{
		{"uniform", Spec{Kind: "uniform"}, func() (Sampler, error) { return NewUniform(n, b, seed) }},
		{"knn", Spec{Kind: "knn", RefreshEvery: 4}, func() (Sampler, error) { return NewKNN(n, b, 4, seed) }},
		{"batchsampler linear", Spec{Kind: "batchsampler", M: 60, K: 10, Walk: "rwr", Graph: "proximity", Alpha: AlphaSchedule{Start: 0.2, End: 0.05}, RefreshEvery: 5},
			func() (Sampler, error) {
				return NewBatchSampler(Config{BatchSize: b, M: 60, K: 10, Walk: "rwr", Graph: "proximity", Alpha: Schedule{Start: 0.2, End: 0.05, Kind: "linear"}, RefreshEvery: 5}, n, seed)
			}},
		{"batchsampler constant dfs knn graph", Spec{Kind: "batchsampler", M: 60, K: 10, Walk: "dfs", Graph: "knn", Alpha: AlphaSchedule{Start: 0.5, End: 0.5, Constant: true}, MaxWalkSteps: 40},
			func() (Sampler, error) {
				return NewBatchSampler(Config{BatchSize: b, M: 60, K: 10, Walk: "dfs", Graph: "knn", Alpha: Schedule{Start: 0.5, End: 0.5, Kind: "constant"}, MaxWalkSteps: 40}, n, seed)
			}},
		{"batchsampler no alpha", Spec{Kind: "batchsampler", M: 30, K: 30},
			func() (Sampler, error) {
				return NewBatchSampler(Config{BatchSize: b, M: 30, K: 30, Alpha: Schedule{Kind: "linear"}}, n, seed)
			}},
		{"batchsampler with replacement, M > N", Spec{Kind: "batchsampler", M: 4 * n, K: 20, Candidates: "with_replacement", Alpha: AlphaSchedule{Start: 0.2, End: 0.05}, RefreshEvery: 10},
			func() (Sampler, error) {
				return NewBatchSampler(Config{BatchSize: b, M: 4 * n, K: 20, Candidates: CandidatesWithReplacement, Alpha: Schedule{Start: 0.2, End: 0.05, Kind: "linear"}, RefreshEvery: 10}, n, seed)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.spec.New(n, b, seed)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tc.direct()
			if err != nil {
				t.Fatal(err)
			}
			const steps = 40
			for step := 0; step < steps; step++ {
				for _, s := range []Sampler{got, want} {
					if sc, ok := s.(Scheduled); ok {
						sc.SetProgress(step, steps)
					}
					if rf, ok := s.(Refresher); ok && step%10 == 0 {
						e := emb
						if step%20 == 10 {
							e = emb2
						}
						if err := rf.Refresh(e); err != nil {
							t.Fatal(err)
						}
					}
				}
				if g, w := got.Next(), want.Next(); !slices.Equal(g, w) {
					t.Fatalf("step %d: New gave %v, the constructor %v", step, g, w)
				}
			}
			gs, _ := got.MarshalBinary()
			ws, _ := want.MarshalBinary()
			if string(gs) != string(ws) {
				t.Errorf("states differ after %d steps", steps)
			}
		})
	}
}

func TestSpecNewRejectsInvalid(t *testing.T) {
	for _, s := range []Spec{{Kind: "fancy"}, {Kind: "batchsampler", M: 10, K: 0}, {Kind: "batchsampler", M: 10, K: 5, Walk: "zigzag"}} {
		if smp, err := s.New(100, 8, 1); err == nil || smp != nil {
			t.Errorf("%+v: New = %v, %v", s, smp, err)
		}
	}
	// Errors of the constructors come back as a nil Sampler, not a typed nil.
	for _, s := range []Spec{{Kind: "uniform"}, {Kind: "knn"}, {Kind: "batchsampler", M: 10, K: 5}} {
		if smp, err := s.New(0, 8, 1); err == nil || smp != nil {
			t.Errorf("%+v with n=0: New = %v, %v", s, smp, err)
		}
	}
}

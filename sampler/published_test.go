package sampler

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// epochsOf draws batches from s until it has finished epochs sampler epochs
// (SamplerEpoch) and returns them grouped by epoch, the epoch in progress
// dropped.
func epochsOf(t *testing.T, s *BatchSampler, epochs int) [][][]int {
	t.Helper()
	var out [][][]int
	for guard := 0; guard < 100000; guard++ {
		b := s.Next()
		e, _ := s.SamplerEpoch()
		if e == epochs {
			return out
		}
		for len(out) <= e {
			out = append(out, nil)
		}
		out[e] = append(out[e], b)
	}
	t.Fatal("no end of epochs")
	return nil
}

// Covering epochs (epoch: covering): every epoch walks until ⌊N/B⌋·B
// distinct instances are covered, with B distinct instances per walk, then
// trains the instances left as one batch (a single one joins the last walk);
// so every epoch covers all N instances in at least Uniform's number of
// batches, and, the walks overlapping, in more batches over the run.
func TestCoveringEpochs(t *testing.T) {
	const epochs = 6
	for _, tc := range []struct {
		name string
		n, b int
	}{
		{"N mod B = 26", 90, 32},
		{"B divides N", 100, 10},
		{"N mod B = 1", 61, 20},
		{"N mod B = 1, small B", 41, 8},
		{"two batches", 50, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewBatchSampler(Config{BatchSize: tc.b, M: 30, K: 5, Alpha: Schedule{Start: 0.3, Kind: ScheduleConstant}, Epoch: EpochCovering}, tc.n, 7)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Refresh(randomEmbeddings(tc.n, 8, 3)); err != nil {
				t.Fatal(err)
			}
			bpe := batchesPerEpoch(tc.n, tc.b)
			if s.BatchesPerEpoch() != bpe {
				t.Fatalf("BatchesPerEpoch %d, want Uniform's %d (the step budget's unit)", s.BatchesPerEpoch(), bpe)
			}
			target := tc.n / tc.b * tc.b
			total := 0
			for e, batches := range epochsOf(t, s, epochs) {
				total += len(batches)
				if len(batches) < bpe {
					t.Errorf("epoch %d: %d batches, want at least %d", e, len(batches), bpe)
				}
				covered := map[int]bool{}
				for k, batch := range batches {
					if set := slices.Compact(slices.Sorted(slices.Values(batch))); len(set) != len(batch) {
						t.Fatalf("epoch %d batch %d has repeated instances: %v", e, k, batch)
					}
					before := len(covered)
					last := k == len(batches)-1
					switch {
					case before < target && len(batch) == tc.b: // a walk
						if covered[batch[0]] {
							t.Errorf("epoch %d batch %d starts at covered node %d", e, k, batch[0])
						}
					case before < target && last && len(batch) == tc.b+1 && tc.n%tc.b != 0: // a walk and the one node left
					case before >= target && last && len(batch) == tc.n-before && len(batch) >= 2: // the leftover batch
						for _, v := range batch {
							if covered[v] {
								t.Errorf("epoch %d: leftover batch holds covered node %d", e, v)
							}
						}
					default:
						t.Fatalf("epoch %d batch %d (of %d): %d instances with %d of %d covered before it (target %d)", e, k, len(batches), len(batch), before, tc.n, target)
					}
					for _, v := range batch {
						covered[v] = true
					}
				}
				if len(covered) != tc.n {
					t.Errorf("epoch %d covers %d of %d instances", e, len(covered), tc.n)
				}
			}
			if total <= epochs*bpe {
				t.Errorf("%d batches in %d epochs: the walks never overlapped (Uniform's would be %d)", total, epochs, epochs*bpe)
			}
		})
	}
}

// The α sequence of the per-epoch schedule, per 0-based sampler epoch:
// the published Python's restart_p − (epoch/5)·0.1 for the 1-based epoch,
// floored (values printed by python3 for restart_p 0.2, floor 0.05, and for
// 0.3, floor 0.1).
func TestPerEpochAlpha(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alpha AlphaSchedule
		want  []float64
	}{
		{"published", AlphaSchedule{Kind: "per_epoch"}, []float64{0.18, 0.16, 0.14, 0.12, 0.1, 0.08000000000000002, 0.060000000000000026, 0.05, 0.05, 0.05, 0.05}},
		{"start 0.3, floor 0.1", AlphaSchedule{Kind: "per_epoch", Start: 0.3, End: 0.1}, []float64{0.27999999999999997, 0.26, 0.24, 0.21999999999999997, 0.19999999999999998, 0.18, 0.16, 0.13999999999999996, 0.11999999999999997, 0.1, 0.1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := tc.alpha.Schedule()
			for e, w := range tc.want {
				if got := sch.ValueAt(123, 1000, e); got != w {
					t.Errorf("ValueAt epoch %d = %v, want %v", e, got, w)
				}
			}
			s, err := NewBatchSampler(Config{BatchSize: 8, M: 20, K: 5, Alpha: sch, Epoch: EpochCovering}, 41, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Refresh(randomEmbeddings(41, 6, 1)); err != nil {
				t.Fatal(err)
			}
			var got []float64
			for step := 0; ; step++ {
				s.SetProgress(step, 10000)
				s.Next()
				e, own := s.SamplerEpoch()
				if !own {
					t.Fatal("SamplerEpoch does not matter with a per-epoch α")
				}
				if e == len(tc.want) {
					break
				}
				if e == len(got) {
					got = append(got, s.Alpha())
				} else if s.Alpha() != got[e] {
					t.Fatalf("α changed within epoch %d: %v then %v", e, got[e], s.Alpha())
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("α per sampler epoch %v, want %v", got, tc.want)
			}
		})
	}
	// Linear and constant schedules are unchanged.
	if v := (AlphaSchedule{Start: 0.2, End: 0.05}).Schedule().ValueAt(9, 10, 7); v != 0.05 {
		t.Errorf("linear at the last step: %v", v)
	}
	if v := (AlphaSchedule{Start: 0.3, End: 0.3, Constant: true}).Schedule().ValueAt(5, 10, 12); v != 0.3 {
		t.Errorf("constant: %v", v)
	}
}

// With embedding cached_views a refresh builds the graph from the rows the
// steps wrote since the previous refresh; the other rows are exactly as they
// were (stale). Each written row is both views' projections, normalised and
// concatenated. Rows no step wrote hold the fresh projection twice.
func TestCachedViewsStaleRows(t *testing.T) {
	const n, b, tt, dim, total = 20, 4, 2, 3, 11
	s := &recSampler{n: n, b: b, t: tt}
	m := &toyModel{n: n, d: dim}
	d, err := NewDriver(s, DriverOptions{Embedding: EmbedCachedViews, Embed: m.embed})
	if err != nil {
		t.Fatal(err)
	}
	written := map[int]bool{}
	for step := 0; step < total; step++ {
		rep, err := d.BeforeStep(step, total)
		if err != nil {
			t.Fatal(err)
		}
		if (rep != nil) != (step%tt == 0) {
			t.Fatalf("step %d: refresh %v", step, rep != nil)
		}
		if rep != nil {
			if rep.Source != EmbedCachedViews {
				t.Errorf("refresh source %q", rep.Source)
			}
			cur := s.seen[len(s.seen)-1]
			if cur.D != 2*dim {
				t.Fatalf("refresh rows of %d values, want %d", cur.D, 2*dim)
			}
			if len(s.seen) == 1 {
				// Before any step: the fresh projection, normalised, twice.
				fresh := randomEmbeddings(n, dim, 1) // the toy model's first embedding
				for i := 0; i < n; i++ {
					want := make([]float32, dim)
					normalizeInto(want, fresh.Row(i))
					if row := cur.Row(i); !slices.Equal(row[:dim], want) || !slices.Equal(row[dim:], want) {
						t.Fatalf("row %d before any step: %v, want %v twice", i, row, want)
					}
				}
			} else {
				prev := s.seen[len(s.seen)-2]
				for i := 0; i < n; i++ {
					changed := !slices.Equal(prev.Row(i), cur.Row(i))
					if changed != written[i] {
						t.Errorf("refresh at step %d: row %d changed=%v, written since the previous refresh=%v", step, i, changed, written[i])
					}
				}
			}
			clear(written)
		}
		idx := d.Next()
		p1, p2 := toyProj(idx, dim, step), toyProj(idx, dim, step+100)
		if _, err := d.ObserveViews(idx, p1, p2, dim); err != nil {
			t.Fatal(err)
		}
		for i, j := range idx {
			written[j] = true
			w1, w2 := make([]float32, dim), make([]float32, dim)
			normalizeInto(w1, p1[i*dim:(i+1)*dim])
			normalizeInto(w2, p2[i*dim:(i+1)*dim])
			if row := d.Cache().Row(j); !slices.Equal(row, append(w1, w2...)) {
				t.Fatalf("cached row %d = %v, want %v then %v", j, row, w1, w2)
			}
		}
	}
	if len(m.calls) != 1 {
		t.Errorf("the model embedded the dataset %d times, want once (before any row was written)", len(m.calls))
	}
	if _, err := d.ObserveViews([]int{0}, make([]float32, dim), nil, dim); err == nil || !strings.Contains(err.Error(), "both views") {
		t.Errorf("ObserveViews without the second view: %v", err)
	}
	if _, err := d.Observe([]int{0}, make([]float32, dim), dim); err == nil || !strings.Contains(err.Error(), "ObserveViews") {
		t.Errorf("Observe with cached_views: %v", err)
	}
	if _, err := d.ObserveViews([]int{0}, make([]float32, 4), make([]float32, 4), 4); err == nil || !strings.Contains(err.Error(), "want 2×4") {
		t.Errorf("ObserveViews of another dimension: %v", err)
	}
}

// warmupDriver is a driver of a published BatchSampler over n instances.
func warmupDriver(t *testing.T, spec Spec, n, b int, seed uint64) (*Driver, *toyModel) {
	t.Helper()
	s, err := spec.New(n, b, seed)
	if err != nil {
		t.Fatal(err)
	}
	m := &toyModel{n: n, d: 5}
	d, err := NewDriver(s, DriverOptions{Embedding: spec.Effective().Embedding, Embed: m.embed})
	if err != nil {
		t.Fatal(err)
	}
	return d, m
}

// warmup shuffled_epoch: the first epoch's batches are Uniform's with the
// same seed (the same permutation, the same short last batch), no refresh
// comes before its end, the graph is built right after it (from the
// training-time rows with cached_views: no embedding call; from a fresh
// embedding otherwise) and the walk starts in the second epoch.
func TestShuffledWarmupEpoch(t *testing.T) {
	const seed = 11
	for _, tc := range []struct {
		name       string
		n, b       int
		embedding  string
		wantEmbeds int // calls of the EmbedFunc at the first refresh
	}{
		{"cached_views", 90, 32, "", 0},
		{"cached_views, N mod B = 1", 41, 8, "", 0},
		{"projection", 90, 32, EmbedProjection, 1},
		{"cached (first view)", 41, 8, EmbedCached, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := Spec{Kind: KindBatchSampler, M: 20, K: 5, RefreshEvery: 3, Published: true, Embedding: tc.embedding}
			d, m := warmupDriver(t, spec, tc.n, tc.b, seed)
			u, _ := NewUniform(tc.n, tc.b, seed)
			bpe := u.BatchesPerEpoch()
			total := 4 * bpe
			var after [][]int
			for step := 0; step < total; step++ {
				rep, err := d.BeforeStep(step, total)
				if err != nil {
					t.Fatal(err)
				}
				if step < bpe && rep != nil {
					t.Fatalf("refresh before step %d, inside the warmup epoch of %d steps", step, bpe)
				}
				if step == bpe {
					if rep == nil {
						t.Fatalf("no refresh at the end of the warmup epoch (step %d)", step)
					}
					if len(m.calls) != tc.wantEmbeds {
						t.Errorf("%d embedding calls at the first refresh, want %d", len(m.calls), tc.wantEmbeds)
					}
				}
				if step > bpe && rep != nil && (step-bpe)%3 != 0 {
					t.Errorf("refresh at step %d, want every 3 batches after step %d", step, bpe)
				}
				idx := d.Next()
				if step < bpe {
					if want := u.Next(); !slices.Equal(idx, want) {
						t.Fatalf("warmup batch %d = %v, want Uniform's %v", step, idx, want)
					}
				} else {
					after = append(after, idx)
				}
				if _, err := d.ObserveViews(idx, toyProj(idx, 5, step), toyProj(idx, 5, step+7), 5); err != nil {
					t.Fatal(err)
				}
			}
			bs := d.Sampler().(*BatchSampler)
			if bs.Graph() == nil {
				t.Fatal("no graph after the warmup epoch")
			}
			// After the warmup: walks, whose batches differ from Uniform's.
			same := 0
			for _, idx := range after[:bpe] {
				if slices.Equal(idx, u.Next()) {
					same++
				}
			}
			if same == bpe {
				t.Error("the second epoch is Uniform's too")
			}
			if e, _ := bs.SamplerEpoch(); e < 1 {
				t.Errorf("sampler epoch %d after %d steps", e, total)
			}
		})
	}
}

// The step budget: the loop's T = epochs × BatchesPerEpoch (Uniform's)
// steps are drawn in full, and with covering epochs fewer sampler epochs are
// completed than the loop counts.
func TestCoveringStepBudget(t *testing.T) {
	for _, tc := range []struct {
		n, b, epochs int
	}{{90, 32, 8}, {200, 16, 5}, {41, 8, 10}} {
		spec := Spec{Kind: KindBatchSampler, M: 20, K: 5, RefreshEvery: 4, Published: true}
		d, _ := warmupDriver(t, spec, tc.n, tc.b, 5)
		bpe := d.Sampler().BatchesPerEpoch()
		if u, _ := NewUniform(tc.n, tc.b, 5); bpe != u.BatchesPerEpoch() {
			t.Fatalf("N=%d B=%d: BatchesPerEpoch %d, Uniform's %d", tc.n, tc.b, bpe, u.BatchesPerEpoch())
		}
		total := tc.epochs * bpe
		for step := 0; step < total; step++ {
			if _, err := d.BeforeStep(step, total); err != nil {
				t.Fatal(err)
			}
			idx := d.Next()
			if len(idx) < 2 {
				t.Fatalf("step %d: batch of %d", step, len(idx))
			}
			if _, err := d.ObserveViews(idx, toyProj(idx, 5, step), toyProj(idx, 5, step+1), 5); err != nil {
				t.Fatal(err)
			}
		}
		if e, _ := d.Sampler().(*BatchSampler).SamplerEpoch(); e >= tc.epochs-1 {
			t.Errorf("N=%d B=%d: %d steps reach sampler epoch %d; covering epochs should complete fewer than %d", tc.n, tc.b, total, e, tc.epochs)
		}
	}
}

// published: true turns on the four published choices the spec leaves
// unset, each overridable; the YAML round trip keeps the spec.
func TestSpecPublished(t *testing.T) {
	base := Spec{Kind: KindBatchSampler, M: 30, K: 5, Published: true}
	with := func(f func(*Spec)) Spec { s := base; f(&s); return s }
	for _, tc := range []struct {
		name                           string
		spec                           Spec
		epoch, embedding, warmup, kind string
		alpha                          Schedule
	}{
		{"all on", base, EpochCovering, EmbedCachedViews, WarmupShuffledEpoch, SchedulePerEpoch, Schedule{0.2, 0.05, SchedulePerEpoch}},
		{"epoch fixed", with(func(s *Spec) { s.Epoch = EpochFixed }), EpochFixed, EmbedCachedViews, WarmupShuffledEpoch, SchedulePerEpoch, Schedule{0.2, 0.05, SchedulePerEpoch}},
		{"embedding projection", with(func(s *Spec) { s.Embedding = EmbedProjection }), EpochCovering, EmbedProjection, WarmupShuffledEpoch, SchedulePerEpoch, Schedule{0.2, 0.05, SchedulePerEpoch}},
		{"warmup none", with(func(s *Spec) { s.Warmup = WarmupNone }), EpochCovering, EmbedCachedViews, WarmupNone, SchedulePerEpoch, Schedule{0.2, 0.05, SchedulePerEpoch}},
		{"constant alpha", with(func(s *Spec) { s.Alpha = AlphaSchedule{Start: 0.3, End: 0.3, Constant: true} }), EpochCovering, EmbedCachedViews, WarmupShuffledEpoch, "", Schedule{0.3, 0.3, ScheduleConstant}},
		{"linear alpha", with(func(s *Spec) { s.Alpha = AlphaSchedule{Kind: ScheduleLinear, Start: 0.2, End: 0.05} }), EpochCovering, EmbedCachedViews, WarmupShuffledEpoch, ScheduleLinear, Schedule{0.2, 0.05, ScheduleLinear}},
		{"alpha map: per-epoch from its start to its floor", with(func(s *Spec) { s.Alpha = AlphaSchedule{Start: 0.4, End: 0.1} }), EpochCovering, EmbedCachedViews, WarmupShuffledEpoch, SchedulePerEpoch, Schedule{0.4, 0.1, SchedulePerEpoch}},
		{"not published", with(func(s *Spec) { s.Published = false }), "", "", "", "", Schedule{0, 0, ScheduleLinear}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.spec.Effective()
			if e.Epoch != tc.epoch || e.Embedding != tc.embedding || e.Warmup != tc.warmup || e.Alpha.Kind != tc.kind || e.Alpha.Schedule() != tc.alpha {
				t.Errorf("Effective: epoch %q embedding %q warmup %q alpha %q %+v", e.Epoch, e.Embedding, e.Warmup, e.Alpha.Kind, e.Alpha.Schedule())
			}
			smp, err := tc.spec.New(60, 8, 1)
			if err != nil {
				t.Fatal(err)
			}
			c := smp.(*BatchSampler).Config()
			or := func(v, def string) string {
				if v == "" {
					return def
				}
				return v
			}
			if c.Epoch != or(tc.epoch, EpochFixed) || c.Warmup != or(tc.warmup, WarmupNone) {
				t.Errorf("Config: epoch %q warmup %q", c.Epoch, c.Warmup)
			}
			out, err := yaml.Marshal(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			var back Spec
			if err := yaml.Unmarshal(out, &back); err != nil || back != tc.spec {
				t.Errorf("round trip %+v (%v), want %+v\n%s", back, err, tc.spec, out)
			}
		})
	}
	var a AlphaSchedule
	if err := yaml.Unmarshal([]byte("{schedule: per_epoch}"), &a); err != nil || a.Schedule() != (Schedule{0.2, 0.05, SchedulePerEpoch}) {
		t.Errorf("{schedule: per_epoch}: %+v, %v", a.Schedule(), err)
	}
}

// The published keys are validated like the others, and refused on kinds
// that would ignore them.
func TestSpecValidatePublishedKeys(t *testing.T) {
	good := Spec{Kind: KindBatchSampler, M: 30, K: 5}
	with := func(f func(*Spec)) Spec { s := good; f(&s); return s }
	for _, tc := range []struct {
		name string
		s    Spec
		want string
	}{
		{"published", with(func(s *Spec) { s.Published = true }), ""},
		{"every key", with(func(s *Spec) {
			s.Epoch, s.Warmup, s.Embedding, s.Alpha = EpochCovering, WarmupShuffledEpoch, EmbedCachedViews, AlphaSchedule{Kind: SchedulePerEpoch}
		}), ""},
		{"knn cached_views", Spec{Kind: KindKNN, Embedding: EmbedCachedViews}, ""},
		{"epoch", with(func(s *Spec) { s.Epoch = "long" }), `samplers[2].epoch: "long" is not allowed; allowed values: fixed (default), covering`},
		{"warmup", with(func(s *Spec) { s.Warmup = "shuffled" }), `samplers[2].warmup: "shuffled" is not allowed; allowed values: none (default), shuffled_epoch`},
		{"alpha.schedule", with(func(s *Spec) { s.Alpha.Kind = "cosine" }), `samplers[2].alpha.schedule: "cosine" is not allowed; allowed values: linear (default), per_epoch`},
		{"published on uniform", Spec{Kind: KindUniform, Published: true}, `samplers[2].published: only kind batchsampler has this key, got kind uniform`},
		{"epoch on knn", Spec{Kind: KindKNN, Epoch: EpochCovering}, `samplers[2].epoch: only kind batchsampler has this key, got kind knn`},
		{"warmup on uniform", Spec{Kind: KindUniform, Warmup: WarmupNone}, `samplers[2].warmup: only kind batchsampler has this key, got kind uniform`},
		{"alpha.schedule on knn", Spec{Kind: KindKNN, Alpha: AlphaSchedule{Kind: SchedulePerEpoch}}, `samplers[2].alpha.schedule: only kind batchsampler has this key, got kind knn`},
		{"cached_views on uniform", Spec{Kind: KindUniform, Embedding: EmbedCachedViews}, `samplers[2].embedding: cached_views is for kinds knn and batchsampler, got kind uniform`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate("samplers[2]")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("valid spec rejected: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := NewBatchSampler(Config{BatchSize: 4, Epoch: "long"}, 20, 1); err == nil || !strings.Contains(err.Error(), "Config.Epoch") {
		t.Errorf("Config.Epoch long: %v", err)
	}
}

// fsub is a − b in float64 arithmetic (Go's constant arithmetic is exact).
func fsub(a, b float64) float64 { return a - b }

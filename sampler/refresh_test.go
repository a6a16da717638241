package sampler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"testing"
)

// recSampler records what a Driver does to it: Refresher and Scheduled,
// batches of instance indices in order.
type recSampler struct {
	n, b, t int
	pos     int
	events  []string
	seen    []Embeddings // copies of the refresh embeddings
}

func (s *recSampler) N() int               { return s.n }
func (s *recSampler) BatchSize() int       { return s.b }
func (s *recSampler) BatchesPerEpoch() int { return (s.n + s.b - 1) / s.b }
func (s *recSampler) RefreshEvery() int    { return s.t }
func (s *recSampler) SetProgress(step, total int) {
	s.events = append(s.events, fmt.Sprintf("progress %d/%d", step, total))
}
func (s *recSampler) Refresh(e Embeddings) error {
	s.events = append(s.events, "refresh")
	s.seen = append(s.seen, Embeddings{N: e.N, D: e.D, Data: slices.Clone(e.Data)})
	return nil
}
func (s *recSampler) Next() []int {
	s.events = append(s.events, "next")
	out := make([]int, s.b)
	for i := range out {
		out[i] = (s.pos + i) % s.n
	}
	s.pos = (s.pos + s.b) % s.n
	return out
}
func (s *recSampler) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(s.pos)), nil
}
func (s *recSampler) UnmarshalBinary(p []byte) error {
	if len(p) != 8 {
		return errors.New("recSampler: bad state")
	}
	s.pos = int(binary.LittleEndian.Uint64(p))
	return nil
}

// toyModel is an embed function whose embeddings change with every call
// (a stand-in for a model being trained) and that records its calls.
type toyModel struct {
	n, d  int
	calls []string
}

func (m *toyModel) embed(which string) (Embeddings, error) {
	m.calls = append(m.calls, which)
	e := randomEmbeddings(m.n, m.d, uint64(len(m.calls)))
	if which == EmbedEncoder {
		for i := range e.Data {
			e.Data[i] += 10
		}
	}
	return e, nil
}

// proj returns toy first-view projections of a batch at a step.
func toyProj(idx []int, d, step int) []float32 {
	p := make([]float32, len(idx)*d)
	for i, j := range idx {
		for c := 0; c < d; c++ {
			p[i*d+c] = float32(1000*step + 10*j + c)
		}
	}
	return p
}

func TestDriverRefreshSteps(t *testing.T) {
	for _, tc := range []struct {
		t, steps int
		want     []int
	}{
		{0, 10, []int{0}},
		{1, 4, []int{0, 1, 2, 3}},
		{3, 10, []int{0, 3, 6, 9}},
		{3, 9, []int{0, 3, 6}},
		{5, 3, []int{0}},
	} {
		t.Run(fmt.Sprintf("t=%d", tc.t), func(t *testing.T) {
			s := &recSampler{n: 20, b: 4, t: tc.t}
			m := &toyModel{n: 20, d: 3}
			d, err := NewDriver(s, DriverOptions{Embed: m.embed})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			var wantEvents []string
			for step := 0; step < tc.steps; step++ {
				rep, err := d.BeforeStep(step, tc.steps)
				if err != nil {
					t.Fatal(err)
				}
				if (rep != nil) != RefreshDue(step, tc.t) {
					t.Errorf("step %d: report %v, RefreshDue %v", step, rep, RefreshDue(step, tc.t))
				}
				wantEvents = append(wantEvents, fmt.Sprintf("progress %d/%d", step, tc.steps))
				if rep != nil {
					got = append(got, rep.Step)
					wantEvents = append(wantEvents, "refresh")
					if rep.Step != step || rep.Source != EmbedProjection || rep.Graph != nil || rep.EmbedSeconds < 0 || rep.BuildSeconds < 0 || rep.DiagSeconds < 0 {
						t.Errorf("step %d: report %+v", step, rep)
					}
				}
				d.Next()
				wantEvents = append(wantEvents, "next")
				refreshed, err := d.Observe(nil, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				if refreshed != (rep != nil) {
					t.Errorf("step %d: Observe says refreshed=%v after report %v", step, refreshed, rep)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("refreshes before steps %v, want %v", got, tc.want)
			}
			if !slices.Equal(s.events, wantEvents) {
				t.Errorf("events %v\nwant %v", s.events, wantEvents)
			}
			if len(m.calls) != len(tc.want) {
				t.Errorf("embed called %d times, want %d", len(m.calls), len(tc.want))
			}
			if d.SamplerSeconds() < 0 {
				t.Errorf("sampler seconds %v", d.SamplerSeconds())
			}
		})
	}
}

func TestDriverEmbeddingSources(t *testing.T) {
	const n, dim, steps, every = 30, 4, 10, 3 // refreshes before steps 0, 3, 6, 9
	for _, tc := range []struct {
		embedding string
		calls     []string // what the embed callback was asked for
		sources   []string // RefreshReport.Source of each refresh
		cache     bool
	}{
		{"", []string{"projection", "projection", "projection", "projection"}, []string{"projection", "projection", "projection", "projection"}, false},
		{"projection", []string{"projection", "projection", "projection", "projection"}, []string{"projection", "projection", "projection", "projection"}, false},
		{"encoder", []string{"encoder", "encoder", "encoder", "encoder"}, []string{"encoder", "encoder", "encoder", "encoder"}, false},
		{"cached", []string{"projection"}, []string{"projection", "cached", "cached", "cached"}, true},
	} {
		t.Run("embedding="+tc.embedding, func(t *testing.T) {
			s := &recSampler{n: n, b: 5, t: every}
			m := &toyModel{n: n, d: dim}
			d, err := NewDriver(s, DriverOptions{Embedding: tc.embedding, Embed: m.embed})
			if err != nil {
				t.Fatal(err)
			}
			var sources []string
			for step := 0; step < steps; step++ {
				rep, err := d.BeforeStep(step, steps)
				if err != nil {
					t.Fatal(err)
				}
				if rep != nil {
					sources = append(sources, rep.Source)
				}
				idx := d.Next()
				if _, err := d.Observe(idx, toyProj(idx, dim, step), dim); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(m.calls, tc.calls) {
				t.Errorf("embed asked for %v, want %v", m.calls, tc.calls)
			}
			if !slices.Equal(sources, tc.sources) {
				t.Errorf("sources %v, want %v", sources, tc.sources)
			}
			if (d.Cache().Data != nil) != tc.cache {
				t.Errorf("cache %v, want one: %v", d.Cache().Data != nil, tc.cache)
			}
			// The embeddings handed to Refresh: fresh ones from the model,
			// or the cache as the observed batches left it.
			if tc.embedding != "cached" {
				for i, e := range s.seen {
					want, _ := (&toyModel{n: n, d: dim, calls: make([]string, i)}).embed(m.calls[i])
					if !slices.Equal(e.Data, want.Data) {
						t.Errorf("refresh %d did not get the model's embeddings", i)
					}
				}
			}
		})
	}
}

// With embedding "cached" the first refresh embeds the dataset and keeps a
// copy; every observed batch overwrites its instances' rows with the first
// view's projections; later refreshes use the cache as it is then.
func TestDriverCacheUpdates(t *testing.T) {
	const n, dim, every = 12, 2, 2
	s := &recSampler{n: n, b: 3, t: every}
	m := &toyModel{n: n, d: dim}
	d, err := NewDriver(s, DriverOptions{Embedding: EmbedCached, Embed: m.embed})
	if err != nil {
		t.Fatal(err)
	}
	// Before the first refresh there is no cache: Observe reads nothing.
	if refreshed, err := d.Observe([]int{0, 1}, nil, dim); err != nil || refreshed {
		t.Fatalf("Observe before any refresh: %v, %v", refreshed, err)
	}
	if d.Cache().Data != nil {
		t.Fatal("cache before the first refresh")
	}
	if _, err := d.BeforeStep(0, 10); err != nil {
		t.Fatal(err)
	}
	first, _ := (&toyModel{n: n, d: dim}).embed(EmbedProjection)
	if !slices.Equal(d.Cache().Data, first.Data) || !slices.Equal(s.seen[0].Data, first.Data) {
		t.Fatal("first refresh: cache or refresh embeddings are not the model's projections")
	}
	want := slices.Clone(first.Data)
	observe := func(idx []int, proj []float32, pd int) {
		t.Helper()
		if _, err := d.Observe(idx, proj, pd); err != nil {
			t.Fatal(err)
		}
	}
	observe([]int{4, 7}, []float32{1, 2, 3, 4, 99, 99}, dim) // extra values are not read
	copy(want[4*dim:], []float32{1, 2})
	copy(want[7*dim:], []float32{3, 4})
	observe([]int{7}, []float32{5, 6, 7}, 3) // another dimension: ignored
	observe([]int{0}, []float32{8, 9}, dim)
	copy(want[0:], []float32{8, 9})
	if !slices.Equal(d.Cache().Data, want) {
		t.Fatalf("cache %v, want %v", d.Cache().Data, want)
	}
	// Bad input is an error and leaves the cache alone.
	for _, bad := range []struct {
		idx  []int
		proj []float32
		msg  string
	}{
		{[]int{1, 2}, []float32{1, 2, 3}, "3 projection values for 2 instances of dimension 2"},
		{[]int{1, n}, []float32{1, 2, 3, 4}, "instance 12 outside [0, 12)"},
		{[]int{-1}, []float32{1, 2}, "instance -1 outside"},
	} {
		if _, err := d.Observe(bad.idx, bad.proj, dim); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("Observe(%v, %v): %v, want %q", bad.idx, bad.proj, err, bad.msg)
		}
	}
	if !slices.Equal(d.Cache().Data, want) {
		t.Fatal("a rejected Observe changed the cache")
	}
	if rep, err := d.BeforeStep(1, 10); rep != nil || err != nil {
		t.Fatalf("step 1: %v, %v", rep, err)
	}
	rep, err := d.BeforeStep(2, 10)
	if err != nil || rep == nil || rep.Source != EmbedCached {
		t.Fatalf("step 2: %+v, %v", rep, err)
	}
	if !slices.Equal(s.seen[1].Data, want) {
		t.Errorf("second refresh got %v, want the cache %v", s.seen[1].Data, want)
	}
	if len(m.calls) != 1 {
		t.Errorf("embed called %d times, want once", len(m.calls))
	}
	// Other sources keep no cache: Observe never reads proj.
	d2, _ := NewDriver(&recSampler{n: n, b: 3, t: every}, DriverOptions{Embedding: EmbedProjection, Embed: m.embed})
	if _, err := d2.BeforeStep(0, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Observe([]int{1, 2}, nil, dim); err != nil || d2.Cache().Data != nil {
		t.Errorf("projection driver: cache %v, Observe err %v", d2.Cache().Data, err)
	}
}

func TestDriverErrors(t *testing.T) {
	u, _ := NewUniform(10, 2, 1)
	if _, err := NewDriver(nil, DriverOptions{}); err == nil {
		t.Error("nil sampler accepted")
	}
	if _, err := NewDriver(u, DriverOptions{Embedding: "fresh"}); err == nil || !strings.Contains(err.Error(), `"fresh" is not allowed; allowed values: projection (default), encoder, cached`) {
		t.Errorf("embedding fresh: %v", err)
	}
	if _, err := NewDriver(u, DriverOptions{Labels: []int{1, 2}}); err == nil || !strings.Contains(err.Error(), "2 labels for 10 instances") {
		t.Errorf("short labels: %v", err)
	}
	for _, e := range append([]string{""}, EmbeddingSources...) {
		if _, err := NewDriver(u, DriverOptions{Embedding: e}); err != nil {
			t.Errorf("embedding %q: %v", e, err)
		}
	}
	// Uniform needs no embeddings: no EmbedFunc is fine.
	d, _ := NewDriver(u, DriverOptions{})
	for step := 0; step < 7; step++ {
		if rep, err := d.BeforeStep(step, 7); rep != nil || err != nil {
			t.Fatalf("uniform step %d: %v, %v", step, rep, err)
		}
		d.Next()
	}
	// A Refresher without one fails at the first refresh.
	k, _ := NewKNN(10, 2, 0, 1)
	d, _ = NewDriver(k, DriverOptions{})
	if _, err := d.BeforeStep(0, 5); err == nil || !strings.Contains(err.Error(), "refresh at step 0") {
		t.Errorf("no EmbedFunc: %v", err)
	}
	// Errors of the EmbedFunc and of Refresh name the step.
	boom := errors.New("boom")
	d, _ = NewDriver(k, DriverOptions{Embed: func(string) (Embeddings, error) { return Embeddings{}, boom }})
	if _, err := d.BeforeStep(0, 5); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "refresh at step 0: ") {
		t.Errorf("embed error: %v", err)
	}
	d, _ = NewDriver(k, DriverOptions{Embed: func(string) (Embeddings, error) { return randomEmbeddings(9, 2, 1), nil }})
	if _, err := d.BeforeStep(0, 5); err == nil || !strings.Contains(err.Error(), "refresh at step 0: sampler: knn: refresh with 9 embeddings") {
		t.Errorf("refresh error: %v", err)
	}
}

// A BatchSampler reports its graph's statistics with the labels given; the
// report's Fields are train's "refresh" metrics record.
func TestDriverGraphStats(t *testing.T) {
	emb, labels, err := GaussianMixture(MixtureConfig{N: 400, C: 4, D: 8, Between: 1, Within: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Kind: "batchsampler", M: 80, K: 8, Alpha: AlphaSchedule{Start: 0.2, End: 0.05}, RefreshEvery: 0}
	s, err := spec.New(emb.N, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDriver(s, DriverOptions{Embed: func(string) (Embeddings, error) { return emb, nil }, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := d.BeforeStep(0, 10)
	if err != nil || rep == nil || rep.Graph == nil {
		t.Fatalf("report %+v, %v", rep, err)
	}
	want, _ := NeighbourStats(s.(*BatchSampler).Graph(), emb, labels)
	if *rep.Graph != want {
		t.Errorf("graph stats %+v, want %+v", *rep.Graph, want)
	}
	f := rep.Fields()
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	wantKeys := []string{"build_seconds", "diag_seconds", "embed_seconds", "event", "graph_label_agreement", "graph_max_in_degree", "graph_neighbour_cos", "graph_zero_in_degree", "step"}
	if !slices.Equal(keys, wantKeys) || f["event"] != "refresh" || f["step"] != 0 || f["graph_neighbour_cos"] != want.MeanCosine || f["graph_max_in_degree"] != want.MaxInDegree {
		t.Errorf("fields %v", f)
	}
	// Without labels the label agreement is NaN; KNN has no graph.
	d, _ = NewDriver(s, DriverOptions{Embed: func(string) (Embeddings, error) { return emb, nil }})
	if rep, _ = d.BeforeStep(0, 10); rep.Graph == nil || !math.IsNaN(rep.Graph.LabelAgreement) {
		t.Errorf("no labels: %+v", rep.Graph)
	}
	k, _ := NewKNN(emb.N, 32, 0, 1)
	d, _ = NewDriver(k, DriverOptions{Embed: func(string) (Embeddings, error) { return emb, nil }, Labels: labels})
	if rep, _ = d.BeforeStep(0, 10); rep.Graph != nil {
		t.Errorf("knn: graph stats %+v", rep.Graph)
	}
	if _, ok := rep.Fields()["graph_neighbour_cos"]; ok {
		t.Error("knn: graph fields without a graph")
	}
}

// run drives d over steps [from, to) of total with a toy model whose
// projections depend on the step, recording batches and refreshes.
func runDriver(t *testing.T, d *Driver, m *toyModel, from, to, total, dim int) (batches [][]int, refreshes []string) {
	t.Helper()
	for step := from; step < to; step++ {
		rep, err := d.BeforeStep(step, total)
		if err != nil {
			t.Fatal(err)
		}
		if rep != nil {
			refreshes = append(refreshes, fmt.Sprintf("%d:%s", rep.Step, rep.Source))
		}
		idx := d.Next()
		batches = append(batches, idx)
		// ObserveViews is Observe for every embedding but cached_views.
		if _, err := d.ObserveViews(idx, toyProj(idx, dim, step), toyProj(idx, dim, step+500), dim); err != nil {
			t.Fatal(err)
		}
	}
	return batches, refreshes
}

// A state saved mid-run and restored into a fresh driver continues with
// the same batches and refreshes as the uninterrupted run, for every kind
// and embedding source.
func TestDriverStateRoundTrip(t *testing.T) {
	const n, b, dim = 200, 16, 6
	for _, tc := range []struct {
		name       string
		spec       Spec
		cut, total int // 0: 10 and 23
	}{
		// published: a warmup epoch of 13 steps, then covering epochs; the
		// cuts fall in the warmup and in the middle of the second epoch.
		{"batchsampler published, cut in the warmup", Spec{Kind: "batchsampler", M: 40, K: 8, RefreshEvery: 4, Published: true}, 10, 40},
		{"batchsampler published, cut mid-epoch", Spec{Kind: "batchsampler", M: 40, K: 8, RefreshEvery: 4, Published: true}, 19, 40},
		{"batchsampler cached", Spec{Kind: "batchsampler", M: 40, K: 8, Alpha: AlphaSchedule{Start: 0.3, End: 0.05}, RefreshEvery: 4, Embedding: "cached"}, 0, 0},
		{"batchsampler projection t=0", Spec{Kind: "batchsampler", M: 40, K: 8, Walk: "bfs", Alpha: AlphaSchedule{Start: 0.3, Constant: true}}, 0, 0},
		{"knn encoder", Spec{Kind: "knn", RefreshEvery: 3, Embedding: "encoder"}, 0, 0},
		{"knn cached", Spec{Kind: "knn", RefreshEvery: 7, Embedding: "cached"}, 0, 0},
		{"uniform", Spec{Kind: "uniform"}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut, total := tc.cut, tc.total
			if cut == 0 {
				cut, total = 10, 23
			}
			newDriver := func() (*Driver, *toyModel) {
				s, err := tc.spec.New(n, b, 9)
				if err != nil {
					t.Fatal(err)
				}
				m := &toyModel{n: n, d: dim}
				d, err := NewDriver(s, DriverOptions{Embedding: tc.spec.Effective().Embedding, Embed: m.embed})
				if err != nil {
					t.Fatal(err)
				}
				return d, m
			}
			ref, mRef := newDriver()
			wantB, wantR := runDriver(t, ref, mRef, 0, total, total, dim)

			a, mA := newDriver()
			runDriver(t, a, mA, 0, cut, total, dim)
			state, err := a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			c, mC := newDriver()
			mC.calls = slices.Clone(mA.calls) // the model is restored too
			if err := c.UnmarshalBinary(state); err != nil {
				t.Fatal(err)
			}
			if c.SamplerSeconds() != a.SamplerSeconds() {
				t.Errorf("sampler seconds %v, want %v", c.SamplerSeconds(), a.SamplerSeconds())
			}
			gotB, gotR := runDriver(t, c, mC, cut, total, total, dim)
			for i, bt := range gotB {
				if !slices.Equal(bt, wantB[cut+i]) {
					t.Fatalf("step %d after restore: batch %v, want %v", cut+i, bt, wantB[cut+i])
				}
			}
			var wantAfter []string
			for _, r := range wantR {
				var s int
				fmt.Sscanf(r, "%d:", &s)
				if s >= cut {
					wantAfter = append(wantAfter, r)
				}
			}
			if !slices.Equal(gotR, wantAfter) {
				t.Errorf("refreshes after restore %v, want %v", gotR, wantAfter)
			}
			if !slices.Equal(c.Cache().Data, ref.Cache().Data) {
				t.Error("caches differ at the end")
			}
			s1, _ := c.Sampler().MarshalBinary()
			s2, _ := ref.Sampler().MarshalBinary()
			if string(s1) != string(s2) {
				t.Error("sampler states differ at the end")
			}
		})
	}
}

func TestDriverStateDamaged(t *testing.T) {
	const n, b, dim = 50, 8, 3
	spec := Spec{Kind: "batchsampler", M: 20, K: 5, Alpha: AlphaSchedule{Start: 0.2, End: 0.05}, RefreshEvery: 3, Embedding: "cached"}
	newDriver := func(n int) *Driver {
		s, err := spec.New(n, b, 1)
		if err != nil {
			t.Fatal(err)
		}
		m := &toyModel{n: n, d: dim}
		d, err := NewDriver(s, DriverOptions{Embedding: spec.Embedding, Embed: m.embed})
		if err != nil {
			t.Fatal(err)
		}
		runDriver(t, d, m, 0, 5, 10, dim)
		return d
	}
	d := newDriver(n)
	good, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// reseal recomputes the header's length and checksum after an edit of
	// the body, to reach the checks behind them.
	reseal := func(p []byte) []byte {
		body := p[driverHeaderSize:]
		binary.LittleEndian.PutUint64(p[len(driverMagic)+4:], uint64(len(body)))
		binary.LittleEndian.PutUint32(p[len(driverMagic)+12:], crc32.Checksum(body, crcTable))
		return p
	}
	samplerLen := int(binary.LittleEndian.Uint64(good[driverHeaderSize+8:]))
	cacheAt := driverHeaderSize + 16 + samplerLen // cache N, D
	edit := func(f func(p []byte) []byte) []byte { return f(slices.Clone(good)) }
	other := newDriver(n + 1)
	otherState, _ := other.MarshalBinary()
	for _, tc := range []struct {
		name  string
		state []byte
		want  string
	}{
		{"empty", nil, "0 bytes, shorter than the 24-byte header"},
		{"short header", good[:10], "10 bytes, shorter than the 24-byte header"},
		{"magic", edit(func(p []byte) []byte { p[0] = 'x'; return p }), `does not start with "bsdriver"`},
		{"sampler state alone", func() []byte { s, _ := d.Sampler().MarshalBinary(); return s }(), "not a driver state"},
		{"version", edit(func(p []byte) []byte { p[8] = 9; return p }), "version 9, this program reads version 1"},
		{"truncated", good[:len(good)-5], fmt.Sprintf("header says %d bytes follow, %d do", len(good)-driverHeaderSize, len(good)-driverHeaderSize-5)},
		{"padded", append(slices.Clone(good), 0), "(truncated or padded)"},
		{"bit flip in the cache", edit(func(p []byte) []byte { p[len(p)-3] ^= 4; return p }), "checksum mismatch: the state is damaged"},
		{"bit flip in the sampler state", edit(func(p []byte) []byte { p[driverHeaderSize+20] ^= 1; return p }), "checksum mismatch"},
		{"sampler length", edit(func(p []byte) []byte {
			binary.LittleEndian.PutUint64(p[driverHeaderSize+8:], uint64(len(p)))
			return reseal(p)
		}), "sampler state needs"},
		{"cache rows", edit(func(p []byte) []byte {
			binary.LittleEndian.PutUint64(p[cacheAt:], n+1)
			return reseal(p)
		}), "cache is 51×3, want 50 rows (one per instance) of dimension ≥ 1"},
		{"cache dimension", edit(func(p []byte) []byte {
			binary.LittleEndian.PutUint64(p[cacheAt+8:], dim+1)
			return reseal(p)
		}), "cache values needs 800 bytes, 600 remain"},
		{"zero cache dimension", edit(func(p []byte) []byte {
			binary.LittleEndian.PutUint64(p[cacheAt+8:], 0)
			return reseal(p)
		}), "want 50 rows (one per instance) of dimension ≥ 1"},
		{"trailing bytes", edit(func(p []byte) []byte { return reseal(append(p, 1, 2, 3, 4)) }), "4 bytes after the cache"},
		{"damaged sampler state", edit(func(p []byte) []byte {
			for i := driverHeaderSize + 16; i < driverHeaderSize+16+samplerLen; i++ {
				p[i] = 0xff
			}
			return reseal(p)
		}), "sampler: driver: state: sampler: batchsampler: decode state"},
		{"another N", otherState, "cache is 51×3, want 50 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh := newDriver(n)
			before, _ := fresh.MarshalBinary()
			err := fresh.UnmarshalBinary(tc.state)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "sampler: driver: state: ") {
				t.Errorf("err = %v, want the prefix sampler: driver: state:", err)
			}
			if tc.name != "damaged sampler state" {
				after, _ := fresh.MarshalBinary()
				if string(before) != string(after) {
					t.Error("a refused state changed the driver")
				}
			}
		})
	}
	if err := newDriver(n).UnmarshalBinary(good); err != nil {
		t.Fatalf("good state refused: %v", err)
	}
}

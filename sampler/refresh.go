package sampler

// The refresh policy of the training loop (Algorithm 1 of the paper) as a
// driver that any Go loop can call, so that every program drives a sampler
// the way package train does.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"time"
)

// Embedding sources of Spec.Embedding (the default, also meant by "", is
// EmbedProjection).
const (
	// EmbedProjection: the whole dataset re-embedded by the current model
	// (projection head output) at every refresh.
	EmbedProjection = "projection"
	// EmbedEncoder: the same with the encoder's output.
	EmbedEncoder = "encoder"
	// EmbedCached: the projections of the first view computed during
	// training (Driver.Observe), kept per instance; the dataset is embedded
	// (EmbedProjection) only for the first refresh.
	EmbedCached = "cached"
	// EmbedCachedViews (the published code): both views' projections
	// computed during training (Driver.ObserveViews), each L2-normalised,
	// concatenated (2·d values per instance) and kept per instance; a
	// refresh builds the graph from these rows, so a row not trained since
	// the previous refresh is stale. A row no step has written yet (all of
	// them at a refresh before step 0, i.e. without a warmup epoch) holds
	// the instance's evaluation-mode projection (EmbedProjection, from the
	// EmbedFunc), L2-normalised and written twice; after a shuffled warmup
	// epoch every row comes from training, as in the published code.
	EmbedCachedViews = "cached_views"
)

// EmbeddingSources lists the allowed values of Spec.Embedding, the default
// first.
var EmbeddingSources = []string{EmbedProjection, EmbedEncoder, EmbedCached, EmbedCachedViews}

// EmbedFunc returns the embeddings of all N instances by the model being
// trained; which is EmbedProjection or EmbedEncoder.
type EmbedFunc func(which string) (Embeddings, error)

// DriverOptions configure a Driver.
type DriverOptions struct {
	// Embedding is Spec.Embedding: "" or "projection", "encoder", "cached",
	// "cached_views" (for a Spec with published: true, that of
	// Spec.Effective).
	Embedding string
	// Embed embeds the dataset at a refresh (required when the sampler is a
	// Refresher).
	Embed EmbedFunc
	// Labels, when not nil, are the N instance labels of the graph
	// statistics' label agreement (diagnostics only; nil gives NaN).
	Labels []int
}

// RefreshReport says what happened at one refresh.
type RefreshReport struct {
	// Step is the 0-based step the refresh came before.
	Step int
	// Source is where the embeddings came from: EmbedProjection or
	// EmbedEncoder (the EmbedFunc was called), or EmbedCached (the
	// training-time cache).
	Source string
	// EmbedSeconds is the time taken to get the embeddings, BuildSeconds
	// the Refresh (graph build) and DiagSeconds the graph statistics.
	EmbedSeconds, BuildSeconds, DiagSeconds float64
	// Graph holds NeighbourStats of the new graph over the embeddings it was
	// built from, when the sampler exposes its graph (a Grapher, as
	// BatchSampler is) and the statistics could be computed; else nil.
	Graph *NeighbourStatistics
}

// Fields returns the report as the "refresh" event of a run's
// metrics.jsonl: event, step, embed_seconds, build_seconds, diag_seconds
// and, with graph statistics, graph_neighbour_cos, graph_label_agreement,
// graph_zero_in_degree and graph_max_in_degree.
func (r *RefreshReport) Fields() map[string]any {
	rec := map[string]any{"event": "refresh", "step": r.Step, "embed_seconds": r.EmbedSeconds, "build_seconds": r.BuildSeconds, "diag_seconds": r.DiagSeconds}
	if st := r.Graph; st != nil {
		rec["graph_neighbour_cos"] = st.MeanCosine
		rec["graph_label_agreement"] = st.LabelAgreement
		rec["graph_zero_in_degree"] = st.ZeroInDegree
		rec["graph_max_in_degree"] = st.MaxInDegree
	}
	return rec
}

// Driver runs a Sampler in a training loop exactly as package train does
// (Algorithm 1 of the paper). For every 0-based step s of T steps:
//
//	d.BeforeStep(s, T)   // α schedule; refresh the graph when due
//	idx := d.Next()      // the batch: B instance indices
//	... train on idx ...
//	d.Observe(idx, proj, projDim) // first view's projections, for "cached"
//	// or d.ObserveViews(idx, proj, proj2, projDim): both views, for "cached_views"
//
// BeforeStep calls SetProgress(s, T) on a Scheduled sampler (BatchSampler's
// α decays over the T steps). On a Refresher (BatchSampler, KNN) with
// refresh interval t = RefreshEvery() it refreshes before step 0 and, when
// t > 0, before every step s with s mod t = 0 (t = 0: only before step 0);
// a RefreshScheduler decides itself (BatchSampler with a warmup epoch).
// A refresh embeds all N instances (the EmbedFunc, or the cache for
// embedding "cached") and hands them to Refresh, which rebuilds the graph
// (Algorithm 2: for each node, the top K of M random candidates by cosine
// similarity); the walk of Next then draws batches on it (Algorithm 3, RWR
// with restart probability α).
//
// SamplerSeconds accumulates the time spent in refreshes (embedding
// included) and in Next. MarshalBinary saves what a resumed run needs: the
// sampler's state, the cache and the sampler seconds.
type Driver struct {
	s         Sampler
	embedding string
	embed     EmbedFunc
	labels    []int
	cache     Embeddings
	seconds   float64
	next      float64 // time in Next (not saved in the state)
	refreshed bool
}

// NewDriver returns a Driver of s. opt.Embedding must be one of
// EmbeddingSources or "".
func NewDriver(s Sampler, opt DriverOptions) (*Driver, error) {
	if s == nil {
		return nil, errors.New("sampler: driver: no sampler")
	}
	if err := oneOf("embedding", opt.Embedding, EmbeddingSources, true); err != nil {
		return nil, fmt.Errorf("sampler: driver: %w", err)
	}
	if opt.Labels != nil && len(opt.Labels) != s.N() {
		return nil, fmt.Errorf("sampler: driver: %d labels for %d instances", len(opt.Labels), s.N())
	}
	return &Driver{s: s, embedding: opt.Embedding, embed: opt.Embed, labels: opt.Labels}, nil
}

// Sampler returns the driven sampler.
func (d *Driver) Sampler() Sampler { return d.s }

// SamplerSeconds is the time spent in refreshes and Next so far (restored
// by UnmarshalBinary).
func (d *Driver) SamplerSeconds() float64 { return d.seconds }

// Cache returns the training-time embeddings of embedding "cached" or
// "cached_views" (one row per instance; zero Embeddings before the first
// refresh, or the first ObserveViews, and for the other sources). It must
// not be modified.
func (d *Driver) Cache() Embeddings { return d.cache }

// RefreshDue reports whether a Refresher with refresh interval t refreshes
// before 0-based step s: s = 0, or t > 0 and s mod t = 0.
func RefreshDue(s, t int) bool { return s == 0 || (t > 0 && s%t == 0) }

// BeforeStep prepares 0-based step s of total: SetProgress(s, total) on a
// Scheduled sampler, then, on a Refresher when RefreshDue(s, t), a refresh.
// It returns the refresh's report, or nil when there was none. Errors are
// those of the EmbedFunc or of Refresh, prefixed "refresh at step s".
func (d *Driver) BeforeStep(s, total int) (*RefreshReport, error) {
	if sc, ok := d.s.(Scheduled); ok {
		sc.SetProgress(s, total)
	}
	rf, ok := d.s.(Refresher)
	if !ok {
		return nil, nil
	}
	if rs, ok := d.s.(RefreshScheduler); ok {
		if !rs.RefreshDueAt(s) {
			return nil, nil
		}
	} else if !RefreshDue(s, rf.RefreshEvery()) {
		return nil, nil
	}
	t0 := time.Now()
	var emb Embeddings
	source := EmbedCached
	if d.embedding == EmbedCachedViews {
		source = EmbedCachedViews
		if err := d.fillUnseenViews(); err != nil {
			return nil, fmt.Errorf("refresh at step %d: %w", s, err)
		}
		emb = d.cache
	} else if d.embedding == EmbedCached && d.cache.Data != nil {
		emb = d.cache
	} else {
		source = d.embedding
		if source == "" || source == EmbedCached {
			source = EmbedProjection
		}
		if d.embed == nil {
			return nil, fmt.Errorf("refresh at step %d: sampler: driver: no EmbedFunc", s)
		}
		var err error
		if emb, err = d.embed(source); err != nil {
			return nil, fmt.Errorf("refresh at step %d: %w", s, err)
		}
		if d.embedding == EmbedCached {
			d.cache = Embeddings{N: emb.N, D: emb.D, Data: append([]float32(nil), emb.Data...)}
		}
	}
	t1 := time.Now()
	if err := rf.Refresh(emb); err != nil {
		return nil, fmt.Errorf("refresh at step %d: %w", s, err)
	}
	t2 := time.Now()
	rep := &RefreshReport{Step: s, Source: source, EmbedSeconds: t1.Sub(t0).Seconds(), BuildSeconds: t2.Sub(t1).Seconds()}
	if gs, ok := d.s.(Grapher); ok && gs.Graph() != nil {
		if st, err := NeighbourStats(gs.Graph(), emb, d.labels); err == nil {
			rep.Graph = &st
		}
	}
	// The diagnostics (N·K cosines) are counted as sampler time too.
	rep.DiagSeconds = time.Since(t2).Seconds()
	d.seconds += time.Since(t0).Seconds()
	d.refreshed = true
	return rep, nil
}

// Next returns the sampler's next batch, timed as sampler time.
func (d *Driver) Next() []int {
	t0 := time.Now()
	idx := d.s.Next()
	dt := time.Since(t0).Seconds()
	d.seconds += dt
	d.next += dt
	return idx
}

// NextSeconds is the time spent in Next by this driver (the share of
// SamplerSeconds that is not refreshes; it is not part of the saved state,
// so it counts from 0 again after UnmarshalBinary's resume).
func (d *Driver) NextSeconds() float64 { return d.next }

// fillUnseenViews makes the cache of embedding cached_views complete: when
// it does not exist, or has rows no step wrote (all zero), the dataset is
// embedded (EmbedProjection) and each such row gets the instance's
// projection, L2-normalised, twice.
func (d *Driver) fillUnseenViews() error {
	var unseen []int
	for i := 0; d.cache.Data != nil && i < d.cache.N; i++ {
		if !slices.ContainsFunc(d.cache.Row(i), func(v float32) bool { return v != 0 }) {
			unseen = append(unseen, i)
		}
	}
	if d.cache.Data != nil && len(unseen) == 0 {
		return nil
	}
	if d.embed == nil {
		return errors.New("sampler: driver: no EmbedFunc for the cached_views rows no step has written")
	}
	e, err := d.embed(EmbedProjection)
	if err != nil {
		return err
	}
	if e.N != d.s.N() || e.D <= 0 || len(e.Data) != e.N*e.D {
		return fmt.Errorf("sampler: driver: embedding is %d×%d with %d values, want %d rows", e.N, e.D, len(e.Data), d.s.N())
	}
	if d.cache.Data == nil {
		d.cache = Embeddings{N: e.N, D: 2 * e.D, Data: make([]float32, 2*e.N*e.D)}
		unseen = unseen[:0]
		for i := 0; i < e.N; i++ {
			unseen = append(unseen, i)
		}
	} else if d.cache.D != 2*e.D {
		return fmt.Errorf("sampler: driver: cached_views rows have %d values, the projection %d (want twice as many)", d.cache.D, e.D)
	}
	for _, i := range unseen {
		row := d.cache.Row(i)
		normalizeInto(row[:e.D], e.Row(i))
		normalizeInto(row[e.D:], e.Row(i))
	}
	return nil
}

// normalizeInto writes v/‖v‖ to dst (v itself when ‖v‖ = 0; dst may be
// v): the norm in float64, each value rounded once to float32. Every
// normalisation of the package (graph builders, the service's in-place
// rows, the cached views) goes through it, so they agree bit for bit.
func normalizeInto(dst, v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := 1.0
	if s > 0 {
		inv = 1 / math.Sqrt(s)
	}
	for j, x := range v {
		dst[j] = float32(float64(x) * inv)
	}
}

// ObserveViews is Observe with the projections of both views of the batch
// (proj2 like proj: len(idx)·projDim values, row i for instance idx[i]).
// With embedding cached_views it stores, for every instance of the batch,
// its two views' L2-normalised projections concatenated (2·projDim values)
// as its cached row (the cache is created by the first call); proj2 nil is
// then an error (the method hands over only the first view). With any other
// embedding it is Observe(idx, proj, projDim) and proj2 is not read.
func (d *Driver) ObserveViews(idx []int, proj, proj2 []float32, projDim int) (refreshed bool, err error) {
	if d.embedding != EmbedCachedViews {
		return d.Observe(idx, proj, projDim)
	}
	refreshed, d.refreshed = d.refreshed, false
	if proj2 == nil {
		return refreshed, errors.New("sampler: driver: observe: embedding cached_views needs the projections of both views, got the first view's only")
	}
	if projDim <= 0 || len(proj) < len(idx)*projDim || len(proj2) < len(idx)*projDim {
		return refreshed, fmt.Errorf("sampler: driver: observe: %d and %d projection values for %d instances of dimension %d", len(proj), len(proj2), len(idx), projDim)
	}
	if d.cache.Data != nil && d.cache.D != 2*projDim {
		return refreshed, fmt.Errorf("sampler: driver: observe: cached_views rows have %d values, want 2×%d", d.cache.D, projDim)
	}
	for _, j := range idx {
		if j < 0 || j >= d.s.N() {
			return refreshed, fmt.Errorf("sampler: driver: observe: instance %d outside [0, %d)", j, d.s.N())
		}
	}
	if d.cache.Data == nil {
		n := d.s.N()
		d.cache = Embeddings{N: n, D: 2 * projDim, Data: make([]float32, 2*n*projDim)}
	}
	for i, j := range idx {
		row := d.cache.Row(j)
		normalizeInto(row[:projDim], proj[i*projDim:(i+1)*projDim])
		normalizeInto(row[projDim:], proj2[i*projDim:(i+1)*projDim])
	}
	return refreshed, nil
}

// Observe ends a step on batch idx. With embedding "cached", once the cache
// exists and projDim is its dimension, it stores the batch's first-view
// projections (proj, len(idx)·projDim values, row i for instance idx[i]) as
// those instances' cached embeddings; otherwise proj is not read. It
// reports whether a refresh happened since the previous Observe (idx is
// then the first batch drawn after it, e.g. for a similarity histogram) and
// clears that flag. An error means proj or idx do not fit the cache; the
// cache is then unchanged. With embedding cached_views it is an error: use
// ObserveViews.
func (d *Driver) Observe(idx []int, proj []float32, projDim int) (refreshed bool, err error) {
	refreshed, d.refreshed = d.refreshed, false
	if d.embedding == EmbedCachedViews {
		return refreshed, errors.New("sampler: driver: observe: embedding cached_views needs both views' projections (ObserveViews)")
	}
	if d.cache.Data == nil || projDim != d.cache.D {
		return refreshed, nil
	}
	if len(proj) < len(idx)*projDim {
		return refreshed, fmt.Errorf("sampler: driver: observe: %d projection values for %d instances of dimension %d", len(proj), len(idx), projDim)
	}
	for _, j := range idx {
		if j < 0 || j >= d.cache.N {
			return refreshed, fmt.Errorf("sampler: driver: observe: instance %d outside [0, %d)", j, d.cache.N)
		}
	}
	for i, j := range idx {
		copy(d.cache.Row(j), proj[i*projDim:(i+1)*projDim])
	}
	return refreshed, nil
}

// Driver state layout (little-endian):
//
//	magic "bsdriver" | version uint32 | body length uint64 | CRC-32C of body uint32
//	body: sampler seconds float64 | sampler state length uint64 | sampler state
//	      | cache N uint64 | cache D uint64 | N·D float32
const (
	driverMagic      = "bsdriver"
	driverVersion    = 1
	driverHeaderSize = len(driverMagic) + 4 + 8 + 4
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary saves the driver's state: the sampler's MarshalBinary, the
// cache of embedding "cached" and the sampler seconds, with a versioned
// header and a checksum.
func (d *Driver) MarshalBinary() ([]byte, error) {
	st, err := d.s.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("sampler: driver: save sampler state: %w", err)
	}
	body := make([]byte, 0, 8+8+len(st)+16+4*len(d.cache.Data))
	body = binary.LittleEndian.AppendUint64(body, math.Float64bits(d.seconds))
	body = binary.LittleEndian.AppendUint64(body, uint64(len(st)))
	body = append(body, st...)
	var n, dim int
	if d.cache.Data != nil {
		n, dim = d.cache.N, d.cache.D
	}
	body = binary.LittleEndian.AppendUint64(body, uint64(n))
	body = binary.LittleEndian.AppendUint64(body, uint64(dim))
	body = append(body, float32sToBytes(d.cache.Data)...)
	out := make([]byte, 0, driverHeaderSize+len(body))
	out = append(out, driverMagic...)
	out = binary.LittleEndian.AppendUint32(out, driverVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(body)))
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(body, crcTable))
	return append(out, body...), nil
}

// UnmarshalBinary restores a state saved by MarshalBinary into a driver of
// a sampler built the same way (same spec, N, B and seed). A damaged or
// foreign state is an error that says what is wrong; the driver is then
// unchanged unless the sampler's own UnmarshalBinary failed part way.
func (d *Driver) UnmarshalBinary(p []byte) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("sampler: driver: state: "+format, a...)
	}
	if len(p) < driverHeaderSize {
		return bad("%d bytes, shorter than the %d-byte header", len(p), driverHeaderSize)
	}
	if string(p[:len(driverMagic)]) != driverMagic {
		return bad("does not start with %q: not a driver state", driverMagic)
	}
	h := p[len(driverMagic):]
	if v := binary.LittleEndian.Uint32(h); v != driverVersion {
		return bad("version %d, this program reads version %d", v, driverVersion)
	}
	body := p[driverHeaderSize:]
	if n := binary.LittleEndian.Uint64(h[4:]); n != uint64(len(body)) {
		return bad("header says %d bytes follow, %d do (truncated or padded)", n, len(body))
	}
	if crc := binary.LittleEndian.Uint32(h[12:]); crc != crc32.Checksum(body, crcTable) {
		return bad("checksum mismatch: the state is damaged")
	}
	// The lengths below are consistent in any state MarshalBinary wrote;
	// they are checked anyway.
	take := func(what string, n uint64) ([]byte, error) {
		if n > uint64(len(body)) {
			return nil, bad("%s needs %d bytes, %d remain", what, n, len(body))
		}
		b := body[:n]
		body = body[n:]
		return b, nil
	}
	b, err := take("sampler seconds", 8)
	if err != nil {
		return err
	}
	seconds := math.Float64frombits(binary.LittleEndian.Uint64(b))
	if b, err = take("sampler state length", 8); err != nil {
		return err
	}
	st, err := take("sampler state", binary.LittleEndian.Uint64(b))
	if err != nil {
		return err
	}
	if b, err = take("cache shape", 16); err != nil {
		return err
	}
	n, dim := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	var cache Embeddings
	if n != 0 || dim != 0 {
		if n != uint64(d.s.N()) || dim == 0 || dim > math.MaxInt32 {
			return bad("cache is %d×%d, want %d rows (one per instance) of dimension ≥ 1", n, dim, d.s.N())
		}
		raw, err := take("cache values", 4*n*dim)
		if err != nil {
			return err
		}
		data, _ := bytesToFloat32s(raw) // a multiple of 4 bytes
		cache = Embeddings{N: int(n), D: int(dim), Data: data}
	}
	if len(body) != 0 {
		return bad("%d bytes after the cache", len(body))
	}
	if err := d.s.UnmarshalBinary(st); err != nil {
		return fmt.Errorf("sampler: driver: state: %w", err)
	}
	d.seconds, d.cache, d.refreshed = seconds, cache, false
	return nil
}

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// apiError is an error with the HTTP status and machine-readable code the
// server answers it with; the subcommands print its message.
type apiError struct {
	status int
	code   string
	msg    string
	extra  map[string]any
}

func (e *apiError) Error() string { return e.msg }

func newAPIError(status int, code, format string, a ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, a...)}
}

// payload is one upload: float32 embeddings (rows × cols), float16 ones
// (f16 instead of f32, from readPayloadAs), or, with ints set, neighbour
// table rows (rows × K, int32).
type payload struct {
	rows, cols int
	f32        []float32
	f16        []uint16 // float16 bits
	i32        []int32
	ints       bool
	from       string // the dtype uploaded, e.g. "<f2"
}

// halfMode says which float embeddings readPayloadAs keeps as float16.
type halfMode int

const (
	halfNever  halfMode = iota // every float dtype widened to float32
	halfNative                 // float16 kept as float16, float32/64 read as float32
	halfAlways                 // float16 kept, float32/64 rounded to float16
)

func (p *payload) kind() string {
	if p.ints {
		return "neighbour table"
	}
	return "embeddings"
}

// readPayload reads one .npy array: float16/32/64 embeddings (every value
// finite: a NaN or Inf row is an error naming it) or an int32/int64
// neighbour table. maxBytes bounds the data (0: none); total, when ≥ 0, is
// the input's size (a file's, a body's Content-Length), checked against
// the header before anything is allocated.
func readPayload(r io.Reader, maxBytes, total int64) (*payload, error) {
	return readPayloadAs(r, maxBytes, total, halfNever, anyPayload)
}

// readPayloadFile is readPayloadAs on the .npy file at path (its size
// checked against the header, no bound on the data).
func readPayloadFile(path string, mode halfMode, want payloadKind) (*payload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readPayloadAs(bufio.NewReaderSize(f, 1<<20), 0, st.Size(), mode, want)
}

// payloadKind is what a reader of payloads accepts.
type payloadKind int

const (
	anyPayload     payloadKind = iota // float embeddings or an integer neighbour table
	embeddingsOnly                    // float embeddings (-emb)
	graphOnly                         // an integer neighbour table (-graph)
)

// errWantEmbeddings is the error of an embeddings input that holds no
// floats.
var errWantEmbeddings = errors.New("want float16, float32 or float64 embeddings ('<f2', '<f4', '<f8')")

// readPayloadAs is readPayload keeping float embeddings as float16 bits
// (payload.f16) as mode says: halfNative keeps float16 data (exactly),
// halfAlways also rounds float32/float64 data to the nearest float16 (a
// value beyond ±65504 becomes ±Inf and is an error).
func readPayloadAs(r io.Reader, maxBytes, total int64, mode halfMode, want payloadKind) (*payload, error) {
	h, err := npy.ReadHeader(r)
	if err != nil {
		return nil, err
	}
	switch {
	case want == embeddingsOnly && h.DType.Kind != 'f':
		return nil, fmt.Errorf("dtype %s (%s): %w", h.DType, dtypeName(h.DType), errWantEmbeddings)
	case want == graphOnly && h.DType.Kind != 'i':
		return nil, fmt.Errorf("dtype %s (%s): want an int32 or int64 neighbour table (N×K node ids, as batchsampler graph writes)", h.DType, dtypeName(h.DType))
	}
	if total >= 0 {
		if err := h.CheckSize(total); err != nil {
			return nil, err
		}
	}
	rows, cols, err := h.Matrix()
	if err != nil {
		return nil, err
	}
	if maxBytes > 0 && h.DataBytes() > maxBytes {
		return nil, fmt.Errorf("npy: shape %s of %s is %d bytes, %w of %d bytes", npy.ShapeString(h.Shape), h.DType, h.DataBytes(), npy.ErrLimit, maxBytes)
	}
	if rows == 0 || cols == 0 {
		return nil, fmt.Errorf("npy: shape %s: want at least one row and one column", npy.ShapeString(h.Shape))
	}
	p := &payload{rows: rows, cols: cols, from: h.DType.String()}
	switch {
	case h.DType.Kind == 'f' && (mode == halfAlways || mode == halfNative && h.DType.Size == 2):
		p.f16 = make([]uint16, rows*cols)
		if err := npy.ReadFloat16s(r, h, p.f16); err != nil {
			return nil, err
		}
	case h.DType.Kind == 'f':
		p.f32 = make([]float32, rows*cols)
		if err := npy.ReadFloat32s(r, h, p.f32); err != nil {
			return nil, err
		}
	case h.DType.Kind == 'i' && (h.DType.Size == 4 || h.DType.Size == 8):
		p.ints = true
		p.i32 = make([]int32, rows*cols)
		if err := npy.ReadInt32s(r, h, p.i32); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("npy: dtype %s: want float16, float32 or float64 embeddings ('<f2', '<f4', '<f8') or an int32/int64 neighbour table ('<i4', '<i8')", h.DType)
	}
	if err := npy.ExpectEOF(r); err != nil {
		return nil, err
	}
	for i, v := range p.f32 {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, newAPIError(http.StatusBadRequest, "non_finite", "embeddings row %d column %d is %v (as float32; the upload was %s): every value must be finite", i/cols, i%cols, v, p.from)
		}
	}
	for i, x := range p.f16 {
		if x&0x7c00 == 0x7c00 { // float16 Inf or NaN
			v := npy.Float16ToFloat32(x)
			if h.DType.Size != 2 && !math.IsNaN(float64(v)) {
				return nil, newAPIError(http.StatusBadRequest, "non_finite", "embeddings row %d column %d is %v after rounding to float16 (the upload was %s; float16 holds magnitudes up to 65504): every value must be finite", i/cols, i%cols, v, p.from)
			}
			return nil, newAPIError(http.StatusBadRequest, "non_finite", "embeddings row %d column %d is %v (as float16; the upload was %s): every value must be finite", i/cols, i%cols, v, p.from)
		}
	}
	for i, v := range p.i32 {
		if v < 0 {
			return nil, newAPIError(http.StatusBadRequest, "bad_graph", "an %s array, read as a neighbour table (N×K node ids, as batchsampler graph writes): row %d column %d is %d, want node ids in [0, N) (embeddings are float16, float32 or float64)", dtypeName(h.DType), i/cols, i%cols, v)
		}
	}
	return p, nil
}

// dtypeName names a dtype in words: int32, float16, ...
func dtypeName(t npy.DType) string {
	switch t.Kind {
	case 'i':
		return fmt.Sprintf("int%d", 8*t.Size)
	case 'u':
		return fmt.Sprintf("uint%d", 8*t.Size)
	case 'f':
		return fmt.Sprintf("float%d", 8*t.Size)
	case 'b':
		return "bool"
	}
	return t.String()
}

// shardRows is the rows [lo, hi) of rank of world over n rows: contiguous
// near-equal shards, rank r from ⌊r·n/w⌋ to ⌊(r+1)·n/w⌋. The Python client
// splits the same way.
func shardRows(n, rank, world int) (lo, hi int) {
	return int(int64(rank) * int64(n) / int64(world)), int(int64(rank+1) * int64(n) / int64(world))
}

// assembly collects the shards of one sharded upload.
type assembly struct {
	world, n, cols int
	ints           bool
	parts          map[int]*payload
}

func (a *assembly) received() []int {
	r := make([]int, 0, len(a.parts))
	for k := range a.parts {
		r = append(r, k)
	}
	slices.Sort(r)
	return r
}

// keptBatch is a handed-out global batch kept for repeated requests.
type keptBatch struct {
	step int
	idx  []int
}

// session is one job's sampler service: a Spec's sampler over N instances
// run by a sampler.Driver, the uploads that feed its refreshes, the next
// step to generate and the batches of the last keep steps. It is not safe
// for concurrent use (the server locks it).
//
// Refresh policy: before generating step s the session calls the Driver's
// BeforeStep(s, T). When RefreshDue(s, t) on a refreshing sampler, the
// refresh uses the pending upload (the last complete upload not yet used;
// it is then consumed); with reuse set and no pending upload, the upload of
// the previous refresh; otherwise generating s fails with code
// "refresh_due" until embeddings arrive. A neighbour table upload installs
// that graph (SetGraph) instead of building one.
type session struct {
	cfg   jobConfig
	keep  int
	reuse bool

	n     int // 0 until known
	total int // T (0: no end)
	smp   sampler.Sampler
	drv   *sampler.Driver

	next      int  // next step to generate
	prepared  bool // BeforeStep(next) has run
	kept      []keptBatch
	pending   *payload
	last      *payload // the upload of the last refresh (kept with reuse)
	shards    *assembly
	cur       *payload // handed to the EmbedFunc during BeforeStep
	refreshes int
	lastRep   *sampler.RefreshReport
}

func newSession(cfg jobConfig, keep int, reuse bool) *session {
	return &session{cfg: cfg, keep: keep, reuse: reuse}
}

// init builds the sampler over n instances.
func (s *session) init(n int) error {
	if n < 2 || s.cfg.B > n {
		return newAPIError(http.StatusBadRequest, "bad_n", "N = %d instances with B = %d: want 2 ≤ B ≤ N", n, s.cfg.B)
	}
	smp, err := s.cfg.Spec.New(n, s.cfg.B, s.cfg.Seed)
	if err != nil {
		return newAPIError(http.StatusBadRequest, "bad_config", "%v", err)
	}
	drv, err := sampler.NewDriver(smp, sampler.DriverOptions{Embedding: s.cfg.Spec.Embedding, Embed: s.embed})
	if err != nil {
		return newAPIError(http.StatusBadRequest, "bad_config", "%v", err)
	}
	s.n, s.smp, s.drv = n, smp, drv
	s.total = s.cfg.TotalSteps
	if s.cfg.Epochs > 0 {
		s.total = s.cfg.Epochs * smp.BatchesPerEpoch()
	}
	return nil
}

// embed is the Driver's EmbedFunc: the upload being used.
func (s *session) embed(string) (sampler.Embeddings, error) {
	if s.cur == nil || s.cur.ints {
		return sampler.Embeddings{}, errors.New("no embeddings uploaded for this refresh")
	}
	return sampler.Embeddings{N: s.cur.rows, D: s.cur.cols, Data: s.cur.f32}, nil
}

// refreshEvery is t, or -1 for a sampler that takes no refreshes.
func (s *session) refreshEvery() int {
	if rf, ok := s.smp.(sampler.Refresher); ok {
		return rf.RefreshEvery()
	}
	return -1
}

// due reports whether step needs a refresh.
func (s *session) due(step int) bool {
	t := s.refreshEvery()
	return t >= 0 && sampler.RefreshDue(step, t)
}

// submitResult says what an upload did.
type submitResult struct {
	Complete      bool    `json:"complete"`
	Received      []int   `json:"received_ranks"`
	World         int     `json:"world"`
	N             int     `json:"n"`
	Kind          string  `json:"kind"`
	RefreshedStep *int    `json:"refreshed_before_step,omitempty"`
	BuildSeconds  float64 `json:"build_seconds,omitempty"`
	NeighbourCos  float64 `json:"graph_neighbour_cos,omitempty"`
	ZeroInDegree  float64 `json:"graph_zero_in_degree,omitempty"`
	NextStep      int     `json:"next_step"`
}

// submit takes one upload: all N rows (world 1) or rank's shard of a
// sharded upload of nTotal rows. A complete upload becomes the pending one,
// and when the next step is due for a refresh it is used at once.
func (s *session) submit(p *payload, rank, world, nTotal int) (*submitResult, error) {
	if world < 1 || rank < 0 || rank >= world {
		return nil, newAPIError(http.StatusBadRequest, "bad_rank", "rank %d is outside world size %d: want 0 ≤ rank < world", rank, world)
	}
	if s.cfg.Spec.Kind == sampler.KindUniform {
		return nil, newAPIError(http.StatusConflict, "no_refresh", "kind uniform uses no embeddings or graph: nothing to refresh")
	}
	if p.ints && s.cfg.Spec.Kind != sampler.KindBatchSampler {
		return nil, newAPIError(http.StatusConflict, "bad_graph", "a neighbour table needs kind batchsampler, this job is %s", s.cfg.Spec.Kind)
	}
	n := p.rows
	if world > 1 {
		if nTotal <= 0 {
			return nil, newAPIError(http.StatusBadRequest, "bad_shard", "a sharded upload (world %d) needs n, the total number of rows N", world)
		}
		n = nTotal
		lo, hi := shardRows(n, rank, world)
		if p.rows != hi-lo {
			return nil, newAPIError(http.StatusBadRequest, "bad_shape", "shard of rank %d of %d over N = %d has %d rows, want rows [%d, %d) = %d", rank, world, n, p.rows, lo, hi, hi-lo)
		}
	} else if nTotal > 0 && nTotal != p.rows {
		return nil, newAPIError(http.StatusBadRequest, "bad_shape", "upload has %d rows, the request says n = %d", p.rows, nTotal)
	}
	if s.n != 0 && n != s.n {
		return nil, newAPIError(http.StatusConflict, "n_changed", "upload is for N = %d instances, this job has N = %d (fixed by its first upload or -n): the dataset cannot change size", n, s.n)
	}
	if s.n == 0 {
		if err := s.init(n); err != nil {
			return nil, err
		}
	}
	if p.ints {
		k := s.smp.(*sampler.BatchSampler).Config().K
		if p.cols != k {
			return nil, newAPIError(http.StatusBadRequest, "bad_shape", "neighbour table has %d columns, want K = %d", p.cols, k)
		}
		for i, v := range p.i32 {
			if int(v) >= n {
				return nil, newAPIError(http.StatusBadRequest, "bad_graph", "neighbour table row %d column %d is %d: want a node in [0, %d)", i/p.cols, i%p.cols, v, n)
			}
		}
	}
	if a := s.shards; a != nil && (a.world != world || a.n != n) {
		return nil, s.errWorldMismatch(rank, world, n)
	}
	res := &submitResult{World: world, N: n, Kind: p.kind()}
	full := p
	if world > 1 {
		a := s.shards
		if a == nil {
			a = &assembly{world: world, n: n, parts: map[int]*payload{}}
			s.shards = a
		}
		others := len(a.parts)
		if _, ok := a.parts[rank]; ok {
			others--
		}
		if others > 0 && (a.cols != p.cols || a.ints != p.ints) {
			q := &payload{ints: a.ints}
			return nil, newAPIError(http.StatusBadRequest, "bad_shard", "shard of rank %d is %s with %d columns, the other shards of this upload are %s with %d columns", rank, p.kind(), p.cols, q.kind(), a.cols)
		}
		a.cols, a.ints = p.cols, p.ints
		a.parts[rank] = p // a repeated rank replaces its shard (retries are safe)
		res.Received = a.received()
		if len(a.parts) < world {
			res.NextStep = s.next
			return res, nil
		}
		full = &payload{rows: n, cols: p.cols, ints: p.ints, from: p.from}
		for r := 0; r < world; r++ {
			q := a.parts[r]
			full.f32 = append(full.f32, q.f32...)
			full.i32 = append(full.i32, q.i32...)
		}
		s.shards = nil
	} else {
		res.Received = []int{0}
	}
	res.Complete = true
	s.pending = full
	if s.due(s.next) && !s.prepared {
		step := s.next
		t0 := time.Now()
		if err := s.prepare(step); err != nil {
			return nil, err
		}
		res.RefreshedStep = &step
		res.BuildSeconds = time.Since(t0).Seconds()
		if s.lastRep != nil && s.lastRep.Graph != nil {
			res.NeighbourCos = s.lastRep.Graph.MeanCosine
			res.ZeroInDegree = s.lastRep.Graph.ZeroInDegree
		}
	}
	res.NextStep = s.next
	return res, nil
}

// errWorldMismatch is the error of an upload whose world size (or N)
// differs from the sharded upload in progress: the ranks of one job
// disagree, or another job shares the server. The shards received are kept
// (rank 0's shard of a world-2 upload is not dropped by a world-3 one), so
// the job fails at once instead of waiting forever for a complete upload.
func (s *session) errWorldMismatch(rank, world, n int) error {
	a := s.shards
	what := fmt.Sprintf("a shard from rank %d of world %d", rank, world)
	if world == 1 {
		what = "a whole upload (world 1)"
	}
	e := newAPIError(http.StatusConflict, "world_mismatch",
		"%s over N = %d, but a sharded upload for world %d over N = %d is in progress (ranks %v received): every rank of a job must send the same world size; if the job that sent those shards is gone, DELETE /v1/refresh discards them",
		what, n, a.world, a.n, a.received())
	e.extra = map[string]any{"world": a.world, "received_ranks": a.received(), "n": a.n}
	return e
}

// discardShards drops an unfinished sharded upload and returns what it held.
func (s *session) discardShards() (world int, received []int) {
	if a := s.shards; a != nil {
		world, received = a.world, a.received()
	}
	s.shards = nil
	return world, received
}

// errRefreshDue is the error of a step that needs a refresh no upload can
// serve yet.
func (s *session) errRefreshDue(step int) error {
	var e *apiError
	if s.smp == nil {
		e = newAPIError(http.StatusConflict, "refresh_due", "refresh due before step 0: no embeddings were uploaded yet (N is not known): POST /v1/refresh them first")
	} else {
		e = newAPIError(http.StatusConflict, "refresh_due", "refresh due before step %d (refresh_every %d): POST /v1/refresh the current embeddings first", step, s.refreshEvery())
	}
	e.extra = map[string]any{"step": step, "received_ranks": []int{}, "world": 0}
	if a := s.shards; a != nil {
		e.extra["received_ranks"], e.extra["world"] = a.received(), a.world
		e.msg += fmt.Sprintf(" (sharded upload in progress: ranks %v of %d received)", a.received(), a.world)
	}
	return e
}

// prepare runs BeforeStep for step: the α schedule and, when due, the
// refresh from the pending upload.
func (s *session) prepare(step int) error {
	if !s.due(step) {
		if _, err := s.drv.BeforeStep(step, s.total); err != nil {
			return err
		}
		s.prepared = true
		return nil
	}
	p := s.pending
	if p == nil && s.reuse {
		p = s.last
	}
	if p == nil {
		return s.errRefreshDue(step)
	}
	if p.ints {
		g, err := sampler.NewGraph(p.rows, p.cols, p.i32)
		if err != nil {
			return newAPIError(http.StatusBadRequest, "bad_graph", "%v", err)
		}
		bs := s.smp.(*sampler.BatchSampler)
		bs.SetProgress(step, s.total)
		if err := bs.SetGraph(g); err != nil {
			return newAPIError(http.StatusBadRequest, "bad_graph", "%v", err)
		}
		s.lastRep = nil
	} else {
		s.cur = p
		rep, err := s.drv.BeforeStep(step, s.total)
		s.cur = nil
		if err != nil {
			return newAPIError(http.StatusBadRequest, "refresh_failed", "%v", err)
		}
		s.lastRep = rep
	}
	s.pending = nil
	s.last = nil
	if s.reuse {
		s.last = p
	}
	s.refreshes++
	s.prepared = true
	return nil
}

// epochOf is the 0-based epoch of a step.
func (s *session) epochOf(step int) int { return step / s.smp.BatchesPerEpoch() }

// batch returns the global batch of step (not to be modified): a kept one
// for a step already generated, else the batches up to it are generated.
func (s *session) batch(step int) ([]int, error) {
	if step < 0 {
		return nil, newAPIError(http.StatusBadRequest, "bad_step", "step %d: want a step ≥ 0", step)
	}
	if s.n == 0 {
		return nil, s.errRefreshDue(0)
	}
	if s.total > 0 && step >= s.total {
		return nil, newAPIError(http.StatusBadRequest, "bad_step", "step %d is past the last step %d (T = %d training steps)", step, s.total-1, s.total)
	}
	if step < s.next {
		if i, ok := slices.BinarySearchFunc(s.kept, step, func(k keptBatch, st int) int { return k.step - st }); ok {
			return s.kept[i].idx, nil
		}
		lo := s.next
		if len(s.kept) > 0 {
			lo = s.kept[0].step
		}
		e := newAPIError(http.StatusGone, "step_gone", "step %d is no longer kept: this job keeps the batches of the last %d steps (-keep), now steps [%d, %d)", step, s.keep, lo, s.next)
		e.extra = map[string]any{"kept_from": lo, "next_step": s.next, "keep": s.keep}
		return nil, e
	}
	if ahead := step - s.next; ahead > max(s.keep, 1) {
		return nil, newAPIError(http.StatusBadRequest, "bad_step", "step %d is %d steps ahead of the next step %d: at most %d (-keep) may be generated ahead", step, ahead, s.next, max(s.keep, 1))
	}
	var idx []int
	for s.next <= step {
		if !s.prepared {
			if err := s.prepare(s.next); err != nil {
				return nil, err
			}
		}
		idx = s.drv.Next()
		s.kept = append(s.kept, keptBatch{step: s.next, idx: idx})
		if over := len(s.kept) - s.keep; over > 0 {
			s.kept = slices.Delete(s.kept, 0, over)
		}
		s.next++
		s.prepared = false
	}
	return idx, nil
}

// info is the session's state for /v1/info.
func (s *session) info() map[string]any {
	cfg := map[string]any{}
	for _, f := range s.cfg.describe() {
		cfg[f.key] = f.value
	}
	m := map[string]any{
		"config": cfg, "n": s.n, "batch_size": s.cfg.B, "total_steps": s.total,
		"next_step": s.next, "keep": s.keep, "refreshes": s.refreshes,
		"refresh_every": s.cfg.Spec.RefreshEvery, "kind": s.cfg.Spec.Kind,
		"pending_upload": s.pending != nil, "stale": map[bool]string{true: "reuse", false: "wait"}[s.reuse],
	}
	if s.smp != nil {
		m["batches_per_epoch"] = s.smp.BatchesPerEpoch()
		m["epoch"] = s.epochOf(s.next)
		if c, ok := s.smp.(sampler.Coverer); ok {
			m["coverage"] = c.Coverage()
		}
		if a, ok := s.smp.(sampler.Restarter); ok {
			m["alpha"] = a.Alpha()
		}
	}
	if len(s.kept) > 0 {
		m["kept_steps"] = []int{s.kept[0].step, s.next}
	} else {
		m["kept_steps"] = []int{s.next, s.next}
	}
	if a := s.shards; a != nil {
		m["shards"] = map[string]any{"world": a.world, "n": a.n, "received_ranks": a.received()}
	}
	return m
}

package sampler

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Defaults of Config.
const (
	DefaultK = 100  // neighbours kept per node
	DefaultM = 1000 // candidates per node
)

// Epoch kinds of Config.Epoch and Spec.Epoch.
const (
	// EpochFixed (the default): an epoch is BatchesPerEpoch batches, as
	// Uniform's, and covers only part of the dataset when walks overlap.
	EpochFixed = "fixed"
	// EpochCovering (the published code): an epoch walks until ⌊N/B⌋·B
	// distinct instances are covered, then trains the instances left as one
	// short batch, so it has at least BatchesPerEpoch batches and covers
	// every instance.
	EpochCovering = "covering"
)

// EpochKinds lists the allowed values of Config.Epoch and Spec.Epoch, the
// default first.
var EpochKinds = []string{EpochFixed, EpochCovering}

// Warmup kinds of Config.Warmup and Spec.Warmup.
const (
	// WarmupNone (the default): the graph is built before the first step.
	WarmupNone = "none"
	// WarmupShuffledEpoch (the published code): the first epoch is
	// Uniform's (the same permutation Uniform draws with the same seed) and
	// no graph exists during it; the graph is built at its end and the walk
	// starts with the second epoch.
	WarmupShuffledEpoch = "shuffled_epoch"
)

// WarmupKinds lists the allowed values of Config.Warmup and Spec.Warmup,
// the default first.
var WarmupKinds = []string{WarmupNone, WarmupShuffledEpoch}

// Config configures a BatchSampler. Zero fields take the documented defaults.
type Config struct {
	// BatchSize is B, the number of distinct instances per batch (required,
	// 2 ≤ B ≤ N; the last batch of an epoch has B+1 when N mod B = 1).
	BatchSize int
	// M is the number of candidates per node and K the number of neighbours
	// kept (M ≥ K; M ≥ N−1 means all other nodes). Defaults: K = 100 (or
	// M if M < 100), M = max(1000, K); both are clamped to N−1, except with
	// Candidates = CandidatesWithReplacement (see BuildProximityGraph).
	M, K int
	// Candidates is CandidatesWithoutReplacement (default) or
	// CandidatesWithReplacement, the published code's draw (graph
	// proximity only; the knn graph draws nothing).
	Candidates string
	// Walk is WalkRWR (default), WalkRW, WalkBFS or WalkDFS.
	Walk string
	// Graph is GraphProximity (default) or GraphKNN (the exact kNN graph:
	// M is not used).
	Graph string
	// Alpha is the restart probability α of RWR over training, driven by
	// SetProgress (a per-epoch schedule: by the sampler's own epoch, see
	// SamplerEpoch); the other walks ignore it. The zero Schedule means
	// DefaultAlpha (0.2 → 0.05, linear).
	Alpha Schedule
	// Epoch is EpochFixed (default) or EpochCovering.
	Epoch string
	// Warmup is WarmupNone (default) or WarmupShuffledEpoch.
	Warmup string
	// RefreshEvery is t: the training loop rebuilds the graph every t steps
	// (0: only before step 0).
	RefreshEvery int
	// MaxWalkSteps caps the steps of a walk from one start node before the
	// walk falls back to a new start (see Walk); 0 means 100·B.
	MaxWalkSteps int
	// CandidateSharing is ShareBlock (default) or ShareNode; BlockSize is the
	// block size for ShareBlock (0: DefaultBlockSize). See BuildProximityGraph.
	CandidateSharing string
	BlockSize        int
	// Workers is the number of goroutines building the graph (0: GOMAXPROCS).
	// Batches do not depend on it.
	Workers int
}

// resolve fills defaults and checks c for a dataset of n instances.
func (c Config) resolve(n int) (Config, error) {
	if err := checkSizes(n, c.BatchSize); err != nil {
		return c, fmt.Errorf("Config.BatchSize: %w", err)
	}
	if c.K == 0 {
		c.K = DefaultK
		if c.M > 0 {
			c.K = min(DefaultK, c.M)
		}
	}
	if c.M == 0 {
		c.M = max(DefaultM, c.K)
	}
	if c.K < 0 || c.M < 0 {
		return c, fmt.Errorf("Config.M and Config.K must be ≥ 0, got M=%d K=%d", c.M, c.K)
	}
	if c.M < c.K {
		return c, fmt.Errorf("Config.M (candidates) must be ≥ Config.K (neighbours), got M=%d K=%d", c.M, c.K)
	}
	if err := oneOf("Config.Candidates", c.Candidates, CandidateDraws, true); err != nil {
		return c, err
	}
	if c.Candidates == "" {
		c.Candidates = CandidatesWithoutReplacement
	}
	if c.Candidates == CandidatesWithReplacement {
		if c.M > maxCandidates {
			return c, fmt.Errorf("Config.M must be < 2³¹ with candidates %s, got %d", CandidatesWithReplacement, c.M)
		}
	} else {
		c.M, c.K = min(c.M, max(n-1, 0)), min(c.K, max(n-1, 0))
	}
	w, err := validWalk(c.Walk)
	if err != nil {
		return c, fmt.Errorf("Config.Walk: %w", err)
	}
	c.Walk = w
	switch {
	case c.Graph == "":
		c.Graph = GraphKinds[0]
	case !slices.Contains(GraphKinds, c.Graph):
		return c, fmt.Errorf("Config.Graph is %q, want %s", c.Graph, quoted(GraphKinds, " or "))
	}
	if c.Graph == GraphKNN && c.Candidates == CandidatesWithReplacement {
		return c, fmt.Errorf("Config.Candidates is %q, but Config.Graph %q draws no candidates (want %q or \"\")", c.Candidates, GraphKNN, CandidatesWithoutReplacement)
	}
	if c.Alpha.IsZero() {
		c.Alpha = DefaultAlpha
	}
	if err := oneOf("Config.Epoch", c.Epoch, EpochKinds, true); err != nil {
		return c, err
	}
	if c.Epoch == "" {
		c.Epoch = EpochFixed
	}
	if err := oneOf("Config.Warmup", c.Warmup, WarmupKinds, true); err != nil {
		return c, err
	}
	if c.Warmup == "" {
		c.Warmup = WarmupNone
	}
	if err := c.Alpha.Validate(0, 1); err != nil {
		return c, fmt.Errorf("Config.Alpha: %w", err)
	}
	if c.RefreshEvery < 0 {
		return c, fmt.Errorf("Config.RefreshEvery must be ≥ 0, got %d", c.RefreshEvery)
	}
	if c.MaxWalkSteps < 0 {
		return c, fmt.Errorf("Config.MaxWalkSteps must be ≥ 0, got %d", c.MaxWalkSteps)
	}
	if c.MaxWalkSteps == 0 {
		c.MaxWalkSteps = 100 * c.BatchSize
	}
	switch c.CandidateSharing {
	case "":
		c.CandidateSharing = ShareBlock
	case ShareBlock, ShareNode:
	default:
		return c, fmt.Errorf("Config.CandidateSharing is %q, want %q or %q", c.CandidateSharing, ShareBlock, ShareNode)
	}
	if c.BlockSize < 0 {
		return c, fmt.Errorf("Config.BlockSize must be ≥ 0, got %d", c.BlockSize)
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.Workers < 0 {
		return c, fmt.Errorf("Config.Workers must be ≥ 0, got %d", c.Workers)
	}
	return c, nil
}

var (
	_ Sampler          = (*BatchSampler)(nil)
	_ Refresher        = (*BatchSampler)(nil)
	_ Scheduled        = (*BatchSampler)(nil)
	_ RefreshScheduler = (*BatchSampler)(nil)
	_ EpochCounter     = (*BatchSampler)(nil)
	_ Sampler          = (*KNN)(nil)
	_ Refresher        = (*KNN)(nil)
	_ Sampler          = (*Uniform)(nil)
)

// BatchSampler is the sampler of the paper (its Algorithm 1, "Contrastive
// Learning with BatchSampler", with Algorithms 2 and 3): every t steps it
// builds a proximity graph G of the instances from their current embeddings
// (Refresh, proximity.go), and every batch is a walk on G (walk.go, Walk):
// from a start node not yet covered in the epoch, a random walk with restart
// probability α collects B distinct instances. A walk that gets stuck (step
// cap, no new node for a while, or a small component) continues from the
// next node not yet covered; see Walk.
//
// Epochs have as many batches as Uniform's, ⌈N/B⌉, or ⌊N/B⌋ when
// N mod B = 1. Because walks overlap, an epoch covers only part of the
// dataset; Coverage and CoverageHistory report the share. Before the first
// Refresh (or SetGraph) it hands out Uniform batches (a random permutation
// cut into consecutive batches). In graph mode every batch has exactly B
// distinct indices, except that when N mod B = 1 the last batch of an epoch
// is a walk of B+1 (the rule of Sampler: the instance that would have made
// a batch of one is merged into the last batch, so every epoch's batches
// hold N instances in all, as Uniform's do); its first index is the walk's
// start node.
//
// Three options follow the published code instead (Config.Epoch, Alpha's
// per-epoch kind, Config.Warmup; Spec's `published: true` turns them on
// with embedding cached_views): covering epochs, an α that drops with the
// sampler's own epoch, and a shuffled first epoch without a graph. See
// Next, SamplerEpoch and RefreshDueAt. Another, Config.Candidates =
// CandidatesWithReplacement (the published code's fifth difference from
// the paper's text, not turned on by `published: true`), draws the
// graph's candidates as the published code does (with replacement, self
// included): its rows may then hold the node itself and repeated
// neighbours, which the walk handles as it handles any row (a step along a
// self-loop stays on the node; a repeated neighbour is proportionally more
// likely), and every batch still has B distinct instances.
type BatchSampler struct {
	cfg    Config
	n      int
	seed   uint64
	src    *rand.PCG
	rng    *rand.Rand
	g      *Graph
	builds uint64 // graphs built so far (drives the build seeds)
	// sinceBuild counts the batches handed out since the last Refresh or
	// SetGraph (the refresh policy of warmup shuffled_epoch).
	sinceBuild int
	step       int
	total      int
	ep         epoch
	w          walker
	inBatch    func(int32) bool
	nextNode   func() int32
}

// NewBatchSampler returns a BatchSampler over n instances.
func NewBatchSampler(cfg Config, n int, seed uint64) (*BatchSampler, error) {
	c, err := cfg.resolve(n)
	if err != nil {
		return nil, fmt.Errorf("sampler: batchsampler: %w", err)
	}
	src := rand.NewPCG(seed, 0x5eed0002)
	s := &BatchSampler{cfg: c, n: n, seed: seed, src: src, rng: rand.New(src), ep: newEpoch(n, c.BatchSize), total: 1}
	s.ep.covering = c.Epoch == EpochCovering
	s.inBatch = s.w.has
	s.nextNode = func() int32 { return s.ep.nextStart(s.rng, s.inBatch) }
	return s, nil
}

// Config returns the configuration with defaults filled in.
func (s *BatchSampler) Config() Config { return s.cfg }

// N returns the number of instances.
func (s *BatchSampler) N() int { return s.n }

// BatchSize returns B.
func (s *BatchSampler) BatchSize() int { return s.cfg.BatchSize }

// BatchesPerEpoch returns ⌈N/B⌉, or ⌊N/B⌋ when N mod B = 1 (the last batch
// then has B+1 instances). With covering epochs it is still Uniform's
// number, the unit of the training loop's step budget (epochs ×
// BatchesPerEpoch steps, as the published code's global budget), while the
// sampler's own epochs are longer: see SamplerEpoch.
func (s *BatchSampler) BatchesPerEpoch() int { return s.ep.batchesPerEpoch() }

// SamplerEpoch returns the 0-based index of the sampler's epoch in progress
// (the epoch of the last batch handed out; 0 before the first), and
// whether it matters: true when the epochs are covering (their number then
// differs from the loop's steps/BatchesPerEpoch), the α schedule is
// per-epoch or the first epoch is a shuffled warmup.
func (s *BatchSampler) SamplerEpoch() (int, bool) {
	own := s.cfg.Epoch == EpochCovering || s.cfg.Alpha.Kind == SchedulePerEpoch || s.cfg.Warmup == WarmupShuffledEpoch
	return s.ep.index(), own
}

// RefreshDueAt reports whether the graph is to be rebuilt before 0-based
// step: RefreshDue(step, t) with warmup none. With warmup shuffled_epoch
// there is no refresh during the first epoch; the first comes once its last
// batch was handed out, and the next ones every t batches after the
// previous (none with t = 0); step is not read.
func (s *BatchSampler) RefreshDueAt(step int) bool {
	if s.cfg.Warmup != WarmupShuffledEpoch {
		return RefreshDue(step, s.cfg.RefreshEvery)
	}
	if s.g == nil {
		return s.ep.started && s.ep.index() == 0 && s.ep.complete()
	}
	return s.cfg.RefreshEvery > 0 && s.sinceBuild >= s.cfg.RefreshEvery
}

// RefreshEvery returns t.
func (s *BatchSampler) RefreshEvery() int { return s.cfg.RefreshEvery }

// SetProgress sets the training progress that drives the α schedule.
func (s *BatchSampler) SetProgress(step, total int) { s.step, s.total = step, total }

// Alpha returns the current restart probability α (for a per-epoch
// schedule, that of the sampler's epoch of the last batch handed out).
func (s *BatchSampler) Alpha() float64 {
	return s.cfg.Alpha.ValueAt(s.step, s.total, s.ep.index())
}

// Graph returns the current graph (nil before the first Refresh). It must
// not be modified.
func (s *BatchSampler) Graph() *Graph { return s.g }

// Coverage returns the share of the dataset covered by the batches of the
// epoch in progress (or of the epoch just finished, until the next batch).
func (s *BatchSampler) Coverage() float64 { return s.ep.coverage() }

// CoverageHistory returns the coverage of every finished epoch.
func (s *BatchSampler) CoverageHistory() []float64 { return append([]float64(nil), s.ep.history...) }

// Refresh rebuilds the graph from embeddings of all N instances (any N×D
// matrix; it is not modified): Algorithm 2 for Config.Graph = "proximity",
// the exact kNN graph for "knn".
func (s *BatchSampler) Refresh(e Embeddings) error {
	if e.N != s.n {
		return fmt.Errorf("sampler: batchsampler: refresh with %d embeddings, want one per instance (%d)", e.N, s.n)
	}
	u, err := normalizeRows(e)
	if err != nil {
		return fmt.Errorf("sampler: batchsampler: refresh: %w", err)
	}
	var g *Graph
	if s.cfg.Graph == GraphKNN {
		g, err = buildKNN(u, e.N, e.D, s.cfg.K, s.cfg.Workers)
	} else {
		g, err = buildProximity(u, e.N, e.D, GraphOptions{
			M: s.cfg.M, K: s.cfg.K, Candidates: s.cfg.Candidates, CandidateSharing: s.cfg.CandidateSharing,
			BlockSize: s.cfg.BlockSize, Workers: s.cfg.Workers,
			Seed: mix64(s.seed ^ mix64(s.builds+1)),
		})
	}
	if err != nil {
		return fmt.Errorf("sampler: batchsampler: refresh: %w", err)
	}
	s.g = g
	s.builds++
	s.sinceBuild = 0
	return nil
}

// SetGraph installs a graph built elsewhere (not copied), in place of
// Refresh. It must have one node per instance.
func (s *BatchSampler) SetGraph(g *Graph) error {
	if g == nil || g.N != s.n || len(g.Adj) != g.N*g.K {
		return fmt.Errorf("sampler: batchsampler: SetGraph needs a graph of %d nodes with N·K adjacency entries", s.n)
	}
	s.g = g
	s.sinceBuild = 0
	return nil
}

// SetWalkTrace installs f (nil removes it) to hear every step of the walks
// that the following calls of Next take, as WalkOptions.Trace hears those of
// Walk, fallback jumps to the next uncovered start node included. Batches
// that are not walks (Uniform batches before the first graph or during a
// shuffled warmup epoch, the rest batch of a covering epoch) report
// nothing. Tracing consumes no randomness: a traced sampler hands out the
// batches of an untraced one. For teaching pictures (cmd/samplerdemo) and
// tests; the trace is not part of the saved state.
func (s *BatchSampler) SetWalkTrace(f func(WalkStep)) { s.w.trace = f }

// Next returns the next batch: a walk on the graph (Uniform before the first
// Refresh). The slice is owned by the caller.
//
// With warmup shuffled_epoch the batches of the first epoch are Uniform's,
// whether or not a graph exists. With covering epochs every walk is of B
// distinct instances (start nodes not yet covered in the epoch, as always)
// until ⌊N/B⌋·B distinct instances are covered; the instances left
// uncovered then form the epoch's last batch (in the order of the epoch's
// permutation), except that a single instance left is added to the walk
// that leaves it (which then has B+1, the rule of Sampler), and none left
// means no such batch.
func (s *BatchSampler) Next() []int {
	warm := s.cfg.Warmup == WarmupShuffledEpoch && (!s.ep.started || s.ep.index() == 0 && !s.ep.complete())
	if warm {
		// Uniform's first permutation: the same generator and stream.
		s.ep.begin(rand.New(rand.NewPCG(s.seed, 0x5eed0001)))
	} else {
		s.ep.begin(s.rng)
	}
	size := s.ep.size()
	var batch []int
	switch {
	case s.g == nil || warm:
		batch = s.ep.uniformBatch(make([]int, 0, size))
	case s.ep.covering && s.ep.covered >= s.ep.target():
		batch = s.ep.rest(make([]int, 0, s.ep.n-s.ep.covered))
	default:
		if s.ep.covering {
			size = s.cfg.BatchSize
		}
		s.w.begin(s.g)
		start := s.nextNode()
		batch = s.w.walk(start, walkParams{kind: s.cfg.Walk, b: size, alpha: s.Alpha(), maxSteps: s.cfg.MaxWalkSteps},
			s.src, s.nextNode, make([]int, 0, size+1))
		if s.ep.covering {
			covered := s.ep.covered
			for _, v := range batch {
				if !s.ep.isCovered(int32(v)) {
					covered++
				}
			}
			if covered >= s.ep.target() && s.ep.n-covered == 1 {
				batch = append(batch, int(s.nextNode())) // the one node left
			}
		}
	}
	s.ep.finish(batch)
	s.sinceBuild++
	return batch
}

type batchSamplerState struct {
	N           int
	Cfg         Config
	Seed        uint64
	RNG         []byte
	HasGraph    bool
	GraphK      int
	Adj         []byte
	Builds      uint64
	SinceBuild  int
	Step, Total int
	Epoch       epochState
}

// MarshalBinary saves everything Next depends on: configuration, seed, RNG
// state, graph, epoch position, covered set and progress.
func (s *BatchSampler) MarshalBinary() ([]byte, error) {
	r, err := s.src.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("sampler: batchsampler: save rng: %w", err)
	}
	st := batchSamplerState{N: s.n, Cfg: s.cfg, Seed: s.seed, RNG: r, Builds: s.builds, SinceBuild: s.sinceBuild, Step: s.step, Total: s.total, Epoch: s.ep.state()}
	if s.g != nil {
		st.HasGraph, st.GraphK, st.Adj = true, s.g.K, int32sToBytes(s.g.Adj)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		return nil, fmt.Errorf("sampler: batchsampler: encode state: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary restores a state saved by MarshalBinary. The sampler must
// have been created for the same N and configuration (Workers may differ).
func (s *BatchSampler) UnmarshalBinary(p []byte) error {
	var st batchSamplerState
	if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&st); err != nil {
		return fmt.Errorf("sampler: batchsampler: decode state: %w", err)
	}
	if st.N != s.n {
		return fmt.Errorf("sampler: batchsampler: state is for N=%d, sampler has N=%d", st.N, s.n)
	}
	a, b := st.Cfg, s.cfg
	a.Workers, b.Workers = 0, 0
	if a.Epoch == "" && a.Warmup == "" { // a state written before these options
		a.Epoch, a.Warmup = EpochFixed, WarmupNone
	}
	if a.Candidates == "" { // a state written before Config.Candidates
		a.Candidates = CandidatesWithoutReplacement
	}
	if a != b {
		return fmt.Errorf("sampler: batchsampler: state has config %+v, sampler has %+v", a, b)
	}
	var g *Graph
	if st.HasGraph {
		adj, err := bytesToInt32s(st.Adj)
		if err != nil {
			return fmt.Errorf("sampler: batchsampler: state graph: %w", err)
		}
		if g, err = NewGraph(s.n, st.GraphK, adj); err != nil {
			return fmt.Errorf("sampler: batchsampler: state graph: %w", err)
		}
	}
	ep := newEpoch(s.n, s.cfg.BatchSize)
	ep.covering = s.ep.covering
	if err := ep.restore(st.Epoch); err != nil {
		return fmt.Errorf("sampler: batchsampler: state: %w", err)
	}
	if err := s.src.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("sampler: batchsampler: restore rng: %w", err)
	}
	s.seed, s.g, s.builds, s.step, s.total, s.ep = st.Seed, g, st.Builds, st.Step, st.Total, ep
	s.sinceBuild = st.SinceBuild
	return nil
}

package sampler

// The sampler's configuration as it appears in a YAML config file (a
// `sampler:` entry or one item of `samplers:`), its validation and the
// constructor of the sampler it describes. Training (package train) and any
// other Go loop read the same schema and build the same samplers from it.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Sampler kinds of Spec.Kind.
const (
	KindUniform      = "uniform"      // Uniform: a fresh permutation every epoch
	KindKNN          = "knn"          // KNN: an anchor and its B−1 nearest neighbours
	KindBatchSampler = "batchsampler" // BatchSampler: walks on a proximity graph
	KindGCBS         = "gcbs"         // GCBS: reverse Cuthill–McKee order of a kNN graph
	KindSpectral     = "spectral"     // Spectral: even-sized spectral clustering of k·B instances
	KindOSGD         = "osgd"         // OSGD: the q highest-loss of k random batches
	KindKMeans       = "kmeans"       // ClusterBatches together: a batch from one k-means cluster
	KindAntiKMeans   = "antikmeans"   // ClusterBatches apart: no two of a cluster in a batch
)

// Kinds lists the allowed values of Spec.Kind (there is no default).
var Kinds = []string{KindUniform, KindKNN, KindBatchSampler, KindGCBS, KindSpectral, KindOSGD, KindKMeans, KindAntiKMeans}

// GlobalKinds are the kinds of the global batch samplers compared in
// docs/batch-composition.md (each refreshed from embeddings, as knn and
// batchsampler are).
var GlobalKinds = []string{KindGCBS, KindSpectral, KindOSGD, KindKMeans, KindAntiKMeans}

// Defaults of the global samplers' keys.
const (
	DefaultSpectralDraw = 4 // k of spectral: batches per round (clamped to ⌊N/B⌋)
	DefaultOSGDDraw     = 4 // k of osgd: batches drawn per round (clamped to ⌊N/B⌋)
)

// Spec chooses how mini-batches are formed: the YAML schema of a sampler in
// a config file. The zero values of Walk, Graph, Candidates, Embedding,
// Epoch and Warmup mean their defaults (rwr, proximity,
// without_replacement, projection, fixed, none).
//
// The paper's text and the published code (THUDM/BatchSampler main.py)
// differ in four ways that `published: true` turns on together (see
// Effective), each published choice a key of its own:
//
//	epoch: covering              # epochs that walk until ⌊N/B⌋·B instances are covered
//	embedding: cached_views      # graph from both views' training-time projections
//	alpha: {schedule: per_epoch} # α = 0.2 − (e/5)·0.1 for the 1-based sampler epoch e, floored at 0.05
//	warmup: shuffled_epoch       # a Uniform first epoch, the graph built at its end
//
// and in a fifth that `published: true` leaves off (so that the runs
// recorded with it stay as they are), on only when asked:
//
//	candidates: with_replacement # M draws with replacement from all N nodes, self included
//
// Validate checks a Spec and New builds the sampler; a Driver (refresh.go)
// runs it in a training loop.
type Spec struct {
	// Kind is "uniform", "knn", "batchsampler", or one of the global
	// samplers "gcbs", "spectral", "osgd", "kmeans", "antikmeans".
	Kind string `yaml:"kind"`
	// Label names the sampler in results (default: Kind, or a description
	// of the walk and graph for ablations).
	Label string `yaml:"label"`
	// M is the number of candidates a node draws and K the number of
	// neighbours it keeps (K ≤ M); see Candidates for M ≥ N. For kind gcbs
	// K is the neighbours per instance of its sparse graph (0:
	// DefaultGCBSNeighbours).
	M int `yaml:"m"`
	K int `yaml:"k"`
	// Draw is the k of Cho et al. (kinds spectral and osgd): the batches a
	// round draws, k·B instances (0: DefaultSpectralDraw or
	// DefaultOSGDDraw, clamped to ⌊N/B⌋); Keep is OSGD's q, the batches it
	// keeps of them (0: ⌈k/2⌉).
	Draw int `yaml:"draw,omitempty"`
	Keep int `yaml:"keep,omitempty"`
	// Temperature is the τ of spectral's affinity and osgd's score (0: the
	// config's loss.temperature, which package train fills in).
	Temperature float64 `yaml:"temperature,omitempty"`
	// Clusters is the C of kinds kmeans (1 ≤ C ≤ ⌊N/B⌋; 0: ⌊N/B⌋) and
	// antikmeans (B ≤ C ≤ N; 0: B).
	Clusters int `yaml:"clusters,omitempty"`
	// Candidates is how a node's M candidates are drawn (graph proximity
	// only): "without_replacement" (default: M distinct other nodes, as the
	// paper's text says; M and K are clamped to N−1, so every M ≥ N−1 is
	// the exact kNN graph) or "with_replacement" (the published code's
	// draw: M uniform draws from all N nodes, so the node itself and
	// repeats can be among them and the graph keeps changing with M beyond
	// N; a row may hold the node itself, first, and repeated neighbours;
	// K ≤ M is all that is required). See BuildProximityGraph. Not turned
	// on by Published.
	Candidates string `yaml:"candidates,omitempty"`
	// Walk is rwr, rw, bfs or dfs; Graph is proximity or knn.
	Walk  string        `yaml:"walk"`
	Graph string        `yaml:"graph"`
	Alpha AlphaSchedule `yaml:"alpha"`
	// RefreshEvery is t, the number of iterations between graph rebuilds.
	RefreshEvery int `yaml:"refresh_every"`
	// Embedding is the representation the graph is built from:
	// "projection" (default: the whole dataset re-embedded by the current
	// encoder in evaluation mode at every refresh), "encoder" (the same with
	// the encoder's output), "cached" (the projections of the first view
	// computed during training, kept per instance, as the published code
	// does: no re-embedding cost, but stale for instances not seen recently;
	// the dataset is embedded once before the first step), or
	// "cached_views" (the published code's: both views' training-time
	// projections, L2-normalised and concatenated; see EmbedCachedViews;
	// only for methods that hand over both views, e.g. GraphCL).
	Embedding string `yaml:"embedding"`
	// MaxWalkSteps caps one walk; 0 is the sampler's default.
	MaxWalkSteps int `yaml:"max_walk_steps"`
	// Epoch is "fixed" (default: an epoch is BatchesPerEpoch batches, as
	// Uniform's, and covers part of the data when walks overlap) or
	// "covering" (the published code: an epoch walks until ⌊N/B⌋·B distinct
	// instances are covered, then trains the instances left as one short
	// batch, so it has more batches; training still stops after epochs ×
	// Uniform's batches per epoch, so fewer sampler epochs are completed:
	// the metrics log the sampler's own epoch as sampler_epoch). The
	// embedding "cached_views" (the published code's graph embedding, see
	// EmbedCachedViews) is an Embedding value beside projection, encoder and
	// cached.
	Epoch string `yaml:"epoch,omitempty"`
	// Warmup is "none" (default: the graph is built before the first step)
	// or "shuffled_epoch" (the published code: the first epoch's batches
	// are Uniform's, with no graph; the graph is built at its end, from the
	// training-time cache with embedding cached_views, else from a fresh
	// embedding, and the walk starts with the second epoch).
	Warmup string `yaml:"warmup,omitempty"`
	// Published turns on every published choice the spec does not set
	// itself: epoch covering, embedding cached_views, alpha {schedule:
	// per_epoch} and warmup shuffled_epoch. Each can still be overridden
	// (epoch: fixed, embedding: projection, warmup: none, alpha: 0.3 or
	// alpha: {schedule: linear, ...}). Only for kind batchsampler. The
	// published candidate draw (candidates: with_replacement) is not among
	// them: set it as well for the published code's graph.
	Published bool `yaml:"published,omitempty"`
}

// AlphaSchedule is the restart probability: a number (constant), {start,
// end} (linear decay over training) or {schedule: per_epoch, start, end}
// (the published code's: start − 0.1·⌊e/5⌋ in the sampler's 0-based epoch e,
// floored at end; start and end may be left out for the published 0.2 and
// 0.05, the drop of 0.1 every 5 epochs is fixed).
type AlphaSchedule struct {
	// Kind is the YAML key schedule: "linear" (the default of the map
	// form) or "per_epoch".
	Kind  string  `yaml:"schedule,omitempty"`
	Start float64 `yaml:"start"`
	End   float64 `yaml:"end"`
	// Constant is true when the YAML gave a single number.
	Constant bool `yaml:"-"`
}

// UnmarshalYAML accepts `alpha: 0.2` or `alpha: {start: 0.2, end: 0.05}`.
func (a *AlphaSchedule) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var v float64
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: alpha must be a number or {start, end} (optionally with schedule: linear or per_epoch): %w", n.Line, err)
		}
		*a = AlphaSchedule{Start: v, End: v, Constant: true}
		return nil
	}
	type plain AlphaSchedule
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*a = AlphaSchedule(p)
	return nil
}

// MarshalYAML writes a constant schedule as a number.
func (a AlphaSchedule) MarshalYAML() (any, error) {
	if a.Constant {
		return a.Start, nil
	}
	if a.Kind != "" {
		return map[string]any{"schedule": a.Kind, "start": a.Start, "end": a.End}, nil
	}
	return map[string]float64{"start": a.Start, "end": a.End}, nil
}

// AlphaScheduleKinds lists the allowed values of alpha.schedule, the
// default first.
var AlphaScheduleKinds = []string{ScheduleLinear, SchedulePerEpoch}

// Schedule is the α schedule BatchSampler runs: constant at Start, linear
// from Start to End, or per epoch from Start down to the floor End (both 0,
// i.e. left out: PerEpochStart and PerEpochFloor). The zero AlphaSchedule
// (no alpha in the YAML) is the linear schedule 0 → 0, i.e. α = 0, not
// Config's default.
func (a AlphaSchedule) Schedule() Schedule {
	switch {
	case a.Constant:
		return Schedule{Start: a.Start, End: a.End, Kind: ScheduleConstant}
	case a.Kind == SchedulePerEpoch:
		if a.Start == 0 && a.End == 0 {
			return Schedule{Start: PerEpochStart, End: PerEpochFloor, Kind: SchedulePerEpoch}
		}
		return Schedule{Start: a.Start, End: a.End, Kind: SchedulePerEpoch}
	}
	return Schedule{Start: a.Start, End: a.End, Kind: ScheduleLinear}
}

// oneOf checks that v is one of allowed. With defaultFirst the empty string
// is accepted too (it means allowed[0], the default) and the list says so.
func oneOf(key, v string, allowed []string, defaultFirst bool) error {
	if slices.Contains(allowed, v) || (defaultFirst && v == "") {
		return nil
	}
	list := slices.Clone(allowed)
	if defaultFirst && len(list) > 0 {
		list[0] += " (default)"
	}
	return fmt.Errorf("%s: %q is not allowed; allowed values: %s", key, v, strings.Join(list, ", "))
}

// Validate checks the spec and returns the first error, naming its key
// below key (the spec's own key path, e.g. "samplers[1]"): for instance
// "samplers[1].m: must be >= samplers[1].k = 100, got 50". A uniform spec is checked
// for its kind only; a knn spec for kind, embedding and refresh_every. The
// allowed values of kind, walk, graph and embedding are Kinds, Walks,
// GraphKinds and EmbeddingSources.
//
// A global sampler's spec (gcbs, spectral, osgd, kmeans, antikmeans) is
// checked for embedding, refresh_every and its own keys (k for gcbs; draw,
// keep, temperature, clusters), which the other kinds refuse; whether a
// value fits N and B (k·B ≤ N, q ≤ k, the clusters' range) is New's check,
// which names the key and the allowed range.
//
// The published choices (published, epoch, warmup, alpha.schedule,
// candidates) are refused on any kind but batchsampler, embedding
// cached_views on uniform, and candidates with_replacement with graph knn,
// since nothing would read them. The allowed values of candidates are
// CandidateDraws; with_replacement lifts no other check (m ≥ k ≥ 1; m may
// exceed N, and k may too).
func (s Spec) Validate(key string) error {
	if err := oneOf(key+".kind", s.Kind, Kinds, false); err != nil {
		return err
	}
	if s.Kind != KindBatchSampler {
		for _, k := range []struct {
			name string
			set  bool
		}{{"published", s.Published}, {"epoch", s.Epoch != ""}, {"warmup", s.Warmup != ""}, {"alpha.schedule", s.Alpha.Kind != ""}, {"candidates", s.Candidates != ""}} {
			if k.set {
				return fmt.Errorf("%s.%s: only kind batchsampler has this key, got kind %s", key, k.name, s.Kind)
			}
		}
	}
	for _, k := range []struct {
		name  string
		set   bool
		kinds []string
	}{
		{"draw", s.Draw != 0, []string{KindSpectral, KindOSGD}},
		{"keep", s.Keep != 0, []string{KindOSGD}},
		{"temperature", s.Temperature != 0, []string{KindSpectral, KindOSGD}},
		{"clusters", s.Clusters != 0, []string{KindKMeans, KindAntiKMeans}},
	} {
		if k.set && !slices.Contains(k.kinds, s.Kind) {
			if len(k.kinds) == 1 {
				return fmt.Errorf("%s.%s: only kind %s has this key, got kind %s", key, k.name, k.kinds[0], s.Kind)
			}
			return fmt.Errorf("%s.%s: only kinds %s have this key, got kind %s", key, k.name, strings.Join(k.kinds, " and "), s.Kind)
		}
	}
	if s.Kind == KindUniform && s.Embedding == EmbedCachedViews {
		return fmt.Errorf("%s.embedding: cached_views is for kinds knn and batchsampler, got kind uniform", key)
	}
	if s.Kind == KindUniform {
		return nil
	}
	if err := oneOf(key+".embedding", s.Embedding, EmbeddingSources, true); err != nil {
		return err
	}
	if s.RefreshEvery < 0 {
		return fmt.Errorf("%s.refresh_every: must be >= 0, got %d", key, s.RefreshEvery)
	}
	switch s.Kind {
	case KindKNN:
		return nil
	case KindGCBS:
		if s.K < 0 {
			return fmt.Errorf("%s.k: must be >= 1 (neighbours per instance; 0 or left out: %d), got %d", key, DefaultGCBSNeighbours, s.K)
		}
		return nil
	case KindSpectral, KindOSGD, KindKMeans, KindAntiKMeans:
		for _, v := range []struct {
			k string
			v int
		}{{"draw", s.Draw}, {"keep", s.Keep}, {"clusters", s.Clusters}} {
			if v.v < 0 {
				return fmt.Errorf("%s.%s: must be >= 1 (0 or left out: the default), got %d", key, v.k, v.v)
			}
		}
		if s.Kind == KindSpectral && s.Draw == 1 {
			return fmt.Errorf("%s.draw: must be >= 2 (one cluster per batch, k of them), got 1", key)
		}
		if s.Kind == KindOSGD && s.Draw > 0 && s.Keep > s.Draw {
			return fmt.Errorf("%s.keep: must be in [1, draw = %d] (q ≤ k), got %d", key, s.Draw, s.Keep)
		}
		if s.Temperature < 0 || math.IsNaN(s.Temperature) || math.IsInf(s.Temperature, 0) {
			return fmt.Errorf("%s.temperature: must be > 0 (0 or left out: loss.temperature), got %v", key, s.Temperature)
		}
		return nil
	}
	if err := oneOf(key+".walk", s.Walk, Walks, true); err != nil {
		return err
	}
	if err := oneOf(key+".graph", s.Graph, GraphKinds, true); err != nil {
		return err
	}
	if err := oneOf(key+".candidates", s.Candidates, CandidateDraws, true); err != nil {
		return err
	}
	if s.Graph == GraphKNN && s.Candidates == CandidatesWithReplacement {
		return fmt.Errorf("%s.candidates: with_replacement draws the candidates of graph proximity; graph knn draws none (remove candidates or set graph: proximity)", key)
	}
	if err := oneOf(key+".epoch", s.Epoch, EpochKinds, true); err != nil {
		return err
	}
	if err := oneOf(key+".warmup", s.Warmup, WarmupKinds, true); err != nil {
		return err
	}
	if err := oneOf(key+".alpha.schedule", s.Alpha.Kind, AlphaScheduleKinds, true); err != nil {
		return err
	}
	if s.K <= 0 {
		return fmt.Errorf("%s.k: must be a positive integer, got %d", key, s.K)
	}
	if s.M < s.K {
		return fmt.Errorf("%s.m: must be >= %s.k = %d, got %d", key, key, s.K, s.M)
	}
	if s.Candidates == CandidatesWithReplacement && s.M > maxCandidates {
		return fmt.Errorf("%s.m: must be < 2^31 with candidates: with_replacement, got %d", key, s.M)
	}
	for _, a := range []struct {
		k string
		v float64
	}{{"alpha.start", s.Alpha.Start}, {"alpha.end", s.Alpha.End}} {
		if !(a.v >= 0 && a.v <= 1) {
			return fmt.Errorf("%s.%s: must be in [0, 1], got %v", key, a.k, a.v)
		}
	}
	return nil
}

// Effective returns the spec as it runs. With Published (kind
// batchsampler), each published choice the spec leaves unset is turned on:
// epoch "" → covering, embedding "" → cached_views, warmup "" →
// shuffled_epoch, and an alpha map without schedule → per_epoch (its start
// and end as start and floor; left out, the published 0.2 and 0.05). A
// value the spec sets (epoch: fixed, embedding: projection, warmup: none,
// a constant alpha, alpha.schedule: linear) stays. Without Published the
// spec is returned as it is.
func (s Spec) Effective() Spec {
	if !s.Published || s.Kind != KindBatchSampler {
		return s
	}
	if s.Epoch == "" {
		s.Epoch = EpochCovering
	}
	if s.Embedding == "" {
		s.Embedding = EmbedCachedViews
	}
	if s.Warmup == "" {
		s.Warmup = WarmupShuffledEpoch
	}
	if !s.Alpha.Constant && s.Alpha.Kind == "" {
		s.Alpha.Kind = SchedulePerEpoch
	}
	if s.Alpha.Kind == SchedulePerEpoch && !s.Alpha.Constant && s.Alpha.Start == 0 && s.Alpha.End == 0 {
		s.Alpha.Start, s.Alpha.End = PerEpochStart, PerEpochFloor
	}
	return s
}

// DisplayName is the sampler's name in results: Label, else Kind.
func (s Spec) DisplayName() string {
	if s.Label != "" {
		return s.Label
	}
	return s.Kind
}

// New builds the sampler the spec describes over n instances with batch
// size b (B) and the given seed: NewUniform(n, b, seed), NewKNN(n, b, t,
// seed), a global sampler (NewGCBS, NewSpectral, NewOSGD,
// NewClusterBatches with the spec's keys or their defaults), or NewBatchSampler with M, K, Candidates, Walk, Graph, α
// (Alpha.Schedule()), t and MaxWalkSteps, Epoch and Warmup of the
// Effective spec, the other Config fields left at their defaults. The spec is checked first
// (Validate with key "sampler").
func (s Spec) New(n, b int, seed uint64) (Sampler, error) {
	if err := s.Validate("sampler"); err != nil {
		return nil, err
	}
	s = s.Effective()
	switch s.Kind {
	case KindUniform:
		u, err := NewUniform(n, b, seed)
		if err != nil {
			return nil, err
		}
		return u, nil
	case KindKNN:
		k, err := NewKNN(n, b, s.RefreshEvery, seed)
		if err != nil {
			return nil, err
		}
		return k, nil
	case KindGCBS, KindSpectral, KindOSGD, KindKMeans, KindAntiKMeans:
		return s.newGlobal(n, b, seed)
	}
	bs, err := NewBatchSampler(Config{
		BatchSize: b, M: s.M, K: s.K, Candidates: s.Candidates, Walk: s.Walk, Graph: s.Graph,
		Alpha:        s.Alpha.Schedule(),
		RefreshEvery: s.RefreshEvery, MaxWalkSteps: s.MaxWalkSteps,
		Epoch: s.Epoch, Warmup: s.Warmup,
	}, n, seed)
	if err != nil {
		return nil, err
	}
	return bs, nil
}

// newGlobal builds the global samplers, naming the spec's key (below
// "sampler") and its allowed range when a value does not fit N and B.
func (s Spec) newGlobal(n, b int, seed uint64) (Sampler, error) {
	if err := checkSizes(n, b); err != nil {
		return nil, fmt.Errorf("sampler: %s: %w", s.Kind, err)
	}
	t := s.RefreshEvery
	switch s.Kind {
	case KindGCBS:
		k := s.K
		if k == 0 {
			k = min(DefaultGCBSNeighbours, n-1)
		}
		if k > n-1 {
			return nil, fmt.Errorf("sampler.k: must be in [1, N−1 = %d] for kind gcbs (neighbours per instance), got %d", n-1, k)
		}
		return NewGCBS(n, b, k, t, seed)
	case KindSpectral, KindOSGD:
		if s.Temperature == 0 {
			return nil, fmt.Errorf("sampler.temperature: kind %s needs τ > 0 (package train sets it to loss.temperature when left out)", s.Kind)
		}
		lo, def := 1, DefaultOSGDDraw
		if s.Kind == KindSpectral {
			lo, def = 2, DefaultSpectralDraw
		}
		k := s.Draw
		if k == 0 {
			k = min(def, n/b)
		}
		if k < lo || k*b > n {
			return nil, fmt.Errorf("sampler.draw: must be in [%d, ⌊N/B⌋ = %d] for kind %s with N = %d, B = %d (k·B ≤ N instances a round), got %d", lo, n/b, s.Kind, n, b, k)
		}
		if s.Kind == KindSpectral {
			return NewSpectral(n, b, k, s.Temperature, t, seed)
		}
		q := s.Keep
		if q == 0 {
			q = (k + 1) / 2
		}
		if q > k {
			return nil, fmt.Errorf("sampler.keep: must be in [1, draw = %d] (q ≤ k), got %d", k, q)
		}
		return NewOSGD(n, b, k, q, s.Temperature, t, seed)
	}
	apart := s.Kind == KindAntiKMeans
	c, lo, hi := s.Clusters, 1, n/b
	if apart {
		lo, hi = b, n
	}
	if c == 0 {
		c = hi
		if apart {
			c = b
		}
	}
	if c < lo || c > hi {
		return nil, fmt.Errorf("sampler.clusters: must be in [%d, %d] for kind %s with N = %d, B = %d, got %d", lo, hi, s.Kind, n, b, c)
	}
	return NewClusterBatches(n, b, c, apart, t, seed)
}

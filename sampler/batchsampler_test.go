package sampler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// membershipPValue draws batches from next and returns the chi-square
// p-value of the hypothesis that every instance is equally often in a batch.
func membershipPValue(n, batches int, next func() []int) (float64, float64) {
	counts := make([]float64, n)
	total := 0.0
	for i := 0; i < batches; i++ {
		for _, v := range next() {
			counts[v]++
			total++
		}
	}
	exp := total / float64(n)
	var chi float64
	for _, c := range counts {
		chi += (c - exp) * (c - exp) / exp
	}
	return 1 - distuv.ChiSquared{K: float64(n - 1)}.CDF(chi), chi
}

// With M = 1 (each node's single neighbour is a random node) and α = 0, the
// graph is random whatever the embeddings, so over fresh graphs batch
// membership is uniform: the paper's Uniform limit. A chi-square test on the
// visit counts must accept it and must reject a deliberately biased sampler.
func TestMOneAlphaZeroIsUniform(t *testing.T) {
	const n, b, batches = 500, 20, 2000
	e := randomEmbeddings(n, 8, 4)
	s, err := NewBatchSampler(Config{BatchSize: b, M: 1, K: 1, Alpha: Schedule{Start: 0, Kind: ScheduleConstant}, RefreshEvery: 1}, n, 17)
	if err != nil {
		t.Fatal(err)
	}
	p, chi := membershipPValue(n, batches, func() []int {
		if err := s.Refresh(e); err != nil {
			t.Fatal(err)
		}
		return s.Next()
	})
	t.Logf("M=1, α=0: chi²=%.1f df=%d p=%.3f", chi, n-1, p)
	if p < 1e-3 {
		t.Errorf("M=1, α=0 membership is not uniform: chi²=%.1f p=%.2g", chi, p)
	}
	// The same test on a biased sampler: Uniform batches in which node 0
	// replaces the last member one time in five.
	u, _ := NewUniform(n, b, 17)
	r := rand.New(rand.NewPCG(1, 1))
	p, chi = membershipPValue(n, batches, func() []int {
		bt := u.Next()
		if r.IntN(5) == 0 && !slices.Contains(bt, 0) {
			bt[len(bt)-1] = 0
		}
		return bt
	})
	t.Logf("biased sampler: chi²=%.1f p=%.3g", chi, p)
	if p >= 1e-3 {
		t.Errorf("the uniformity test accepts a biased sampler (p=%.2g)", p)
	}
	// And a graph kept fixed (no refresh) with M = K = 1 is not uniform either:
	// this shows what the fresh graphs are needed for; logged only.
	s2, _ := NewBatchSampler(Config{BatchSize: b, M: 1, K: 1, Alpha: Schedule{Start: 0, Kind: ScheduleConstant}}, n, 17)
	if err := s2.Refresh(e); err != nil {
		t.Fatal(err)
	}
	p, chi = membershipPValue(n, batches, s2.Next)
	t.Logf("M=1, α=0, one fixed graph: chi²=%.1f p=%.3g", chi, p)
}

// Coverage and CoverageHistory must equal an independent count of the
// distinct instances of each epoch's batches. Before the first Refresh an
// epoch is a permutation (coverage 1).
func TestCoverageIsMeasured(t *testing.T) {
	const n = 1000
	e, _, _ := GaussianMixture(MixtureConfig{N: n, C: 10, D: 8, Between: 1, Within: 1.5}, 3)
	for _, cfg := range []Config{
		{BatchSize: 64, M: 100, K: 10},
		{BatchSize: 64, M: 100, K: 10, Walk: WalkBFS},
		{BatchSize: 100, M: n, K: 20, Alpha: Schedule{Start: 0.9, Kind: ScheduleConstant}},
	} {
		s, err := NewBatchSampler(cfg, n, 2)
		if err != nil {
			t.Fatal(err)
		}
		var want []float64
		for epoch := 0; epoch < 4; epoch++ {
			if epoch == 1 {
				if err := s.Refresh(e); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[int]bool{}
			for i := 0; i < s.BatchesPerEpoch(); i++ {
				for _, v := range s.Next() {
					seen[v] = true
				}
				if got := s.Coverage(); got != float64(len(seen))/n {
					t.Fatalf("%+v epoch %d batch %d: Coverage()=%v, counted %v", cfg, epoch, i, got, float64(len(seen))/n)
				}
			}
			want = append(want, float64(len(seen))/n)
		}
		s.Next() // starts epoch 5, closing epoch 4
		if got := s.CoverageHistory(); !slices.Equal(got, want) {
			t.Fatalf("%+v: CoverageHistory %v, counted %v", cfg, got, want)
		}
		if want[0] != 1 {
			t.Errorf("%+v: an epoch before the first Refresh covered %v, want 1", cfg, want[0])
		}
		t.Logf("walk %q M=%d α=%v: coverage per epoch after refresh %v", s.Config().Walk, s.Config().M, s.Alpha(), want[1:])
	}
}

func TestUniformModeBeforeRefresh(t *testing.T) {
	for _, mk := range []func() (Sampler, error){
		func() (Sampler, error) { return NewBatchSampler(Config{BatchSize: 7}, 50, 1) },
		func() (Sampler, error) { return NewKNN(50, 7, 0, 1) },
	} {
		s, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		for epoch := 0; epoch < 2; epoch++ {
			var all []int
			for i := 0; i < s.BatchesPerEpoch(); i++ {
				all = append(all, s.Next()...)
			}
			slices.Sort(all)
			for i, v := range all {
				if v != i {
					t.Fatalf("%T epoch %d before Refresh is not a permutation", s, epoch)
				}
			}
		}
	}
}

func TestBatchSamplerDeterministic(t *testing.T) {
	e := randomEmbeddings(400, 8, 1)
	run := func(seed uint64) [][]int {
		s, err := NewBatchSampler(Config{BatchSize: 32, M: 50, K: 8}, 400, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]int
		for i := 0; i < 40; i++ {
			if i%15 == 0 {
				if err := s.Refresh(e); err != nil {
					t.Fatal(err)
				}
			}
			s.SetProgress(i, 40)
			out = append(out, s.Next())
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	if !slices.EqualFunc(a, b, slices.Equal) {
		t.Error("same seed, different batches")
	}
	if slices.EqualFunc(a, c, slices.Equal) {
		t.Error("different seeds, same batches")
	}
}

// A sampler restored from a state saved mid-epoch, after a Refresh, draws
// exactly the batches the original draws, through further refreshes,
// progress updates and epoch boundaries.
func TestBatchSamplerStateRoundTrip(t *testing.T) {
	e1 := randomEmbeddings(300, 8, 1)
	e2 := randomEmbeddings(300, 8, 2)
	for _, walk := range []string{WalkRWR, WalkDFS} {
		cfg := Config{BatchSize: 32, M: 40, K: 6, Walk: walk, RefreshEvery: 10}
		a, _ := NewBatchSampler(cfg, 300, 7)
		for i := 0; i < 3; i++ { // uniform mode first
			a.Next()
		}
		if err := a.Refresh(e1); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 12; i++ {
			a.SetProgress(i, 100)
			a.Next()
		}
		st, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewBatchSampler(cfg, 300, 999)
		if err := b.UnmarshalBinary(st); err != nil {
			t.Fatal(err)
		}
		if a.Coverage() != b.Coverage() || a.Alpha() != b.Alpha() {
			t.Fatalf("restored coverage/α %v/%v, want %v/%v", b.Coverage(), b.Alpha(), a.Coverage(), a.Alpha())
		}
		for i := 12; i < 60; i++ {
			if i%20 == 0 {
				if err := a.Refresh(e2); err != nil {
					t.Fatal(err)
				}
				if err := b.Refresh(e2); err != nil {
					t.Fatal(err)
				}
			}
			a.SetProgress(i, 100)
			b.SetProgress(i, 100)
			if x, y := a.Next(), b.Next(); !slices.Equal(x, y) {
				t.Fatalf("%s: batch %d differs after restore: %v vs %v", walk, i, x, y)
			}
		}
		if !slices.Equal(a.CoverageHistory(), b.CoverageHistory()) {
			t.Errorf("coverage history differs: %v vs %v", a.CoverageHistory(), b.CoverageHistory())
		}
		other, _ := NewBatchSampler(Config{BatchSize: 32, M: 41, K: 6, Walk: walk}, 300, 7)
		if err := other.UnmarshalBinary(st); err == nil {
			t.Error("restoring into another configuration should fail")
		}
		small, _ := NewBatchSampler(cfg, 299, 7)
		if err := small.UnmarshalBinary(st); err == nil {
			t.Error("restoring into another N should fail")
		}
		if err := b.UnmarshalBinary(st[:len(st)/2]); err == nil {
			t.Error("a truncated state should fail")
		}
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []struct {
		name string
		cfg  Config
		n    int
	}{
		{"no batch size", Config{}, 10},
		{"no instances", Config{BatchSize: 4}, 0},
		{"one instance", Config{BatchSize: 1}, 1},
		{"batch size 1", Config{BatchSize: 1}, 100},
		{"batch size > N", Config{BatchSize: 500}, 100},
		{"M < K", Config{BatchSize: 4, M: 3, K: 5}, 100},
		{"negative K", Config{BatchSize: 4, M: 3, K: -1}, 100},
		{"walk", Config{BatchSize: 4, Walk: "jump"}, 100},
		{"graph", Config{BatchSize: 4, Graph: "full"}, 100},
		{"alpha > 1", Config{BatchSize: 4, Alpha: Schedule{Start: 1.5, Kind: ScheduleConstant}}, 100},
		{"alpha end < 0", Config{BatchSize: 4, Alpha: Schedule{Start: 0.5, End: -0.1, Kind: ScheduleLinear}}, 100},
		{"alpha kind", Config{BatchSize: 4, Alpha: Schedule{Start: 0.5}}, 100},
		{"refresh", Config{BatchSize: 4, RefreshEvery: -1}, 100},
		{"steps", Config{BatchSize: 4, MaxWalkSteps: -1}, 100},
		{"sharing", Config{BatchSize: 4, CandidateSharing: "all"}, 100},
	}
	for _, tc := range bad {
		if _, err := NewBatchSampler(tc.cfg, tc.n, 1); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	s, err := NewBatchSampler(Config{BatchSize: 100}, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Config()
	if c.BatchSize != 100 || c.K != 99 || c.M != 99 || c.Walk != WalkRWR || c.Graph != GraphProximity || c.Alpha != DefaultAlpha || c.MaxWalkSteps != 100*100 {
		t.Errorf("defaults not filled as documented: %+v", c)
	}
	if err := s.Refresh(randomEmbeddings(99, 3, 1)); err == nil {
		t.Error("Refresh with the wrong N accepted")
	}
	if s, err := NewBatchSampler(Config{BatchSize: 4, M: 30}, 100, 1); err != nil || s.Config().K != 30 {
		t.Errorf("K should default to M when M < 100: %v", err)
	}
	// the smallest dataset, N = B = 2, works in both modes
	two, err := NewBatchSampler(Config{BatchSize: 2}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if i == 1 {
			if err := two.Refresh(randomEmbeddings(2, 3, 1)); err != nil {
				t.Fatal(err)
			}
		}
		if b := two.Next(); len(b) != 2 || b[0]+b[1] != 1 {
			t.Fatalf("N=2: batch %v", b)
		}
	}
}

func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		s           Schedule
		step, total int
		want        float64
	}{
		{Schedule{Start: 0.3, Kind: ScheduleConstant}, 50, 100, 0.3},
		{DefaultAlpha, 0, 100, 0.2},
		{DefaultAlpha, 99, 100, 0.05},
		{DefaultAlpha, 33, 67, 0.125},
		{DefaultAlpha, 500, 100, 0.05},
		{DefaultAlpha, -3, 100, 0.2},
		{DefaultAlpha, 0, 1, 0.2},
		{Schedule{Start: 0, End: 1, Kind: ScheduleLinear}, 1, 5, 0.25},
	} {
		if got := tc.s.Value(tc.step, tc.total); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v.Value(%d,%d) = %v, want %v", tc.s, tc.step, tc.total, got, tc.want)
		}
	}
	s, _ := NewBatchSampler(Config{BatchSize: 4}, 10, 1)
	s.SetProgress(99, 100)
	if s.Alpha() != 0.05 {
		t.Errorf("default α at the last step is %v, want 0.05", s.Alpha())
	}
}

package sampler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The short last batch (see Sampler): for every sampler, in the mode before
// a Refresh and the mode after it, and for N mod B ∈ {0, 1, 2, B−1}, every
// batch holds at least 2 distinct indices in [0, N) and exactly as many as
// the rule says (B; B+1 for the last batch of an epoch when N mod B = 1;
// Uniform's last batch the N mod B ≥ 2 left), an epoch is BatchesPerEpoch
// batches (⌊N/B⌋ when N mod B = 1, ⌈N/B⌉ otherwise), Uniform covers every
// instance exactly once per epoch, and a state saved in the middle of an
// epoch gives the batches of the uninterrupted sampler.
func TestShortLastBatch(t *testing.T) {
	sizes := []struct{ n, b int }{
		{60, 10}, {61, 10}, {62, 10}, {69, 10}, // N mod B = 0, 1, 2, B−1
		{60, 59}, {60, 60}, {61, 30}, {58, 28}, // B close to N
		{2, 2}, {3, 2}, {4, 2}, {5, 3}, {7, 3}, // tiny: N mod B = 1 = B−1 for B = 2
	}
	samplers := []struct {
		name string
		// refreshed: the epochs from the second on are drawn after a Refresh.
		refreshed bool
		make      func(n, b int, seed uint64) (Sampler, error)
	}{
		{"uniform", false, func(n, b int, seed uint64) (Sampler, error) { return NewUniform(n, b, seed) }},
		{"knn", true, func(n, b int, seed uint64) (Sampler, error) { return NewKNN(n, b, 0, seed) }},
		{"batchsampler-rwr", true, func(n, b int, seed uint64) (Sampler, error) {
			return NewBatchSampler(Config{BatchSize: b, M: 20, K: 4}, n, seed)
		}},
		{"batchsampler-bfs", true, func(n, b int, seed uint64) (Sampler, error) {
			return NewBatchSampler(Config{BatchSize: b, M: 20, K: 4, Walk: WalkBFS}, n, seed)
		}},
		{"batchsampler-dfs-knngraph", true, func(n, b int, seed uint64) (Sampler, error) {
			return NewBatchSampler(Config{BatchSize: b, K: 3, Walk: WalkDFS, Graph: GraphKNN}, n, seed)
		}},
		// The global samplers with their defaults (a size they refuse, such
		// as spectral's k·B ≤ N with k ≥ 2, is skipped).
		{"gcbs", true, globalMaker(KindGCBS)},
		{"spectral", true, globalMaker(KindSpectral)},
		{"osgd", true, globalMaker(KindOSGD)},
		{"kmeans", true, globalMaker(KindKMeans)},
		{"antikmeans", true, globalMaker(KindAntiKMeans)},
	}
	const epochs = 4
	for _, sc := range samplers {
		for _, sz := range sizes {
			n, b := sz.n, sz.b
			t.Run(fmt.Sprintf("%s/N=%d,B=%d", sc.name, n, b), func(t *testing.T) {
				s, err := sc.make(n, b, 7)
				if errors.Is(err, errRefusedSize) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				wantBPE := (n + b - 1) / b
				if n%b == 1 {
					wantBPE = n / b
				}
				bpe := s.BatchesPerEpoch()
				if bpe != wantBPE {
					t.Fatalf("BatchesPerEpoch = %d, want %d", bpe, wantBPE)
				}
				e := randomEmbeddings(n, 5, 3)
				var all [][]int // every batch, for the state round trip
				for ep := 0; ep < epochs; ep++ {
					graph := sc.refreshed && ep > 0
					if sc.refreshed && ep == 1 {
						if err := s.(Refresher).Refresh(e); err != nil {
							t.Fatal(err)
						}
					}
					if h, ok := s.(CoverageRecorder); ok && ep > 0 {
						// the epoch ended after exactly BatchesPerEpoch batches
						if got := len(h.CoverageHistory()); got != ep-1 {
							t.Fatalf("epoch %d: %d finished epochs before its first batch, want %d", ep, got, ep-1)
						}
					}
					count := make([]int, n)
					for i := 0; i < bpe; i++ {
						bt := s.Next()
						all = append(all, bt)
						want := b
						switch {
						case n%b == 1 && i == bpe-1:
							want = b + 1
						case !graph && i == bpe-1:
							want = n - (bpe-1)*b
						}
						checkBatch(t, fmt.Sprintf("epoch %d batch %d/%d", ep, i, bpe), bt, want, n)
						for _, v := range bt {
							count[v]++
						}
					}
					if !graph {
						// Uniform, and the others before a Refresh: every
						// instance exactly once per epoch.
						for v, c := range count {
							if c != 1 {
								t.Fatalf("epoch %d: instance %d is in %d batches, want 1", ep, v, c)
							}
						}
					}
				}
				if h, ok := s.(CoverageRecorder); ok {
					s.Next() // starts epoch `epochs`, closing the last one
					if got := len(h.CoverageHistory()); got != epochs {
						t.Fatalf("%d finished epochs after %d·BatchesPerEpoch+1 batches, want %d", got, epochs, epochs)
					}
				}

				// State round trip: save just before the last batch of the
				// second epoch (the merged one when N mod B = 1), restore into
				// a sampler of another seed, and compare the batches that
				// follow with those of the uninterrupted run.
				a, _ := sc.make(n, b, 7)
				cut := 2*bpe - 1
				for i := 0; i <= cut; i++ {
					if sc.refreshed && i == bpe { // as above: before the second epoch
						if err := a.(Refresher).Refresh(e); err != nil {
							t.Fatal(err)
						}
					}
					if i < cut {
						a.Next()
					}
				}
				st, err := a.MarshalBinary()
				if err != nil {
					t.Fatal(err)
				}
				r, _ := sc.make(n, b, 99)
				if err := r.UnmarshalBinary(st); err != nil {
					t.Fatal(err)
				}
				for i := cut; i < len(all); i++ {
					if x := r.Next(); !slices.Equal(x, all[i]) {
						t.Fatalf("batch %d after restore: %v, uninterrupted %v", i, x, all[i])
					}
				}
			})
		}
	}
}

// N < 2, B < 2 and B > N are errors at construction, for every sampler; B > N
// names both.
func TestSizeErrors(t *testing.T) {
	makers := map[string]func(n, b int) (Sampler, error){
		"uniform":      func(n, b int) (Sampler, error) { return NewUniform(n, b, 1) },
		"knn":          func(n, b int) (Sampler, error) { return NewKNN(n, b, 0, 1) },
		"batchsampler": func(n, b int) (Sampler, error) { return NewBatchSampler(Config{BatchSize: b}, n, 1) },
		"spec":         func(n, b int) (Sampler, error) { return Spec{Kind: KindBatchSampler, M: 10, K: 5}.New(n, b, 1) },
	}
	for name, mk := range makers {
		for _, tc := range []struct {
			n, b int
			want string
		}{
			{0, 2, "at least 2 instances"},
			{1, 1, "at least 2 instances"},
			{10, 1, "at least 2"},
			{10, 0, "at least 2"},
			{188, 600, "batch size 600 is larger than the dataset (188 instances)"},
			{2, 3, "batch size 3 is larger than the dataset (2 instances)"},
		} {
			_, err := mk(tc.n, tc.b)
			if err == nil {
				t.Errorf("%s N=%d B=%d: accepted", name, tc.n, tc.b)
				continue
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s N=%d B=%d: error %q does not say %q", name, tc.n, tc.b, err, tc.want)
			}
		}
	}
}

// errRefusedSize marks a size a global sampler's defaults do not fit.
var errRefusedSize = errors.New("size refused by the sampler's parameters")

// globalMaker builds a global sampler of the kind with its defaults (τ 0.5
// where it needs one), wrapping errRefusedSize when N and B leave no valid
// parameter (spectral needs ⌊N/B⌋ ≥ 2).
func globalMaker(kind string) func(n, b int, seed uint64) (Sampler, error) {
	return func(n, b int, seed uint64) (Sampler, error) {
		sp := Spec{Kind: kind}
		if kind == KindSpectral || kind == KindOSGD {
			sp.Temperature = 0.5
		}
		if kind == KindSpectral && n/b < 2 {
			return nil, fmt.Errorf("spectral N=%d B=%d: %w", n, b, errRefusedSize)
		}
		return sp.New(n, b, seed)
	}
}

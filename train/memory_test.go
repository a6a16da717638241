package train

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/model/ops"
)

// TestRunRecordsPeakMemory: every run's result.json, results.json (per run
// and per sampler) and results.md carry the peak memory figures.
func TestRunRecordsPeakMemory(t *testing.T) {
	dir := t.TempDir()
	cfg := mustParse(t, tinySynthetic, "train.epochs=1")
	res, err := Run(context.Background(), cfg, Options{OutDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	onLinux := runtime.GOOS == "linux"
	for _, r := range res.Runs {
		if r.HeapPeak == 0 {
			t.Errorf("%s: heap_peak is 0", r.ID)
		}
		if onLinux && r.MaxRSS < r.HeapPeak/2 {
			// The heap's objects are resident, up to pages not yet touched.
			t.Errorf("%s: max_rss %d, heap_peak %d", r.ID, r.MaxRSS, r.HeapPeak)
		}
		var saved map[string]any
		if err := readJSON(filepath.Join(dir, "runs", r.ID, "result.json"), &saved); err != nil {
			t.Fatal(err)
		}
		if _, ok := saved["heap_peak"]; !ok {
			t.Errorf("%s: result.json lacks heap_peak: %v", r.ID, saved)
		}
		if _, ok := saved["max_rss"]; ok != onLinux {
			t.Errorf("%s: result.json has max_rss: %v, want %v", r.ID, ok, onLinux)
		}
	}
	var rj struct {
		Results []map[string]any `json:"results"`
		Runs    []map[string]any `json:"runs"`
	}
	if err := readJSON(filepath.Join(dir, "results.json"), &rj); err != nil {
		t.Fatal(err)
	}
	e := res.Results[0]
	if want := max(res.Runs[0].HeapPeak, res.Runs[1].HeapPeak); e.HeapPeak != want {
		t.Errorf("entry heap_peak %d, want the runs' largest %d", e.HeapPeak, want)
	}
	if want := max(res.Runs[0].MaxRSS, res.Runs[1].MaxRSS); e.MaxRSS != want {
		t.Errorf("entry max_rss %d, want the runs' largest %d", e.MaxRSS, want)
	}
	if v, ok := rj.Results[0]["heap_peak"].(float64); !ok || uint64(v) != e.HeapPeak {
		t.Errorf("results.json entry heap_peak %v, want %d", rj.Results[0]["heap_peak"], e.HeapPeak)
	}
	if v, ok := rj.Runs[1]["heap_peak"].(float64); !ok || uint64(v) != res.Runs[1].HeapPeak {
		t.Errorf("results.json run heap_peak %v, want %d", rj.Runs[1]["heap_peak"], res.Runs[1].HeapPeak)
	}
	if onLinux {
		if v, ok := rj.Results[0]["max_rss"].(float64); !ok || v <= 0 {
			t.Errorf("results.json entry max_rss %v", rj.Results[0]["max_rss"])
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	cell := " | " + megabytes(e.MaxRSS) + " / " + megabytes(e.HeapPeak) + " |"
	if !strings.Contains(string(md), "Peak MB: RSS / heap") || !strings.Contains(string(md), cell) {
		t.Errorf("results.md lacks the peak memory column or cell %q:\n%s", cell, md)
	}
}

// TestOldResultsWithoutMemoryRead: result files written before the memory
// fields existed still read, with the figures unknown (0, "–").
func TestOldResultsWithoutMemoryRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "result.json")
	if err := os.WriteFile(p, []byte(`{"id": "uniform-seed0", "sampler": "uniform", "seed": 0, "steps": 9, "metric": "svm_accuracy", "value": 70}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var r RunResult
	if err := readJSON(p, &r); err != nil {
		t.Fatal(err)
	}
	if r.MaxRSS != 0 || r.HeapPeak != 0 {
		t.Errorf("old result read with memory %d / %d", r.MaxRSS, r.HeapPeak)
	}
	cfg := mustParse(t, tinySynthetic, "seeds=[0]")
	res := summarize(&cfg, fakeNamed{}, []RunResult{r})
	if md := res.Markdown(); !strings.Contains(md, "| – / – |") || strings.Contains(md, "Peak MB: the largest") {
		t.Errorf("results.md of an old result:\n%s", md)
	}
}

// fakeNamed is the part of a Dataset that summarize uses.
type fakeNamed struct{ Dataset }

func (f fakeNamed) Name() string { return "old" }

// TestStepAllocationsDoNotGrow: a step's allocations, and the heap that
// stays live after a forced collection, do not grow with the number of
// steps already taken (a leak across steps: a graph, cache or buffer that
// keeps what every step adds), and a step's memory is freed by the first
// collection after it. GraphCL and MVGRL on small generated graphs,
// Uniform; allocations are read from runtime/metrics after every step.
func TestStepAllocationsDoNotGrow(t *testing.T) {
	const (
		first, last = 10, 40 // live heap compared after these steps
		window      = 10     // steps per allocation window
	)
	for _, tc := range []struct {
		name string
		sets []string
	}{
		{"graphcl", nil},
		{"mvgrl", tinyMVGRL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sets := append([]string{"seeds=[0]", "train.batch_size=8", "train.epochs=5", "train.checkpoint=false"}, tc.sets...)
			cfg := mustParse(t, tinySynthetic, sets...)
			ds, err := dataSpecs[cfg.Modality].Load(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			sp := RunSpec{Sampler: cfg.SamplerList()[0], Seed: 0}
			dir := t.TempDir()
			r, _, err := newRun(&cfg, ds, sp, dir, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			if r.total < last+window {
				t.Fatalf("%d steps; the test needs %d", r.total, last+window)
			}
			mw, err := openMetrics(filepath.Join(dir, "metrics.jsonl"), filepath.Join(dir, "all.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer mw.close()
			r.metrics = mw
			samples := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
			objs := make([]uint64, r.total+1) // cumulative allocations after step s
			bytes := make([]uint64, r.total+1)
			var live [2]uint64
			var once, twice uint64 // after one and after two more collections at step last
			heap := func() uint64 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			r.add("probe", afterStep, func(r *run) error {
				if r.step == first || r.step == last {
					runtime.GC()
					if r.step == last {
						once = heap()
					}
					runtime.GC()
					live[min(r.step/last, 1)] = heap()
					if r.step == last {
						twice = live[1]
					}
				}
				metrics.Read(samples) // after the collection: it allocates nothing counted here
				objs[r.step], bytes[r.step] = samples[0].Value.Uint64(), samples[1].Value.Uint64()
				return nil
			})
			if err := r.train(context.Background()); err != nil {
				t.Fatal(err)
			}
			// Mean allocations per step over the windows after first and after last.
			per := func(c []uint64, from int) float64 { return float64(c[from+window]-c[from]) / window }
			o1, o2 := per(objs, first), per(objs, last)
			b1, b2 := per(bytes, first), per(bytes, last)
			t.Logf("per step: %.0f → %.0f objects, %.0f → %.0f bytes; live heap after GC: %d → %d bytes", o1, o2, b1, b2, live[0], live[1])
			// The batches differ (graph sizes, augmentations): allow 15%.
			if o2 > 1.15*o1 || b2 > 1.15*b1 {
				t.Errorf("allocations per step grew from steps %d-%d to %d-%d: %.0f → %.0f objects, %.0f → %.0f bytes",
					first+1, first+window, last+1, last+window, o1, o2, b1, b2)
			}
			// A step's graph and values are garbage once it returns: one
			// collection frees them (a finalizer on its machine kept them
			// through one more, see gop.CloseMachine).
			if float64(once) > 1.02*float64(twice)+64<<10 {
				t.Errorf("after step %d: %d bytes live after one collection, %d after two: the step's memory outlives it by a GC cycle", last, once, twice)
			}
			// What stays live after 30 more steps: at most 64 KiB and 2% more.
			if float64(live[1]) > 1.02*float64(live[0])+64<<10 {
				t.Errorf("live heap after a forced GC grew from %d bytes after step %d to %d after step %d", live[0], first, live[1], last)
			}
		})
	}
}

// TestStepArenaReuse: the op outputs of a graph method's step come from an
// arena that the next step reuses (newStepGraph). Steps with the arena
// kept, and steps that each start from an empty one, give the bits (loss
// and gradients) of steps without an arena, with the buffers taken back
// within a step filled with NaN (ops.PoisonArenas); and steps with the
// arena kept allocate at least half of what a step's own arena holds less
// than steps with a fresh one (in one of three attempts: the allocation
// counter is the process's).
func TestStepArenaReuse(t *testing.T) {
	defer ops.PoisonArenas(ops.PoisonArenas(true))
	for _, tc := range []struct {
		name   string
		sets   []string
		arenas func(Method) []**ops.Arena
	}{
		// GraphCL's step has one arena per view's graph (stepAcross).
		{"graphcl", nil, func(m Method) []**ops.Arena { g := m.(*graphCL); return []**ops.Arena{&g.arenas[0], &g.arenas[1]} }},
		// So has MVGRL's (stepViews).
		{"mvgrl", tinyMVGRL, func(m Method) []**ops.Arena { g := m.(*mvgrlMethod); return []**ops.Arena{&g.arenas[0], &g.arenas[1]} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustParse(t, tinySynthetic, tc.sets...)
			ds, err := dataSpecs[cfg.Modality].Load(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			const steps, warm = 12, 4
			// run returns each step's loss and gradients, the bytes allocated
			// per step after warm and the mean size of the arena after a
			// step, in bytes; arena is "none", "kept" or "fresh".
			run := func(arena string) (out []arenaStep, bytesPerStep, arenaBytes float64) {
				defer func(on bool) { stepArenas = on }(stepArenas)
				stepArenas = arena != "none"
				m, err := methodSpecs[cfg.Method].New(&cfg, ds, 0)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(5, 6))
				samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
				var from uint64
				for s := range steps {
					idx := make([]int, 32)
					for i := range idx {
						idx[i] = rng.IntN(ds.NumInstances())
					}
					if arena == "fresh" {
						for _, a := range tc.arenas(m) {
							*a = nil
						}
					}
					if s == warm {
						metrics.Read(samples)
						from = samples[0].Value.Uint64()
					}
					res, err := m.Step(idx, rng)
					if err != nil {
						t.Fatal(err)
					}
					gs := make([][]float32, len(res.Grads))
					for i, g := range res.Grads {
						gs[i] = append([]float32(nil), g...)
					}
					out = append(out, arenaStep{res.Loss, gs})
					if s >= warm && arena != "none" {
						for _, a := range tc.arenas(m) {
							arenaBytes += 4 * float64((*a).Size()) / (steps - warm)
						}
					}
				}
				metrics.Read(samples)
				return out, float64(samples[0].Value.Uint64()-from) / (steps - warm), arenaBytes
			}
			want, _, _ := run("none")
			// The allocation counter is the process's: a goroutine left by an
			// earlier test can add to either side. Noise only adds, so the
			// reuse is accepted if one of three attempts shows it (a step
			// that does not reuse its outputs fails all three).
			var keptBytes, freshBytes, size float64
			for attempt := range 3 {
				var kept, fresh []arenaStep
				kept, keptBytes, _ = run("kept")
				fresh, freshBytes, size = run("fresh")
				checkSteps(t, want, kept, fresh)
				t.Logf("attempt %d, per step: %.0f bytes allocated with the arena kept, %.0f with a fresh one, whose arena then holds %.0f", attempt+1, keptBytes, freshBytes, size)
				if size > 0 && keptBytes <= freshBytes-size/2 {
					return
				}
			}
			t.Errorf("per step: %.0f bytes allocated with the arena kept, %.0f with a fresh one, whose arena then holds %.0f: the outputs are not reused", keptBytes, freshBytes, size)
		})
	}
}

// arenaStep is one step's loss and gradients in TestStepArenaReuse.
type arenaStep struct {
	loss  float64
	grads [][]float32
}

// checkSteps fails the test unless every step of kept and fresh has the
// loss and gradients of want, bit for bit.
func checkSteps(t *testing.T, want, kept, fresh []arenaStep) {
	t.Helper()
	for s, w := range want {
		if math.IsNaN(w.loss) || math.IsInf(w.loss, 0) {
			t.Fatalf("step %d: loss %v without an arena", s, w.loss)
		}
		for _, got := range []struct {
			name string
			step arenaStep
		}{{"kept", kept[s]}, {"fresh", fresh[s]}} {
			if math.Float64bits(got.step.loss) != math.Float64bits(w.loss) {
				t.Fatalf("step %d: loss %v with the arena %s, %v without an arena", s, got.step.loss, got.name, w.loss)
			}
			for i := range w.grads {
				if !slices.Equal(float32Bits(got.step.grads[i]), float32Bits(w.grads[i])) {
					t.Fatalf("step %d: gradient %d differs with the arena %s", s, i, got.name)
				}
			}
		}
	}
}

// float32Bits returns the bits of each value of v.
func float32Bits(v []float32) []uint32 {
	b := make([]uint32, len(v))
	for i, x := range v {
		b[i] = math.Float32bits(x)
	}
	return b
}

// TestSimCSEStepArena: SimCSE steps on the step arena (buffers poisoned
// when taken back, ops.PoisonArenas) give the loss and gradients of steps
// without one, bit for bit.
func TestSimCSEStepArena(t *testing.T) {
	defer ops.PoisonArenas(ops.PoisonArenas(true))
	cfg, ds := tinyTextData(t, 120, tinyTextOptions...)
	run := func(arena bool) (losses []float64, grads [][]uint32) {
		defer func(on bool) { stepArenas = on }(stepArenas)
		stepArenas = arena
		mod, err := newSimCSE(&cfg, ds, 7)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 0))
		for range 6 {
			idx := make([]int, 8)
			for i := range idx {
				idx[i] = rng.IntN(ds.NumInstances())
			}
			res, err := mod.Step(idx, rng)
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, res.Loss)
			for _, g := range res.Grads {
				grads = append(grads, float32Bits(g))
			}
		}
		if a := mod.(*simCSE).arena; arena && (a == nil || a.Size() == 0) {
			t.Fatal("the steps did not use an arena")
		}
		return losses, grads
	}
	wantL, wantG := run(false)
	gotL, gotG := run(true)
	for s := range wantL {
		if math.IsNaN(wantL[s]) || math.Float64bits(gotL[s]) != math.Float64bits(wantL[s]) {
			t.Fatalf("step %d: loss %v with the arena, %v without", s, gotL[s], wantL[s])
		}
	}
	for i := range wantG {
		if !slices.Equal(gotG[i], wantG[i]) {
			t.Fatalf("gradient %d differs with the arena", i)
		}
	}
}

package train

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// publishedSamplers compares Uniform with the published BatchSampler
// (refreshed every 2 steps so that refreshes fall between checkpoints).
const publishedSamplers = `samplers=[{kind: uniform}, {kind: batchsampler, label: pub, published: true, m: 30, k: 5, refresh_every: 2}]`

// stepRecords returns run → its step records of DIR/metrics.jsonl, in order.
func stepRecords(t *testing.T, dir string) map[string][]map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]map[string]any{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m["event"] == nil {
			out[m["run"].(string)] = append(out[m["run"].(string)], m)
		}
	}
	return out
}

// The published sampler trains exactly Uniform's number of steps (epochs ×
// ⌈N/B⌉), its first epoch is Uniform's (same losses), its covering epochs
// complete fewer sampler epochs than the loop counts (logged as
// sampler_epoch, which Uniform's records do not have), and α is the
// per-epoch schedule's.
func TestPublishedStepBudget(t *testing.T) {
	const epochs = 6
	cfg := mustParse(t, tinySynthetic, publishedSamplers, "seeds=[0]", "train.epochs=6")
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	recs := stepRecords(t, dir)
	uni, pub := recs["uniform-seed0"], recs["pub-seed0"]
	const bpe = 3 // 90 graphs, B = 32
	if len(uni) != epochs*bpe || len(pub) != epochs*bpe {
		t.Fatalf("%d uniform and %d published steps, want %d each", len(uni), len(pub), epochs*bpe)
	}
	for i, r := range pub {
		if _, ok := uni[i]["sampler_epoch"]; ok {
			t.Fatal("Uniform's records have a sampler_epoch")
		}
		e, ok := r["sampler_epoch"].(float64)
		if !ok {
			t.Fatalf("step %d: no sampler_epoch: %v", i+1, r)
		}
		if i < bpe && (e != 0 || r["loss"] != uni[i]["loss"]) {
			t.Errorf("warmup step %d: sampler epoch %v, loss %v; want 0 and Uniform's %v", i+1, e, r["loss"], uni[i]["loss"])
		}
		// The published Python's restart_p − (epoch/5)·0.1, 1-based epoch.
		if want := max(0.2-((e+1)/5)*0.1, 0.05); r["alpha"] != want {
			t.Errorf("step %d (sampler epoch %v): α %v, want %v", i+1, e, r["alpha"], want)
		}
	}
	if last := pub[len(pub)-1]["sampler_epoch"].(float64); last >= epochs-1 {
		t.Errorf("the last step is in sampler epoch %v: covering epochs should complete fewer than the loop's %d", last, epochs)
	}
}

// A published run interrupted in the middle of a covering epoch (after a
// refresh from the cached views) and resumed gives the uninterrupted run's
// losses, events and results bit for bit.
func TestResumePublishedMidEpoch(t *testing.T) {
	cfg := mustParse(t, tinySynthetic, publishedSamplers)
	ref := t.TempDir()
	want, err := Run(context.Background(), cfg, Options{OutDir: ref})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	stop := Observer{Step: func(s StepInfo) {
		if s.Run == "pub-seed1" && s.Step == 5 { // sampler epoch 1: walks since step 4
			cancel()
		}
	}}
	if _, err := Run(ctx, cfg, Options{OutDir: dir, Observer: stop}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	got, err := Run(context.Background(), cfg, Options{OutDir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := resultsOf(t, got), resultsOf(t, want); !maps.Equal(g, w) {
		t.Errorf("resumed results %v, uninterrupted %v", g, w)
	}
	sameLosses(t, readLosses(t, ref), readLosses(t, dir))
	sameRuns(t, got, want)
	sameEvents(t, dir, ref, "epoch_end")
	// The refreshes built the same graphs (their timings differ).
	g, w := eventLines(t, dir, "refresh"), eventLines(t, ref, "refresh")
	if len(g) != len(w) || len(g) == 0 {
		t.Fatalf("%d refreshes, uninterrupted %d", len(g), len(w))
	}
	for i := range g {
		var a, b map[string]any
		if json.Unmarshal([]byte(g[i]), &a) != nil || json.Unmarshal([]byte(w[i]), &b) != nil {
			t.Fatal("bad refresh record")
		}
		for _, m := range []map[string]any{a, b} {
			delete(m, "build_seconds")
			delete(m, "embed_seconds")
			delete(m, "diag_seconds")
		}
		if !maps.Equal(a, b) {
			t.Errorf("refresh %d: %v, uninterrupted %v", i, a, b)
		}
	}
}

// embedding cached_views (set, or implied by published: true) needs a
// method that hands over both views' projections.
func TestCachedViewsNeedsBothViews(t *testing.T) {
	const mvgrl = "modality: graph\nmethod: mvgrl\ndata: {source: synthetic, synthetic: {graphs: 40, classes: 2, min_nodes: 6, max_nodes: 8}}\n"
	for _, tc := range []struct {
		y, set, want string
	}{
		{mvgrl, `samplers=[{kind: batchsampler, m: 10, k: 5, published: true}]`,
			"published: true (which implies embedding: cached_views) needs both views' projections, which method mvgrl does not hand over; set embedding to projection, encoder or cached"},
		{mvgrl, `sampler={kind: knn, embedding: cached_views}`,
			"embedding: cached_views needs both views' projections, which method mvgrl does not hand over"},
		{mvgrl, `samplers=[{kind: batchsampler, m: 10, k: 5, published: true, embedding: cached}]`, ""},
		{tinySynthetic, `samplers=[{kind: batchsampler, m: 10, k: 5, published: true}]`, ""},
	} {
		_, err := ParseConfig([]byte(tc.y), []string{tc.set})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.set, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.set, err, tc.want)
		}
	}
}

// candidates: with_replacement (the published code's candidate draw, not
// implied by published: true) is a sampler key like the others: -set
// reaches it, the written config holds it (and a config without it writes
// no candidates key, as before), a wrong value is an error naming the key
// and the allowed values, and a run trains with M and K above N = 90.
func TestCandidatesWithReplacementKey(t *testing.T) {
	const samplers = `samplers=[{kind: uniform}, {kind: batchsampler, label: repl, m: 400, k: 120, refresh_every: 2}]`
	cfg := mustParse(t, tinySynthetic, samplers, "samplers[1].candidates=with_replacement", "seeds=[0]", "train.epochs=2")
	if got := cfg.Samplers[1].Candidates; got != sampler.CandidatesWithReplacement {
		t.Fatalf("samplers[1].candidates = %q after -set", got)
	}
	var buf bytes.Buffer
	if err := WriteConfig(&buf, &cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "candidates: with_replacement") {
		t.Errorf("written config has no candidates: with_replacement:\n%s", buf.String())
	}
	buf.Reset()
	plain := mustParse(t, tinySynthetic, samplers)
	if err := WriteConfig(&buf, &plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "candidates") {
		t.Errorf("a config without the key writes it:\n%s", buf.String())
	}
	_, err := ParseConfig([]byte(tinySynthetic), []string{samplers, "samplers[1].candidates=sometimes"})
	if want := `samplers[1].candidates (-set samplers[1].candidates=sometimes): "sometimes" is not allowed; allowed values: without_replacement (default), with_replacement`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	_, err = ParseConfig([]byte(tinySynthetic), []string{samplers, "samplers[0].candidates=with_replacement"})
	if want := `samplers[0].candidates (-set samplers[0].candidates=with_replacement): only kind batchsampler has this key, got kind uniform`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{OutDir: dir}); err != nil {
		t.Fatal(err)
	}
	if n := len(stepRecords(t, dir)["repl-seed0"]); n != 2*3 {
		t.Errorf("%d steps of the with-replacement sampler, want 6", n)
	}
}

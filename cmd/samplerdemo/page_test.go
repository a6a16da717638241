package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/lab"
	"github.com/batchsampler-go/batchsampler/cmd/samplerdemo/internal/site"
	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// The exported page, built once per test binary (TestWasmBuild and
// TestPage share it).
var (
	exportOnce sync.Once
	exportDir  string
	exportInfo site.BuildInfo
	exportErr  error
)

func exported(t *testing.T) (string, site.BuildInfo) {
	t.Helper()
	exportOnce.Do(func() {
		exportDir, exportErr = os.MkdirTemp("", "samplerdemo-page-test-")
		if exportErr != nil {
			return
		}
		mod, err := site.ModuleDir(".")
		if err != nil {
			exportErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		exportInfo, exportErr = site.Export(ctx, mod, exportDir)
	})
	if exportErr != nil {
		t.Fatal(exportErr)
	}
	return exportDir, exportInfo
}

func TestMain(m *testing.M) {
	code := m.Run()
	if exportDir != "" {
		os.RemoveAll(exportDir)
	}
	os.Exit(code)
}

// TestWasmBuild: GOOS=js GOARCH=wasm go build of the page's main package
// works (site.Export runs it) and gives a WebAssembly module; the folder
// holds every file the page loads, and main.wasm.js the same bytes.
func TestWasmBuild(t *testing.T) {
	dir, info := exported(t)
	wasm, err := os.ReadFile(filepath.Join(dir, site.FileWasm))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) || int64(len(wasm)) != info.WasmBytes || len(wasm) < 1<<20 {
		t.Fatalf("main.wasm: %d bytes (build.js says %d), magic %q", len(wasm), info.WasmBytes, wasm[:min(4, len(wasm))])
	}
	t.Logf("main.wasm: %d bytes, built with %s in %.1f s", len(wasm), info.GoVersion, info.BuildSecs)
	files, err := site.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, src := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(html), -1) {
		if src[1] != "data:," && !slices.Contains(files, src[1]) {
			t.Errorf("index.html loads %s, which the folder does not have", src[1])
		}
	}
}

// browser returns the path of a Chromium or Chrome, or "".
func browser() string {
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	return ""
}

// pageLog records what a tab fetched and what it wrote to its console.
type pageLog struct {
	mu       sync.Mutex
	requests []string
	errors   []string
}

func (l *pageLog) listen(ctx context.Context) error {
	messages := chromedp.Console(ctx) // console API calls, exceptions, the browser log
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" || m.Type == "assert" {
				l.mu.Lock()
				l.errors = append(l.errors, m.String())
				l.mu.Unlock()
			}
		}
	}()
	return chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			l.mu.Lock()
			l.requests = append(l.requests, e.Request.URL)
			l.mu.Unlock()
		}
	})
}

// check fails the test for console errors and requests outside prefix.
func (l *pageLog) check(t *testing.T, prefix string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errors {
		t.Errorf("the page logged an error: %s", e)
	}
	if len(l.requests) < 5 {
		t.Errorf("only %d requests seen: %v", len(l.requests), l.requests)
	}
	for _, u := range l.requests {
		if !strings.HasPrefix(u, prefix) && u != "data:," {
			t.Errorf("the page fetched %s, outside its folder %s", u, prefix)
		}
	}
}

// pageState is what the test reads from the page after an action.
type pageState struct {
	Settings lab.Settings `json:"settings"`
	Index    int          `json:"index"`
	IDs      []int        `json:"ids"`
	FN       float64      `json:"fn"`
	Hard     float64      `json:"hard"`
	Cos      float64      `json:"cos"`
}

const readState = `(() => {
	const p = document.getElementById("batch-panel"), v = (id) => JSON.parse(document.getElementById(id).dataset.value);
	return {settings: JSON.parse(p.dataset.settings), index: +p.dataset.index, ids: JSON.parse(document.getElementById("batch-ids").dataset.ids),
		fn: v("m-fn"), hard: v("m-hard"), cos: v("m-cos")};
})()`

// nativeBatch is batch number index (0-based) of the sampler of s over e,
// drawn by the sampler package directly, with the steps of its walk.
func nativeBatch(t *testing.T, s lab.Settings, e sampler.Embeddings, index int) ([]int, []sampler.WalkStep) {
	t.Helper()
	spec := sampler.Spec{Kind: s.Sampler}
	if s.Sampler == sampler.KindBatchSampler {
		spec = sampler.Spec{Kind: s.Sampler, M: s.M, K: s.K, Walk: s.Walk, Graph: s.Graph, Alpha: sampler.AlphaSchedule{Start: s.Alpha, End: s.Alpha, Constant: true}}
	}
	smp, err := spec.New(e.N, s.B, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if rf, ok := smp.(sampler.Refresher); ok {
		if err := rf.Refresh(e); err != nil {
			t.Fatal(err)
		}
	}
	var steps []sampler.WalkStep
	if bs, ok := smp.(*sampler.BatchSampler); ok {
		bs.SetWalkTrace(func(st sampler.WalkStep) { steps = append(steps, st) })
	}
	var b []int
	for range index + 1 {
		steps = steps[:0]
		b = smp.Next()
	}
	return b, steps
}

// compare checks the page's batch and ratios against the sampler package.
func compare(t *testing.T, what string, st pageState, e sampler.Embeddings, labels []int) []sampler.WalkStep {
	t.Helper()
	want, steps := nativeBatch(t, st.Settings, e, st.Index)
	if !slices.Equal(st.IDs, want) {
		t.Fatalf("%s: the page's batch %d is %v, the sampler package's %v (settings %+v)", what, st.Index, st.IDs, want, st.Settings)
	}
	fn, hard, cos := sampler.FalseNegativeRatio(want, labels), sampler.HardNegativeRatio(want, labels, e, st.Settings.Threshold), sampler.MeanCosine(want, e)
	if st.FN != fn || st.Hard != hard || st.Cos != cos {
		t.Fatalf("%s: the page shows FN %v hard %v cos %v, native Go %v %v %v", what, st.FN, st.Hard, st.Cos, fn, hard, cos)
	}
	t.Logf("%s: batch %d of %s (M=%d K=%d α=%v): %d instances, FN %.4f, hard %.4f, mean cosine %.4f — identical to native Go",
		what, st.Index, st.Settings.Sampler, st.Settings.M, st.Settings.K, st.Settings.Alpha, len(want), fn, hard, cos)
	return steps
}

func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls a JavaScript condition.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		fired, ferr := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(r => setTimeout(() => r("fired"), 10))`, chromedp.EvalAwaitPromise))
		t.Logf("setTimeout probe: %q %v", fired, ferr)
		msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent + " | " + document.getElementById("train-status").textContent + " | " + JSON.stringify(S.train && {done: S.train.done, timer: S.train.timer, steps: S.train.steps})`))
		t.Fatalf("waiting for %s: %v (the page says: %s)", cond, err, msg)
	}
}

// setRange sets a control's value as a user's drag would end (an input event).
func setRange(id string, v any) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = document.getElementById(%q); el.value = %v; el.dispatchEvent(new Event("input", {bubbles: true})); })()`, id, v))
}

func settled(cond string) string {
	return `(() => { const p = document.getElementById("batch-panel"); if (!p.dataset.settings) return false; const s = JSON.parse(p.dataset.settings); return ` + cond + `; })()`
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png := get(t, ctx, chromedp.FullScreenshot(100))
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

// TestPage drives the exported page in a real browser (Debian's chromium):
// over http from a local server and from file://, it checks the batches,
// ratios, walk steps and training the page shows against native Go for the
// same settings and seeds, that the page logged no error and fetched
// nothing outside its folder, and writes screenshots to the test's
// artifact directory (go test -artifacts keeps them).
func TestPage(t *testing.T) {
	exe := browser()
	if exe == "" {
		t.Skip("no Chromium or Chrome found (/usr/bin/chromium, chromium, google-chrome): install Debian's chromium, as .ci/run does, to run the page in a browser")
	}
	dir, info := exported(t)
	shots := t.ArtifactDir()
	alloc, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1500, 1900))
	defer cancel()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	bctx, cancel = context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()

	e, labels, _, err := lab.Clusters(lab.DefaultData())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("http", func(t *testing.T) {
		var seen pageLog
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer srv.Close()
		ctx := bctx
		if err := seen.listen(ctx); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		do(t, ctx, chromedp.Navigate(srv.URL+"/index.html"))
		waitFor(t, ctx, `document.body.dataset.ready === "1"`)
		firstMS := get(t, ctx, chromedp.Evaluate[string](`document.body.dataset.firstRenderMs`))
		t.Logf("first render %s ms after navigation (%.1f s wall clock in the test); main.wasm %d bytes", firstMS, time.Since(t0).Seconds(), info.WasmBytes)
		st := get(t, ctx, chromedp.Evaluate[pageState](readState))
		compare(t, "first batch", st, e, labels)
		screenshot(t, ctx, shots, "page-overview")

		// α by the keyboard: two presses of → on the slider (0.2 → 0.3).
		do(t, ctx, chromedp.Focus("#c-alpha"), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowRight))
		waitFor(t, ctx, settled(`Math.abs(s.alpha - 0.3) < 1e-9`))
		compare(t, "α → 0.3", get(t, ctx, chromedp.Evaluate[pageState](readState)), e, labels)

		// M dragged to 400.
		do(t, ctx, setRange("c-m", 400))
		waitFor(t, ctx, settled(`s.m === 400`))
		compare(t, "M → 400", get(t, ctx, chromedp.Evaluate[pageState](readState)), e, labels)

		// n: the sampler's next batch.
		do(t, ctx, chromedp.KeyEvent("n"))
		waitFor(t, ctx, settled(`+p.dataset.index === 1`))
		steps := compare(t, "next batch (key n)", get(t, ctx, chromedp.Evaluate[pageState](readState)), e, labels)

		// r, then s five times: the walk's first five steps.
		do(t, ctx, chromedp.KeyEvent("r"))
		for range 5 {
			do(t, ctx, chromedp.KeyEvent("s"))
		}
		waitFor(t, ctx, `document.getElementById("walk-pos").dataset.step === "5"`)
		nb := get(t, ctx, chromedp.Text("#nbrs"))
		at := regexp.MustCompile(`walker is at node (\d+)`).FindStringSubmatch(nb)
		if len(steps) < 5 || at == nil || at[1] != strconv.Itoa(steps[4].To) {
			t.Fatalf("after 5 steps the page says %q; native Go's walk is at %v", nb, steps[min(4, len(steps)-1)])
		}
		t.Logf("walk stepped 5 times: at node %s, as native Go's trace", at[1])
		screenshot(t, ctx, shots, "page-walk-step")

		// K < B−1 at α = 1: the walk falls back, and the page says so.
		do(t, ctx, setRange("c-k", 8), setRange("c-alpha", 1))
		waitFor(t, ctx, settled(`s.k === 8 && s.alpha === 1`))
		st = get(t, ctx, chromedp.Evaluate[pageState](readState))
		steps = compare(t, "K = 8 < B−1, α = 1", st, e, labels)
		jumps := 0
		for _, s := range steps {
			if s.Jump {
				jumps++
			}
		}
		note := get(t, ctx, chromedp.Evaluate[string](`(() => { const n = document.getElementById("fallback-note"); return n.hidden ? "" : n.textContent; })()`))
		if jumps == 0 || !strings.Contains(note, fmt.Sprintf("fell back %d time", jumps)) {
			t.Fatalf("native Go's walk jumped %d times; the page's fallback note says %q", jumps, note)
		}
		// r, then j: the walk up to its first fallback jump.
		do(t, ctx, chromedp.KeyEvent("r"), chromedp.KeyEvent("j"))
		first := 0
		for i, s := range steps {
			if s.Jump {
				first = i + 1
				break
			}
		}
		waitFor(t, ctx, fmt.Sprintf(`document.getElementById("walk-pos").dataset.step === "%d"`, first))
		screenshot(t, ctx, shots, "page-fallback")

		// Train mode: 30 steps of each sampler at K = 31, α = 0.2, M = 200.
		do(t, ctx, setRange("c-k", 31), setRange("c-alpha", 0.2), setRange("c-m", 200))
		waitFor(t, ctx, settled(`s.k === 31 && s.alpha === 0.2 && s.m === 200`))
		do(t, ctx, chromedp.SetValue("#c-steps", "30"), chromedp.KeyEvent("t"))
		waitFor(t, ctx, `document.getElementById("train-panel").dataset.done === "1"`)
		req := get(t, ctx, chromedp.Evaluate[string](`document.getElementById("train-panel").dataset.request`))
		vals := get(t, ctx, chromedp.Evaluate[map[string]float64](`(() => { const o = {}; for (const td of document.querySelectorAll("#train-final td[data-value]")) o[td.id] = JSON.parse(td.dataset.value); return o; })()`))
		checkTraining(t, req, vals)
		screenshot(t, ctx, shots, "page-train")

		// The scatter holds Uniform, kNN and every BatchSampler setting tried.
		n := get(t, ctx, chromedp.Evaluate[int](`S.scatter.length`))
		if n < 5 {
			t.Errorf("the scatter has %d points after five settings", n)
		}

		// Your own run: .npy files through the file inputs.
		emb, lbl := writeRun(t)
		do(t, ctx, chromedp.SetUploadFiles("#c-emb", []string{emb}), chromedp.SetUploadFiles("#c-lab", []string{lbl}),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("details").open = true`), chromedp.Click("#b-run"))
		waitFor(t, ctx, `S.data && S.data.source === "run" && !!document.getElementById("batch-panel").dataset.settings`)
		re, rl, err := lab.ReadRun(mustRead(t, emb), mustRead(t, lbl), "e", "l")
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, settled(`s.b <= 40`))
		compare(t, "your own run (.npy, 16-D)", get(t, ctx, chromedp.Evaluate[pageState](readState)), re, rl)
		screenshot(t, ctx, shots, "page-own-run")

		// The sphere.
		do(t, ctx, chromedp.SetValue("#c-dim", "3"), chromedp.SetValue("#c-spread", "0.12"), chromedp.Click("#b-data"))
		waitFor(t, ctx, `S.data.view === 3`)
		screenshot(t, ctx, shots, "page-sphere")

		seen.check(t, srv.URL+"/")
	})

	t.Run("file", func(t *testing.T) {
		ctx, cancel := chromedp.NewContext(bctx)
		defer cancel()
		var seen pageLog
		if err := seen.listen(ctx); err != nil {
			t.Fatal(err)
		}
		url := "file://" + filepath.ToSlash(dir) + "/index.html"
		do(t, ctx, chromedp.Navigate(url))
		waitFor(t, ctx, `document.body.dataset.ready === "1"`)
		firstMS := get(t, ctx, chromedp.Evaluate[string](`document.body.dataset.firstRenderMs`))
		t.Logf("file://: first render %s ms after navigation", firstMS)
		compare(t, "file:// first batch", get(t, ctx, chromedp.Evaluate[pageState](readState)), e, labels)
		seen.check(t, "file://"+filepath.ToSlash(dir)+"/")
	})
}

// checkTraining replays the page's train request in native Go (package
// lab) and compares the page's last values: to 1e-9 for Uniform and
// BatchSampler (the wasm and amd64 builds of math.Exp and math.Log may
// differ in the last bit). The kNN Sampler ranks all N embeddings with
// gonum's float32 Sgemv, whose amd64 assembly adds in another order than
// its pure-Go build in wasm; once its batches have collapsed onto nearly
// equal embeddings a last-bit difference can swap two tied neighbours, so
// its run is compared to 2% (measured: loss 4.063 in the page against
// 4.055 native after 30 steps, the false-negative ratio and probe equal).
func checkTraining(t *testing.T, req string, vals map[string]float64) {
	t.Helper()
	var r lab.TrainRequest
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	if r.Steps != 30 || r.Settings.K != 31 || r.Settings.Alpha != 0.2 || r.Settings.M != 200 {
		t.Fatalf("the page asked for %+v, not the controls' values", r)
	}
	a := &lab.API{}
	d, _ := json.Marshal(lab.DefaultData())
	if _, err := a.Call("data", d); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Call("trainInit", []byte(req)); err != nil {
		t.Fatal(err)
	}
	runs := map[string][]lab.TrainPoint{}
	probe := map[string]float64{}
	for range r.Steps / 5 {
		out, err := a.Call("trainStep", []byte(`{"steps":5}`))
		if err != nil {
			t.Fatal(err)
		}
		var ups []lab.TrainUpdate
		if err := json.Unmarshal(out, &ups); err != nil {
			t.Fatal(err)
		}
		for _, u := range ups {
			runs[u.Name] = append(runs[u.Name], u.Points...)
			if len(u.Snapshots) > 0 {
				probe[u.Name] = u.Snapshots[len(u.Snapshots)-1].Probe
			}
		}
	}
	for _, k := range lab.TrainKinds {
		p := runs[k]
		var fn float64
		for _, x := range p {
			fn += x.FN
		}
		fn /= float64(len(p))
		loss := p[len(p)-1].Loss
		gl, gf, gp := vals["t-"+k+"-loss"], vals["t-"+k+"-fn"], vals["t-"+k+"-probe"]
		tol := 1e-9
		if k == sampler.KindKNN {
			tol = 0.02
		}
		if math.Abs(gf-fn) > tol || math.Abs(gl-loss) > tol*loss || math.Abs(gp-probe[k]) > tol {
			t.Errorf("train %s: the page shows loss %v, FN %v, probe %v; native Go %v, %v, %v", k, gl, gf, gp, loss, fn, probe[k])
		}
		t.Logf("train %s, %d steps: native loss %.6f (page %.6f), batches' FN %.4f (page %.4f), kNN probe %.3f (page %.3f)", k, len(p), loss, gl, fn, gf, probe[k], gp)
	}
}

// writeRun writes a 16-D run of 120 instances in 4 classes as cmd/train
// -embed would (float32 rows, int64 labels) and returns the two paths.
func writeRun(t *testing.T) (emb, labels string) {
	dir := t.TempDir()
	const n, d = 120, 16
	b := npy.AppendHeader(nil, npy.Float32, []int{n, d})
	l := npy.AppendHeader(nil, npy.Int64, []int{n})
	for i := range n {
		for j := range d {
			v := math.Sin(float64(3*i+7*j)) + 2*float64(((i%4)*5+j)%4)
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		}
		l = binary.LittleEndian.AppendUint64(l, uint64(i%4))
	}
	emb, labels = filepath.Join(dir, "run.npy"), filepath.Join(dir, "run_labels.npy")
	if err := os.WriteFile(emb, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labels, l, 0o644); err != nil {
		t.Fatal(err)
	}
	return emb, labels
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

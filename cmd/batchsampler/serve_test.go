package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// testServer is a server on a loopback port.
type testServer struct {
	url    string
	sv     *server
	cancel context.CancelFunc
	done   chan error
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func startServer(t testing.TB, o serveOptions) *testServer {
	t.Helper()
	o.quiet = true
	if o.keep == 0 {
		o.keep = 64
	}
	if o.maxBody == 0 {
		o.maxBody = 1 << 30
	}
	sv, err := newServer(o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{url: "http://" + ln.Addr().String(), sv: sv, cancel: cancel, done: make(chan error, 1)}
	go func() { ts.done <- sv.serve(ctx, ln) }()
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop shuts the server down (saving its -state file) and waits for it.
func (ts *testServer) stop(t testing.TB) {
	t.Helper()
	if ts.cancel == nil {
		return
	}
	ts.cancel()
	ts.cancel = nil
	select {
	case err := <-ts.done:
		if err != nil && err != http.ErrServerClosed {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("server did not stop within 20 s")
	}
}

// stopServe cancels a cmdServe started on a goroutine that sends its
// result to done, and checks that it returns nil within 20 s.
func stopServe(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// do sends a request without an Authorization header and returns the
// status and the body of the response.
func (ts *testServer) do(t testing.TB, method, path string, body []byte) (int, []byte) {
	t.Helper()
	return ts.doAuth(t, "", method, path, body)
}

// mustOK does a request that must succeed.
func (ts *testServer) mustOK(t testing.TB, method, path string, body []byte) []byte {
	t.Helper()
	st, b := ts.do(t, method, path, body)
	if st != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, path, st, b)
	}
	return b
}

// batch fetches rank's part of step's batch.
func (ts *testServer) batch(t testing.TB, step, rank, world int) []int {
	t.Helper()
	b := ts.mustOK(t, "GET", fmt.Sprintf("/v1/batch?step=%d&rank=%d&world=%d", step, rank, world), nil)
	return decodeInt64s(t, b)
}

func decodeInt64s(t testing.TB, b []byte) []int {
	t.Helper()
	r := bytes.NewReader(b)
	h, err := npy.ReadHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	if h.DType != npy.Int64 || len(h.Shape) != 1 {
		t.Fatalf("batch is %s %s, want 1-D int64", npy.ShapeString(h.Shape), h.DType)
	}
	raw, _ := io.ReadAll(r)
	out := make([]int, h.Shape[0])
	for i := range out {
		var v int64
		for k := 7; k >= 0; k-- {
			v = v<<8 | int64(raw[8*i+k])
		}
		out[i] = int(v)
	}
	return out
}

// apiErrorOf decodes a JSON error body.
func apiErrorOf(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("error body %q is not JSON: %v", b, err)
	}
	if m["error"] == "" || m["code"] == "" {
		t.Fatalf("error body %s has no error or code", b)
	}
	return m
}

func (ts *testServer) info(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ts.mustOK(t, "GET", "/v1/info", nil), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestServerMatchesDriver drives the server as 2 DDP ranks: every t steps
// each rank uploads its shard of new embeddings (one refresh in float16
// from one rank), then both fetch their slices of every step; together they
// must be the Go Driver's batches, and repeated requests identical.
func TestServerMatchesDriver(t *testing.T) {
	const n, d, b, tEvery, total = 480, 8, 32, 10, 60
	spec := sampler.Spec{Kind: "batchsampler", M: 80, K: 8, RefreshEvery: tEvery, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.05}}
	embs := make([]sampler.Embeddings, total/tEvery)
	var body16 []byte
	for i := range embs {
		embs[i] = mixture(t, n, d, uint64(i))
		if i == 3 { // float16, all rows from one rank (world 1)
			body16, embs[i] = float16Npy(embs[i])
		}
	}
	want := reference(t, spec, n, b, 4, total, embs, total)
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: b, Seed: 4, TotalSteps: total}, keep: 16})
	for s := 0; s < total; s++ {
		if s%tEvery == 0 {
			e := embs[s/tEvery]
			if s/tEvery == 3 {
				res := ts.mustOK(t, "POST", "/v1/refresh", body16)
				if !strings.Contains(string(res), fmt.Sprintf(`"refreshed_before_step":%d`, s)) {
					t.Fatalf("upload before step %d: %s, want an immediate refresh", s, res)
				}
			} else {
				lo, hi := shardRows(n, 1, 2)
				ts.mustOK(t, "POST", fmt.Sprintf("/v1/refresh?rank=1&world=2&n=%d", n), npyBytes(t, rowsOf(e, lo, hi)))
				if s > 0 {
					st, body := ts.do(t, "GET", fmt.Sprintf("/v1/batch?step=%d", s), nil)
					m := apiErrorOf(t, body)
					if st != http.StatusConflict || m["code"] != "refresh_due" || fmt.Sprint(m["received_ranks"]) != "[1]" {
						t.Fatalf("step %d with half an upload: %d %s, want 409 refresh_due with received_ranks [1]", s, st, body)
					}
				}
				lo, hi = shardRows(n, 0, 2)
				ts.mustOK(t, "POST", fmt.Sprintf("/v1/refresh?rank=0&world=2&n=%d", n), npyBytes(t, rowsOf(e, lo, hi)))
			}
		}
		p0, p1 := ts.batch(t, s, 0, 2), ts.batch(t, s, 1, 2)
		if len(p0) != b/2 || len(p1) != b/2 {
			t.Fatalf("step %d: slices of %d and %d, want %d each", s, len(p0), len(p1), b/2)
		}
		if got := append(slices.Clone(p0), p1...); !slices.Equal(got, want[s]) {
			t.Fatalf("step %d: ranks' slices %v differ from the Driver's batch %v", s, got, want[s])
		}
		if again := ts.batch(t, s, 0, 2); !slices.Equal(again, p0) {
			t.Fatalf("step %d: a repeated request got %v, first %v", s, again, p0)
		}
		if whole := ts.batch(t, s, 0, 1); !slices.Equal(whole, want[s]) {
			t.Fatalf("step %d: world 1 got %v", s, whole)
		}
	}
	st, body := ts.do(t, "GET", "/v1/batch?step=0", nil)
	if m := apiErrorOf(t, body); st != http.StatusGone || m["code"] != "step_gone" || !strings.Contains(m["error"].(string), "last 16 steps") {
		t.Fatalf("step 0 after 60: %d %s, want 410 step_gone naming the 16 kept steps", st, body)
	}
	st, body = ts.do(t, "GET", fmt.Sprintf("/v1/batch?step=%d", total), nil)
	if m := apiErrorOf(t, body); st != http.StatusBadRequest || !strings.Contains(m["error"].(string), "past the last step 59") {
		t.Fatalf("step T: %d %s", st, body)
	}
}

// TestServerBadInput sends every kind of bad request; each gets its status
// and code, and the server keeps serving the same batches.
func TestServerBadInput(t *testing.T) {
	const n, d = 200, 8
	spec := sampler.Spec{Kind: "batchsampler", M: 40, K: 5, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 20, Seed: 1}, maxBody: 64 << 10})
	e := mixture(t, n, d, 0)
	good := npyBytes(t, e)
	ts.mustOK(t, "POST", "/v1/refresh", good)
	step0 := ts.batch(t, 0, 0, 1)

	nan := sampler.Embeddings{N: n, D: d, Data: slices.Clone(e.Data)}
	nan.Data[17*d+2] = float32(nanValue())
	header := func(descr string, shape string) []byte {
		dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
		b := append([]byte(npy.Magic+"\x01\x00"), byte(len(dict)+1), 0)
		return append(append(b, dict...), '\n')
	}
	bigRows := (64 << 10) / (4 * d) // data of exactly -max-body bytes: the body is larger
	big := npyBytes(t, mixture(t, bigRows, d, 1))
	var graphWrongK bytes.Buffer
	npy.WriteInt32s(&graphWrongK, []int{n, 4}, make([]int32, n*4))
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		chunked            bool
		status             int
		code, msg          string
	}{
		{"malformed", "POST", "/v1/refresh", []byte("hello, world"), false, 400, "bad_npy", "not a .npy file"},
		{"empty", "POST", "/v1/refresh", []byte{}, false, 400, "bad_npy", "empty input"},
		{"truncated", "POST", "/v1/refresh", good[:1000], false, 400, "bad_npy", "data truncated: got 872 of 6400 bytes"},
		{"trailing", "POST", "/v1/refresh", append(slices.Clone(good), 1, 2, 3), false, 400, "bad_npy", "data continues after the array"},
		{"dtype", "POST", "/v1/refresh", append(header("<i2", "(2, 2)"), make([]byte, 8)...), false, 400, "bad_npy", "dtype <i2: want float16, float32 or float64"},
		{"1-D", "POST", "/v1/refresh", append(header("<f4", "(4,)"), make([]byte, 16)...), false, 400, "bad_npy", "shape (4,): want a 2-D array"},
		{"3-D", "POST", "/v1/refresh", append(header("<f4", "(2, 2, 2)"), make([]byte, 32)...), false, 400, "bad_npy", "shape (2, 2, 2)"},
		{"fortran", "POST", "/v1/refresh", bytes.Replace(good, []byte("False"), []byte("True "), 1), false, 400, "bad_npy", "fortran_order is True"},
		{"N changed", "POST", "/v1/refresh", npyBytes(t, rowsOf(e, 0, 150)), false, 409, "n_changed", "upload is for N = 150 instances, this job has N = 200"},
		{"NaN row", "POST", "/v1/refresh", npyBytes(t, nan), false, 400, "non_finite", "row 17 column 2 is NaN"},
		{"rank outside world", "POST", "/v1/refresh?rank=2&world=2&n=200", good, false, 400, "bad_rank", "rank 2 is outside world size 2"},
		{"negative rank", "GET", "/v1/batch?step=0&rank=-1&world=2", nil, false, 400, "bad_rank", "rank -1 is outside world size 2"},
		{"batch rank outside world", "GET", "/v1/batch?step=0&rank=4&world=4", nil, false, 400, "bad_rank", "rank 4 is outside world size 4"},
		{"shard without n", "POST", "/v1/refresh?rank=0&world=2", npyBytes(t, rowsOf(e, 0, 100)), false, 400, "bad_shard", "needs n"},
		{"shard rows", "POST", "/v1/refresh?rank=0&world=2&n=200", npyBytes(t, rowsOf(e, 0, 90)), false, 400, "bad_shape", "want rows [0, 100) = 100"},
		{"graph K", "POST", "/v1/refresh", graphWrongK.Bytes(), false, 400, "bad_shape", "want K = 5"},
		{"oversized", "POST", "/v1/refresh", make([]byte, 65<<10), false, 413, "too_large", "exceeds the limit of 65536 bytes"},
		{"oversized chunked", "POST", "/v1/refresh", big, true, 413, "too_large", "limit of 65536 bytes"},
		{"oversized header claim", "POST", "/v1/refresh", header("<f4", "(100000, 8)"), true, 413, "too_large", "larger than the limit"},
		{"no step", "GET", "/v1/batch", nil, false, 400, "bad_query", "step is required"},
		{"bad step", "GET", "/v1/batch?step=x", nil, false, 400, "bad_query", `step="x"`},
		{"negative step", "GET", "/v1/batch?step=-3", nil, false, 400, "bad_step", "want a step ≥ 0"},
		{"far ahead", "GET", "/v1/batch?step=100000", nil, false, 400, "bad_step", "steps ahead"},
		{"bad state", "PUT", "/v1/state", []byte("not a state"), false, 400, "bad_state", "shorter than the"},
		{"save without -state", "POST", "/v1/state/save", nil, false, 400, "no_state_file", "without -state"},
		{"unknown path", "GET", "/v2/batch", nil, false, 404, "not_found", "no endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != nil {
				body = bytes.NewReader(tc.body)
				if tc.chunked {
					body = io.MultiReader(body) // hides the length: chunked encoding
				}
			}
			req, err := http.NewRequest(tc.method, ts.url+tc.path, body)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m := apiErrorOf(t, b)
			if resp.StatusCode != tc.status || m["code"] != tc.code || !strings.Contains(m["error"].(string), tc.msg) {
				t.Fatalf("%d %s, want %d %s with %q", resp.StatusCode, b, tc.status, tc.code, tc.msg)
			}
			ts.mustOK(t, "GET", "/v1/health", nil)
			if got := ts.batch(t, 0, 0, 1); !slices.Equal(got, step0) {
				t.Fatal("the batch of step 0 changed")
			}
			if info := ts.info(t); info["n"] != float64(n) || info["pending_upload"] != false {
				t.Fatalf("state changed: %v", info)
			}
		})
	}
	if st, _ := ts.do(t, "GET", "/v1/refresh", nil); st != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/refresh: %d, want 405", st)
	}
}

// TestServerClientDisconnectMidUpload cuts an upload off half way: the
// server changes nothing and keeps serving.
func TestServerClientDisconnectMidUpload(t *testing.T) {
	spec := sampler.Spec{Kind: "batchsampler", M: 40, K: 5, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 20, Seed: 1}})
	body := npyBytes(t, mixture(t, 300, 8, 0))
	for _, cut := range []int{5, 60, 128, len(body) / 2} {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(ts.url, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /v1/refresh HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-npy\r\nContent-Length: %d\r\n\r\n", len(body))
		conn.Write(body[:cut])
		conn.Close()
	}
	for i := 0; i < 5; i++ { // the handlers see the EOF at once; look a few times
		time.Sleep(50 * time.Millisecond)
		ts.mustOK(t, "GET", "/v1/health", nil)
		if info := ts.info(t); info["n"] != float64(0) || info["pending_upload"] != false || info["refreshes"] != float64(0) {
			t.Fatalf("a cut-off upload changed the state: %v", info)
		}
	}
	ts.mustOK(t, "POST", "/v1/refresh", body)
	if got := ts.batch(t, 0, 0, 1); len(got) != 20 {
		t.Fatalf("batch of %d after the cut-off uploads", len(got))
	}
}

// TestServerRestart stops a server with a -state file and starts another
// from it: kept steps are answered identically and the next steps are
// those of an uninterrupted run.
func TestServerRestart(t *testing.T) {
	const n, b = 400, 25
	spec := sampler.Spec{Kind: "batchsampler", M: 60, K: 6, RefreshEvery: 12, Alpha: sampler.AlphaSchedule{Start: 0.3, End: 0.1}}
	e0, e1, e2 := mixture(t, n, 8, 0), mixture(t, n, 8, 1), mixture(t, n, 8, 2)
	want := reference(t, spec, n, b, 5, 40, []sampler.Embeddings{e0, e1, e2}, 30)
	statePath := filepath.Join(t.TempDir(), "state.bin")
	o := serveOptions{cfg: jobConfig{Spec: spec, B: b, Seed: 5, TotalSteps: 40}, keep: 8, statePath: statePath}
	ts := startServer(t, o)
	ts.mustOK(t, "POST", "/v1/refresh", npyBytes(t, e0))
	var got [][]int
	for s := 0; s < 12; s++ {
		got = append(got, ts.batch(t, s, 0, 1))
	}
	ts.mustOK(t, "POST", "/v1/refresh", npyBytes(t, e1)) // pending: step 12 is due and not yet prepared → used at once
	res := ts.mustOK(t, "POST", "/v1/state/save", nil)
	if !strings.Contains(string(res), `"next_step":12`) {
		t.Fatalf("save: %s", res)
	}
	got = append(got, ts.batch(t, 12, 0, 1), ts.batch(t, 13, 0, 1))
	ts.stop(t) // saves again at shutdown

	ts = startServer(t, o)
	if info := ts.info(t); info["next_step"] != float64(14) || fmt.Sprint(info["kept_steps"]) != "[6 14]" {
		t.Fatalf("restored info %v, want next step 14 and steps [6, 14) kept", info)
	}
	for s := 6; s < 14; s++ {
		if again := ts.batch(t, s, 0, 1); !slices.Equal(again, got[s]) {
			t.Fatalf("kept step %d answered differently after the restart", s)
		}
	}
	for s := 14; s < 24; s++ {
		got = append(got, ts.batch(t, s, 0, 1))
	}
	ts.mustOK(t, "POST", "/v1/refresh", npyBytes(t, e2))
	for s := 24; s < 30; s++ {
		got = append(got, ts.batch(t, s, 0, 1))
	}
	if !equalBatches(got, want) {
		t.Fatal("batches across the restart differ from an uninterrupted Driver's")
	}
	ts.stop(t)

	bad := o
	bad.cfg.Spec.M = 61
	bad.set = map[string]bool{"m": true}
	if _, err := newServer(bad, io.Discard); err == nil || !strings.Contains(err.Error(), "-m 61 differs from -state") {
		t.Fatalf("restart with another -m: %v", err)
	}
	raw, _ := os.ReadFile(statePath)
	os.WriteFile(statePath, raw[:len(raw)-10], 0o644)
	if _, err := newServer(o, io.Discard); err == nil || !strings.Contains(err.Error(), "truncated or padded") {
		t.Fatalf("restart from a truncated state: %v", err)
	}
}

// TestServerStateEndpoints moves a state between servers with GET and PUT
// /v1/state, and refuses a state of another configuration.
func TestServerStateEndpoints(t *testing.T) {
	spec := sampler.Spec{Kind: "knn", RefreshEvery: 5}
	cfg := jobConfig{Spec: spec, B: 16, Seed: 2}
	e := mixture(t, 160, 8, 0)
	a := startServer(t, serveOptions{cfg: cfg, reuse: true})
	a.mustOK(t, "POST", "/v1/refresh", npyBytes(t, e))
	for s := 0; s < 7; s++ {
		a.batch(t, s, 0, 1)
	}
	st := a.mustOK(t, "GET", "/v1/state", nil)
	b := startServer(t, serveOptions{cfg: cfg, reuse: true})
	b.mustOK(t, "PUT", "/v1/state", st)
	for s := 3; s < 20; s++ { // kept steps, then new ones (refreshes reuse the upload)
		if x, y := a.batch(t, s, 1, 3), b.batch(t, s, 1, 3); !slices.Equal(x, y) {
			t.Fatalf("step %d: %v and %v", s, x, y)
		}
	}
	other := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 16, Seed: 3}})
	code, body := other.do(t, "PUT", "/v1/state", st)
	if m := apiErrorOf(t, body); code != 400 || !strings.Contains(m["error"].(string), "-seed 3 differs from the uploaded state's seed = 2") {
		t.Fatalf("PUT of another seed's state: %d %s", code, body)
	}
}

// TestServerGraphUpload: a neighbour table from the graph subcommand,
// uploaded in two shards, gives the batches of the embeddings.
func TestServerGraphUpload(t *testing.T) {
	dir := t.TempDir()
	e := mixture(t, 300, 8, 0)
	emb := writeTemp(t, dir, "e.npy", npyBytes(t, e))
	g := filepath.Join(dir, "g.npy")
	mustRun(t, "graph", "-emb", emb, "-out", g, "-m", "50", "-k", "7", "-seed", "3")
	spec := sampler.Spec{Kind: "batchsampler", M: 50, K: 7, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	want := reference(t, spec, 300, 30, 3, 0, []sampler.Embeddings{e}, 25)
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 30, Seed: 3}})
	m := readGraph(t, g)
	for _, r := range []int{0, 1} {
		lo, hi := shardRows(300, r, 2)
		var buf bytes.Buffer
		npy.WriteInt32s(&buf, []int{hi - lo, 7}, m.Data[lo*7:hi*7])
		ts.mustOK(t, "POST", fmt.Sprintf("/v1/refresh?rank=%d&world=2&n=300", r), buf.Bytes())
	}
	for s := 0; s < 25; s++ {
		if got := ts.batch(t, s, 0, 1); !slices.Equal(got, want[s]) {
			t.Fatalf("step %d differs", s)
		}
	}
}

// TestServeCommand runs the serve subcommand itself: it prints its
// address, serves, and saves its state when its context ends.
func TestServeCommand(t *testing.T) {
	statePath := filepath.Join(t.TempDir(), "s.bin")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, []string{"-addr", "127.0.0.1:0", "-kind", "uniform", "-n", "100", "-b", "10", "-state", statePath, "-quiet"}, pw, io.Discard, nil)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on http://127.0.0.1:") {
		t.Fatalf("first line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	ts := &testServer{url: strings.TrimSpace(strings.TrimPrefix(line, "listening on "))}
	if got := ts.batch(t, 0, 0, 1); len(got) != 10 {
		t.Fatalf("uniform batch of %d", len(got))
	}
	stopServe(t, cancel, done)
	if _, err := os.Stat(statePath); err != nil {
		t.Fatalf("no state saved at shutdown: %v", err)
	}
	for _, args := range [][]string{
		{"-kind", "uniform"},
		{"-max-body", "lots"},
		{"-stale", "sometimes"},
		{"-keep", "0"},
	} {
		if err := cmdServe(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-quiet"}, args...), io.Discard, io.Discard, nil); err == nil {
			t.Errorf("serve %v: no error", args)
		}
	}
}

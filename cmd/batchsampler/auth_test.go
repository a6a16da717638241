package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/sampler"
)

const testSecret = "s3cr3t-for-the-tests-0123456789"

// doAuth is ts.do with an Authorization header (none when auth is "").
func (ts *testServer) doAuth(t testing.TB, auth, method, path string, body []byte) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestServerToken: with a secret, every request but GET /v1/health without
// it or with a wrong one is 401 unauthorized and changes nothing (the
// state, GET /v1/state with the secret, is byte-identical afterwards); with
// it, the same requests succeed.
func TestServerToken(t *testing.T) {
	spec := sampler.Spec{Kind: "batchsampler", M: 40, K: 5, RefreshEvery: 4, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	statePath := filepath.Join(t.TempDir(), "state.bin")
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 20, Seed: 1}, token: testSecret, statePath: statePath})
	good := "Bearer " + testSecret
	e0, e1 := npyBytes(t, mixture(t, 200, 8, 0)), npyBytes(t, mixture(t, 200, 8, 1))
	if st, b := ts.doAuth(t, good, "POST", "/v1/refresh", e0); st != http.StatusOK {
		t.Fatalf("refresh with the secret: %d %s", st, b)
	}
	for s := 0; s < 3; s++ {
		if st, b := ts.doAuth(t, good, "GET", fmt.Sprintf("/v1/batch?step=%d", s), nil); st != http.StatusOK {
			t.Fatalf("batch %d with the secret: %d %s", s, st, b)
		}
	}
	_, otherState := ts.doAuth(t, good, "GET", "/v1/state", nil)
	state := func() []byte {
		t.Helper()
		st, b := ts.doAuth(t, good, "GET", "/v1/state", nil)
		if st != http.StatusOK {
			t.Fatalf("GET /v1/state with the secret: %d %s", st, b)
		}
		return b
	}
	before := state()
	requests := []struct {
		method, path string
		body         []byte
	}{
		{"POST", "/v1/refresh", e1},
		{"POST", "/v1/refresh?rank=0&world=2&n=200", e1[:0]},
		{"DELETE", "/v1/refresh", nil},
		{"GET", "/v1/batch?step=3", nil}, // would generate step 3
		{"GET", "/v1/batch?step=1", nil},
		{"GET", "/v1/info", nil},
		{"GET", "/v1/state", nil},
		{"PUT", "/v1/state", otherState},
		{"POST", "/v1/state/save", nil},
		{"GET", "/v2/nothing", nil},
	}
	for _, auth := range []string{"", "Bearer wrong-secret-0123456789abc", "Bearer " + testSecret + "x", "Bearer " + testSecret[:len(testSecret)-1], "Basic " + testSecret, testSecret, "Bearer"} {
		for _, rq := range requests {
			st, b := ts.doAuth(t, auth, rq.method, rq.path, rq.body)
			m := apiErrorOf(t, b)
			if st != http.StatusUnauthorized || m["code"] != "unauthorized" || !strings.Contains(m["error"].(string), "Authorization: Bearer") {
				t.Fatalf("%s %s with Authorization %q: %d %s, want 401 unauthorized", rq.method, rq.path, auth, st, b)
			}
			if strings.Contains(string(b), testSecret) {
				t.Fatalf("the 401 answer contains the secret: %s", b)
			}
		}
	}
	if _, err := os.Stat(statePath); !os.IsNotExist(err) {
		t.Fatalf("an unauthorised POST /v1/state/save wrote the state file (%v)", err)
	}
	if after := state(); !bytes.Equal(after, before) {
		t.Fatal("the state changed after the unauthorised requests")
	}
	if st, _ := ts.doAuth(t, "", "GET", "/v1/health", nil); st != http.StatusOK {
		t.Fatalf("GET /v1/health without the secret: %d, want 200 (liveness probes)", st)
	}
	// With the secret (the scheme is case-insensitive), the same requests work.
	for _, auth := range []string{good, "bearer " + testSecret} {
		if st, b := ts.doAuth(t, auth, "GET", "/v1/batch?step=3", nil); st != http.StatusOK {
			t.Fatalf("batch with %q: %d %s", auth[:6], st, b)
		}
	}
	if st, b := ts.doAuth(t, good, "POST", "/v1/refresh", e1); st != http.StatusOK {
		t.Fatalf("refresh with the secret: %d %s", st, b)
	}
	if st, b := ts.doAuth(t, good, "POST", "/v1/state/save", nil); st != http.StatusOK {
		t.Fatalf("save with the secret: %d %s", st, b)
	}
	raw, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(testSecret)) {
		t.Fatal("the state file contains the secret")
	}
}

// TestLoadToken: the secret comes from -token-file, else the environment;
// too short, white space inside, an unreadable file are errors naming
// their source (never the secret).
func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string { return writeTemp(t, dir, name, []byte(content)) }
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == tokenEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name, file, env, want, errMsg string
	}{
		{"file", file("a", testSecret+"\n"), "", testSecret, ""},
		{"file over env", file("b", "  "+testSecret+"  "), "another-secret-0123456789", testSecret, ""},
		{"env", "", testSecret, testSecret, ""},
		{"none", "", "", "", ""},
		{"short file", file("c", "short"), "", "", "-token-file " + filepath.Join(dir, "c") + " holds a secret of 5 characters: want at least 16"},
		{"short env", "", "short-secret", "", "$BATCHSAMPLER_TOKEN holds a secret of 12 characters"},
		{"empty file", file("d", "\n"), "", "", "holds a secret of 0 characters"},
		{"space inside", file("e", "abcdefgh ijklmnopq"), "", "", "contains white space"},
		{"missing file", filepath.Join(dir, "nope"), "", "", "-token-file: open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, src, err := loadToken(tc.file, env(tc.env))
			if tc.errMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMsg) {
					t.Fatalf("error %v, want one with %q", err, tc.errMsg)
				}
				if strings.Contains(err.Error(), "abcdefgh") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q (%s), %v; want %q", got, src, err, tc.want)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeTokenRequiredOffLoopback runs the serve subcommand: a
// non-loopback address without a secret is refused, naming -token-file;
// with the secret from the environment it serves, answering 401 without
// it; the log and the state file never contain the secret.
func TestServeTokenRequiredOffLoopback(t *testing.T) {
	t.Setenv(tokenEnv, "")
	args := []string{"-kind", "uniform", "-n", "100", "-b", "10"}
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		err := cmdServe(context.Background(), append([]string{"-addr", addr}, args...), io.Discard, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), "is not a loopback address") || !strings.Contains(err.Error(), "-token-file") {
			t.Fatalf("serve -addr %s without a secret: %v, want a refusal naming -token-file", addr, err)
		}
	}
	short := writeTemp(t, t.TempDir(), "short", []byte("0123"))
	if err := cmdServe(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-token-file", short}, args...), io.Discard, io.Discard, nil); err == nil || !strings.Contains(err.Error(), "want at least 16") {
		t.Fatalf("serve with a 4-character secret: %v", err)
	}

	t.Setenv(tokenEnv, testSecret)
	statePath := filepath.Join(t.TempDir(), "s.bin")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, append([]string{"-addr", "0.0.0.0:0", "-state", statePath}, args...), io.Discard, &logs, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve -addr 0.0.0.0:0 with $%s: %v", tokenEnv, err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}
	_, port, _ := net.SplitHostPort(addr)
	ts := &testServer{url: "http://127.0.0.1:" + port}
	if st, b := ts.doAuth(t, "", "GET", "/v1/batch?step=0", nil); st != http.StatusUnauthorized {
		t.Fatalf("batch without the secret: %d %s", st, b)
	}
	if st, b := ts.doAuth(t, "Bearer not-the-secret-at-all", "GET", "/v1/batch?step=0", nil); st != http.StatusUnauthorized {
		t.Fatalf("batch with a wrong secret: %d %s", st, b)
	}
	st, b := ts.doAuth(t, "Bearer "+testSecret, "GET", "/v1/batch?step=0", nil)
	if st != http.StatusOK || len(decodeInt64s(t, b)) != 10 {
		t.Fatalf("batch with the secret: %d %s", st, b)
	}
	stopServe(t, cancel, done)
	raw, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatalf("no state saved at shutdown: %v", err)
	}
	l := logs.String()
	if !strings.Contains(l, "401, no Authorization: Bearer header") || !strings.Contains(l, "401, a wrong token") || !strings.Contains(l, "$"+tokenEnv) {
		t.Fatalf("the log does not record the refusals and the secret's source:\n%s", l)
	}
	for what, text := range map[string][]byte{"log": []byte(l), "state file": raw} {
		if bytes.Contains(text, []byte(testSecret)) || bytes.Contains(text, []byte("not-the-secret")) {
			t.Errorf("the %s contains a token", what)
		}
	}
}

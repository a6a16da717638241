package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// TestServerWorldMismatch: a shard for world 3 while rank 0's shard for
// world 2 is pending is 409 world_mismatch naming both worlds, and rank
// 0's shard is kept (the world-2 upload completes with rank 1's shard);
// a whole upload (world 1) meanwhile is refused the same way; DELETE
// /v1/refresh discards an unfinished upload, after which another world
// size is accepted.
func TestServerWorldMismatch(t *testing.T) {
	const n = 240
	spec := sampler.Spec{Kind: "batchsampler", M: 40, K: 5, RefreshEvery: 3, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	e := mixture(t, n, 8, 0)
	shard := func(rank, world int) []byte {
		lo, hi := shardRows(n, rank, world)
		return npyBytes(t, rowsOf(e, lo, hi))
	}
	post := func(ts *testServer, rank, world int) (int, map[string]any, []byte) {
		st, b := ts.do(t, "POST", fmt.Sprintf("/v1/refresh?rank=%d&world=%d&n=%d", rank, world, n), shard(rank, world))
		if st != http.StatusOK {
			return st, apiErrorOf(t, b), b
		}
		return st, nil, b
	}
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 24, Seed: 2}})
	if st, _, b := post(ts, 0, 2); st != http.StatusOK {
		t.Fatalf("rank 0 of 2: %d %s", st, b)
	}
	st, m, b := post(ts, 2, 3)
	if st != http.StatusConflict || m["code"] != "world_mismatch" ||
		!strings.Contains(m["error"].(string), "a shard from rank 2 of world 3 over N = 240, but a sharded upload for world 2 over N = 240 is in progress (ranks [0] received)") ||
		!strings.Contains(m["error"].(string), "DELETE /v1/refresh") {
		t.Fatalf("rank 2 of 3 while rank 0 of 2 is pending: %d %s, want 409 world_mismatch", st, b)
	}
	st, b = ts.do(t, "POST", "/v1/refresh", npyBytes(t, e))
	if m := apiErrorOf(t, b); st != http.StatusConflict || m["code"] != "world_mismatch" || !strings.Contains(m["error"].(string), "a whole upload (world 1)") {
		t.Fatalf("a whole upload while rank 0 of 2 is pending: %d %s", st, b)
	}
	if sh := ts.info(t)["shards"]; fmt.Sprint(sh) != "map[n:240 received_ranks:[0] world:2]" {
		t.Fatalf("after the refused uploads the shards are %v, want rank 0 of world 2 kept", sh)
	}
	if st, _, b := post(ts, 1, 2); st != http.StatusOK || !strings.Contains(string(b), `"complete":true`) {
		t.Fatalf("rank 1 of 2: %d %s, want the world-2 upload complete", st, b)
	}
	if got := ts.batch(t, 0, 0, 1); len(got) != 24 {
		t.Fatalf("batch of %d", len(got))
	}

	// A job that is gone left rank 0's shard of world 2; a new job of 3
	// ranks discards it first.
	ts.batch(t, 2, 0, 1)
	if st, _, b := post(ts, 0, 2); st != http.StatusOK {
		t.Fatalf("rank 0 of 2: %d %s", st, b)
	}
	if st, _, _ := post(ts, 0, 3); st != http.StatusConflict {
		t.Fatalf("rank 0 of 3 before DELETE: %d, want 409", st)
	}
	if b := ts.mustOK(t, "DELETE", "/v1/refresh", nil); string(b) != "{\"discarded_ranks\":[0],\"world\":2}\n" {
		t.Fatalf("DELETE /v1/refresh: %s", b)
	}
	if b := ts.mustOK(t, "DELETE", "/v1/refresh", nil); string(b) != "{\"discarded_ranks\":[],\"world\":0}\n" {
		t.Fatalf("DELETE /v1/refresh with nothing pending: %s", b)
	}
	for r := 0; r < 3; r++ {
		if st, _, b := post(ts, r, 3); st != http.StatusOK {
			t.Fatalf("rank %d of 3 after DELETE: %d %s", r, st, b)
		}
	}
	if got := ts.batch(t, 3, 1, 3); len(got) != 8 {
		t.Fatalf("rank 1 of 3 has %d of step 3", len(got))
	}
	if info := ts.info(t); info["refreshes"] != float64(2) {
		t.Fatalf("refreshes %v, want 2", info["refreshes"])
	}
}

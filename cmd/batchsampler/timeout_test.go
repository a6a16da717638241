package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/sampler"
)

// A request whose body stops arriving short of its Content-Length is
// answered 408 and dropped after the read timeout, instead of holding the
// connection forever; an upload whose bytes keep coming is not cut, however
// long it takes in all.
func TestServerReadTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	spec := sampler.Spec{Kind: "batchsampler", M: 40, K: 5, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	ts := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 20, Seed: 1}, readTimeout: timeout})
	body := npyBytes(t, mixture(t, 300, 8, 0))
	post := func(t *testing.T, url, path string) net.Conn {
		conn, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprintf(conn, "%s HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-npy\r\nContent-Length: %d\r\n\r\n", path, len(body))
		return conn
	}
	for _, path := range []string{"POST /v1/refresh", "PUT /v1/state"} {
		t.Run("stalled "+path, func(t *testing.T) {
			conn := post(t, ts.url, path)
			conn.Write(body[:len(body)/2]) // and nothing more
			start := time.Now()
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer %v after the body stalled: %v", time.Since(start), err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("status %s, want 408", resp.Status)
			}
			if waited := time.Since(start); waited > 3*time.Second {
				t.Errorf("answered after %v", waited)
			}
		})
	}
	t.Run("slow but steady", func(t *testing.T) {
		// A server of its own with a longer timeout, so that a loaded
		// machine's scheduling delays (hundreds of ms at a load average of
		// 30) do not pass for a stall: 8 pieces 400 ms apart, 3.2 s in all,
		// twice the timeout, each gap 1.1 s short of it.
		const steadyTimeout = 1500 * time.Millisecond
		slow := startServer(t, serveOptions{cfg: jobConfig{Spec: spec, B: 20, Seed: 1}, readTimeout: steadyTimeout})
		conn := post(t, slow.url, "POST /v1/refresh")
		step := (len(body) + 7) / 8
		for i := 0; i < len(body); i += step {
			if _, err := conn.Write(body[i:min(i+step, len(body))]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(400 * time.Millisecond)
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("a steady upload got %s", resp.Status)
		}
	})
	ts.mustOK(t, "GET", "/v1/health", nil)
}

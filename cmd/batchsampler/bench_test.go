package main

// Benchmarks of the service. The graph benchmarks are small by default
// (N = 10,000, d = 128, M = 1000, K = 100); the paper's ImageNet setting is
//
//	BATCHSAMPLER_BENCH_SCALE=imagenet go test -run '^$' -bench 'GraphBuild|Batch4096' -benchtime 1x -timeout 3h ./cmd/batchsampler/
//
// (N = 1,281,167, d = 128, M = 1000, K = 500: about 3.3 GB of heap from
// float32 embeddings, 2.9 GB from float16, GraphBuildFloat16), or any
// size with BATCHSAMPLER_BENCH_N, _D, _M and _K.

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/npy"
	"github.com/batchsampler-go/batchsampler/sampler"
)

// benchSize is the graph benchmarks' setting.
type benchSize struct{ n, d, m, k int }

func benchSetting(tb testing.TB) benchSize {
	s := benchSize{n: 10000, d: 128, m: 1000, k: 100}
	if os.Getenv("BATCHSAMPLER_BENCH_SCALE") == "imagenet" {
		s = benchSize{n: 1281167, d: 128, m: 1000, k: 500}
	}
	for _, v := range []struct {
		env string
		dst *int
	}{{"BATCHSAMPLER_BENCH_N", &s.n}, {"BATCHSAMPLER_BENCH_D", &s.d}, {"BATCHSAMPLER_BENCH_M", &s.m}, {"BATCHSAMPLER_BENCH_K", &s.k}} {
		if e := os.Getenv(v.env); e != "" {
			x, err := strconv.Atoi(e)
			if err != nil || x <= 0 {
				tb.Fatalf("%s=%q: want a positive integer", v.env, e)
			}
			*v.dst = x
		}
	}
	return s
}

// randomEmbeddings is n×d standard normal rows.
func randomEmbeddings(n, d int, seed uint64) sampler.Embeddings {
	r := rand.New(rand.NewPCG(seed, 1))
	e := sampler.Embeddings{N: n, D: d, Data: make([]float32, n*d)}
	for i := range e.Data {
		e.Data[i] = float32(r.NormFloat64())
	}
	return e
}

// heapPeak samples the heap in use every 10 ms until stopped.
type heapPeak struct {
	base uint64 // heap in use before the benchmark's own data (heapInUse)
	peak atomic.Uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

// heapInUse is the heap in use after a collection: what earlier benchmarks
// left (benchGraph, once built, stays), to subtract from a peak.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// startHeapPeak starts sampling; base is heapInUse() taken before the
// benchmark allocated its embeddings.
func startHeapPeak(base uint64) *heapPeak {
	h := &heapPeak{base: base, stop: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > h.peak.Load() {
				h.peak.Store(ms.HeapAlloc)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// done stops sampling and returns the peak heap in use above base.
func (h *heapPeak) done() uint64 {
	close(h.stop)
	h.wg.Wait()
	return h.peak.Load() - min(h.base, h.peak.Load())
}

// maxRSS is the process's peak resident set size in bytes (Linux).
func maxRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Maxrss) * 1024
}

var (
	benchGraphOnce sync.Once
	benchGraph     *sampler.Graph
	benchGraphSize benchSize
)

// BenchmarkGraphBuild is the graph subcommand's build (BuildGraphRows over
// all rows, BatchSampler's first refresh) on random embeddings: wall time
// per build (ns/op, s/op), peak heap in use while building (embeddings
// included; above what the benchmarks run before it left in use) and its
// ratio to the neighbour table, and the process's peak RSS.
func BenchmarkGraphBuild(b *testing.B) {
	s := benchSetting(b)
	base := heapInUse()
	e := randomEmbeddings(s.n, s.d, 1)
	b.Logf("N = %d, d = %d, M = %d, K = %d; neighbour table %.0f MB", s.n, s.d, s.m, s.k, float64(s.n)*float64(s.k)*4/1e6)
	runtime.GC()
	hp := startHeapPeak(base)
	b.ResetTimer()
	t0 := time.Now()
	var g *sampler.GraphRows
	for i := 0; i < b.N; i++ {
		// As `batchsampler graph` does: normalise the embeddings it read in
		// place (idempotent up to rounding: the first pass fixes the rows
		// the later iterations score), then build without a copy.
		if err := sampler.NormalizeRowsInPlace(e); err != nil {
			b.Fatal(err)
		}
		var err error
		g, err = sampler.BuildGraphRowsNormalized(e, sampler.GraphProximity, sampler.GraphOptions{M: s.m, K: s.k, Seed: sampler.BuildSeed(1, 1)}, 0, s.n)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportGraphBuild(b, s, t0, hp)
	benchGraphOnce.Do(func() {
		benchGraph, benchGraphSize = &sampler.Graph{N: g.N, K: g.K, Adj: g.Adj}, s
	})
}

// BenchmarkGraphBuildFloat16 is BenchmarkGraphBuild from float16
// embeddings (the same random rows rounded to float16), kept resident as
// float16 as `batchsampler graph` keeps a float16 .npy
// (sampler.BuildGraphRowsFloat16: 2·N·d bytes of embeddings instead of
// 4·N·d, the rows converted to float32 block by block while scoring). The
// peak heap includes the embeddings; peak/table is its ratio to the N×K
// int32 neighbour table (the target is ≤ 1.2). The process's peak RSS is
// the whole run's: run it alone (-bench 'GraphBuildFloat16$') for the
// build's own.
func BenchmarkGraphBuildFloat16(b *testing.B) {
	s := benchSetting(b)
	base := heapInUse()
	e := randomFloat16Embeddings(s.n, s.d, 1)
	b.Logf("N = %d, d = %d, M = %d, K = %d; neighbour table %.0f MB, float16 embeddings %.0f MB", s.n, s.d, s.m, s.k, float64(s.n)*float64(s.k)*4/1e6, float64(2*len(e.Bits))/1e6)
	runtime.GC()
	hp := startHeapPeak(base)
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := sampler.BuildGraphRowsFloat16(e, sampler.GraphProximity, sampler.GraphOptions{M: s.m, K: s.k, Seed: sampler.BuildSeed(1, 1)}, 0, s.n); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportGraphBuild(b, s, t0, hp)
}

// reportGraphBuild reports a graph build benchmark's wall time per build,
// peak heap in use (and its ratio to the neighbour table) and peak RSS.
func reportGraphBuild(b *testing.B, s benchSize, t0 time.Time, hp *heapPeak) {
	peak := float64(hp.done())
	b.ReportMetric(time.Since(t0).Seconds()/float64(b.N), "s/op")
	b.ReportMetric(peak/1e6, "peak-heap-MB")
	b.ReportMetric(peak/(float64(s.n)*float64(s.k)*4), "peak/table")
	b.ReportMetric(maxRSS()/1e6, "maxrss-MB")
}

// randomFloat16Embeddings is randomEmbeddings(n, d, seed) rounded to
// float16 (generated row by row: the float32 rows are never held).
func randomFloat16Embeddings(n, d int, seed uint64) sampler.Float16Embeddings {
	r := rand.New(rand.NewPCG(seed, 1))
	e := sampler.Float16Embeddings{N: n, D: d, Bits: make([]uint16, n*d)}
	for i := range e.Bits {
		e.Bits[i] = npy.Float64ToFloat16(float64(float32(r.NormFloat64())))
	}
	return e
}

// graphForBench returns the benchmark-size graph (built once).
func graphForBench(b *testing.B) *sampler.Graph {
	s := benchSetting(b)
	benchGraphOnce.Do(func() {
		e := randomEmbeddings(s.n, s.d, 1)
		g, err := sampler.BuildGraphRows(e, sampler.GraphProximity, sampler.GraphOptions{M: s.m, K: s.k, Seed: sampler.BuildSeed(1, 1)}, 0, s.n)
		if err != nil {
			b.Fatal(err)
		}
		benchGraph, benchGraphSize = &sampler.Graph{N: g.N, K: g.K, Adj: g.Adj}, s
	})
	if benchGraphSize != s {
		b.Fatal("benchmark size changed")
	}
	return benchGraph
}

// BenchmarkBatch4096 is one RWR batch of 4,096 (α = 0.2) on the
// benchmark-size graph, through BatchSampler.Next.
func BenchmarkBatch4096(b *testing.B) {
	g := graphForBench(b)
	const bsz = 4096
	if g.N < bsz {
		b.Skipf("N = %d < B = %d", g.N, bsz)
	}
	s, err := sampler.NewBatchSampler(sampler.Config{BatchSize: bsz, M: g.K, K: g.K, Alpha: sampler.Schedule{Start: 0.2, Kind: sampler.ScheduleConstant}}, g.N, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.SetGraph(g); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(s.Next()) < bsz {
			b.Fatal("short batch")
		}
	}
}

// benchServer starts a server for the round-trip benchmarks with n×d
// embeddings uploaded.
func benchServer(b *testing.B, cfg jobConfig, n, d int) *testServer {
	ts := startServer(b, serveOptions{cfg: cfg, keep: 1 << 20, maxBody: 1 << 30})
	ts.mustOK(b, "POST", "/v1/refresh", npyBytes(b, randomEmbeddings(n, d, 2)))
	return ts
}

// roundTrip GETs one batch over a kept-alive connection and decodes it.
func roundTrip(b *testing.B, c *http.Client, url string, buf *bytes.Buffer) int {
	resp, err := c.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	buf.Reset()
	_, err = io.Copy(buf, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %v %s", url, resp.StatusCode, err, buf.Bytes())
	}
	return (buf.Len() - 128) / 8
}

// BenchmarkServerRoundTrip256 is one GET /v1/batch of a new step (B = 256,
// the walk included) over loopback, N = 10,000 (K = 100 graph), with Go's
// HTTP client on a kept-alive connection. Target: ≤ 200 µs.
func BenchmarkServerRoundTrip256(b *testing.B) {
	benchRoundTrip(b, false)
}

// BenchmarkServerRoundTrip256Kept asks for an already generated step (a
// retry, or another rank): HTTP and encoding only.
func BenchmarkServerRoundTrip256Kept(b *testing.B) {
	benchRoundTrip(b, true)
}

func benchRoundTrip(b *testing.B, kept bool) {
	spec := sampler.Spec{Kind: "batchsampler", M: 1000, K: 100, Alpha: sampler.AlphaSchedule{Start: 0.2, End: 0.2, Constant: true}}
	ts := benchServer(b, jobConfig{Spec: spec, B: 256, Seed: 1}, 10000, 32)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
	var buf bytes.Buffer
	roundTrip(b, c, ts.url+"/v1/batch?step=0", &buf)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step := i + 1
		if kept {
			step = 0
		}
		if n := roundTrip(b, c, ts.url+"/v1/batch?step="+strconv.Itoa(step), &buf); n != 256 {
			b.Fatalf("batch of %d", n)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/batch")
}

// BenchmarkRefreshUpload50k is one POST /v1/refresh of 50,000 × 128
// float32 embeddings (25.6 MB) over loopback: transfer, .npy parsing and
// checks (the sampler has refresh_every 0, so the upload waits as pending
// and builds nothing).
func BenchmarkRefreshUpload50k(b *testing.B) {
	const n, d = 50000, 128
	ts := benchServer(b, jobConfig{Spec: sampler.Spec{Kind: "knn"}, B: 256, Seed: 1}, n, d)
	ts.batch(b, 0, 0, 1)
	body := npyBytes(b, randomEmbeddings(n, d, 3))
	c := &http.Client{Timeout: time.Minute}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := c.Post(ts.url+"/v1/refresh", "application/x-npy", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %s", resp.StatusCode, msg)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/upload")
}

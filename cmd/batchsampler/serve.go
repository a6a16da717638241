package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// server serves one session over HTTP.
type server struct {
	mu        sync.Mutex
	s         *session
	maxBody   int64
	statePath string
	log       *log.Logger
	started   time.Time
	token     string // the shared secret ("" : none); never logged or saved
	// readTimeout is the longest wait for the next bytes of a request's
	// headers or body (serveOptions.readTimeout).
	readTimeout time.Duration
}

// defaultReadTimeout is serve's -read-timeout.
const defaultReadTimeout = time.Minute

// stallBody is a request body whose every Read must bring bytes within d:
// it moves the connection's read deadline d ahead before each Read, so an
// upload of any length goes through as long as its bytes keep coming, and
// one that stalls fails with a timeout (answered 408 by bodyError).
type stallBody struct {
	io.ReadCloser
	rc *http.ResponseController
	d  time.Duration
}

func (b *stallBody) Read(p []byte) (int, error) {
	b.rc.SetReadDeadline(time.Now().Add(b.d))
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: no bytes of the body for %v", errBodyStalled, b.d)
	case err == io.EOF:
		// The whole body is in: no deadline while the handler works (a
		// graph build may take minutes), else the server's watch for a
		// closed connection would time out and cancel the request.
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// errBodyStalled is the error of a body that stopped arriving.
var errBodyStalled = errors.New("the request body stopped arriving")

// withReadTimeout gives every request body a stallBody.
func (sv *server) withReadTimeout(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &stallBody{ReadCloser: r.Body, rc: http.NewResponseController(w), d: sv.readTimeout}
		}
		h.ServeHTTP(w, r)
	})
}

// routes returns the handler of the endpoints listed in the package doc.
func (sv *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", sv.health)
	mux.HandleFunc("GET /v1/info", sv.info)
	mux.HandleFunc("POST /v1/refresh", sv.refresh)
	mux.HandleFunc("DELETE /v1/refresh", sv.discardRefresh)
	mux.HandleFunc("GET /v1/batch", sv.batch)
	mux.HandleFunc("GET /v1/state", sv.getState)
	mux.HandleFunc("PUT /v1/state", sv.putState)
	mux.HandleFunc("POST /v1/state/save", sv.saveState)
	allowed := map[string]string{
		"/v1/health": "GET", "/v1/info": "GET", "/v1/refresh": "POST, DELETE", "/v1/batch": "GET",
		"/v1/state": "GET, PUT", "/v1/state/save": "POST",
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if a, ok := allowed[r.URL.Path]; ok {
			w.Header().Set("Allow", a)
			writeError(w, newAPIError(http.StatusMethodNotAllowed, "bad_method", "%s %s: the method must be %s", r.Method, r.URL.Path, a))
			return
		}
		writeError(w, newAPIError(http.StatusNotFound, "not_found", "no endpoint %s %s: see GET /v1/info, /v1/health, /v1/batch, POST|DELETE /v1/refresh, GET|PUT /v1/state, POST /v1/state/save", r.Method, r.URL.Path))
	})
	if sv.token != "" {
		return newTokenAuth(sv.token, mux, sv.log.Printf)
	}
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers {"error": message, "code": code, ...}.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{status: http.StatusInternalServerError, code: "internal", msg: err.Error()}
	}
	body := map[string]any{"error": ae.msg, "code": ae.code}
	for k, v := range ae.extra {
		body[k] = v
	}
	writeJSON(w, ae.status, body)
}

// queryInt reads an integer query parameter (def when absent).
func queryInt(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return 0, newAPIError(http.StatusBadRequest, "bad_query", "query parameter %s=%q: want an integer", name, v)
	}
	return i, nil
}

func (sv *server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "uptime_seconds": time.Since(sv.started).Seconds()})
}

func (sv *server) info(w http.ResponseWriter, r *http.Request) {
	sv.mu.Lock()
	m := sv.s.info()
	sv.mu.Unlock()
	m["max_body"] = sv.maxBody
	m["state_file"] = sv.statePath
	writeJSON(w, http.StatusOK, m)
}

// bodyError turns a failed read of a request body into an apiError.
func (sv *server) bodyError(what string, err error) error {
	var ae *apiError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, errBodyStalled):
		return newAPIError(http.StatusRequestTimeout, "read_timeout", "%s: %v (-read-timeout); the upload is dropped, send it again", what, err)
	case errors.As(err, &mbe), errors.Is(err, npy.ErrLimit):
		return newAPIError(http.StatusRequestEntityTooLarge, "too_large", "%s: the body exceeds the limit of %d bytes (-max-body): %v", what, sv.maxBody, err)
	}
	return newAPIError(http.StatusBadRequest, "bad_npy", "%s: %v", what, err)
}

func (sv *server) refresh(w http.ResponseWriter, r *http.Request) {
	rank, world, err := rankOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	n, err := queryInt(r, "n", 0)
	if err != nil {
		writeError(w, err)
		return
	}
	if r.ContentLength > sv.maxBody {
		writeError(w, newAPIError(http.StatusRequestEntityTooLarge, "too_large", "refresh: the body of %d bytes exceeds the limit of %d bytes (-max-body)", r.ContentLength, sv.maxBody))
		return
	}
	body := http.MaxBytesReader(w, r.Body, sv.maxBody)
	p, err := readPayload(bufio.NewReaderSize(body, 1<<20), sv.maxBody, r.ContentLength)
	if err != nil {
		err = sv.bodyError("refresh", err)
		sv.log.Printf("POST /v1/refresh rank %d/%d: %v", rank, world, err)
		writeError(w, err)
		return
	}
	sv.mu.Lock()
	res, err := sv.s.submit(p, rank, world, n)
	sv.mu.Unlock()
	if err != nil {
		sv.log.Printf("POST /v1/refresh rank %d/%d: %v", rank, world, err)
		writeError(w, err)
		return
	}
	if res.RefreshedStep != nil {
		sv.log.Printf("refresh before step %d from %d×%d %s (%s) in %.2fs", *res.RefreshedStep, p.rows*max(world, 1), p.cols, p.kind(), p.from, res.BuildSeconds)
	}
	writeJSON(w, http.StatusOK, res)
}

// discardRefresh drops an unfinished sharded upload (DELETE /v1/refresh):
// the way out of a world_mismatch left by a job that is gone.
func (sv *server) discardRefresh(w http.ResponseWriter, r *http.Request) {
	sv.mu.Lock()
	world, received := sv.s.discardShards()
	sv.mu.Unlock()
	if received == nil {
		received = []int{}
	} else {
		sv.log.Printf("DELETE /v1/refresh: discarded the shards of ranks %v of world %d", received, world)
	}
	writeJSON(w, http.StatusOK, map[string]any{"discarded_ranks": received, "world": world})
}

// rankOf reads the query parameters rank (default 0) and world (default
// 1) and checks 0 ≤ rank < world.
func rankOf(r *http.Request) (rank, world int, err error) {
	if rank, err = queryInt(r, "rank", 0); err != nil {
		return 0, 0, err
	}
	if world, err = queryInt(r, "world", 1); err != nil {
		return 0, 0, err
	}
	if world < 1 || rank < 0 || rank >= world {
		return 0, 0, newAPIError(http.StatusBadRequest, "bad_rank", "rank %d is outside world size %d: want 0 ≤ rank < world", rank, world)
	}
	return rank, world, nil
}

// batchSlice is rank's contiguous part of a global batch of length l:
// [⌊r·l/w⌋, ⌊(r+1)·l/w⌋), so the ranks' parts are disjoint and cover it.
func batchSlice(l, rank, world int) (int, int) { return shardRows(l, rank, world) }

func (sv *server) batch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("step") == "" {
		writeError(w, newAPIError(http.StatusBadRequest, "bad_query", "query parameter step is required: GET /v1/batch?step=S[&rank=R&world=W]"))
		return
	}
	step, err := queryInt(r, "step", 0)
	if err != nil {
		writeError(w, err)
		return
	}
	rank, world, err := rankOf(r)
	if err != nil {
		writeError(w, err)
		return
	}
	sv.mu.Lock()
	idx, err := sv.s.batch(step)
	var epoch int
	if err == nil {
		epoch = sv.s.epochOf(step)
	}
	sv.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	lo, hi := batchSlice(len(idx), rank, world)
	part := idx[lo:hi]
	buf := npy.AppendHeader(make([]byte, 0, 128+8*len(part)), npy.Int64, []int{len(part)})
	for _, v := range part {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-npy")
	h.Set("Content-Length", strconv.Itoa(len(buf)))
	h.Set("X-Batchsampler-Step", strconv.Itoa(step))
	h.Set("X-Batchsampler-Epoch", strconv.Itoa(epoch))
	h.Set("X-Batchsampler-Global-Size", strconv.Itoa(len(idx)))
	w.Write(buf)
}

func (sv *server) getState(w http.ResponseWriter, r *http.Request) {
	sv.mu.Lock()
	b, err := sv.s.marshal()
	sv.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// checkRestored refuses a state of another job configuration.
func checkRestored(cur, restored *session, where string) error {
	all := map[string]bool{}
	for _, f := range cur.cfg.describe() {
		all[f.flag] = true
	}
	if err := mismatch(cur.cfg, restored.cfg, all, where); err != nil {
		return err
	}
	if cur.n != 0 && restored.n != 0 && cur.n != restored.n {
		return fmt.Errorf("%s is for N = %d, this server has N = %d", where, restored.n, cur.n)
	}
	return nil
}

func (sv *server) putState(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > sv.maxBody {
		writeError(w, newAPIError(http.StatusRequestEntityTooLarge, "too_large", "state: the body of %d bytes exceeds the limit of %d bytes (-max-body)", r.ContentLength, sv.maxBody))
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, sv.maxBody))
	if err != nil {
		writeError(w, sv.bodyError("state", err))
		return
	}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	ns, err := restoreSession(b, sv.s.keep, sv.s.reuse)
	if err == nil {
		err = checkRestored(sv.s, ns, "the uploaded state")
	}
	if err != nil {
		writeError(w, newAPIError(http.StatusBadRequest, "bad_state", "%v", err))
		return
	}
	sv.s = ns
	writeJSON(w, http.StatusOK, map[string]any{"restored": true, "next_step": ns.next, "n": ns.n})
}

// save writes the state file (the caller holds the lock).
func (sv *server) save() (int, error) {
	if sv.statePath == "" {
		return 0, newAPIError(http.StatusBadRequest, "no_state_file", "the server was started without -state: nowhere to save (GET /v1/state returns the state instead)")
	}
	b, err := sv.s.marshal()
	if err != nil {
		return 0, err
	}
	if err := writeFileAtomic(sv.statePath, b); err != nil {
		return 0, fmt.Errorf("save state to %s: %w", sv.statePath, err)
	}
	return len(b), nil
}

func (sv *server) saveState(w http.ResponseWriter, r *http.Request) {
	sv.mu.Lock()
	n, err := sv.save()
	next := sv.s.next
	sv.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": sv.statePath, "bytes": n, "next_step": next})
}

// parseBytes reads a size: an integer with an optional KiB, MiB, GiB, KB,
// MB or GB suffix.
func parseBytes(s string) (int64, error) {
	given := s
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q: want a positive size such as 2GiB or 1048576 (units KiB, MiB, GiB, KB, MB, GB, B)", given)
	}
	return v * mult, nil
}

// serveOptions are the serve subcommand's settings.
type serveOptions struct {
	addr      string
	cfg       jobConfig
	set       map[string]bool
	n         int
	keep      int
	maxBody   int64
	statePath string
	reuse     bool
	quiet     bool
	token     string
	// readTimeout drops a request whose headers or body bytes stop
	// arriving for that long (0: defaultReadTimeout).
	readTimeout time.Duration
}

// newServer builds the server: a fresh session, or the state file's when
// it exists.
func newServer(o serveOptions, logw io.Writer) (*server, error) {
	if o.quiet {
		logw = io.Discard
	}
	if o.readTimeout <= 0 {
		o.readTimeout = defaultReadTimeout
	}
	sv := &server{maxBody: o.maxBody, statePath: o.statePath, log: log.New(logw, "batchsampler serve: ", log.LstdFlags), started: time.Now(), token: o.token, readTimeout: o.readTimeout}
	sv.s = newSession(o.cfg, o.keep, o.reuse)
	if o.statePath != "" {
		b, err := os.ReadFile(o.statePath)
		switch {
		case err == nil:
			ns, err := restoreSession(b, o.keep, o.reuse)
			if err != nil {
				return nil, fmt.Errorf("-state %s: %w", o.statePath, err)
			}
			if err := mismatch(o.cfg, ns.cfg, o.set, "-state "+o.statePath); err != nil {
				return nil, err
			}
			sv.s = ns
			sv.log.Printf("resumed from %s: N = %d, next step %d", o.statePath, ns.n, ns.next)
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("-state: %w", err)
		}
	}
	if o.n > 0 {
		if sv.s.n == 0 {
			if err := sv.s.init(o.n); err != nil {
				return nil, fmt.Errorf("-n: %w", err)
			}
		} else if sv.s.n != o.n {
			return nil, fmt.Errorf("-n %d, the state file has N = %d", o.n, sv.s.n)
		}
	}
	if sv.s.n == 0 && o.cfg.Spec.Kind == "uniform" {
		return nil, errors.New("kind uniform reads no embeddings: give -n")
	}
	return sv, nil
}

// serve runs the server on ln until ctx is done, then shuts down (letting
// requests in flight finish for up to 10 s) and saves the state file.
func (sv *server) serve(ctx context.Context, ln net.Listener) error {
	// The headers must come within the read timeout, the body's bytes
	// without a pause as long (withReadTimeout); an idle keep-alive
	// connection is closed after twice that.
	hs := &http.Server{Handler: sv.withReadTimeout(sv.routes()), ReadHeaderTimeout: sv.readTimeout, IdleTimeout: 2 * sv.readTimeout, ErrorLog: sv.log}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	if sv.statePath != "" {
		sv.mu.Lock()
		n, serr := sv.save()
		sv.mu.Unlock()
		if serr != nil {
			return serr
		}
		sv.log.Printf("state saved to %s (%d bytes)", sv.statePath, n)
	}
	return err
}

// cmdServe is the serve subcommand. ready, when not nil, is called with the
// listening address (tests); the address is also printed to stdout.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr string)) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := addSamplerFlags(fs)
	addr := fs.String("addr", "127.0.0.1:8470", "listen `address` (host:port; port 0 picks a free one); an address other than loopback needs -token-file or $"+tokenEnv)
	tokenFile := fs.String("token-file", "", "`file` holding the shared secret (at least 16 characters) every request must send as Authorization: Bearer <secret> (GET /v1/health excepted); default $"+tokenEnv+"; required when -addr is not loopback")
	n := fs.Int("n", 0, "N, the number of instances, when known before the first upload (required for kind uniform)")
	keep := fs.Int("keep", 1024, "batches of the last `steps` kept, so that a repeated request is answered identically")
	maxBody := fs.String("max-body", "4GiB", "largest request body (embeddings or state upload)")
	statePath := fs.String("state", "", "state `file`: loaded at start when it exists, written by POST /v1/state/save and at shutdown (SIGINT, SIGTERM)")
	stale := fs.String("stale", "wait", "when a refresh is due and nothing new was uploaded: wait (answer 409 refresh_due) or reuse (the previous upload)")
	quiet := fs.Bool("quiet", false, "no log lines on stderr")
	readTimeout := fs.Duration("read-timeout", defaultReadTimeout, "drop a request (408) whose headers or body bytes stop arriving for this `long`; an upload may take longer in all as long as its bytes keep coming")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: batchsampler serve [sampler flags] [-addr 127.0.0.1:8470] [-token-file F] [-n N] [-keep 1024] [-max-body 4GiB] [-read-timeout 1m] [-state S.bin] [-stale wait|reuse]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected arguments %q", fs.Args())
	}
	cfg, err := sf.config()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	mb, err := parseBytes(*maxBody)
	if err != nil {
		return fmt.Errorf("serve: -max-body %w", err)
	}
	if *keep < 1 {
		return fmt.Errorf("serve: -keep %d: want ≥ 1", *keep)
	}
	if *readTimeout <= 0 {
		return fmt.Errorf("serve: -read-timeout %v: want a positive duration such as 1m", *readTimeout)
	}
	if *stale != "wait" && *stale != "reuse" {
		return fmt.Errorf("serve: -stale %q: want wait or reuse", *stale)
	}
	token, tokenSource, err := loadToken(*tokenFile, os.Getenv)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	sv, err := newServer(serveOptions{addr: *addr, cfg: cfg, set: setFlags(fs), n: *n, keep: *keep, maxBody: mb,
		statePath: *statePath, reuse: *stale == "reuse", quiet: *quiet, token: token, readTimeout: *readTimeout}, stderr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := checkExposure(ln.Addr(), token); err != nil {
		ln.Close()
		return fmt.Errorf("serve: %w", err)
	}
	if token != "" {
		sv.log.Printf("requests must carry the shared secret of %s (Authorization: Bearer)", tokenSource)
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	if f, ok := stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	if ready != nil {
		ready(ln.Addr().String())
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sv.serve(ctx, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

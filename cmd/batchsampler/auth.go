package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

// tokenEnv is the environment variable that holds the shared secret when
// -token-file is not given (the Python client reads the same variable).
const tokenEnv = "BATCHSAMPLER_TOKEN"

// minTokenLen is the shortest secret serve accepts.
const minTokenLen = 16

// tokenHint tells how to make a secret.
const tokenHint = "make one with: head -c 32 /dev/urandom | base64 > token; chmod 600 token"

// loadToken returns the shared secret: the content of file (surrounding
// white space removed) when file is not empty, else $BATCHSAMPLER_TOKEN
// (getenv), else "". source names where it came from, for messages (never
// the secret itself).
func loadToken(file string, getenv func(string) string) (token, source string, err error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("-token-file: %w", err)
		}
		token, source = strings.TrimSpace(string(b)), "-token-file "+file
	} else {
		token, source = strings.TrimSpace(getenv(tokenEnv)), "$"+tokenEnv
		if token == "" {
			return "", "", nil
		}
	}
	if len(token) < minTokenLen {
		return "", "", fmt.Errorf("%s holds a secret of %d characters: want at least %d (%s)", source, len(token), minTokenLen, tokenHint)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return "", "", fmt.Errorf("%s: the secret contains white space: want one word (%s)", source, tokenHint)
	}
	return token, source, nil
}

// checkExposure refuses to serve a non-loopback address without a secret:
// every rank of a multi-node job could reach it, and so could anyone else
// on the network.
func checkExposure(addr net.Addr, token string) error {
	if token != "" {
		return nil
	}
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-addr %s is not a loopback address, so other machines can reach it: give a shared secret with -token-file FILE or $%s (clients send it as Authorization: Bearer <secret>; %s)", addr, tokenEnv, tokenHint)
}

// tokenAuth checks Authorization: Bearer <secret> on every request except
// GET /v1/health (liveness probes). The secret is kept as its SHA-256, and
// the SHA-256 of what a request sends is compared with it in constant time
// (subtle.ConstantTimeCompare), so neither the content nor the length of
// the secret leaks through timing.
type tokenAuth struct {
	sum  [sha256.Size]byte
	next http.Handler
	log  func(format string, a ...any)
}

func newTokenAuth(token string, next http.Handler, logf func(string, ...any)) *tokenAuth {
	return &tokenAuth{sum: sha256.Sum256([]byte(token)), next: next, log: logf}
}

// ok reports whether the request carries the secret.
func (a *tokenAuth) ok(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, cred, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		cred = "" // hashed all the same: a missing header takes as long (and "" is never the secret)
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
	return subtle.ConstantTimeCompare(got[:], a.sum[:]) == 1
}

func (a *tokenAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/health" {
		a.next.ServeHTTP(w, r)
		return
	}
	if !a.ok(r) {
		what := "no Authorization: Bearer header"
		if r.Header.Get("Authorization") != "" {
			what = "a wrong token"
		}
		a.log("%s %s from %s: 401, %s", r.Method, r.URL.Path, r.RemoteAddr, what)
		w.Header().Set("WWW-Authenticate", `Bearer realm="batchsampler"`)
		writeError(w, newAPIError(http.StatusUnauthorized, "unauthorized", "%s %s: %s: this server requires its shared secret as Authorization: Bearer <secret> (the client reads $%s)", r.Method, r.URL.Path, what, tokenEnv))
		return
	}
	a.next.ServeHTTP(w, r)
}

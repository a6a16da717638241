package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-config", "internal/viz/testdata/small.yaml", "-out", dir}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("printed %d files, want 8:\n%s", len(lines), out.String())
	}
	for _, l := range lines {
		if filepath.Dir(l) != dir {
			t.Errorf("printed %s, not in -out %s", l, dir)
		}
		if st, err := os.Stat(l); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", l, err)
		}
	}
}

func TestRunErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("sampler: {m: 60, kk: 8}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", bad}, "sampler.kk"},
		{[]string{"-config", "nonexistent.yaml"}, "nonexistent.yaml"},
		{[]string{"-nope"}, "nope"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%v) = %v, want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestHelpIsNotAnError: -h prints the usage and succeeds.
func TestHelpIsNotAnError(t *testing.T) {
	if err := run(context.Background(), []string{"-h"}, io.Discard); err != nil {
		t.Errorf("-h: %v", err)
	}
}

// TestRunExportAndServe: -export writes the page's folder and says how to
// open it; -serve serves it on the address given until its context ends;
// the PNG flags are refused beside them.
func TestRunExportAndServe(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-export", dir}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wrote the page into "+dir) || !strings.Contains(out.String(), "file://") {
		t.Errorf("-export printed %q", out.String())
	}
	for _, f := range []string{"index.html", "app.js", "main.wasm", "main.wasm.js", "wasm_exec.js", "build.js"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("-export: %s missing or empty (%v)", f, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-serve", "127.0.0.1:0"}, pw); pw.Close() }()
	sc := bufio.NewScanner(pr)
	url := ""
	for sc.Scan() {
		if m := regexp.MustCompile(`at (http://\S+/)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if url == "" {
		cancel()
		t.Fatalf("-serve printed no address (%v)", <-done)
	}
	resp, err := http.Get(url + "index.html")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "BatchSampler, step by step") {
		t.Errorf("GET %sindex.html: %d, %d bytes", url, resp.StatusCode, len(body))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("-serve after its context ended: %v", err)
	}

	for _, args := range [][]string{{"-serve", "127.0.0.1:0", "-config", "x.yaml"}, {"-export", dir, "-out", dir}} {
		if err := run(context.Background(), args, io.Discard); err == nil || !strings.Contains(err.Error(), "PNG") {
			t.Errorf("run(%v) = %v, want an error saying -config/-out are for the PNG pictures", args, err)
		}
	}
}

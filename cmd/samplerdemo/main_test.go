package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
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

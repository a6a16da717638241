package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// Errors in the sampler flags name the flags as typed (-m, -walk,
// -graph-kind), not the keys of a config file (sampler.m), and serve on
// its own defaults says in one line which flag it needs.
func TestSamplerFlagErrorsNameTheFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.npy")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"serve on its defaults", []string{"serve", "-addr", "127.0.0.1:0"}, []string{"-alpha 0.2:0.05 (the default)", "-epochs", "-total-steps"}},
		{"batches on the default alpha", []string{"batches", "-n", "100", "-out", out}, []string{"-alpha 0.2:0.05 (the default)", "-epochs", "-total-steps"}},
		{"given linear alpha", []string{"serve", "-addr", "127.0.0.1:0", "-alpha", "0.5:0.1"}, []string{"-alpha 0.5:0.1 decays", "-epochs"}},
		{"m below k", []string{"serve", "-addr", "127.0.0.1:0", "-m", "5", "-k", "10", "-total-steps", "9"}, []string{"-m: must be >= -k = 10, got 5"}},
		{"walk", []string{"batches", "-n", "100", "-walk", "jump", "-alpha", "0.2", "-out", out}, []string{`-walk: "jump" is not allowed`}},
		{"graph kind", []string{"batches", "-n", "100", "-graph-kind", "ring", "-alpha", "0.2", "-out", out}, []string{`-graph-kind: "ring" is not allowed`}},
		{"alpha range", []string{"batches", "-n", "100", "-alpha", "1.5", "-out", out}, []string{"-alpha (start): must be in [0, 1], got 1.5"}},
		{"refresh", []string{"batches", "-n", "100", "-alpha", "0.2", "-refresh-every", "-1", "-out", out}, []string{"-refresh-every: must be >= 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errb strings.Builder
			err := run(context.Background(), tc.args, io.Discard, &errb)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "sampler.") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming flags, not config keys", msg)
			}
		})
	}
}

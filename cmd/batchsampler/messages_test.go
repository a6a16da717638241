package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/internal/npy"
)

// An integer array given as embeddings is named for what it is (an
// int32 array, read as a neighbour table) with what was expected; a bad
// -max-body is quoted as typed.
func TestMessagesSayWhatTheInputIs(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := npy.WriteInt32s(&b, []int{2, 2}, []int32{0, -2, 1, 0}); err != nil {
		t.Fatal(err)
	}
	neg := writeTemp(t, dir, "neg.npy", b.Bytes())
	out := filepath.Join(dir, "o.npy")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"int32 as -emb", []string{"batches", "-emb", neg, "-b", "2", "-alpha", "0.2", "-out", out},
			[]string{"-emb " + neg, "int32", "float16, float32 or float64 embeddings", "-graph"}},
		{"negative id in -graph", []string{"batches", "-graph", neg, "-m", "2", "-k", "2", "-b", "2", "-alpha", "0.2", "-out", out},
			[]string{neg, "int32 array, read as a neighbour table", "row 0 column 1 is -2", "node ids in [0, N)"}},
		{"-max-body with a unit typo", []string{"serve", "-addr", "127.0.0.1:0", "-alpha", "0.2", "-max-body", "4XB"},
			[]string{`-max-body "4XB"`, "2GiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(context.Background(), tc.args, io.Discard, io.Discard)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

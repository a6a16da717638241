package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cifarArchive packs data/testdata/cifar10 as the official archive does.
func cifarArchive(t *testing.T) []byte {
	t.Helper()
	src := filepath.Join("..", "..", "data", "testdata", "cifar10")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "cifar-10-batches-bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "cifar-10-batches-bin/" + e.Name(), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestDownloadCIFAR(t *testing.T) {
	good := cifarArchive(t)
	h := md5.Sum(good)
	sum := hex.EncodeToString(h[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(good) }))
	defer srv.Close()
	for _, tc := range []struct {
		name, md5, wantErr string
	}{
		{"good archive", sum, ""},
		{"md5 mismatch", strings.Repeat("0", 32), "md5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errOut bytes.Buffer
			err := run(context.Background(), []string{"-dataset", "cifar-10", "-dir", dir, "-url", srv.URL + "/c.tar.gz", "-md5", tc.md5}, &out, &errOut)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error mentioning %q, got %v", tc.wantErr, err)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 0 {
					t.Errorf("a failed download left %d entries in %s", len(ents), dir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "training images 3x32x32") || !strings.Contains(out.String(), "md5 verified: true") {
				t.Errorf("output:\n%s", out.String())
			}
			if _, err := os.Stat(filepath.Join(dir, "cifar-10-batches-bin", "data_batch_1.bin")); err != nil {
				t.Error(err)
			}
		})
	}
}

package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toyZip packs ../../data/testdata/tu/TOY in the TU layout (a TOY/ folder).
func toyZip(t *testing.T) []byte {
	t.Helper()
	src := filepath.Join("..", "..", "data", "testdata", "tu", "TOY")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create("TOY/" + e.Name())
		w.Write(b)
	}
	zw.Close()
	return buf.Bytes()
}

func TestRun(t *testing.T) {
	good := toyZip(t)
	h := sha256.Sum256(good)
	sum := hex.EncodeToString(h[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/TOY.zip" {
			http.NotFound(w, r)
			return
		}
		w.Write(good)
	}))
	defer srv.Close()
	url := srv.URL + "/TOY.zip"

	tests := []struct {
		name       string
		args       []string
		wantErr    string
		wantOut    []string
		wantFiles  bool
		wantZipped bool
	}{
		{"pinned", []string{"-dataset", "TOY", "-url", url, "-sha256", sum}, "",
			[]string{"sha256 " + sum, "verified against -sha256", "4 graphs, 11 nodes, 9 undirected edges, 3 classes [-1 2 5]"}, true, false},
		{"unverified, keep zip", []string{"-dataset", "TOY", "-url", url, "-sha256", "any", "-keep-zip"}, "",
			[]string{"not verified; pin it with -sha256 " + sum}, true, true},
		{"no checksum given with -url", []string{"-dataset", "TOY", "-url", url}, "",
			[]string{"not verified"}, true, false},
		{"wrong checksum", []string{"-dataset", "TOY", "-url", url, "-sha256", strings.Repeat("0", 64)}, "sha256 " + sum + ": expected " + strings.Repeat("0", 64), nil, false, false},
		{"missing dataset", []string{"-url", url}, "-dataset \"\"", nil, false, false},
		{"path in dataset", []string{"-dataset", "../TOY", "-url", url}, "expected a TU dataset name", nil, false, false},
		{"zip without NAME folder", []string{"-dataset", "OTHER", "-url", url, "-sha256", sum}, "OTHER/OTHER_A.txt", nil, true, false},
		{"not found", []string{"-dataset", "TOY", "-url", srv.URL + "/nope.zip"}, "404", nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tu")
			var out, errOut bytes.Buffer
			err := run(context.Background(), append(tt.args, "-dir", dir), &out, &errOut)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("error %v\n%s", err, out.String())
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("output %q does not contain %q", out.String(), w)
				}
			}
			_, errA := os.Stat(filepath.Join(dir, "TOY", "TOY_A.txt"))
			if (errA == nil) != tt.wantFiles {
				t.Fatalf("TOY/TOY_A.txt present = %v, want %v", errA == nil, tt.wantFiles)
			}
			_, errZ := os.Stat(filepath.Join(dir, "TOY.zip"))
			if (errZ == nil) != tt.wantZipped {
				t.Fatalf("TOY.zip present = %v, want %v", errZ == nil, tt.wantZipped)
			}
			if tt.wantErr != "" && !tt.wantFiles {
				// A failed download leaves no partial file behind.
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && strings.Contains(p, ".part") {
						t.Errorf("partial file %s left", p)
					}
					return nil
				})
			}
		})
	}
}

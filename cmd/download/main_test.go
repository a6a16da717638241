package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batchsampler-go/batchsampler/data"
)

// toyZip packs ../../data/testdata/tu/TOY in the TU layout (a TOY/ folder).
func toyZip(t *testing.T) []byte {
	t.Helper()
	src := filepath.Join("..", "..", "data", "testdata", "tu", "TOY")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["TOY/"+e.Name()] = b
	}
	return zipFiles(t, files)
}

func zipFiles(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// serve answers path with body; "/short"+path declares the length of body
// but sends only half of it, "/half"+path sends the first half as if it
// were the whole file.
func serve(t *testing.T, path string, body []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case path:
			w.Write(body)
		case "/short" + path:
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:len(body)/2])
		case "/half" + path:
			w.Write(body[:len(body)/2])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// listTree returns the paths under dir, relative and slash-separated (nil
// when dir does not exist).
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out
}

func TestRun(t *testing.T) {
	good := toyZip(t)
	sum := sha256Hex(good)
	srv := serve(t, "/TOY.zip", good)
	url := srv.URL + "/TOY.zip"
	zeros := strings.Repeat("0", 64)

	tests := []struct {
		name       string
		args       []string
		wantErr    []string
		wantOut    []string
		wantZipped bool
	}{
		{"pinned", []string{"-dataset", "TOY", "-url", url, "-sha256", sum}, nil,
			[]string{"sha256 " + sum + "  " + url, "verified against -sha256", "tu/TOY: 4 graphs, 11 nodes, 9 undirected edges, 3 classes [-1 2 5]",
				"TOY is in ROOT/tu/TOY; train with: go run ./cmd/train -config configs/graphcl-mutag.yaml -set name=graphcl-toy -set data.name=TOY -set data.path=tu/TOY -set data.root=ROOT\n"}, false},
		{"unverified, keep zip", []string{"-dataset", "TOY", "-url", url, "-sha256", "any", "-keep-zip"}, nil,
			[]string{"not verified; pin it with -sha256 " + sum, "kept the zip as ROOT/tu/TOY.zip"}, true},
		{"no checksum given with -url", []string{"-dataset", "TOY", "-url", url}, nil, []string{"not verified"}, false},
		{"wrong checksum", []string{"-dataset", "TOY", "-url", url, "-sha256", zeros},
			[]string{"download " + url + ": checksum mismatch: expected sha256 " + zeros + ", received sha256 " + sum}, nil, false},
		{"not found", []string{"-dataset", "TOY", "-url", srv.URL + "/nope.zip"}, []string{srv.URL + "/nope.zip", "404"}, nil, false},
		{"truncated transfer", []string{"-dataset", "TOY", "-url", srv.URL + "/short/TOY.zip"}, []string{srv.URL + "/short/TOY.zip", "unexpected EOF"}, nil, false},
		{"truncated archive", []string{"-dataset", "TOY", "-url", srv.URL + "/half/TOY.zip", "-sha256", "any"}, []string{"TOY.zip", "zip"}, nil, false},
		{"zip without NAME folder", []string{"-dataset", "OTHER", "-url", url, "-sha256", sum}, []string{url, "OTHER/OTHER_A.txt", "is it the zip of OTHER?"}, nil, false},
		{"missing dataset", []string{"-url", url}, []string{"-dataset is required", "MUTAG", "cifar-10"}, nil, false},
		{"path in dataset", []string{"-dataset", "../TOY", "-url", url}, []string{"not a dataset name", "MUTAG", "cifar-100"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "new", "root")
			var out, errOut bytes.Buffer
			err := run(context.Background(), append(tt.args, "-root", root), &out, &errOut)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("error %v\n%s", err, out.String())
				}
				for _, w := range tt.wantOut {
					if w = strings.ReplaceAll(w, "ROOT", root); !strings.Contains(out.String(), w) {
						t.Fatalf("output\n%s\ndoes not contain %q", out.String(), w)
					}
				}
				want := []string{"tu", "tu/TOY", "tu/TOY/TOY_A.txt", "tu/TOY/TOY_edge_labels.txt", "tu/TOY/TOY_graph_indicator.txt",
					"tu/TOY/TOY_graph_labels.txt", "tu/TOY/TOY_node_attributes.txt", "tu/TOY/TOY_node_labels.txt"}
				if tt.wantZipped {
					want = append(want, "tu/TOY.zip")
				}
				if got := sortedCopy(listTree(t, root)); !slices.Equal(got, sortedCopy(want)) {
					t.Fatalf("root holds %v, want %v", got, sortedCopy(want))
				}
				if _, err := data.ReadTU(filepath.Join(root, "tu", "TOY"), "TOY"); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; output\n%s", out.String())
			}
			t.Log(err)
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %v, want one containing %q", err, w)
				}
			}
			// A failed download leaves no new directory behind, not even
			// the data root's missing parents.
			if _, err := os.Stat(filepath.Dir(filepath.Dir(root))); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Dir(root)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("failed download left %s (%v): %v", filepath.Dir(root), err, listTree(t, filepath.Dir(root)))
			}
		})
	}
}

// wantFailure checks that a download failed with an error containing every
// string of want and left no root behind.
func wantFailure(t *testing.T, err error, want []string, root string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %v, want one containing %q", err, w)
		}
	}
	if _, err := os.Stat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed download left %s: %v", root, listTree(t, root))
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// A download over an existing dataset replaces it only once the new copy is
// verified; a failed one leaves the existing dataset and root untouched.
func TestRunReplaces(t *testing.T) {
	good := toyZip(t)
	sum := sha256Hex(good)
	srv := serve(t, "/TOY.zip", good)
	root := t.TempDir()
	var out bytes.Buffer
	args := []string{"-dataset", "TOY", "-root", root, "-url", srv.URL + "/TOY.zip", "-sha256", sum}
	if err := run(context.Background(), args, &out, &out); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(root, "tu", "TOY", "stray.txt")
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tu", "TOY", "TOY_A.txt"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listTree(t, root)
	bad := []string{"-dataset", "TOY", "-root", root, "-url", srv.URL + "/TOY.zip", "-sha256", strings.Repeat("a", 64)}
	if err := run(context.Background(), bad, &out, &out); err == nil {
		t.Fatal("no error for a wrong checksum")
	}
	if after := listTree(t, root); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("a failed download changed the root: %v, was %v", after, before)
	}
	if err := run(context.Background(), args, &out, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the previous copy's stray file survived: %v", err)
	}
	if _, err := data.ReadTU(filepath.Join(root, "tu", "TOY"), "TOY"); err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, filepath.Join(root, "tu")); len(got) != 7 {
		t.Fatalf("tu/ holds %v: want TOY/ and its 6 files, no staging directory", got)
	}
}

// -dir is an alias of -root; without either, the default data root is used
// and the printed train command does not set data.root.
func TestRunRootFlags(t *testing.T) {
	good := toyZip(t)
	srv := serve(t, "/TOY.zip", good)
	url := srv.URL + "/TOY.zip"
	ctx := context.Background()

	t.Run("-dir", func(t *testing.T) {
		root := t.TempDir()
		var out bytes.Buffer
		if err := run(ctx, []string{"-dataset", "TOY", "-url", url, "-dir", root}, &out, &out); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(root, "tu", "TOY", "TOY_A.txt")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("-root and -dir disagree", func(t *testing.T) {
		var out bytes.Buffer
		err := run(ctx, []string{"-dataset", "TOY", "-url", url, "-dir", t.TempDir(), "-root", t.TempDir()}, &out, &out)
		if err == nil || !strings.Contains(err.Error(), "alias") || exitCode(err, &out) != 2 {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("default root", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "env-root")
		t.Setenv(data.RootEnv, root)
		var out bytes.Buffer
		if err := run(ctx, []string{"-dataset", "TOY", "-url", url}, &out, &out); err != nil {
			t.Fatal(err)
		}
		want := "TOY is in " + filepath.Join(root, "tu", "TOY") + "; train with: go run ./cmd/train -config configs/graphcl-mutag.yaml -set name=graphcl-toy -set data.name=TOY -set data.path=tu/TOY\n"
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output\n%s\nwant %q", out.String(), want)
		}
		// Naming the default root explicitly gives the same command.
		out.Reset()
		if err := run(ctx, []string{"-dataset", "TOY", "-url", url, "-root", root}, &out, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output\n%s\nwant %q", out.String(), want)
		}
	})
}

// The default address of a TU dataset is used when -url is not given, and a
// 404 there says which datasets exist.
func TestRunDefaultURL(t *testing.T) {
	good := toyZip(t)
	sum := sha256Hex(good)
	srv := serve(t, "/TOY.zip", good)
	defer func(f func(string) string) { tuDatasetURL = f }(tuDatasetURL)
	tuDatasetURL = func(name string) string { return srv.URL + "/" + name + ".zip" }
	var out bytes.Buffer
	root := t.TempDir()
	if err := run(context.Background(), []string{"-dataset", "TOY", "-root", root, "-sha256", sum}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "downloading "+srv.URL+"/TOY.zip") {
		t.Fatalf("output\n%s", out.String())
	}
	err := run(context.Background(), []string{"-dataset", "NOPE", "-root", root}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), `is "NOPE" a TU dataset?`) || !strings.Contains(err.Error(), "cifar-100") || !strings.Contains(err.Error(), tuListURL) {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "tu", "NOPE")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed download left tu/NOPE: %v", err)
	}
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"-h"}, &out, &errOut)
	if !errors.Is(err, flag.ErrHelp) || exitCode(err, &errOut) != 0 || errOut.Len() != 0 {
		t.Fatalf("-h: error %v, exit status %d, stderr %q", err, exitCode(err, &errOut), errOut.String())
	}
	help := out.String()
	want := []string{"usage: download -dataset NAME", "-root DIR", "-dir DIR", "DIR/tu/NAME/NAME_A.txt", "DIR/cifar-10-batches-bin/", "DIR/cifar-100-binary/",
		"$" + data.RootEnv, data.DefaultRoot(), "other TU", data.TUDatasetURL("NAME"), tuListURL}
	for name, sum := range data.KnownTUChecksums {
		want = append(want, name, data.TUDatasetURL(name), "sha256 "+sum)
	}
	for _, name := range data.CIFARNames {
		u, md5, err := data.CIFARURL(name)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, name, u, "md5 "+md5)
	}
	for _, w := range want {
		if !strings.Contains(help, w) {
			t.Errorf("help does not mention %q:\n%s", w, help)
		}
	}

	err = run(context.Background(), []string{"-bogus"}, &out, &errOut)
	if code := exitCode(err, &errOut); code != 2 || !strings.Contains(errOut.String(), "download -h lists") {
		t.Fatalf("unknown flag: exit status %d, stderr %q", code, errOut.String())
	}
}

package data

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

type zipMember struct {
	name    string
	data    string
	symlink bool
	dir     bool
}

func makeZip(t testing.TB, members []zipMember) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate}
		switch {
		case m.symlink:
			h.SetMode(fs.ModeSymlink | 0o777)
		case m.dir:
			h.SetMode(fs.ModeDir | 0o755)
		default:
			h.SetMode(0o644)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m.data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// toyZip packs testdata/tu/TOY as a TU zip does: a TOY/ folder.
func toyZip(t testing.TB) []byte {
	t.Helper()
	members := []zipMember{{name: "TOY/", dir: true}}
	files := toyFS(t)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		members = append(members, zipMember{name: "TOY/" + name, data: string(files[name].Data)})
	}
	return makeZip(t, members)
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// listTree returns every path under dir, relative to it, sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func TestDownload(t *testing.T) {
	good := toyZip(t)
	corrupt := slices.Clone(good)
	corrupt[len(corrupt)/2] ^= 0xff
	mux := http.NewServeMux()
	mux.HandleFunc("/good/TOY.zip", func(w http.ResponseWriter, r *http.Request) { w.Write(good) })
	mux.HandleFunc("/corrupt/TOY.zip", func(w http.ResponseWriter, r *http.Request) { w.Write(corrupt) })
	mux.HandleFunc("/short/TOY.zip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(good[:100])
	})
	srv := httptest.NewServer(mux) // loopback only
	defer srv.Close()
	ctx := context.Background()

	t.Run("good", func(t *testing.T) {
		dir := t.TempDir()
		for _, want := range []string{sha(good), strings.ToUpper(sha(good)), ""} {
			p, err := Download(ctx, srv.URL+"/good/TOY.zip", dir, want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || p != filepath.Join(dir, "TOY.zip") || !bytes.Equal(got, good) {
				t.Fatalf("downloaded %s (%v): %d bytes, want %d at %s", p, err, len(got), len(good), filepath.Join(dir, "TOY.zip"))
			}
			if s, _ := FileSHA256(p); s != sha(good) {
				t.Fatalf("FileSHA256 %s, want %s", s, sha(good))
			}
			if tree := listTree(t, dir); !slices.Equal(tree, []string{"TOY.zip"}) {
				t.Fatalf("directory holds %v, want only TOY.zip", tree)
			}
		}
	})
	failures := []struct {
		name, url, want, contains string
	}{
		{"checksum mismatch", "/corrupt/TOY.zip", sha(good), "checksum mismatch: expected sha256 " + sha(good) + ", received sha256 " + sha(corrupt)},
		{"not found", "/missing/TOY.zip", "", "404"},
		{"short body", "/short/TOY.zip", "", "unexpected EOF"},
		{"bad checksum syntax", "/good/TOY.zip", "abc", "expected 64 hex digits"},
		{"no file name", "/", "", "does not end in a file name"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "dl")
			_, err := Download(ctx, srv.URL+tt.url, dir, tt.want)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("error %v, want one containing %q", err, tt.contains)
			}
			if tree := listTree(t, dir); len(tree) != 0 {
				t.Fatalf("failed download left %v", tree)
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		dir := t.TempDir()
		if _, err := Download(c, srv.URL+"/good/TOY.zip", dir, ""); err == nil {
			t.Fatal("no error with a cancelled context")
		}
		if tree := listTree(t, dir); len(tree) != 0 {
			t.Fatalf("cancelled download left %v", tree)
		}
	})
	if _, err := Download(ctx, "file:///etc/passwd", t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "expected http or https") {
		t.Fatalf("file URL: error %v", err)
	}
}

func TestExtractZipTOY(t *testing.T) {
	dir := t.TempDir()
	zp := filepath.Join(dir, "TOY.zip")
	if err := os.WriteFile(zp, toyZip(t), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "tu")
	for range 2 { // extracting twice overwrites in place
		if err := ExtractZip(zp, dest); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadTU(filepath.Join(dest, "TOY"), "TOY")
	if err != nil {
		t.Fatal(err)
	}
	sameGraphs(t, s, toyWant())
	for _, p := range listTree(t, dest) {
		if strings.Contains(p, ".part") {
			t.Fatalf("temporary file %s left behind", p)
		}
	}
}

func TestExtractZipRejects(t *testing.T) {
	ok := zipMember{name: "SAFE/SAFE_A.txt", data: "1, 2\n"}
	tests := []struct {
		name     string
		members  []zipMember
		limit    int64
		contains string
	}{
		{"dot-dot member", []zipMember{ok, {name: "../evil", data: "x"}}, MaxExtractBytes, `".." element`},
		{"nested dot-dot", []zipMember{ok, {name: "a/../../evil", data: "x"}}, MaxExtractBytes, `".." element`},
		{"absolute path", []zipMember{ok, {name: "/tmp/evil", data: "x"}}, MaxExtractBytes, "absolute path"},
		{"backslash", []zipMember{ok, {name: `..\evil`, data: "x"}}, MaxExtractBytes, "backslash"},
		{"symlink", []zipMember{ok, {name: "SAFE/link", data: "/etc/passwd", symlink: true}}, MaxExtractBytes, "symlink"},
		{"too large", []zipMember{ok, {name: "big", data: strings.Repeat("0", 200)}}, 100, "more than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			zp := filepath.Join(parent, "x.zip")
			if err := os.WriteFile(zp, makeZip(t, tt.members), 0o644); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(parent, "dest")
			err := extractZip(zp, dest, tt.limit)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("error %v, want one containing %q", err, tt.contains)
			}
			// Nothing written anywhere: the archive is rejected before any write.
			if tree := listTree(t, parent); !slices.Equal(tree, []string{"x.zip"}) {
				t.Fatalf("after rejection the directory holds %v", tree)
			}
		})
	}
}

// TestDownloadEvilZip is the end-to-end case: a served zip with a ../evil
// member downloads fine and is then refused without any write.
func TestDownloadEvilZip(t *testing.T) {
	evil := makeZip(t, []zipMember{{name: "X/X_A.txt", data: "1, 1\n"}, {name: "../evil", data: "pwned"}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(evil) }))
	defer srv.Close()
	parent := t.TempDir()
	dl := filepath.Join(parent, "dl")
	p, err := Download(context.Background(), srv.URL+"/X.zip", dl, sha(evil))
	if err != nil {
		t.Fatal(err)
	}
	if err := ExtractZip(p, filepath.Join(dl, "out")); err == nil {
		t.Fatal("zip with ../evil extracted")
	}
	if tree := listTree(t, parent); !slices.Equal(tree, []string{"dl", filepath.Join("dl", "X.zip")}) {
		t.Fatalf("after rejection the tree holds %v", tree)
	}
}

// TestExtractZipSymlinkInDest checks that a symlink already inside destDir
// cannot carry a member outside it.
func TestExtractZipSymlinkInDest(t *testing.T) {
	parent := t.TempDir()
	outside := filepath.Join(parent, "outside")
	dest := filepath.Join(parent, "dest")
	os.Mkdir(outside, 0o755)
	os.Mkdir(dest, 0o755)
	if err := os.Symlink(outside, filepath.Join(dest, "link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	zp := filepath.Join(parent, "x.zip")
	os.WriteFile(zp, makeZip(t, []zipMember{{name: "link/escaped", data: "x"}}), 0o644)
	if err := ExtractZip(zp, dest); err == nil {
		t.Fatal("member written through a symlink")
	}
	if tree := listTree(t, outside); len(tree) != 0 {
		t.Fatalf("outside directory holds %v", tree)
	}
}

func TestTUDatasetURL(t *testing.T) {
	if got := TUDatasetURL("IMDB-BINARY"); got != "https://www.chrsmrrs.com/graphkerneldatasets/IMDB-BINARY.zip" {
		t.Fatalf("TUDatasetURL = %s", got)
	}
	for name, sum := range KnownTUChecksums {
		if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
			t.Errorf("checksum of %s is not a sha256: %q", name, sum)
		}
	}
}

package data

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
	"slices"
	"strings"
	"testing"
)

type tarMember struct {
	name     string
	data     []byte
	typ      byte // tar.TypeReg when zero
	linkname string
	size     int64 // declared size when > 0 and data is nil
}

func makeTarGz(t testing.TB, members []tarMember) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: m.typ, Linkname: m.linkname, Mode: 0o644, Size: int64(len(m.data))}
		if m.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			tw.Write(m.data)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cifarTarGz packs testdata/cifar10 as the official archive does: a
// cifar-10-batches-bin/ folder.
func cifarTarGz(t testing.TB) []byte {
	t.Helper()
	members := []tarMember{{name: "cifar-10-batches-bin/", typ: tar.TypeDir}}
	for _, f := range []string{"batches.meta.txt", "data_batch_1.bin", "data_batch_2.bin", "test_batch.bin"} {
		b, err := os.ReadFile(filepath.Join("testdata", "cifar10", f))
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, tarMember{name: "cifar-10-batches-bin/" + f, data: b})
	}
	return makeTarGz(t, members)
}

func md5Hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}

func TestFetchCIFAR(t *testing.T) {
	good := cifarTarGz(t)
	corrupt := slices.Clone(good)
	corrupt[len(corrupt)/2] ^= 0xff
	evil := makeTarGz(t, []tarMember{
		{name: "cifar-10-batches-bin/data_batch_1.bin", data: cifarRecords(1)},
		{name: "../evil.bin", data: []byte("pwned")},
	})
	mux := http.NewServeMux()
	for path, body := range map[string][]byte{"/good/": good, "/corrupt/": corrupt, "/evil/": evil} {
		mux.HandleFunc(path+"cifar-10-binary.tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	}
	srv := httptest.NewServer(mux) // loopback only
	defer srv.Close()
	ctx := context.Background()

	t.Run("good archive", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "cifar")
		for _, want := range []string{md5Hex(good), strings.ToUpper(md5Hex(good)), ""} {
			dir, err := FetchCIFAR(ctx, srv.URL+"/good/cifar-10-binary.tar.gz", want, dest)
			if err != nil {
				t.Fatal(err)
			}
			if dir != filepath.Join(dest, "cifar-10-batches-bin") {
				t.Fatalf("returned %s", dir)
			}
			wantTree := []string{"cifar-10-batches-bin", "cifar-10-batches-bin/batches.meta.txt", "cifar-10-batches-bin/data_batch_1.bin",
				"cifar-10-batches-bin/data_batch_2.bin", "cifar-10-batches-bin/test_batch.bin"}
			if got := listTree(t, dest); !slices.Equal(got, wantTree) {
				t.Fatalf("tree %v, want %v (archive and temporary files removed)", got, wantTree)
			}
			s, err := ReadCIFAR10Dir(dest, true)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Labels, []int{6, 9, 0, 3, 1}) || s.ClassNames[0] != "class0" {
				t.Fatalf("read back labels %v names %v", s.Labels, s.ClassNames)
			}
		}
	})
	t.Run("corrupted archive", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "cifar")
		_, err := FetchCIFAR(ctx, srv.URL+"/corrupt/cifar-10-binary.tar.gz", md5Hex(good), dest)
		if err == nil || !strings.Contains(err.Error(), "checksum mismatch: expected md5 "+md5Hex(good)+", received md5 "+md5Hex(corrupt)) {
			t.Fatalf("error %v", err)
		}
		if tree := listTree(t, dest); len(tree) != 0 {
			t.Fatalf("left behind %v", tree)
		}
		// Without a checksum the corruption is caught by gzip or tar, and
		// nothing is extracted either.
		_, err = FetchCIFAR(ctx, srv.URL+"/corrupt/cifar-10-binary.tar.gz", "", dest)
		if err == nil {
			t.Fatal("corrupted archive extracted")
		}
		if tree := listTree(t, dest); len(tree) != 0 {
			t.Fatalf("left behind %v", tree)
		}
	})
	t.Run("archive with ../ member", func(t *testing.T) {
		parent := t.TempDir()
		dest := filepath.Join(parent, "cifar")
		_, err := FetchCIFAR(ctx, srv.URL+"/evil/cifar-10-binary.tar.gz", md5Hex(evil), dest)
		if err == nil || !strings.Contains(err.Error(), `"../evil.bin" has a ".." element`) {
			t.Fatalf("error %v", err)
		}
		if tree := listTree(t, parent); !slices.Equal(tree, []string{"cifar"}) {
			t.Fatalf("after rejection the tree holds %v", tree)
		}
	})
	t.Run("errors", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "cifar")
		if _, err := DownloadMD5(ctx, srv.URL+"/good/cifar-10-binary.tar.gz", dest, "xyz"); err == nil || !strings.Contains(err.Error(), "32 hex digits") {
			t.Fatalf("bad md5 syntax: %v", err)
		}
		if _, err := FetchCIFAR(ctx, srv.URL+"/missing/cifar-10-binary.tar.gz", "", dest); err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("missing: %v", err)
		}
		if tree := listTree(t, dest); len(tree) != 0 {
			t.Fatalf("left behind %v", tree)
		}
	})
}

func TestExtractTarGzRejects(t *testing.T) {
	ok := tarMember{name: "d/ok.txt", data: []byte("fine")}
	tests := []struct {
		name     string
		members  []tarMember
		limit    int64
		contains string
	}{
		{"dot-dot", []tarMember{ok, {name: "../evil", data: []byte("x")}}, MaxExtractBytes, `".." element`},
		{"nested dot-dot", []tarMember{ok, {name: "d/../../evil", data: []byte("x")}}, MaxExtractBytes, `".." element`},
		{"absolute", []tarMember{ok, {name: "/tmp/evil", data: []byte("x")}}, MaxExtractBytes, "absolute path"},
		{"backslash", []tarMember{ok, {name: `..\evil`, data: []byte("x")}}, MaxExtractBytes, "backslash"},
		{"symlink", []tarMember{ok, {name: "d/link", typ: tar.TypeSymlink, linkname: "/etc"}}, MaxExtractBytes, "symlink"},
		{"relative symlink", []tarMember{ok, {name: "d/link", typ: tar.TypeSymlink, linkname: "ok.txt"}}, MaxExtractBytes, "symlink"},
		{"hard link", []tarMember{ok, {name: "d/hard", typ: tar.TypeLink, linkname: "../../etc/passwd"}}, MaxExtractBytes, "hard link"},
		{"device", []tarMember{ok, {name: "d/null", typ: tar.TypeChar}}, MaxExtractBytes, "is a device"},
		{"fifo", []tarMember{ok, {name: "d/fifo", typ: tar.TypeFifo}}, MaxExtractBytes, "FIFO"},
		{"too large", []tarMember{ok, {name: "big", data: bytes.Repeat([]byte("0"), 200)}}, 100, "more than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			p := filepath.Join(parent, "x.tar.gz")
			if err := os.WriteFile(p, makeTarGz(t, tt.members), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := extractTarGz(p, filepath.Join(parent, "dest"), tt.limit)
			if err == nil || !strings.Contains(err.Error(), tt.contains) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming the archive and containing %q", err, tt.contains)
			}
			// Rejected before any write: even ok.txt is absent.
			if tree := listTree(t, parent); !slices.Equal(tree, []string{"x.tar.gz"}) {
				t.Fatalf("after rejection the directory holds %v", tree)
			}
		})
	}
	t.Run("bad gzip CRC", func(t *testing.T) {
		parent := t.TempDir()
		b := makeTarGz(t, []tarMember{ok})
		b[len(b)-6] ^= 0xff
		p := filepath.Join(parent, "x.tar.gz")
		os.WriteFile(p, b, 0o644)
		if err := ExtractTarGz(p, filepath.Join(parent, "dest")); err == nil || !strings.Contains(err.Error(), "gzip") {
			t.Fatalf("error %v", err)
		}
		if tree := listTree(t, parent); !slices.Equal(tree, []string{"x.tar.gz"}) {
			t.Fatalf("after rejection the directory holds %v", tree)
		}
	})
	t.Run("not gzip", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "x.tar.gz")
		os.WriteFile(p, []byte("plain text"), 0o644)
		if err := ExtractTarGz(p, filepath.Join(t.TempDir(), "dest")); err == nil || !strings.Contains(err.Error(), "gzip") {
			t.Fatalf("error %v", err)
		}
	})
}

// TestExtractTarGzSymlinkInDest checks that a symlink already inside dest
// cannot carry a member outside it.
func TestExtractTarGzSymlinkInDest(t *testing.T) {
	parent := t.TempDir()
	outside, dest := filepath.Join(parent, "outside"), filepath.Join(parent, "dest")
	os.Mkdir(outside, 0o755)
	os.Mkdir(dest, 0o755)
	if err := os.Symlink(outside, filepath.Join(dest, "link")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	p := filepath.Join(parent, "x.tar.gz")
	os.WriteFile(p, makeTarGz(t, []tarMember{{name: "link/escaped", data: []byte("x")}}), 0o644)
	if err := ExtractTarGz(p, dest); err == nil {
		t.Fatal("member written through a symlink")
	}
	if tree := listTree(t, outside); len(tree) != 0 {
		t.Fatalf("outside directory holds %v", tree)
	}
}

func TestExtractTarGzLayout(t *testing.T) {
	parent := t.TempDir()
	p := filepath.Join(parent, "x.tar.gz")
	// Files without directory entries, a root "./" entry, a top-level file.
	os.WriteFile(p, makeTarGz(t, []tarMember{{name: "./", typ: tar.TypeDir}, {name: "a/b/c.txt", data: []byte("abc")}, {name: "top.txt", data: []byte("t")}}), 0o644)
	dest := filepath.Join(parent, "dest")
	for range 2 { // extracting twice overwrites in place
		top, err := extractTarGz(p, dest, MaxExtractBytes)
		if err != nil {
			t.Fatal(err)
		}
		if top != "" {
			t.Fatalf("top-level directory %q, want none (a file sits at the top)", top)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dest, "a", "b", "c.txt")); err != nil || string(b) != "abc" {
		t.Fatalf("a/b/c.txt = %q, %v", b, err)
	}
	if tree := listTree(t, dest); !slices.Equal(tree, []string{"a", "a/b", "a/b/c.txt", "top.txt"}) {
		t.Fatalf("tree %v", tree)
	}
}

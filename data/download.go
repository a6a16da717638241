package data

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/batchsampler-go/batchsampler/internal/tempfile"
)

// TUBaseURL is where the TU Dortmund graph kernel datasets are served.
const TUBaseURL = "https://www.chrsmrrs.com/graphkerneldatasets/"

// TUDatasetURL returns the address of the zip of TU dataset name, for
// instance https://www.chrsmrrs.com/graphkerneldatasets/MUTAG.zip.
func TUDatasetURL(name string) string {
	return TUBaseURL + url.PathEscape(name) + ".zip"
}

// KnownTUChecksums holds the sha256 of the zips of some TU datasets. They
// were computed on copies of the TU zips committed to a public repository
// (bknyaz/graph_nn, data/*.zip at commit 72eaa1c; shared/data/SOURCES.md
// describes the first three; the IMDB-MULTI and PROTEINS zips hold 1,500 and
// 1,113 graphs, TU's published counts), not on files fetched from the TU
// server, which may serve re-packed zips with other checksums. cmd/download
// prints the checksum it saw, so a user can check it and pin it with -sha256.
var KnownTUChecksums = map[string]string{
	"MUTAG":       "20f52db82d6d85d5f67d2fa42c3fb705d05934be44329314ab17b05d0c012f7e",
	"IMDB-BINARY": "2a4abb6431ec1ab025a6fbcd3b546607191f79a1e0aef0f42cd8bd4ec1546116",
	"NCI1":        "eae6b0c076d59e667c67de0039cfc3214eefb91a8dddc2fa3099126da02d4376",
	"IMDB-MULTI":  "1d22bb88ee69f9f7c09eb7f072dadec56e3f91ad4b14cfd99231379b68073883",
	"PROTEINS":    "fe9d19741637486ea1fd285bf669fce0b117e10b03cdd379f6a5e6197fc830ae",
}

// MaxDownloadBytes bounds the size of a file fetched by Download.
const MaxDownloadBytes = 4 << 30

// Download fetches rawURL with an HTTP GET into destDir, naming the file
// after the last element of the URL path, and returns its path. The body
// goes to a temporary file in destDir that is renamed into place only after
// it is complete and, when wantSHA256 is not empty, its sha256 equals
// wantSHA256 (hex, any case; else the error is a *[ChecksumError]); on any
// error no file is left behind. The context cancels the transfer.
func Download(ctx context.Context, rawURL, destDir, wantSHA256 string) (string, error) {
	fail := func(err error) (string, error) { return "", fmt.Errorf("download %s: %w", rawURL, err) }
	u, err := url.Parse(rawURL)
	if err != nil {
		return fail(err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fail(fmt.Errorf("scheme %q: expected http or https", u.Scheme))
	}
	name := path.Base(u.Path)
	if name == "/" || name == "." || name == ".." || strings.ContainsAny(name, `\:`) {
		return fail(fmt.Errorf("URL path %q does not end in a file name", u.Path))
	}
	want := strings.ToLower(strings.TrimSpace(wantSHA256))
	if want != "" {
		if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
			return fail(fmt.Errorf("checksum %q: expected 64 hex digits of a sha256", wantSHA256))
		}
	}
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return fail(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fail(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("HTTP status %s: expected 200 OK", resp.Status))
	}

	tmp, err := tempfile.Create(destDir, "."+name+".part-*")
	if err != nil {
		return fail(err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, MaxDownloadBytes+1))
	if err != nil {
		return fail(fmt.Errorf("after %d bytes: %w", n, err))
	}
	if n > MaxDownloadBytes {
		return fail(fmt.Errorf("body larger than %d bytes", int64(MaxDownloadBytes)))
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return fail(fmt.Errorf("got %d bytes: expected Content-Length %d", n, resp.ContentLength))
	}
	got := hex.EncodeToString(h.Sum(nil))
	if want != "" && got != want {
		return "", &ChecksumError{URL: rawURL, Algorithm: "sha256", Expected: want, Received: got, Bytes: n}
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	dst := filepath.Join(destDir, name)
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fail(err)
	}
	done = true
	return dst, nil
}

// ChecksumError reports a downloaded file whose checksum is not the one
// expected; the file is not kept.
type ChecksumError struct {
	URL       string
	Algorithm string // "sha256" or "md5"
	Expected  string // hex
	Received  string // hex, of the Bytes bytes received
	Bytes     int64
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("download %s: checksum mismatch: expected %s %s, received %s %s (%d bytes)",
		e.URL, e.Algorithm, e.Expected, e.Algorithm, e.Received, e.Bytes)
}

// FileSHA256 returns the hex sha256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("sha256 of %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// MaxExtractBytes bounds the total uncompressed size ExtractZip writes.
const MaxExtractBytes = 2 << 30

// maxZipEntries bounds the number of members ExtractZip accepts.
const maxZipEntries = 100000

// ExtractZip extracts the zip file zipPath under destDir (created if
// needed). It first checks every member and rejects the archive, writing
// nothing, if a name is absolute, contains a ".." element or a backslash,
// a member is a symlink or another non-regular file, or the declared sizes
// add up to more than MaxExtractBytes; while writing it also stops when the
// actual bytes exceed that limit. All writes go through an os.Root opened on
// destDir, so nothing can land outside it even through a symlink already
// there, and every file is written to a temporary name and renamed into
// place when complete.
func ExtractZip(zipPath, destDir string) error {
	return extractZip(zipPath, destDir, MaxExtractBytes)
}

func extractZip(zipPath, destDir string, limit int64) (err error) {
	fail := func(err error) error { return fmt.Errorf("extract %s: %w", zipPath, err) }
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fail(err)
	}
	defer zr.Close()
	if len(zr.File) > maxZipEntries {
		return fail(fmt.Errorf("%d members: expected at most %d", len(zr.File), maxZipEntries))
	}
	names := make([]string, len(zr.File))
	var total uint64
	for i, f := range zr.File {
		name, err := safeZipName(f)
		if err != nil {
			return fail(err)
		}
		names[i] = name
		total += f.UncompressedSize64
		if total > uint64(limit) {
			return fail(fmt.Errorf("members declare more than %d bytes in total: expected at most that", limit))
		}
	}
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return fail(err)
	}
	root, err := os.OpenRoot(destDir)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	remaining := limit
	for i, f := range zr.File {
		name := names[i]
		if name == "" {
			continue // the archive's root directory
		}
		if f.FileInfo().IsDir() {
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fail(err)
			}
			continue
		}
		if dir := path.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return fail(err)
			}
		}
		n, err := extractMember(root, f, name, remaining)
		if err != nil {
			return fail(fmt.Errorf("member %s: %w", f.Name, err))
		}
		remaining -= n
	}
	return nil
}

// safeZipName checks a member and returns its cleaned relative name ("" for
// the root directory).
func safeZipName(f *zip.File) (string, error) {
	name := f.Name
	mode := f.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return "", fmt.Errorf("member %q is a symlink: expected regular files and directories only", name)
	case !mode.IsRegular() && !mode.IsDir():
		return "", fmt.Errorf("member %q has mode %v: expected regular files and directories only", name, mode)
	case name == "":
		return "", errors.New("member with an empty name")
	case strings.Contains(name, `\`):
		return "", fmt.Errorf("member %q contains a backslash: expected a relative path with forward slashes", name)
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name) || filepath.VolumeName(name) != "":
		return "", fmt.Errorf("member %q is an absolute path: expected a relative path", name)
	case strings.ContainsRune(name, 0):
		return "", fmt.Errorf("member %q contains a NUL byte", name)
	}
	for _, el := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if el == ".." {
			return "", fmt.Errorf("member %q has a \"..\" element: expected a path inside the destination", name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", nil
	}
	if !fs.ValidPath(clean) {
		return "", fmt.Errorf("member %q: expected a valid relative path", name)
	}
	return clean, nil
}

// extractMember writes one regular member through root, atomically, and
// returns the number of bytes written (see writeRootFile).
func extractMember(root *os.Root, f *zip.File, name string, remaining int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return writeRootFile(root, name, rc, remaining)
}

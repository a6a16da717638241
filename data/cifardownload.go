package data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// cifarArchives lists the official binary-version archives of the CIFAR
// datasets with the md5 checksums published on the dataset's page.
var cifarArchives = map[string]struct{ url, md5 string }{
	"cifar-10":  {"https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz", "c32a1d4ab5d03f1284b67883e8d87530"},
	"cifar-100": {"https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz", "03b5dce01913d631647c71ecec9e9cb8"},
}

// CIFARNames lists the names CIFARURL accepts.
var CIFARNames = []string{"cifar-10", "cifar-100"}

// CIFARURL returns the address and the published md5 (hex) of the official
// binary-version archive of name, "cifar-10" or "cifar-100". The archives
// unpack to cifar-10-batches-bin/ and cifar-100-binary/, which
// [ReadCIFAR10Dir] and [ReadCIFAR100Dir] find when given the extraction
// directory.
func CIFARURL(name string) (rawURL, md5Hex string, err error) {
	a, ok := cifarArchives[strings.ToLower(name)]
	if !ok {
		return "", "", fmt.Errorf("CIFAR dataset %q: expected one of %v", name, CIFARNames)
	}
	return a.url, a.md5, nil
}

// FetchCIFAR downloads the archive at rawURL into destDir, checks its md5
// against wantMD5 (hex; empty skips the check), extracts it under destDir
// with [ExtractTarGz] and removes the archive. On a failed download or
// checksum nothing is left behind; on a rejected archive the archive is
// removed and nothing is extracted. It returns the path of the archive's
// single top-level directory when it has one (for instance
// destDir/cifar-10-batches-bin), else destDir.
func FetchCIFAR(ctx context.Context, rawURL, wantMD5, destDir string) (string, error) {
	p, err := DownloadMD5(ctx, rawURL, destDir, wantMD5)
	if err != nil {
		return "", err
	}
	defer os.Remove(p)
	top, err := extractTarGz(p, destDir, MaxExtractBytes)
	if err != nil {
		return "", err
	}
	if top != "" {
		return filepath.Join(destDir, filepath.FromSlash(top)), nil
	}
	return destDir, nil
}

// DownloadMD5 is [Download] with an md5 checksum (hex, any case; empty
// skips the check) instead of a sha256, for sites that publish md5 only,
// like CIFAR's. The file is fetched into a temporary directory inside
// destDir and moved into place only when its checksum matches (else the
// error is a *[ChecksumError]); on any error
// nothing is left behind (destDir itself may have been created).
func DownloadMD5(ctx context.Context, rawURL, destDir, wantMD5 string) (string, error) {
	want := strings.ToLower(strings.TrimSpace(wantMD5))
	if want != "" {
		if b, err := hex.DecodeString(want); err != nil || len(b) != md5.Size {
			return "", fmt.Errorf("download %s: checksum %q: expected 32 hex digits of an md5", rawURL, wantMD5)
		}
	}
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return "", fmt.Errorf("download %s: %w", rawURL, err)
	}
	stage, err := os.MkdirTemp(destDir, ".download-*")
	if err != nil {
		return "", fmt.Errorf("download %s: %w", rawURL, err)
	}
	defer os.RemoveAll(stage)
	p, err := Download(ctx, rawURL, stage, "")
	if err != nil {
		return "", err
	}
	got, err := FileMD5(p)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", rawURL, err)
	}
	if want != "" && got != want {
		var n int64
		if st, err := os.Stat(p); err == nil {
			n = st.Size()
		}
		return "", &ChecksumError{URL: rawURL, Algorithm: "md5", Expected: want, Received: got, Bytes: n}
	}
	dst := filepath.Join(destDir, filepath.Base(p))
	if err := os.Rename(p, dst); err != nil {
		return "", fmt.Errorf("download %s: %w", rawURL, err)
	}
	return dst, nil
}

// FileMD5 returns the hex md5 of a file.
func FileMD5(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("md5 of %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ExtractTarGz extracts the gzip-compressed tar archive at path under dest
// (created if needed). It reads the archive twice: the first pass checks
// every member and the gzip checksum and rejects the archive, writing
// nothing, if a name is absolute, contains a ".." element, a backslash or a
// NUL byte, a member is a symlink, a hard link, a device, a FIFO or any
// other non-regular, non-directory entry, there are more than 100,000
// members, or the sizes add up to more than MaxExtractBytes. The second
// pass writes through an os.Root opened on dest, so nothing can land
// outside it even through a symlink already there; every file is written
// to a temporary name and renamed into place when complete. PAX global
// headers are ignored.
func ExtractTarGz(path, dest string) error {
	_, err := extractTarGz(path, dest, MaxExtractBytes)
	return err
}

// extractTarGz returns the single top-level directory of the archive ("" if
// there is none).
func extractTarGz(archive, dest string, limit int64) (string, error) {
	fail := func(err error) (string, error) { return "", fmt.Errorf("extract %s: %w", archive, err) }
	tops := map[string]bool{}
	var total int64
	count := 0
	// Pass 1: check everything, write nothing.
	err := walkTarGz(archive, func(h *tar.Header, name string, _ io.Reader) error {
		count++
		if count > maxZipEntries {
			return fmt.Errorf("more than %d members: expected at most that", maxZipEntries)
		}
		if name == "" {
			return nil
		}
		top, _, _ := strings.Cut(name, "/")
		isDirTop := h.Typeflag == tar.TypeDir || strings.Contains(name, "/")
		if isDirTop {
			tops[top] = true
		} else {
			tops[""] = true // a file at the top level
		}
		total += h.Size
		if total > limit {
			return fmt.Errorf("members declare more than %d bytes in total: expected at most that", limit)
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fail(err)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	// Pass 2: write.
	remaining := limit
	err = walkTarGz(archive, func(h *tar.Header, name string, r io.Reader) error {
		if name == "" {
			return nil
		}
		if h.Typeflag == tar.TypeDir {
			return root.MkdirAll(name, 0o755)
		}
		if dir := path.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		n, err := writeRootFile(root, name, r, remaining)
		if err != nil {
			return fmt.Errorf("member %s: %w", h.Name, err)
		}
		remaining -= n
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if len(tops) == 1 && !tops[""] {
		for t := range tops {
			return t, nil
		}
	}
	return "", nil
}

// walkTarGz calls fn on every regular file and directory of the archive
// with its checked, cleaned name ("" for the archive's root directory) and
// stops at the first unsafe member or error. It reads the gzip stream to
// its end, so a corrupted archive fails its CRC check.
func walkTarGz(archive string, fn func(h *tar.Header, name string, r io.Reader) error) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		name, err := safeTarName(h)
		if err != nil {
			return err
		}
		if err := fn(h, name, tr); err != nil {
			return err
		}
	}
	// Drain the gzip stream (tar stops at its end-of-archive blocks) so the
	// CRC and length of the whole stream are verified.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	return nil
}

// safeTarName checks a tar member and returns its cleaned relative name
// ("" for the root directory).
func safeTarName(h *tar.Header) (string, error) {
	name := h.Name
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeRegA, tar.TypeDir:
	case tar.TypeSymlink:
		return "", fmt.Errorf("member %q is a symlink to %q: expected regular files and directories only", name, h.Linkname)
	case tar.TypeLink:
		return "", fmt.Errorf("member %q is a hard link to %q: expected regular files and directories only", name, h.Linkname)
	case tar.TypeChar, tar.TypeBlock:
		return "", fmt.Errorf("member %q is a device: expected regular files and directories only", name)
	case tar.TypeFifo:
		return "", fmt.Errorf("member %q is a FIFO: expected regular files and directories only", name)
	default:
		return "", fmt.Errorf("member %q has type %q: expected regular files and directories only", name, h.Typeflag)
	}
	if h.Size < 0 {
		return "", fmt.Errorf("member %q has negative size %d", name, h.Size)
	}
	switch {
	case name == "":
		return "", errors.New("member with an empty name")
	case strings.ContainsRune(name, 0):
		return "", fmt.Errorf("member %q contains a NUL byte", name)
	case strings.Contains(name, `\`):
		return "", fmt.Errorf("member %q contains a backslash: expected a relative path with forward slashes", name)
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name) || filepath.VolumeName(name) != "":
		return "", fmt.Errorf("member %q is an absolute path: expected a relative path", name)
	}
	for _, el := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if el == ".." {
			return "", fmt.Errorf("member %q has a \"..\" element: expected a path inside the destination", name)
		}
	}
	clean := path.Clean(name)
	if clean == "." {
		if h.Typeflag != tar.TypeDir {
			return "", fmt.Errorf("member %q is a file named like the root directory", name)
		}
		return "", nil
	}
	if !fs.ValidPath(clean) {
		return "", fmt.Errorf("member %q: expected a valid relative path", name)
	}
	return clean, nil
}

// writeRootFile writes r to name through root, atomically (a temporary
// name renamed into place), and returns the number of bytes written; it
// fails when more than remaining bytes arrive.
func writeRootFile(root *os.Root, name string, r io.Reader, remaining int64) (n int64, err error) {
	dir, base := path.Split(name)
	tmpName := dir + "." + base + ".part"
	root.Remove(tmpName) // a leftover of an interrupted run
	out, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return 0, err
	}
	ok := false
	defer func() {
		if !ok {
			out.Close()
			root.Remove(tmpName)
		}
	}()
	n, err = io.Copy(out, io.LimitReader(r, remaining+1))
	if err != nil {
		return n, err
	}
	if n > remaining {
		return n, errors.New("archive expands beyond the extraction size limit (MaxExtractBytes)")
	}
	if err := out.Close(); err != nil {
		return n, err
	}
	if err := root.Rename(tmpName, name); err != nil {
		return n, err
	}
	ok = true
	return n, nil
}

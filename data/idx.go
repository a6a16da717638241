package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FashionMNISTClasses are the Fashion-MNIST class names in label order.
var FashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// idxUByte is the IDX type code of unsigned bytes, the only one MNIST-style
// datasets use.
const idxUByte = 0x08

// ReadIDXImages reads an IDX file of images (MNIST's
// train-images-idx3-ubyte and the like), gzip-compressed or not (detected
// from the magic bytes): magic 0x00000803, then the big-endian uint32 sizes
// N, H, W, then N·H·W unsigned bytes. The result is an unlabelled
// ImageSet with C = 1 and values b/255. The file must end right after the
// data. Errors name the file and what was expected.
func ReadIDXImages(path string) (*ImageSet, error) {
	return readPath(path, "read IDX images", DecodeIDXImages)
}

// ReadIDXLabels reads an IDX file of labels (MNIST's
// train-labels-idx1-ubyte and the like), gzip-compressed or not: magic
// 0x00000801, the big-endian uint32 count N, then N unsigned bytes.
func ReadIDXLabels(path string) ([]int, error) {
	return readPath(path, "read IDX labels", DecodeIDXLabels)
}

// ReadIDX reads an images file and a labels file (see [ReadIDXImages] and
// [ReadIDXLabels]) that must hold the same number of items. NumClasses is
// 1 + the largest label. Name is the base name of the images file's
// directory.
func ReadIDX(imagesPath, labelsPath string) (*ImageSet, error) {
	s, err := ReadIDXImages(imagesPath)
	if err != nil {
		return nil, err
	}
	y, err := ReadIDXLabels(labelsPath)
	if err != nil {
		return nil, err
	}
	if err := attachIDXLabels(s, y, imagesPath, labelsPath); err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(imagesPath); err == nil {
		s.Name = filepath.Base(filepath.Dir(abs))
	}
	return s, nil
}

// ReadMNISTDir reads the training set (train-images-idx3-ubyte,
// train-labels-idx1-ubyte) or the test set (t10k-…) of MNIST or
// Fashion-MNIST from dir, each file with or without a .gz suffix (the
// uncompressed one is preferred when both exist). When the directory's name
// contains "fashion" the class names are [FashionMNISTClasses].
func ReadMNISTDir(dir string, train bool) (*ImageSet, error) {
	prefix := "t10k"
	if train {
		prefix = "train"
	}
	find := func(base string) (string, error) {
		for _, p := range []string{base, base + ".gz"} {
			full := filepath.Join(dir, p)
			if _, err := os.Stat(full); err == nil {
				return full, nil
			}
		}
		return "", fmt.Errorf("read MNIST from %s: neither %s nor %s.gz exists: expected the IDX files of MNIST or Fashion-MNIST", dir, base, base)
	}
	ip, err := find(prefix + "-images-idx3-ubyte")
	if err != nil {
		return nil, err
	}
	lp, err := find(prefix + "-labels-idx1-ubyte")
	if err != nil {
		return nil, err
	}
	s, err := ReadIDX(ip, lp)
	if err != nil {
		return nil, err
	}
	if strings.Contains(strings.ToLower(s.Name), "fashion") && s.NumClasses == len(FashionMNISTClasses) {
		s.ClassNames = append([]string(nil), FashionMNISTClasses...)
	}
	return s, nil
}

func attachIDXLabels(s *ImageSet, y []int, imagesFile, labelsFile string) error {
	if len(y) != s.N {
		return fmt.Errorf("IDX %s holds %d labels but %s holds %d images: expected the same count", labelsFile, len(y), imagesFile, s.N)
	}
	maxY := -1
	for _, v := range y {
		maxY = max(maxY, v)
	}
	s.Labels = y
	s.NumClasses = maxY + 1
	if s.N == 0 {
		s.Labels, s.NumClasses = nil, 0
	}
	return nil
}

// DecodeIDXImages is [ReadIDXImages] on a reader; file names the input in
// error messages.
func DecodeIDXImages(r io.Reader, file string) (*ImageSet, error) {
	dims, payload, err := decodeIDX(r, file, 3, "images (N, H, W)")
	if err != nil {
		return nil, err
	}
	n, h, w := dims[0], dims[1], dims[2]
	if n > 0 && (h == 0 || w == 0) {
		return nil, fmt.Errorf("IDX %s: image size %d×%d: expected at least 1×1", file, h, w)
	}
	s := &ImageSet{Name: "idx", N: n, C: 1, H: max(h, 1), W: max(w, 1), Pixels: make([]float32, len(payload))}
	for i, b := range payload {
		s.Pixels[i] = byteToUnit[b]
	}
	return s, nil
}

// DecodeIDXLabels is [ReadIDXLabels] on a reader; file names the input in
// error messages.
func DecodeIDXLabels(r io.Reader, file string) ([]int, error) {
	_, payload, err := decodeIDX(r, file, 1, "labels (N)")
	if err != nil {
		return nil, err
	}
	y := make([]int, len(payload))
	for i, b := range payload {
		y[i] = int(b)
	}
	return y, nil
}

// DecodeIDX decodes an images stream and a labels stream held by readers
// (see [ReadIDX]); the names appear in error messages.
func DecodeIDX(images io.Reader, imagesFile string, labels io.Reader, labelsFile string) (*ImageSet, error) {
	s, err := DecodeIDXImages(images, imagesFile)
	if err != nil {
		return nil, err
	}
	y, err := DecodeIDXLabels(labels, labelsFile)
	if err != nil {
		return nil, err
	}
	if err := attachIDXLabels(s, y, imagesFile, labelsFile); err != nil {
		return nil, err
	}
	return s, nil
}

// decodeIDX reads the header and the unsigned-byte payload of an IDX
// stream with wantDims dimensions, transparently gunzipping it.
func decodeIDX(r io.Reader, file string, wantDims int, what string) ([]int, []byte, error) {
	fail := func(format string, args ...any) ([]int, []byte, error) {
		return nil, nil, fmt.Errorf("IDX %s: "+format, append([]any{file}, args...)...)
	}
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fail("gzip header: %v", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	var head [4]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return fail("reading the 4-byte magic number: %v", noEOF(err))
	}
	if head[0] != 0 || head[1] != 0 {
		return fail("magic number % x: expected 00 00 08 %02x (IDX, unsigned bytes, %d dimensions)", head, wantDims, wantDims)
	}
	if head[2] != idxUByte {
		return fail("data type 0x%02x: expected 0x08 (unsigned byte)", head[2])
	}
	if int(head[3]) != wantDims {
		return fail("%d dimensions: expected %d for %s", head[3], wantDims, what)
	}
	dims := make([]int, wantDims)
	total, item := int64(1), int64(1) // all values; values of one item
	for i := range dims {
		var d uint32
		if err := binary.Read(br, binary.BigEndian, &d); err != nil {
			return fail("reading size %d of %d: %v", i+1, wantDims, noEOF(err))
		}
		dims[i] = int(d)
		total *= int64(d)
		if i > 0 {
			// A size of 0 must not hide the others: an empty set's images
			// are still at least 1×1 (DecodeIDXImages), so 0 images of
			// 0×4,281,348,144 would be a set of images too large to hold.
			item *= max(int64(d), 1)
		}
		if total > MaxImageValues || item > MaxImageValues {
			return fail("sizes %v…: more than %d values: expected at most that", dims[:i+1], int64(MaxImageValues))
		}
	}
	// Read no more than the header announces (+1 byte to detect trailing
	// data), growing the buffer as bytes arrive, so a lying header cannot
	// make us allocate more than the input holds.
	payload, err := io.ReadAll(io.LimitReader(br, total+1))
	if err != nil {
		return fail("reading the data: %v", err)
	}
	if int64(len(payload)) < total {
		return fail("%d data bytes: expected %d for sizes %v (truncated file)", len(payload), total, dims)
	}
	if int64(len(payload)) > total {
		return fail("data continues after the %d bytes announced by sizes %v: expected the end of the file", total, dims)
	}
	return dims, payload, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

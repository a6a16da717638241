package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Shape of the images of CIFAR-10 and CIFAR-100.
const (
	CIFARChannels = 3
	CIFARHeight   = 32
	CIFARWidth    = 32
	// CIFARImageBytes is the size of one image in the binary formats:
	// a 1024-byte red plane, then green, then blue, each row-major.
	CIFARImageBytes = CIFARChannels * CIFARHeight * CIFARWidth
)

// CIFAR10Classes are the CIFAR-10 class names in label order, as in
// batches.meta.txt of the official binary release.
var CIFAR10Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// byteToUnit maps a pixel byte b to b/255.
var byteToUnit = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return t
}()

// cifarFormat describes one of the two binary record layouts.
type cifarFormat struct {
	labelBytes int // 1 (CIFAR-10) or 2 (CIFAR-100: coarse, fine)
	labelIndex int // which label byte is the class
	numClasses int
}

func (f cifarFormat) recordLen() int { return f.labelBytes + CIFARImageBytes }

// CIFAR-100 has 20 coarse classes (superclasses) and 100 fine classes.
const (
	CIFAR100Coarse = 20
	CIFAR100Fine   = 100
)

// ReadCIFAR10 reads files of the CIFAR-10 binary version
// (data_batch_1.bin … data_batch_5.bin, test_batch.bin, or any file of such
// records, like the shared subset data_batch_1.first1017.bin) and returns
// their images in file order. A record is one label byte in [0,10) and 3,072
// pixel bytes: the red, green and blue 32×32 planes, row-major. Pixel bytes
// b become b/255.
//
// A file whose size is not a multiple of 3,073 bytes (a truncated last
// record), and a label out of range, give an error that names the file and
// the record index. Class names are [CIFAR10Classes], or the lines of
// batches.meta.txt when that file is beside the first path and holds 10
// names. Name is "cifar-10".
func ReadCIFAR10(paths ...string) (*ImageSet, error) {
	s, err := readCIFARFiles(paths, cifarFormat{labelBytes: 1, labelIndex: 0, numClasses: 10}, "cifar-10")
	if err != nil {
		return nil, err
	}
	s.ClassNames = CIFAR10Classes
	if len(paths) > 0 {
		if names, err := readClassNames(filepath.Join(filepath.Dir(paths[0]), "batches.meta.txt"), 10); err == nil {
			s.ClassNames = names
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	s.ClassNames = append([]string(nil), s.ClassNames...)
	return s, nil
}

// ReadCIFAR100 reads files of the CIFAR-100 binary version (train.bin,
// test.bin). A record is a coarse label byte in [0,20), a fine label byte
// in [0,100) and 3,072 pixel bytes laid out as in CIFAR-10. The labels of
// the result are the fine classes when fine is true, else the coarse ones;
// both bytes are checked. Errors name the file and the record. Class names
// come from fine_label_names.txt or coarse_label_names.txt beside the
// first path, when present. Name is "cifar-100" or "cifar-100-coarse".
func ReadCIFAR100(fine bool, paths ...string) (*ImageSet, error) {
	f := cifarFormat{labelBytes: 2, labelIndex: 0, numClasses: CIFAR100Coarse}
	name, meta := "cifar-100-coarse", "coarse_label_names.txt"
	if fine {
		f.labelIndex, f.numClasses = 1, CIFAR100Fine
		name, meta = "cifar-100", "fine_label_names.txt"
	}
	s, err := readCIFARFiles(paths, f, name)
	if err != nil {
		return nil, err
	}
	if len(paths) > 0 {
		if names, err := readClassNames(filepath.Join(filepath.Dir(paths[0]), meta), f.numClasses); err == nil {
			s.ClassNames = names
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return s, nil
}

// ReadCIFAR10Dir reads the training files (data_batch_*.bin, sorted by
// name) or the test files (test_batch*.bin) of the CIFAR-10 binary version
// in dir, or in dir/cifar-10-batches-bin (the folder of the official
// archive) when dir itself holds none. The shared subset's
// data_batch_1.first1017.bin … match these patterns too.
func ReadCIFAR10Dir(dir string, train bool) (*ImageSet, error) {
	pattern := "test_batch*.bin"
	if train {
		pattern = "data_batch_*.bin"
	}
	paths, err := globCIFAR(dir, "cifar-10-batches-bin", pattern)
	if err != nil {
		return nil, err
	}
	return ReadCIFAR10(paths...)
}

// ReadCIFAR100Dir reads train.bin or test.bin of the CIFAR-100 binary
// version in dir, or in dir/cifar-100-binary (the folder of the official
// archive) when dir itself holds none; see [ReadCIFAR100] for fine.
func ReadCIFAR100Dir(dir string, train, fine bool) (*ImageSet, error) {
	pattern := "test.bin"
	if train {
		pattern = "train.bin"
	}
	paths, err := globCIFAR(dir, "cifar-100-binary", pattern)
	if err != nil {
		return nil, err
	}
	return ReadCIFAR100(fine, paths...)
}

func globCIFAR(dir, sub, pattern string) ([]string, error) {
	for _, d := range []string{dir, filepath.Join(dir, sub)} {
		paths, err := filepath.Glob(filepath.Join(d, pattern))
		if err != nil {
			return nil, fmt.Errorf("read CIFAR from %s: %w", dir, err)
		}
		if len(paths) > 0 {
			sort.Strings(paths)
			return paths, nil
		}
	}
	return nil, fmt.Errorf("read CIFAR from %s: no file matches %s in it or in %s: expected the files of the binary version", dir, pattern, filepath.Join(dir, sub))
}

// readClassNames reads one name a line (blank lines ignored) and expects n.
func readClassNames(path string, n int) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			names = append(names, l)
		}
	}
	if len(names) != n {
		return nil, fmt.Errorf("class names %s: %d names: expected %d, one a line", path, len(names), n)
	}
	return names, nil
}

// readCIFARFiles checks the sizes of all files first, allocates the pixels
// once and streams the records into them.
func readCIFARFiles(paths []string, f cifarFormat, name string) (*ImageSet, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("read %s: no files given: expected at least one", name)
	}
	rec := int64(f.recordLen())
	counts := make([]int, len(paths))
	total := 0
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("read %s: %s is not a regular file", name, p)
		}
		if err := checkCIFARSize(st.Size(), rec, p); err != nil {
			return nil, err
		}
		counts[i] = int(st.Size() / rec)
		total += counts[i]
		if int64(total)*CIFARImageBytes > MaxImageValues {
			return nil, fmt.Errorf("read %s: %s: more than %d values in total", name, p, MaxImageValues)
		}
	}
	s := &ImageSet{Name: name, N: total, C: CIFARChannels, H: CIFARHeight, W: CIFARWidth,
		Pixels: make([]float32, total*CIFARImageBytes), Labels: make([]int, total), NumClasses: f.numClasses}
	at := 0
	for i, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		n, err := decodeCIFAR(bufio.NewReaderSize(fh, 1<<16), p, f, s.Pixels[at*CIFARImageBytes:(at+counts[i])*CIFARImageBytes], s.Labels[at:at+counts[i]])
		fh.Close()
		if err != nil {
			return nil, err
		}
		if n != counts[i] {
			return nil, fmt.Errorf("%s: %d records read: expected %d from the file size (file changed while reading?)", p, n, counts[i])
		}
		at += counts[i]
	}
	return s, nil
}

func checkCIFARSize(size, rec int64, file string) error {
	if size == 0 {
		return fmt.Errorf("%s: empty file: expected records of %d bytes", file, rec)
	}
	if r := size % rec; r != 0 {
		return fmt.Errorf("%s: record %d is truncated: %d of %d bytes (file size %d is not a multiple of the record length %d)",
			file, size/rec, r, rec, size, rec)
	}
	return nil
}

// decodeCIFAR reads up to len(labels) records from r into pixels and
// labels and returns how many it read; it stops with an error at a
// truncated record or a label out of range.
func decodeCIFAR(r io.Reader, file string, f cifarFormat, pixels []float32, labels []int) (int, error) {
	buf := make([]byte, f.recordLen())
	for k := range labels {
		m, err := io.ReadFull(r, buf)
		if err == io.EOF {
			return k, nil
		}
		if err == io.ErrUnexpectedEOF {
			return k, fmt.Errorf("%s: record %d is truncated: %d of %d bytes", file, k, m, len(buf))
		}
		if err != nil {
			return k, fmt.Errorf("%s: record %d: %w", file, k, err)
		}
		if err := checkCIFARLabels(buf[:f.labelBytes], f, file, k); err != nil {
			return k, err
		}
		labels[k] = int(buf[f.labelIndex])
		px := pixels[k*CIFARImageBytes : (k+1)*CIFARImageBytes]
		for j, b := range buf[f.labelBytes:] {
			px[j] = byteToUnit[b]
		}
	}
	return len(labels), nil
}

func checkCIFARLabels(lb []byte, f cifarFormat, file string, k int) error {
	if f.labelBytes == 1 {
		if int(lb[0]) >= f.numClasses {
			return fmt.Errorf("%s: record %d (byte offset %d): label %d: expected a class in [0,%d)", file, k, k*f.recordLen(), lb[0], f.numClasses)
		}
		return nil
	}
	if lb[0] >= CIFAR100Coarse {
		return fmt.Errorf("%s: record %d (byte offset %d): coarse label %d: expected a class in [0,%d)", file, k, k*f.recordLen(), lb[0], CIFAR100Coarse)
	}
	if lb[1] >= CIFAR100Fine {
		return fmt.Errorf("%s: record %d (byte offset %d): fine label %d: expected a class in [0,%d)", file, k, k*f.recordLen(), lb[1], CIFAR100Fine)
	}
	return nil
}

// DecodeCIFAR10 decodes CIFAR-10 binary records held in memory; file names
// the data in error messages. It is [ReadCIFAR10] for one file without the
// class-name lookup (class names are [CIFAR10Classes]).
func DecodeCIFAR10(b []byte, file string) (*ImageSet, error) {
	return decodeCIFARBytes(b, file, cifarFormat{labelBytes: 1, labelIndex: 0, numClasses: 10}, "cifar-10", CIFAR10Classes)
}

// DecodeCIFAR100 decodes CIFAR-100 binary records held in memory; see
// [ReadCIFAR100] for fine.
func DecodeCIFAR100(b []byte, file string, fine bool) (*ImageSet, error) {
	f := cifarFormat{labelBytes: 2, labelIndex: 0, numClasses: CIFAR100Coarse}
	name := "cifar-100-coarse"
	if fine {
		f.labelIndex, f.numClasses, name = 1, CIFAR100Fine, "cifar-100"
	}
	return decodeCIFARBytes(b, file, f, name, nil)
}

func decodeCIFARBytes(b []byte, file string, f cifarFormat, name string, classes []string) (*ImageSet, error) {
	rec := int64(f.recordLen())
	if err := checkCIFARSize(int64(len(b)), rec, file); err != nil {
		return nil, err
	}
	n := int(int64(len(b)) / rec)
	s := &ImageSet{Name: name, N: n, C: CIFARChannels, H: CIFARHeight, W: CIFARWidth,
		Pixels: make([]float32, n*CIFARImageBytes), Labels: make([]int, n), NumClasses: f.numClasses}
	if classes != nil {
		s.ClassNames = append([]string(nil), classes...)
	}
	if _, err := decodeCIFAR(bytes.NewReader(b), file, f, s.Pixels, s.Labels); err != nil {
		return nil, err
	}
	return s, nil
}

package data

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Shape and size of the images of STL-10.
const (
	STL10Channels = 3
	STL10Side     = 96
	// STL10ImageBytes is the size of one image in the *_X.bin files: the
	// red, green and blue planes, each 96 columns of 96 bytes (column-major).
	STL10ImageBytes = STL10Channels * STL10Side * STL10Side
	// STL10NumClasses is the number of classes of the labelled splits.
	STL10NumClasses = 10
)

// The official binary release of STL-10. The md5 is the one torchvision
// records for the archive (tgz_md5). The archive unpacks to the folder
// STL10Path (train_X.bin, train_y.bin, test_X.bin, test_y.bin,
// unlabeled_X.bin, class_names.txt, fold_indices.txt), about 3.1 GB.
const (
	STL10URL  = "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz"
	STL10MD5  = "91f7769df0f17e558f3565bffb0c7dfb"
	STL10Path = "stl10_binary"
)

// MaxSTL10ExtractBytes bounds what [ExtractSTL10] writes. The STL-10
// archive expands to about 3.1 GB, more than [MaxExtractBytes].
const MaxSTL10ExtractBytes = 4 << 30

// STL10Classes are the STL-10 class names in label order (label byte 1 is
// airplane), as in class_names.txt of the official release.
var STL10Classes = []string{"airplane", "bird", "car", "cat", "deer", "dog", "horse", "monkey", "ship", "truck"}

// STL10Splits lists the splits [ReadSTL10Dir] reads.
var STL10Splits = []string{"train", "test", "unlabeled"}

// STL10Options selects what [ReadSTL10Dir] and [DecodeSTL10] return.
type STL10Options struct {
	// Size is the side of the returned images, 1 to 96 (0 means 96). Below
	// 96 every image is downsampled at read time by area averaging: output
	// pixel (i, j) is the mean of the 96×96 source square scaled onto it,
	// each source pixel weighted by the area it shares with the output
	// pixel's footprint [i·96/Size, (i+1)·96/Size) × [j·96/Size, (j+1)·96/Size).
	// When Size divides 96 that is the plain mean of each (96/Size)² block;
	// other sizes are allowed too. The sums are exact (integer weights), so
	// the values stay in [0,1].
	Size int
	// Max keeps the first Max images (0 = all); only their bytes are read.
	Max int
}

func (o STL10Options) size() (int, error) {
	switch {
	case o.Size == 0:
		return STL10Side, nil
	case o.Size < 0 || o.Size > STL10Side:
		return 0, fmt.Errorf("read STL-10: Size %d: expected 1 to %d (0 means %d)", o.Size, STL10Side, STL10Side)
	}
	return o.Size, nil
}

// ReadSTL10Dir reads one split of the STL-10 binary release, "train"
// (5,000 labelled images), "test" (8,000) or "unlabeled" (100,000), from
// dir, or from dir/stl10_binary (the folder of the official archive) when
// dir itself holds no SPLIT_X.bin. SPLIT_X.bin holds 27,648 bytes an image
// (the R, G, B planes, each stored column-major: byte c·9216 + x·96 + y is
// channel c, row y, column x); SPLIT_y.bin holds one label byte in 1..10 an
// image, which becomes a class in [0,10). The images are returned NCHW,
// row-major, with values b/255 (or their area averages, see
// [STL10Options]).
//
// The file sizes are checked first: SPLIT_X.bin must be a non-empty whole
// number of images and SPLIT_y.bin must hold one byte for each of them.
// Then only the first opt.Max images are read (all when Max is 0), in
// chunks, so the 2.76 GB unlabeled_X.bin is never held in memory. The
// unlabeled split has no labels (Labels nil, NumClasses 0, no class
// names). Class names are the lines of class_names.txt beside the files
// when it exists (it must hold 10), else [STL10Classes]. Name is "stl10".
// Errors name the file and what was expected.
func ReadSTL10Dir(dir, split string, opt STL10Options) (*ImageSet, error) {
	if !slices.Contains(STL10Splits, split) {
		return nil, fmt.Errorf("read STL-10: split %q: expected one of %v", split, STL10Splits)
	}
	size, err := opt.size()
	if err != nil {
		return nil, err
	}
	if opt.Max < 0 {
		return nil, fmt.Errorf("read STL-10: Max %d: expected 0 (all images) or more", opt.Max)
	}
	xName := split + "_X.bin"
	d := dir
	if _, err := os.Stat(filepath.Join(d, xName)); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, STL10Path, xName)); err == nil {
			d = filepath.Join(dir, STL10Path)
		}
	}
	xPath := filepath.Join(d, xName)
	count, err := stl10FileImages(xPath, dir)
	if err != nil {
		return nil, err
	}
	n := count
	if opt.Max > 0 {
		n = min(n, opt.Max)
	}
	if err := checkSTL10Values(n, size, xPath); err != nil {
		return nil, err
	}
	s := &ImageSet{Name: "stl10", N: n, C: STL10Channels, H: size, W: size}
	if split != "unlabeled" {
		yPath := filepath.Join(d, split+"_y.bin")
		if err := checkSTL10LabelFile(yPath, xPath, count); err != nil {
			return nil, err
		}
		yf, err := os.Open(yPath)
		if err != nil {
			return nil, fmt.Errorf("read STL-10: %w", err)
		}
		y, err := decodeSTL10Labels(io.LimitReader(yf, int64(count)+1), yPath)
		yf.Close()
		if err != nil {
			return nil, err
		}
		if len(y) != count {
			return nil, fmt.Errorf("read STL-10 %s: %d labels read: expected %d from the file size (file changed while reading?)", yPath, len(y), count)
		}
		s.Labels, s.NumClasses = y[:n:n], STL10NumClasses
		s.ClassNames = slices.Clone(STL10Classes)
		if names, err := readClassNames(filepath.Join(d, "class_names.txt"), STL10NumClasses); err == nil {
			s.ClassNames = names
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read STL-10: %w", err)
		}
	}
	xf, err := os.Open(xPath)
	if err != nil {
		return nil, fmt.Errorf("read STL-10: %w", err)
	}
	defer xf.Close()
	s.Pixels = make([]float32, n*STL10Channels*size*size)
	if _, _, err := decodeSTL10Images(xf, xPath, n, true, newSTL10Resampler(size), s.Pixels); err != nil {
		return nil, err
	}
	return s, nil
}

// stl10FileImages checks that path is a regular file holding a non-empty
// whole number of images and returns that number.
func stl10FileImages(path, dir string) (int, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("read STL-10 from %s: no %s in it or in %s: expected the files of the binary release (%w)",
				dir, filepath.Base(path), filepath.Join(dir, STL10Path), os.ErrNotExist)
		}
		return 0, fmt.Errorf("read STL-10: %w", err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("read STL-10: %s is not a regular file", path)
	}
	if err := checkSTL10Bytes(st.Size(), path); err != nil {
		return 0, err
	}
	return int(st.Size() / STL10ImageBytes), nil
}

func checkSTL10Bytes(n int64, file string) error {
	if n == 0 {
		return fmt.Errorf("read STL-10 %s: empty: expected images of %d bytes (96×96×3)", file, STL10ImageBytes)
	}
	if n%STL10ImageBytes != 0 {
		return fmt.Errorf("read STL-10 %s: %d bytes is not a whole number of 96×96×3 images (%d bytes each; the last one has %d)",
			file, n, STL10ImageBytes, n%STL10ImageBytes)
	}
	return nil
}

func checkSTL10Values(n, size int, file string) error {
	if d := STL10Channels * size * size; n > MaxImageValues/d {
		return fmt.Errorf("read STL-10 %s: %d images of 3×%d×%d: more than %d values: expected at most that (lower Max or Size)", file, n, size, size, MaxImageValues)
	}
	return nil
}

func checkSTL10LabelFile(yPath, xPath string, count int) error {
	st, err := os.Stat(yPath)
	if err != nil {
		return fmt.Errorf("read STL-10: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("read STL-10: %s is not a regular file", yPath)
	}
	if st.Size() != int64(count) {
		return fmt.Errorf("read STL-10 %s: %d labels for the %d images of %s: expected one label byte per image", yPath, st.Size(), count, xPath)
	}
	return nil
}

// decodeSTL10Labels reads label bytes to the end of r and maps 1..10 to
// 0..9.
func decodeSTL10Labels(r io.Reader, file string) ([]int, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read STL-10 %s: %w", file, err)
	}
	y := make([]int, len(b))
	for i, v := range b {
		if v < 1 || v > STL10NumClasses {
			return nil, fmt.Errorf("read STL-10 %s: label %d of image %d (byte offset %d): expected 1 to %d", file, v, i, i, STL10NumClasses)
		}
		y[i] = int(v) - 1
	}
	return y, nil
}

// stl10ChunkImages is how many images are read at a time (885 KB).
const stl10ChunkImages = 32

// decodeSTL10Images reads images from r and converts them into px (NCHW at
// rs.size). With exact it reads exactly want images into px, which has room
// for them, and a shorter r is an error. Otherwise it reads to the end of
// r, or until want images when want > 0, appending to px (which grows as
// images arrive); r must not end inside an image. It returns px and the
// number of images.
func decodeSTL10Images(r io.Reader, file string, want int, exact bool, rs *stl10Resampler, px []float32) ([]float32, int, error) {
	d := STL10Channels * rs.size * rs.size
	buf := make([]byte, stl10ChunkImages*STL10ImageBytes)
	n := 0
	var total int64
	for (!exact && want <= 0) || n < want {
		k := stl10ChunkImages
		if want > 0 {
			k = min(k, want-n)
		}
		m, err := io.ReadFull(r, buf[:k*STL10ImageBytes])
		total += int64(m)
		whole := m / STL10ImageBytes
		switch {
		case err == nil, err == io.EOF, err == io.ErrUnexpectedEOF:
		default:
			return nil, n, fmt.Errorf("read STL-10 %s: after %d bytes: %w", file, total, err)
		}
		if !exact {
			if err := checkSTL10Values(n+whole, rs.size, file); err != nil {
				return nil, n, err
			}
			px = slices.Grow(px, whole*d)[:(n+whole)*d]
		}
		for i := range whole {
			rs.image(px[(n+i)*d:(n+i+1)*d], buf[i*STL10ImageBytes:(i+1)*STL10ImageBytes])
		}
		n += whole
		if err != nil { // the end of r
			if m%STL10ImageBytes != 0 {
				return nil, n, checkSTL10Bytes(total, file)
			}
			if exact {
				return nil, n, fmt.Errorf("read STL-10 %s: ends after %d images (%d bytes): expected %d images of %d bytes", file, n, total, want, STL10ImageBytes)
			}
			break
		}
	}
	return px, n, nil
}

// stl10Resampler converts one column-major 96×96×3 image to row-major
// size×size×3 by area averaging.
type stl10Resampler struct {
	size int
	// taps[i] lists the source pixels under output pixel i along one axis
	// with their integer weights: the overlap of [i·96, (i+1)·96) and
	// [j·size, (j+1)·size) on a grid of 1/size pixel. The weights of one
	// output pixel add up to 96.
	taps [][]stl10Tap
	tmp  []int32 // 96 columns × size output rows
}

type stl10Tap struct {
	j int
	w int32
}

func newSTL10Resampler(size int) *stl10Resampler {
	rs := &stl10Resampler{size: size}
	if size == STL10Side {
		return rs
	}
	rs.taps = make([][]stl10Tap, size)
	for i := range size {
		lo, hi := i*STL10Side, (i+1)*STL10Side
		for j := lo / size; j*size < hi; j++ {
			if w := min(hi, (j+1)*size) - max(lo, j*size); w > 0 {
				rs.taps[i] = append(rs.taps[i], stl10Tap{j, int32(w)})
			}
		}
	}
	rs.tmp = make([]int32, STL10Side*size)
	return rs
}

// image converts src (STL10ImageBytes bytes) into dst (3·size·size values).
func (rs *stl10Resampler) image(dst []float32, src []byte) {
	const plane = STL10Side * STL10Side
	s := rs.size
	if s == STL10Side {
		for c := range STL10Channels {
			in, out := src[c*plane:(c+1)*plane], dst[c*plane:(c+1)*plane]
			for x := range STL10Side {
				col := in[x*STL10Side : (x+1)*STL10Side]
				for y, b := range col {
					out[y*STL10Side+x] = byteToUnit[b]
				}
			}
		}
		return
	}
	// Every output value is Σ wy·wx·b over its footprint with Σ wy = Σ wx =
	// 96, at most 96·96·255, divided by that.
	const scale = 1.0 / (STL10Side * STL10Side * 255)
	for c := range STL10Channels {
		in, out := src[c*plane:(c+1)*plane], dst[c*s*s:(c+1)*s*s]
		// Along the rows, within each stored column: tmp[x·s + oy].
		for x := range STL10Side {
			col := in[x*STL10Side : (x+1)*STL10Side]
			t := rs.tmp[x*s : (x+1)*s]
			for oy, taps := range rs.taps {
				var acc int32
				for _, tp := range taps {
					acc += tp.w * int32(col[tp.j])
				}
				t[oy] = acc
			}
		}
		// Along the columns.
		for oy := range s {
			row := out[oy*s : (oy+1)*s]
			for ox, taps := range rs.taps {
				var acc int32
				for _, tp := range taps {
					acc += tp.w * rs.tmp[tp.j*s+oy]
				}
				row[ox] = float32(float64(acc) * scale)
			}
		}
	}
}

// DecodeSTL10 decodes STL-10 images from x (the bytes of a *_X.bin file)
// and, when y is not nil, their labels from y (a *_y.bin file, read to its
// end); xFile and yFile name them in error messages. It is
// [ReadSTL10Dir] on readers, without the size checks a file allows
// beforehand and without class_names.txt (labelled sets get
// [STL10Classes]).
//
// With labels, x must hold one image for every label byte; when opt.Max is
// smaller than the number of labels only the first Max images are read and
// the rest of x is not looked at. Without labels x is read to its end, or
// until opt.Max images; the pixels grow as images arrive. x must not end
// inside an image, and it must hold at least one.
func DecodeSTL10(x, y io.Reader, xFile, yFile string, opt STL10Options) (*ImageSet, error) {
	size, err := opt.size()
	if err != nil {
		return nil, err
	}
	if opt.Max < 0 {
		return nil, fmt.Errorf("read STL-10: Max %d: expected 0 (all images) or more", opt.Max)
	}
	rs := newSTL10Resampler(size)
	s := &ImageSet{Name: "stl10", C: STL10Channels, H: size, W: size}
	if y == nil {
		px, n, err := decodeSTL10Images(x, xFile, opt.Max, false, rs, nil)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, checkSTL10Bytes(0, xFile)
		}
		s.N, s.Pixels = n, px[:n*s.ImageSize():n*s.ImageSize()]
		return s, nil
	}
	labels, err := decodeSTL10Labels(y, yFile)
	if err != nil {
		return nil, err
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("read STL-10 %s: no labels: expected one label byte for every image of %s", yFile, xFile)
	}
	want := len(labels)
	if opt.Max > 0 {
		want = min(want, opt.Max)
	}
	px, n, err := decodeSTL10Images(x, xFile, want, false, rs, nil)
	if err != nil {
		return nil, err
	}
	if n < want {
		return nil, fmt.Errorf("read STL-10 %s: %d images for the %d labels of %s: expected one image per label", xFile, n, len(labels), yFile)
	}
	if want == len(labels) {
		// Every label has its image: x must end here.
		var one [1]byte
		if m, _ := io.ReadFull(x, one[:]); m > 0 {
			return nil, fmt.Errorf("read STL-10 %s: more than the %d images of the %d labels of %s: expected one image per label", xFile, n, len(labels), yFile)
		}
	}
	s.N, s.Pixels = n, px[:n*s.ImageSize():n*s.ImageSize()]
	s.Labels, s.NumClasses = labels[:n:n], STL10NumClasses
	s.ClassNames = slices.Clone(STL10Classes)
	return s, nil
}

// ExtractSTL10 is [ExtractTarGz] with the larger size limit
// [MaxSTL10ExtractBytes] that the STL-10 archive needs; every other check
// is the same.
func ExtractSTL10(archive, dest string) error {
	_, err := extractTarGz(archive, dest, MaxSTL10ExtractBytes)
	return err
}

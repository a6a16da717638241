package data

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
)

// MaxFolderImagePixels bounds the width·height of one image file read by
// [ReadImageFolder] and [ReadUnlabeledImageFolder] (100 megapixels). The
// size is read from the file's header before the image is decoded, so a
// small file that claims a huge image (a decompression bomb) is rejected
// without allocating it.
const MaxFolderImagePixels = 100_000_000

// FolderOptions configures [ReadImageFolder] and
// [ReadUnlabeledImageFolder].
type FolderOptions struct {
	// Size is the side of the square output images (required, > 0). Every
	// image is resized so that its shorter side is Size, then cropped to
	// its central Size×Size pixels.
	Size int
	// Channels is 3 (RGB) or 1 (grey); 0 means 3.
	Channels int
	// Max keeps the first Max images in the reading order (see
	// [ReadImageFolder]); 0 keeps all.
	Max int
	// Workers is the number of images decoded in parallel; 0 means
	// runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int
}

// folderExtensions are the file name extensions read (compared in lower
// case).
var folderExtensions = map[string]bool{".png": true, ".jpg": true, ".jpeg": true}

// ReadImageFolder reads a labelled image set laid out as torchvision's
// ImageFolder: every immediate sub-folder of dir is a class, named by the
// folder; the classes are sorted by name (byte order, as Python's sorted),
// and the class index of a folder is its position in that order.
// ClassNames are the folder names. Image files placed directly in dir are
// ignored.
//
// The images of a class are the .png, .jpg and .jpeg files (extension
// case-insensitive) anywhere under its folder (recursively, as torchvision;
// symbolic links to files are followed, to sub-folders inside a class are
// not; a class folder may itself be a link). Other files are skipped, and
// so are files and folders whose name starts with '.' (torchvision does
// not skip those). The format is detected from the file's content, not
// its extension. Images are ordered as torchvision orders them: class by
// class, within a class folder by folder path, within a folder by file
// name. [FolderOptions.Max] keeps a prefix of that order, so a small Max
// may hold only the first classes; NumClasses is still the number of class
// folders (use [ImageSet.Subset] for a balanced sample).
//
// Every image becomes Size×Size pixels as torchvision's Resize(Size)
// followed by CenterCrop(Size): it is scaled so that its shorter side is
// Size and its longer side int(Size·long/short) (truncated, as
// torchvision), then the central Size×Size pixels are kept (offsets
// rounded half to even, as torchvision). The resampling filter is
// golang.org/x/image/draw's BiLinear kernel, whose support widens when
// shrinking, as the antialiased bilinear filter PyTorch uses by default
// (PIL's BILINEAR); the Approx* filters of that package do not antialias.
// Only the kept pixels are computed, so an extreme aspect ratio costs
// nothing extra. Values may differ from PyTorch's by rounding, and for
// JPEG by the decoder (Go's image/jpeg upsamples chroma differently from
// libjpeg).
//
// Colours are converted with the standard library (paletted, grey, 16-bit,
// YCbCr and CMYK images alike) to 16-bit RGB, then to float32 in [0,1]
// (v/65535, which is exactly b/255 for 8-bit images). Transparency is
// dropped as PIL's convert("RGB") in torchvision's default loader drops it:
// a pixel keeps its colour whatever its alpha (a fully transparent pixel
// of a premultiplied source is black). With Channels = 1 the value is the
// ITU-R 601 luma that image/color's Gray16Model computes
// (0.299 R + 0.587 G + 0.114 B).
//
// Errors name the folder or the file: a missing dir, a dir without class
// folders, a class folder without images (torchvision errors too), a file
// that is not a valid PNG or JPEG, an image of zero width or height, one
// of more than [MaxFolderImagePixels] pixels (checked from the header,
// before decoding), and a set of more than [MaxImageValues] values
// (checked before any pixel is allocated). Name is the base name of dir.
func ReadImageFolder(dir string, opt FolderOptions) (*ImageSet, error) {
	if err := opt.check(dir); err != nil {
		return nil, err
	}
	classes, err := folderClasses(dir)
	if err != nil {
		return nil, err
	}
	var (
		files  []string
		labels []int
	)
	for k, c := range classes {
		imgs, err := listFolderImages(filepath.Join(dir, c))
		if err != nil {
			return nil, fmt.Errorf("read image folder %s: %w", dir, err)
		}
		if len(imgs) == 0 {
			return nil, fmt.Errorf("read image folder %s: class folder %s holds no .png, .jpg or .jpeg file: expected at least one image in every class folder", dir, filepath.Join(dir, c))
		}
		files = append(files, imgs...)
		for range imgs {
			labels = append(labels, k)
		}
	}
	s, err := readFolderImages(dir, files, opt)
	if err != nil {
		return nil, err
	}
	s.Labels = labels[:s.N:s.N]
	s.NumClasses = len(classes)
	s.ClassNames = classes
	return s, nil
}

// ReadUnlabeledImageFolder reads every .png, .jpg and .jpeg file under dir
// (recursively, sub-folders included, in the order of [ReadImageFolder]
// for one class) into an unlabelled set for pre-training: Labels is nil
// and NumClasses 0. Files and folders whose name starts with '.' are
// skipped. Images are resized, cropped and converted as by
// [ReadImageFolder], and the same errors apply; a dir holding no image is
// an error. Name is the base name of dir.
func ReadUnlabeledImageFolder(dir string, opt FolderOptions) (*ImageSet, error) {
	if err := opt.check(dir); err != nil {
		return nil, err
	}
	if err := checkFolder(dir); err != nil {
		return nil, err
	}
	files, err := listFolderImages(dir)
	if err != nil {
		return nil, fmt.Errorf("read image folder %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read image folder %s: no .png, .jpg or .jpeg file in it or its sub-folders: expected at least one image", dir)
	}
	return readFolderImages(dir, files, opt)
}

func (o *FolderOptions) check(dir string) error {
	if o.Size <= 0 {
		return fmt.Errorf("read image folder %s: FolderOptions.Size = %d: expected a positive output size", dir, o.Size)
	}
	if o.Channels == 0 {
		o.Channels = 3
	}
	if o.Channels != 1 && o.Channels != 3 {
		return fmt.Errorf("read image folder %s: FolderOptions.Channels = %d: expected 1 (grey), 3 (RGB) or 0 (RGB)", dir, o.Channels)
	}
	if o.Max < 0 {
		return fmt.Errorf("read image folder %s: FolderOptions.Max = %d: expected 0 (all) or a positive count", dir, o.Max)
	}
	if o.Workers < 0 {
		return fmt.Errorf("read image folder %s: FolderOptions.Workers = %d: expected 0 (GOMAXPROCS) or a positive count", dir, o.Workers)
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return nil
}

func checkFolder(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("read image folder: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("read image folder %s: not a directory", dir)
	}
	return nil
}

func hiddenName(name string) bool { return strings.HasPrefix(name, ".") }

func isFolderImage(name string) bool {
	return folderExtensions[strings.ToLower(filepath.Ext(name))]
}

// folderClasses returns the sorted names of the non-hidden sub-folders of
// dir (links to folders included).
func folderClasses(dir string) ([]string, error) {
	if err := checkFolder(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read image folder: %w", err)
	}
	var classes []string
	images := 0
	for _, e := range entries {
		if hiddenName(e.Name()) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				isDir = st.IsDir()
			}
		}
		if isDir {
			classes = append(classes, e.Name())
		} else if isFolderImage(e.Name()) {
			images++
		}
	}
	if len(classes) == 0 {
		hint := ""
		if images > 0 {
			hint = fmt.Sprintf(" (it holds %d image files directly: use ReadUnlabeledImageFolder for a folder without classes)", images)
		}
		return nil, fmt.Errorf("read image folder %s: no class folders%s: expected one sub-folder per class", dir, hint)
	}
	sort.Strings(classes)
	return classes, nil
}

// listFolderImages returns the image files under root in torchvision's
// order: by folder path, then by file name. Hidden files and folders are
// skipped; links to sub-folders are not followed, but root may be a link.
func listFolderImages(root string) ([]string, error) {
	walkRoot := root
	if st, err := os.Lstat(root); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		if walkRoot, err = filepath.EvalSymlinks(root); err != nil {
			return nil, err
		}
	}
	type entry struct{ dir, name string }
	var found []entry
	err := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == walkRoot {
			return nil
		}
		if hiddenName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isFolderImage(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(walkRoot, p)
		if err != nil {
			return err
		}
		logical := filepath.Join(root, rel)
		found = append(found, entry{filepath.Dir(logical), filepath.Base(logical)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].dir != found[j].dir {
			return found[i].dir < found[j].dir
		}
		return found[i].name < found[j].name
	})
	files := make([]string, len(found))
	for i, e := range found {
		files[i] = filepath.Join(e.dir, e.name)
	}
	return files, nil
}

// readFolderImages decodes files (truncated to opt.Max) into a new set with
// opt.Workers goroutines. On failure it returns the error of the first
// failing file in order, whatever the number of workers.
func readFolderImages(dir string, files []string, opt FolderOptions) (*ImageSet, error) {
	if opt.Max > 0 && len(files) > opt.Max {
		files = files[:opt.Max]
	}
	n, c, size := len(files), opt.Channels, opt.Size
	per := int64(c) * int64(size) * int64(size)
	if per > MaxImageValues || int64(n)*per > MaxImageValues {
		return nil, fmt.Errorf("read image folder %s: %d images of %d×%d×%d values: expected at most %d values in total", dir, n, c, size, size, MaxImageValues)
	}
	name := filepath.Base(filepath.Clean(dir))
	if abs, err := filepath.Abs(dir); err == nil {
		name = filepath.Base(abs)
	}
	d := int(per)
	s := &ImageSet{Name: name, N: n, C: c, H: size, W: size, Pixels: make([]float32, n*d)}
	workers := min(opt.Workers, n)
	var (
		next     atomic.Int64
		stop     atomic.Bool
		mu       sync.Mutex
		firstErr error
		firstAt  = n
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dec folderDecoder
			for !stop.Load() {
				// Indices are handed out in increasing order and a worker
				// finishes the one it holds, so every file before a failing
				// one is decoded: the first failure in order is reported.
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := dec.readFile(files[i], size, c, s.Pixels[i*d:(i+1)*d]); err != nil {
					mu.Lock()
					if i < firstAt {
						firstAt, firstErr = i, err
					}
					mu.Unlock()
					stop.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return s, nil
}

// folderDecoder holds the buffers one worker reuses from image to image.
type folderDecoder struct {
	br  *bufio.Reader
	out *image.RGBA64
}

func (dec *folderDecoder) readFile(path string, size, channels int, dst []float32) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read image folder: %w", err)
	}
	defer f.Close()
	return dec.decode(f, path, size, channels, MaxFolderImagePixels, dst)
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// decode reads one PNG or JPEG image from r (file names it in errors),
// rejects it when its header claims zero or more than maxPixels pixels,
// and writes it resized, centre-cropped and converted into dst
// (channels×size×size values in [0,1], channel-major).
func (dec *folderDecoder) decode(r io.ReadSeeker, file string, size, channels int, maxPixels int64, dst []float32) error {
	if dec.br == nil {
		dec.br = bufio.NewReaderSize(r, 1<<16)
	} else {
		dec.br.Reset(r)
	}
	head, _ := dec.br.Peek(len(pngSignature))
	var (
		format       string
		decodeConfig func(io.Reader) (image.Config, error)
		decodeImage  func(io.Reader) (image.Image, error)
	)
	switch {
	case bytes.HasPrefix(head, pngSignature):
		format, decodeConfig, decodeImage = "PNG", png.DecodeConfig, png.Decode
	case bytes.HasPrefix(head, []byte{0xff, 0xd8}):
		format, decodeConfig, decodeImage = "JPEG", jpeg.DecodeConfig, jpeg.Decode
	default:
		return fmt.Errorf("%s: not a valid PNG or JPEG image: unknown signature % x", file, head)
	}
	cfg, err := decodeConfig(dec.br)
	if err != nil {
		return fmt.Errorf("%s: not a valid %s image: %w", file, format, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("%s: %s image of size %d×%d: expected a positive width and height", file, format, cfg.Width, cfg.Height)
	}
	if px := int64(cfg.Width) * int64(cfg.Height); px > maxPixels {
		return fmt.Errorf("%s: %s image of %d×%d = %d pixels: expected at most %d (a limit against decompression bombs)", file, format, cfg.Width, cfg.Height, px, maxPixels)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	dec.br.Reset(r)
	img, err := decodeImage(dec.br)
	if err != nil {
		return fmt.Errorf("%s: not a valid %s image: %w", file, format, err)
	}
	if b := img.Bounds(); b.Dx() != cfg.Width || b.Dy() != cfg.Height {
		return fmt.Errorf("%s: %s image decodes to %d×%d pixels: expected %d×%d from its header", file, format, b.Dx(), b.Dy(), cfg.Width, cfg.Height)
	}
	dec.resizeCrop(img, size, channels, dst)
	return nil
}

// resizedSize returns the size of a w×h image resized so that its shorter
// side is size, as torchvision's Resize(size): the longer side becomes
// int(size·long/short), truncated.
func resizedSize(w, h, size int) (nw, nh int) {
	if w <= h {
		return size, int(float64(int64(size)*int64(h)) / float64(w))
	}
	return int(float64(int64(size)*int64(w)) / float64(h)), size
}

// resizeCrop writes img resized and centre-cropped to size×size into dst
// (channels planes). img must not be empty.
func (dec *folderDecoder) resizeCrop(img image.Image, size, channels int, dst []float32) {
	img = dropAlpha(img)
	b := img.Bounds()
	nw, nh := resizedSize(b.Dx(), b.Dy(), size)
	// torchvision's CenterCrop: int(round((resized - size) / 2.0)), where
	// Python rounds half to even.
	left := math.RoundToEven(float64(nw-size) / 2)
	top := math.RoundToEven(float64(nh-size) / 2)
	sx := float64(nw) / float64(b.Dx())
	sy := float64(nh) / float64(b.Dy())
	// The affine map from source to output pixels: resize, then shift
	// the crop to the origin. Only the output's size×size pixels are
	// computed, with the weights a full resize would use.
	s2d := f64.Aff3{
		sx, 0, -sx*float64(b.Min.X) - left,
		0, sy, -sy*float64(b.Min.Y) - top,
	}
	if dec.out == nil || dec.out.Rect.Dx() != size {
		dec.out = image.NewRGBA64(image.Rect(0, 0, size, size))
	} else {
		clear(dec.out.Pix)
	}
	draw.BiLinear.Transform(dec.out, s2d, img, b, draw.Src, nil)
	hw := size * size
	pix := dec.out.Pix
	for i := 0; i < hw; i++ {
		p := pix[8*i : 8*i+6 : 8*i+6]
		r := uint32(p[0])<<8 | uint32(p[1])
		g := uint32(p[2])<<8 | uint32(p[3])
		bl := uint32(p[4])<<8 | uint32(p[5])
		if channels == 1 {
			// color.Gray16Model's ITU-R 601 luma.
			y := (19595*r + 38470*g + 7471*bl + 1<<15) >> 16
			dst[i] = float32(y) / 0xffff
			continue
		}
		dst[i] = float32(r) / 0xffff
		dst[hw+i] = float32(g) / 0xffff
		dst[2*hw+i] = float32(bl) / 0xffff
	}
}

// dropAlpha returns img with every pixel made opaque while keeping its
// colour, as PIL's convert("RGB"). The non-premultiplied images the PNG
// decoder returns (NRGBA, NRGBA64, paletted) are changed in place.
func dropAlpha(img image.Image) image.Image {
	switch m := img.(type) {
	case *image.NRGBA:
		for y := 0; y < m.Rect.Dy(); y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+4*m.Rect.Dx()]
			for i := 3; i < len(row); i += 4 {
				row[i] = 0xff
			}
		}
		return m
	case *image.NRGBA64:
		for y := 0; y < m.Rect.Dy(); y++ {
			row := m.Pix[y*m.Stride : y*m.Stride+8*m.Rect.Dx()]
			for i := 6; i < len(row); i += 8 {
				row[i], row[i+1] = 0xff, 0xff
			}
		}
		return m
	case *image.Paletted:
		pal := make(color.Palette, len(m.Palette))
		for i, c := range m.Palette {
			var nc color.NRGBA64
			if c != nil {
				nc = color.NRGBA64Model.Convert(c).(color.NRGBA64)
			}
			nc.A = 0xffff
			pal[i] = nc
		}
		out := *m
		out.Palette = pal
		return &out
	}
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return img
	}
	b := img.Bounds()
	out := image.NewNRGBA64(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBA64Model.Convert(img.At(x, y)).(color.NRGBA64)
			c.A = 0xffff
			out.SetNRGBA64(x, y, c)
		}
	}
	return out
}

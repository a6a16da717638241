package data

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The data root is the one directory under which every dataset lives, at
// the path a config's data.path gives relative to data.root:
//
//	tu/NAME/NAME_A.txt, ...              TU Dortmund graphs (source tu, path tu/NAME)
//	tu_gin_format/NAME/NAME.txt.gz       GIN/DGCNN text format (source gin)
//	cifar-10-batches-bin/*.bin           CIFAR-10, binary version (source cifar10)
//	cifar-100-binary/{train,test}.bin    CIFAR-100, binary version (source cifar100)
//	stl10_binary/*.bin                   STL-10, binary version (source stl10)
//	cifar10/                             the shared CIFAR-10 subset
//	sts/, text/                          STS Benchmark and sentence corpora
//
// cmd/download writes TU, CIFAR and STL-10 datasets to the paths [TUPath],
// [CIFARPath] and [STL10Path] give, and train reads them there, so one root
// serves both. A folder of one's own images (source folder) may live
// anywhere: data.path is relative to the root unless absolute.

// RootEnv names the environment variable that sets the data root when a
// config leaves data.root empty.
const RootEnv = "BATCHSAMPLER_DATA"

// SharedRoot is the data root of a checkout that sits beside the shared
// datasets (relative to the working directory). [DefaultRoot] uses it only
// when it exists.
var SharedRoot = filepath.Join("..", "shared", "data")

// DefaultRoot returns the data root used when none is given (data.root in a
// config, -root in cmd/download); see [DefaultRootSource].
func DefaultRoot() string {
	root, _ := DefaultRootSource()
	return root
}

// DefaultRootSource returns the default data root and says where it comes
// from. In order: $BATCHSAMPLER_DATA when it is set and not empty;
// ../shared/data when that directory exists (a checkout beside the shared
// datasets); else [UserRoot], a per-user directory outside any source tree.
func DefaultRootSource() (root, source string) {
	if e := os.Getenv(RootEnv); e != "" {
		return e, "$" + RootEnv
	}
	if st, err := os.Stat(SharedRoot); err == nil && st.IsDir() {
		return SharedRoot, "the shared data directory beside the checkout"
	}
	if u, err := UserRoot(); err == nil {
		return u, "the user cache directory"
	}
	return SharedRoot, "no user cache directory is known ($HOME unset)"
}

// UserRoot returns the per-user data root: batchsampler/data under
// [os.UserCacheDir], that is $XDG_CACHE_HOME/batchsampler/data or
// ~/.cache/batchsampler/data on Linux, ~/Library/Caches/batchsampler/data
// on macOS and %LocalAppData%\batchsampler\data on Windows. Datasets there
// can always be downloaded again, hence a cache directory.
func UserRoot() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "batchsampler", "data"), nil
}

// TUPath returns where TU dataset name lives relative to the data root,
// with forward slashes as in a config's data.path: tu/NAME.
func TUPath(name string) string { return path.Join("tu", name) }

// CIFARPath returns where the binary version of a CIFAR dataset ("cifar-10"
// or "cifar-100", any case) lives relative to the data root: the folder of
// the official archive, cifar-10-batches-bin or cifar-100-binary.
func CIFARPath(name string) (string, error) {
	switch strings.ToLower(name) {
	case "cifar-10":
		return "cifar-10-batches-bin", nil
	case "cifar-100":
		return "cifar-100-binary", nil
	}
	return "", fmt.Errorf("CIFAR dataset %q: expected one of %v", name, CIFARNames)
}

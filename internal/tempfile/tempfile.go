// Package tempfile creates the temporary files that atomic writes rename
// into place, with the permissions an ordinary new file gets.
//
// os.CreateTemp makes its files 0600 whatever the umask, which suits a
// scratch file but not one renamed to become the output: a graph or a
// state file written that way could be read by its owner only, on a
// shared cluster too. Create makes them as os.Create does, 0666 less the
// process's umask (0644 under the usual 022).
package tempfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Create creates a new file in dir (os.TempDir() when "") for reading and
// writing, named by pattern with its last "*" replaced by a random string
// (appended when pattern has none), as os.CreateTemp does, but with mode
// 0666 less the umask. The caller removes or renames it.
func Create(dir, pattern string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if strings.ContainsRune(pattern, os.PathSeparator) {
		return nil, &fs.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10)+suffix)
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Staging is a temporary directory beside a target directory, in which a
// download is fetched, checked and extracted before [Staging.Commit] moves
// the result onto the target with a rename (same file system, so the move
// is atomic and no copy is made). [Staging.Close] removes the temporary
// directory and, when nothing was committed, the target's parent
// directories that [NewStaging] created: a failed download leaves no new
// directory behind.
type Staging struct {
	target    string
	dir       string
	created   []string // parents of target made by NewStaging, outermost first
	committed bool
}

// NewStaging creates the missing parents of target and a temporary
// directory beside target (named .BASE.download-*).
func NewStaging(target string) (*Staging, error) {
	target = filepath.Clean(target)
	parent := filepath.Dir(target)
	created, err := mkdirAllCreated(parent)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, "."+filepath.Base(target)+".download-*")
	if err != nil {
		removeEmptyDirs(created)
		return nil, err
	}
	return &Staging{target: target, dir: dir, created: created}, nil
}

// Dir is the temporary directory.
func (s *Staging) Dir() string { return s.dir }

// Target is the directory Commit fills.
func (s *Staging) Target() string { return s.target }

// Commit renames src, a directory inside the staging directory, to the
// target. A target that already exists is replaced: it is first moved into
// the staging directory (and put back if the second rename fails), so it is
// deleted by Close only once the new directory is in place.
func (s *Staging) Commit(src string) error {
	if s.committed {
		return errors.New("staging: already committed")
	}
	var old string
	if _, err := os.Lstat(s.target); err == nil {
		old = filepath.Join(s.dir, ".previous")
		if err := os.Rename(s.target, old); err != nil {
			return fmt.Errorf("replace %s: %w", s.target, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(src, s.target); err != nil {
		if old != "" {
			os.Rename(old, s.target)
		}
		return err
	}
	s.committed = true
	return nil
}

// Close removes the staging directory and, unless Commit succeeded, the
// parent directories NewStaging created (those that are still empty).
func (s *Staging) Close() error {
	err := os.RemoveAll(s.dir)
	if !s.committed {
		removeEmptyDirs(s.created)
	}
	return err
}

// mkdirAllCreated is os.MkdirAll that returns the directories it created,
// outermost first.
func mkdirAllCreated(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue // made meanwhile by someone else: not ours to remove
			}
			removeEmptyDirs(created)
			return nil, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// removeEmptyDirs removes dirs, innermost first, stopping at the first that
// is not empty (os.Remove never removes a directory with content).
func removeEmptyDirs(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		if os.Remove(dirs[i]) != nil {
			return
		}
	}
}

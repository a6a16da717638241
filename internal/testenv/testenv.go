// Package testenv locates the shared real datasets for tests and benchmarks.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the directory holding the shared datasets (the layout of
// ../shared/data: tu/, tu_gin_format/, cifar10/, sts/, text/).
const EnvVar = "BATCHSAMPLER_DATA"

// DataDir returns the shared data directory: $BATCHSAMPLER_DATA if set,
// otherwise ../shared/data next to the module root. It returns "" when the
// directory does not exist.
func DataDir() string {
	if d := os.Getenv(EnvVar); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "data")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return d
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// Path returns DataDir joined with rel, and skips the test with a clear
// message when that path does not exist.
func Path(tb testing.TB, rel ...string) string {
	tb.Helper()
	d := DataDir()
	if d == "" {
		tb.Skipf("shared data not found: set %s or place ../shared/data beside the module root", EnvVar)
	}
	p := filepath.Join(append([]string{d}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared data file %s not present: %v", p, err)
	}
	return p
}
